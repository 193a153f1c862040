"""``/start`` (and the join links it carries), ``/help``, ``/rules``, ``/lang``."""

from __future__ import annotations

from telegram import Update
from telegram.constants import ChatType

from chat.handlers.context import (
    BotContext,
    actor_of,
    answer,
    is_admin,
    is_private,
    reply_kind,
    reply_tr,
    request_of,
    say,
    services,
    thread_of,
)
from chat.i18n import Tr
from chat.model import (
    InputError,
)
from chat.notices import Send
from chat.painter import rules_picture


async def start(update: Update, context: BotContext) -> None:
    svc = services(context)
    request = await request_of(svc, update)
    actor, tr = request.actor, request.tr
    private = is_private(update)
    returning = request.reopened
    args = context.args or []
    if private and args and args[0].startswith("j"):
        await answer(svc, update, await svc.flow.join_by_link(actor, args[0][:64]))
    else:
        await say(svc, update, welcome_text(tr))
    if private:
        # Opened the chat without the link (search, a forwarded name): seat them anyway at
        # every table that waits for them.
        for outcome in await svc.flow.seat_invited(actor):
            await answer(svc, update, outcome)
    if returning:
        # Blocked the bot mid-match (or never started it) and pressed Start: the hand and
        # the panel come by themselves, not only on /hand.
        svc.delivery.run(await svc.flow.welcome_back(actor.user_id))


def welcome_text(tr: Tr) -> str:
    return "\n".join([
        tr._("Hi! I am the Krendzu bot — card renju, «four in a row» with a 36-card deck."),
        "",
        tr._("• In a group: /new sets up a match; players press Join; Start deals the cards."),
        tr._("• Here, privately: /new starts a match against the computer."),
        tr._("• Your cards always come here, in this private chat, never to the group."),
        "",
        tr._("/rules — the rules with pictures, /help — every command."),
    ])


async def help_command(update: Update, context: BotContext) -> None:
    svc = services(context)
    tr = await reply_tr(svc, update)
    await say(svc, update, help_text(tr))


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
        tr._("/export — the record and a replay; /resign; /cancel — end the match "
             "(creator or admin)"),
        tr._("/back — after timeouts, take your seat back from the computer"),
        tr._("/stats [NAME] — figures and rating; /top [global] — the leaderboard; /history — "
             "recent matches (/export N sends one)"),
        tr._("/leave during a match — the computer plays your seat; /kick NAME — the same for "
             "an absent player (creator or admin)"),
        tr._("/lang ru|en — language; /rules — the rules; /settings — the group's settings "
             "(admins)"),
        "",
        tr._("Cards: QC, 10D (or TD), Q♣, Дт. Cells: a column letter and a row number, "
             "e.g. M12; the first card of every tour is at M13."),
    ])


async def rules(update: Update, context: BotContext) -> None:
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None:
        return
    group = chat.type != ChatType.PRIVATE
    notices = [Send(chat.id, rules_text(tr), thread_id=thread_of(update), group=group,
                    info=reply_kind(svc, update))]
    pictures = [("rules", tr._("Card values and combinations, drawn with real cards.")),
                ("board", tr._("A tour on the board: a goal and an own goal."))]
    if not group:  # how to place a card matters where the moves are made
        pictures.append(("coordinates", tr._("Where a card may go, and how /hint shows it.")))
    for kind, caption in pictures:
        picture = await rules_picture(kind, tr.language)
        notices.append(Send(chat.id, caption, thread_id=thread_of(update), photo=picture,
                            group=group, info=reply_kind(svc, update, f"/{kind}")))
    svc.delivery.run(notices)


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


async def lang(update: Update, context: BotContext) -> None:
    svc = services(context)
    chat = update.effective_chat
    if chat is None:
        return
    args = context.args or []
    language = (args[0] if args else "").lower()[:5]
    if (chat.type != ChatType.PRIVATE and language in svc.flow.catalogs.languages
            and not await svc.flow.sets_up(chat.id, thread_of(update), actor_of(update).user_id)
            and not await is_admin(update, context)):
        # The group's language is everyone's: its admins decide (or whoever is setting up a
        # match there, so a new group can start in its language).
        tr = await reply_tr(svc, update)
        await say(svc, update, tr._("Only a chat admin, or whoever is setting up a match here, "
                                    "can change the group's language."))
        return
    try:
        tr = await svc.flow.set_language(chat.id, actor_of(update), language)
    except InputError as exc:
        tr = await reply_tr(svc, update)
        await say(svc, update, tr._(exc.key, **exc.values))
        return
    await say(svc, update, tr._("Language: {name}.", name=language_name(tr.language)))
