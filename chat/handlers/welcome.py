"""``/start`` (and the join links it carries), ``/help``, ``/rules``, ``/lang``."""

from __future__ import annotations

import logging

from telegram import BotCommandScopeChat
from telegram.error import TelegramError

from chat.flow import pool_data
from chat.handlers.context import Call, handler
from chat.i18n import Tr
from chat.menus import bot_commands
from chat.model import Button, InputError
from chat.notices import Send
from chat.painter import rules_picture

log = logging.getLogger(__name__)


@handler
async def start(call: Call) -> None:
    actor, args = call.actor, call.args
    if call.private and args and args[0].startswith("j"):
        await call.answer(await call.flow.join_by_link(actor, args[0][:64]))
    elif call.private and args and args[0].startswith("a") and args[0][1:16].isdigit():
        # An arena's or a league's "My private chat": Start opened the chat, and joins.
        outcome = await call.flow.arena_press(actor, "join", int(args[0][1:16]),
                                              is_admin=False)
        call.deliver(outcome.notices)
        if outcome.reply and not outcome.notices:  # joined: the notice says so already
            await call.say(outcome.reply)
    elif call.private and args and args[0].startswith("t"):
        # A board post's "your move" button.
        call.deliver(await call.flow.open_turn(actor.user_id, args[0][:32]))
    elif call.private:
        # The greeting's button: a rated opponent from anywhere (issue 40), without typing.
        await call.inform([Send(call.chat.id, welcome_text(call.tr), keyboard=[[Button(
            call.tr._("⚡ Play now"), pool_data())]], info=call.reply_kind())])
    else:
        await call.say(welcome_text(call.tr))
    if call.private:
        # Opened the chat without the link (search, a forwarded name): seat them anyway at
        # every table that waits for them.
        for outcome in await call.flow.seat_invited(actor):
            await call.answer(outcome)
    if call.request.reopened:
        # Blocked the bot mid-match (or never started it) and pressed Start: the hand and
        # the panel come by themselves, not only on /hand.
        call.deliver(await call.flow.welcome_back(actor.user_id))


def welcome_text(tr: Tr) -> str:
    return "\n".join([
        tr._("Hi! I am the Krendzu bot — card renju, «four in a row» with a 36-card deck."),
        "",
        tr._("• In a group: /new sets up a match; players press Join; Start deals the cards."),
        tr._("• Here, privately: /new starts a match against the computer."),
        tr._("• ⚡ Play now (/playnow): a rated opponent from anywhere, each in their own "
             "private chat."),
        tr._("• Your cards are yours alone: in a group they show there to you only (or "
             "here, if the group chose so)."),
        "",
        tr._("/rules — the rules with pictures, /help — every command."),
    ])


@handler
async def help_command(call: Call) -> None:
    await call.say(help_text(call.tr))


def help_text(tr: Tr) -> str:
    return "\n".join([
        tr._("Setting up"),
        tr._("/new [duel|trio-lone-attacker|trio-lone-defender|teams] [tours=N] [deal=12/14] "
             "[exchange=K] [timer=90|off] — a new match; in a private chat also "
             "[level=easy|normal|hard]"),
        tr._("/join, /leave — take or leave a seat; /add LEVEL — a computer player; "
             "/go — start"),
        "",
        tr._("Playing"),
        tr._("/play CARD CELL [CARD CELL] — e.g. /play QC M12 or /play 9D L12 QS M14"),
        tr._("/pass — a defender passes; /exchange N — announce an exchange; "
             "/discard CARD … — the cards you give away"),
        tr._("/hand — your cards (privately); /board — the position; /score — the score; "
             "/hint — a suggestion (privately)"),
        tr._("/moves [T] — the tour's moves, numbered; /export — the record and every "
             "tour's replay"),
        tr._("/playnow — a rated opponent from anywhere, in the private chat (again: leave "
             "the queue); /top pool — its leaderboard"),
        tr._("/settings reactions=on|off — in the private chat: the emoji reactions of your "
             "Play now matches"),
        tr._("/resign; /cancel — end the match (creator or admin)"),
        tr._("/back — after timeouts, take your seat back from the computer"),
        tr._("/stats [NAME] — figures and rating; /top [global] — the leaderboard; /history — "
             "recent matches (/export N sends one)"),
        tr._("/leave during a match — the computer plays your seat; /kick NAME — the same for "
             "an absent player (creator or admin)"),
        tr._("/lang ru|en — language; /rules — the rules; /settings — the group's settings "
             "(admins)"),
        tr._("/engine — your outside engines (in the private chat); /add @NAME — seat one"),
        "",
        tr._("Cards: QC, 10D (or TD), Q♣, Дт. Cells: a column letter and a row number, "
             "e.g. M12; the first card of every tour is at M13."),
    ])


@handler
async def rules(call: Call) -> None:
    tr, group = call.tr, not call.private
    notices = [Send(call.chat.id, rules_text(tr), thread_id=call.thread, group=group,
                    info=call.reply_kind())]
    pictures = [("rules", tr._("Card values and combinations, drawn with real cards.")),
                ("board", tr._("A tour on the board: a goal and an own goal."))]
    if not group:  # how to place a card matters where the moves are made
        pictures.append(("coordinates", tr._("Where a card may go, and how /hint shows it.")))
    for kind, caption in pictures:
        picture = await rules_picture(kind, tr)
        notices.append(Send(call.chat.id, caption, thread_id=call.thread, photo=picture,
                            group=group, info=call.reply_kind(f"/{kind}")))
    await call.inform(notices)


def language_name(code: str) -> str:
    """``ru`` → ``русский``, ``en`` → ``English`` (from the CLDR data in Babel)."""
    from babel import Locale, UnknownLocaleError

    try:
        return Locale.parse(code).get_display_name(code) or code
    except (ValueError, UnknownLocaleError):
        return code


def rules_text(tr: Tr) -> str:
    return "\n".join([
        tr._("Krendzu in short"),
        tr._("• A deck of 36 cards (6 to A). Cards go face up on an open grid, each touching "
             "a card edge to edge."),
        tr._("• Four in a line (across, down or diagonal) score 1 point for the attackers when "
             "they are of one suit, or when their values form an arithmetic progression."),
        tr._("• Values: 6–10 as printed; J = 2 or 12; Q = 3 or 13; K = 4 or 14; A = 1, 5, 11 "
             "or 15. Examples: A 6 7 8; J 9 6 Q; A A 9 Q."),
        tr._("• A defender opens with one card. Then an attacker plays exactly one card; a "
             "defender passes or plays one or two cards."),
        tr._("• Every combination completed scores for the attackers, even one the defender "
             "completes (an own goal)."),
        tr._("• Roles rotate every tour; the highest total after the last tour wins."),
        tr._("• With an exchange limit, everyone first announces how many cards to exchange, "
             "then gives them away secretly and gets new ones."),
    ])


@handler
async def lang(call: Call) -> None:
    args = call.args
    language = (args[0] if args else "").lower()[:5]
    if (not call.private and language in call.flow.catalogs.languages
            and not await call.flow.sets_up(call.chat.id, call.thread, call.actor.user_id)
            and not await call.is_admin()):
        # The group's language is everyone's: its admins decide (or whoever is setting up a
        # match there, so a new group can start in its language).
        await call.say(call.tr._("Only a chat admin, or whoever is setting up a match here, "
                                 "can change the group's language."))
        return
    try:
        tr = await call.flow.set_language(call.chat.id, call.actor, language)
    except InputError as exc:
        await call.say(call.tr._(exc.key, **exc.values))
        return
    await set_chat_menu(call, tr)
    await call.say(tr._("Language: {name}.", name=language_name(tr.language)))


async def set_chat_menu(call: Call, tr: Tr) -> None:
    """The command menu of this one chat in its chosen language: the menus set at start
    follow each person's Telegram language, which ``/lang`` has just overruled here."""
    commands = bot_commands(tr, private=call.private)
    try:
        await call.context.bot.set_my_commands(commands,
                                               scope=BotCommandScopeChat(call.chat.id))
    except TelegramError as exc:  # the answer matters more than the menu
        log.info("could not set the menu of chat %s (%s)", call.chat.id, type(exc).__name__)
