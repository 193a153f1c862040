"""One small async handler per command or button family: parse, call the flow, answer.

No game logic here. Every handler reads untrusted input, turns it into an intent for
:class:`chat.flow.Flow`, and hands the outcome's notices to delivery.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

from telegram import Chat, Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import NetworkError, TelegramError
from telegram.ext import ApplicationHandlerStop, ContextTypes

from chat.caches import ByteLru, TtlCache
from chat.computer import Pacer, Thinker
from chat.delivery import Delivery
from chat.describe import person_name, visible
from chat.flow import Actor, Flow, placements_to_steps
from chat.i18n import Tr
from chat.model import (
    END_WORDS,
    MAX_INPUT,
    PASS_WORDS,
    Button,
    InputError,
    LobbyPress,
    MatchPress,
    ascii_number,
    lobby_data,
    looks_like_move,
    parse_placements,
    parse_press,
)
from chat.notices import Drawing, Outcome, Send
from chat.painter import draw_replay
from chat.throttle import INFO_COMMANDS, Throttle
from krendzu import Announce, Discard, EndTurn, Pass, PlayerAction, parse_card
from krendzu.tour import PLAY
from render.stats import LeaderRow
from storage import NotFound, Store, StoredMatch

log = logging.getLogger(__name__)

Handler = Callable[[Update, ContextTypes.DEFAULT_TYPE], Awaitable[None]]

#: How long an answer of getChatMember (admin or not) is trusted.
ADMIN_SECONDS = 60.0
#: How long a leaderboard page is shown as it was read.
LEADERS_SECONDS = 60.0
#: Exported records kept (a long match's record is some 100 KiB).
EXPORT_BYTES = 4 * 1024 * 1024


@dataclass
class Services:
    """Everything the handlers use, built in ``post_init`` (no singletons at import)."""

    store: Store
    flow: Flow
    delivery: Delivery
    thinker: Thinker
    pacer: Pacer
    #: An untouched match set-up closes after this many seconds.
    lobby_seconds: float = 1800.0
    #: Held while the turn timers' tick runs (one at a time).
    ticking: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Answers asked for again and again, kept briefly (:mod:`chat.caches`): admin checks by
    #: (chat, user) — a refused /cancel /kick /settings asks Telegram once a minute at most;
    #: exported records by (match, finished tours); leaderboard pages by scope.
    admins: TtlCache[tuple[int, int], bool] = field(
        default_factory=lambda: TtlCache(ADMIN_SECONDS, 4096))
    exports: ByteLru[tuple[int, int]] = field(
        default_factory=lambda: ByteLru(EXPORT_BYTES, 32))
    leaders: TtlCache[int | None, tuple[tuple[LeaderRow, ...], int]] = field(
        default_factory=lambda: TtlCache(LEADERS_SECONDS, 256))
    #: Per-user and per-chat limits (:mod:`chat.throttle`), checked by :func:`admission`.
    throttle: Throttle = field(default_factory=Throttle)


def services(context: ContextTypes.DEFAULT_TYPE) -> Services:
    return context.application.bot_data["services"]


def actor_of(update: Update) -> Actor:
    user = update.effective_user
    assert user is not None
    # Only what shows of the name: it is put into sentences the whole group reads.
    return Actor(user.id, person_name(user.full_name, user.username), user.language_code)


def thread_of(update: Update) -> int | None:
    message = update.effective_message
    if message is not None and message.is_topic_message:
        return message.message_thread_id
    return None


def is_private(update: Update) -> bool:
    chat = update.effective_chat
    return chat is not None and chat.type == ChatType.PRIVATE


async def reply_tr(svc: Services, update: Update) -> Tr:
    """The language to answer in: the user's in a private chat, the group's in a group."""
    actor = actor_of(update)
    tr = await svc.flow.see_user(actor, private=is_private(update))
    chat = update.effective_chat
    if chat is not None and chat.type != ChatType.PRIVATE:
        return await svc.flow.chat_tr(chat.id, tr.language)
    return tr


async def answer(svc: Services, update: Update, outcome: Outcome, tr: Tr | None = None) -> None:
    """Deliver the notices; say the reply (privately if it names a held card)."""
    svc.flow.remember_title(update.effective_chat.id if update.effective_chat else 0,
                            update.effective_chat.title if update.effective_chat else None)
    notices = list(outcome.notices)
    if outcome.reply and update.effective_chat is not None:
        chat = update.effective_chat
        if outcome.private_reply and chat.type != ChatType.PRIVATE:
            notices.insert(0, Send(actor_of(update).user_id, outcome.reply))
        elif not notices or outcome.alert:
            notices.insert(0, Send(chat.id, outcome.reply, thread_id=thread_of(update),
                                   group=chat.type != ChatType.PRIVATE))
    svc.delivery.run(notices)


async def say(svc: Services, update: Update, text: str) -> None:
    chat = update.effective_chat
    if chat is not None:
        svc.delivery.run([Send(chat.id, text, thread_id=thread_of(update),
                               group=chat.type != ChatType.PRIVATE,
                               info=reply_kind(svc, update))])


def reply_kind(svc: Services, update: Update, part: str = "") -> str:
    """What a reply answers (the command and who asked): replies wait behind board posts
    and panels, and a newer reply of the same kind replaces a queued one (chat/delivery)."""
    command = command_of(update, svc.flow.bot_username) or "text"
    user = update.effective_user
    return f"{command}{part}:{user.id if user else 0}"


async def is_admin(update: Update, context: ContextTypes.DEFAULT_TYPE) -> bool:
    """Whether the user administers the group: asked of Telegram at most once a minute per
    (chat, user), so repeated refused commands cost no Bot API call. (A failed call is not
    remembered: the next command asks again.)"""
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None or chat.type == ChatType.PRIVATE:
        return False
    known = services(context).admins
    answer = known.get((chat.id, user.id))
    if answer is not None:
        return answer
    try:
        member = await context.bot.get_chat_member(chat.id, user.id)
    except TelegramError:
        return False
    answer = member.status in (ChatMemberStatus.OWNER, ChatMemberStatus.ADMINISTRATOR)
    known.put((chat.id, user.id), answer)
    return answer


# Admission ------------------------------------------------------------------------------


def command_of(update: Update, bot_username: str) -> str | None:
    """The command an update's message starts with, if it is addressed to this bot."""
    message = update.effective_message
    text = message.text if message is not None else None
    words = text.split(maxsplit=1) if text else []
    if not words or not words[0].startswith("/"):
        return None
    name, _, addressee = words[0][1:].partition("@")
    if addressee and addressee.lower() != bot_username.lower():
        return None
    return name.lower()[:32]


async def admission(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Runs before every handler (group -1): per-user and per-chat limits. A refused update
    stops here; its sender is told once to slow down (:mod:`chat.throttle`)."""
    user, chat = update.effective_user, update.effective_chat
    if user is None or update.my_chat_member is not None:
        return
    svc = services(context)
    info = command_of(update, context.bot.username or "") in INFO_COMMANDS
    chat_id = chat.id if chat is not None else user.id
    admitted, warn = await svc.throttle.admit(user.id, chat_id, info=info)
    if admitted:
        return
    if warn:
        tr = await (svc.flow.user_tr(user.id) if chat_id > 0 else svc.flow.chat_tr(chat_id))
        text = tr._("{name}, that is a lot of requests at once: please wait a minute.",
                    name=actor_of(update).name)
        if update.callback_query is not None:
            with contextlib.suppress(TelegramError):
                await update.callback_query.answer(text[:190])
        else:
            svc.delivery.run([Send(chat_id, text, thread_id=thread_of(update),
                                   group=chat_id < 0, info="slow down")])
    raise ApplicationHandlerStop


# Start, help, rules, language -----------------------------------------------------------


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    svc = services(context)
    actor = actor_of(update)
    private = is_private(update)
    # Read before see_user marks the private chat open again.
    returning = private and await svc.flow.was_unreachable(actor.user_id)
    tr = await svc.flow.see_user(actor, private=private)
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


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
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


async def rules(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
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


async def rules_picture(kind: str, language: str) -> bytes:
    """A picture for ``/rules``, drawn off the event loop once per kind and language."""
    return await asyncio.to_thread(_rules_picture, kind, language)


@functools.lru_cache(maxsize=8)
def _rules_picture(kind: str, language: str) -> bytes:
    from render import illustrations

    draw = {"rules": illustrations.rules_picture,
            "board": illustrations.rules_board_example,
            "coordinates": illustrations.rules_coordinates_example}[kind]
    return draw(language)


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


async def lang(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
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


# Lobby ----------------------------------------------------------------------------------


async def new(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    svc = services(context)
    chat = update.effective_chat
    if chat is None:
        return
    tr = await reply_tr(svc, update)
    try:
        outcome = await svc.flow.new_lobby(chat.id, thread_of(update), actor_of(update),
                                           (context.args or [])[:10],
                                           title=visible(chat.title or ""))
    except InputError as exc:
        await say(svc, update, tr._(exc.key, **exc.values))
        return
    await answer(svc, update, outcome, tr)


def lobby_command(op: str) -> Handler:
    async def handler(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        svc = services(context)
        chat = update.effective_chat
        if chat is None:
            return
        chosen = op
        if op == "add":
            level = (context.args or ["normal"])[0].lower()[:10]
            chosen = f"add:{level}"
        if op == "leave" and await svc.store.open_lobby(chat.id, thread_of(update)) is None:
            await leave_match(svc, update)
            return
        outcome = await svc.flow.lobby_action(chat.id, thread_of(update), actor_of(update),
                                              chosen, is_admin=await is_admin(update, context)
                                              if op == "cancel" else False)
        await answer(svc, update, outcome)

    handler.__name__ = f"lobby_{op}"
    return handler


# Moves ----------------------------------------------------------------------------------


async def target_match(svc: Services, update: Update, tr: Tr) -> StoredMatch | None:
    """The match a move command means; says why when there is none or it is ambiguous."""
    chat = update.effective_chat
    user_id = actor_of(update).user_id
    assert chat is not None
    if chat.type != ChatType.PRIVATE:
        stored = await svc.flow.find_match(chat.id, thread_of(update), user_id)
        if stored is None:
            await say(svc, update, tr._("No match is being played here. /new sets one up."))
        return stored
    matches = await svc.flow.my_matches(user_id)
    if not matches:
        await say(svc, update, tr._("You are not in a match. /new starts one against the "
                                    "computer; in a group, /new sets one up for friends."))
        return None
    own = [m for m in matches if m.game.current_player == m.row.seat_of(user_id)]
    if len(own) == 1:
        return own[0]
    if not own:
        if len(matches) == 1:
            return matches[0]
        await say(svc, update, tr._("It is not your turn in any of your matches."))
        return None
    await say(svc, update, tr.n_("It is your turn in {n} match: use the buttons on its panel.",
                                 "It is your turn in {n} matches: use the buttons on the panel "
                                 "of the one you mean.", len(own)))
    return None


async def play(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await _play_words(update, context, context.args or [])


async def _play_words(update: Update, context: ContextTypes.DEFAULT_TYPE,
                      words: list[str]) -> None:
    svc = services(context)
    tr = await reply_tr(svc, update)
    stored = await target_match(svc, update, tr)
    if stored is None:
        return
    actor = actor_of(update)
    game = stored.game
    seat = stored.row.seat_of(actor.user_id)
    steps: list[PlayerAction]
    lowered = [w.lower() for w in words]
    try:
        if lowered in (["pass"], ["пас"]):
            steps = [Pass()]
        elif lowered and lowered[0] in END_WORDS and len(lowered) == 1:
            steps = [EndTurn()]
        else:
            from chat.describe import tour_frame

            placements = parse_placements(words, tour_frame(game))
            defender = (seat is not None and game.current_player == seat
                        and game.tour.phase == PLAY
                        and seat not in game.tour.roles.attackers
                        and bool(game.tour.placed) and game.tour.step_in_turn == 0)
            steps = placements_to_steps(placements, defender)  # type: ignore[assignment]
    except InputError as exc:
        await answer(svc, update, Outcome(tr._(exc.key, **exc.values), private_reply=True))
        return
    outcome = await svc.flow.play(stored.match_id, actor, steps, update_id=update.update_id)
    await answer(svc, update, outcome)


async def pass_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await _play_words(update, context, ["pass"])


async def exchange(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    svc = services(context)
    tr = await reply_tr(svc, update)
    args = context.args or []
    if len(args) != 1 or not ascii_number(args[0]) or len(args[0]) > 2:
        await say(svc, update, tr._("Write how many cards you exchange, e.g. /exchange 2."))
        return
    stored = await target_match(svc, update, tr)
    if stored is not None:
        outcome = await svc.flow.play(stored.match_id, actor_of(update), [Announce(int(args[0]))],
                                      update_id=update.update_id)
        await answer(svc, update, outcome)


async def discard(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    svc = services(context)
    if not is_private(update):
        # Typed in a group, the command shows everyone the card given away: the exchange is
        # made in the private chat only. The answer goes there too; the group hears nothing
        # (and no card is named).
        actor = actor_of(update)
        utr = await svc.flow.see_user(actor)
        svc.delivery.run([Send(actor.user_id, utr._(
            "Cards to exchange are named here, in our private chat, not in the group (everyone "
            "there would see them): /discard CARD … or the buttons of your panel."))])
        return
    tr = await reply_tr(svc, update)
    args = (context.args or [])[:8]
    try:
        if not args:
            raise InputError("Name the cards you give away, e.g. /discard QC 7H.")
        cards = [parse_card(a) for a in args]
    except ValueError:
        await answer(svc, update, Outcome(tr._("Name the cards you give away, e.g. "
                                               "/discard QC 7H."), private_reply=True))
        return
    stored = await target_match(svc, update, tr)
    if stored is not None:
        outcome = await svc.flow.play(stored.match_id, actor_of(update),
                                      [Discard(c) for c in cards], update_id=update.update_id)
        outcome.private_reply = True
        await answer(svc, update, outcome)


async def text_move(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Plain text in a private chat: ``QC M12``, ``pass``; anything else gets a hint."""
    message = update.effective_message
    if message is None or not message.text:
        return
    svc = services(context)
    text = message.text
    if len(text) > MAX_INPUT:
        tr = await reply_tr(svc, update)
        await say(svc, update, tr._("That message is too long for me. Moves look like QC M12."))
        return
    words = text.split()
    if text.strip().lower() in PASS_WORDS or looks_like_move(text):
        await _play_words(update, context, words)
        return
    tr = await reply_tr(svc, update)
    await say(svc, update, tr._("Moves look like QC M12 (a card and a cell). /help lists the "
                                "commands."))


# Information ----------------------------------------------------------------------------


def match_command(kind: str) -> Handler:
    async def handler(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        svc = services(context)
        tr = await reply_tr(svc, update)
        chat = update.effective_chat
        if chat is None:
            return
        stored = None
        if kind == "export" and context.args:
            # /export N: a match from /history (of this chat, or one the user played).
            stored = await match_by_number(svc, update, tr, context.args[0])
            if stored is None:
                return
        elif kind in ("export", "score", "board"):
            # After a match too: the newest one the user played here.
            stored = await svc.flow.latest_match(chat.id, thread_of(update),
                                                 actor_of(update).user_id)
        stored = stored or await target_match(svc, update, tr)
        if stored is None:
            return
        actor = actor_of(update)
        seated = stored.row.seat_of(actor.user_id) is not None
        flow = svc.flow
        if kind == "hand":
            if not seated:
                await say(svc, update, tr._("You are not playing in this match."))
                return
            svc.delivery.run([await flow.hand(stored, actor.user_id)])
        elif kind == "board":
            notices = await flow.board(stored, chat.id, thread_of(update), actor.user_id)
            svc.delivery.run([replace(n, info=reply_kind(svc, update))
                              if isinstance(n, Send) and n.panel_of is None else n
                              for n in notices])
        elif kind == "score":
            await say(svc, update, await flow.score(stored, tr))
        elif kind == "hint":
            seat = stored.row.seat_of(actor.user_id)
            utr = await flow.user_tr(actor.user_id)
            if seat is None or stored.game.current_player != seat:
                svc.delivery.run([Send(actor.user_id, utr._("A hint is given on your own turn."))])
                return
            svc.delivery.run([await flow.hint_notice(stored, seat, actor.user_id)])
        elif kind == "export":
            await export(svc, update, stored, tr)
        elif kind == "resign":
            await answer(svc, update, await flow.resign(stored, actor))
        elif kind == "cancel":
            await answer(svc, update, await flow.cancel(stored, actor,
                                                        await is_admin(update, context)))

    handler.__name__ = f"match_{kind}"
    return handler


async def leave_match(svc: Services, update: Update) -> None:
    """``/leave`` during a match: the computer plays the seat from now on."""
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    assert chat is not None
    actor = actor_of(update)
    if chat.type == ChatType.PRIVATE:
        stored = next(iter(await svc.flow.my_matches(actor.user_id)), None)
    else:
        stored = await svc.flow.find_match(chat.id, thread_of(update), actor.user_id)
    seat = stored.row.seat_of(actor.user_id) if stored else None
    if stored is None or seat is None:
        await say(svc, update, tr._("You are not seated at a table here."))
        return
    if chat.type == ChatType.PRIVATE and stored.row.chat_id > 0:
        await say(svc, update, tr._("Alone against the computer: /resign ends the match."))
        return
    group_tr = await svc.flow.chat_tr(stored.row.chat_id)
    svc.delivery.run(await svc.flow.timers.hand_over(stored, seat, group_tr._(
        "{name} left the table: the computer plays for them from now on (/back returns).",
        name=actor.name)))


async def kick(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/kick NAME|SEAT`` (or in reply to the player): the creator or an admin hands an
    absent player's seat to the computer."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None or chat.type == ChatType.PRIVATE:
        if chat is not None:
            await say(svc, update, tr._("/kick works in a group, for a player there."))
        return
    actor = actor_of(update)
    stored = await svc.flow.find_match(chat.id, thread_of(update), actor.user_id)
    if stored is None:
        await say(svc, update, tr._("No match is being played here. /new sets one up."))
        return
    lobby = await svc.store.lobby_of_match(stored.match_id)
    if not ((lobby is not None and lobby.creator_id == actor.user_id)
            or await is_admin(update, context)):
        await say(svc, update, tr._("Only the creator or a chat admin can do that."))
        return
    names = await svc.flow.seat_names(stored.row, tr)
    target: int | None = None
    message = update.effective_message
    replied = message.reply_to_message if message is not None else None
    if replied is not None and replied.from_user is not None:
        target = stored.row.seat_of(replied.from_user.id)
    elif context.args:
        wanted = " ".join(context.args).strip().lstrip("@").lower()[:64]
        if ascii_number(wanted) and 1 <= int(wanted) <= len(names):
            target = int(wanted) - 1
        else:
            target = next((i for i, n in enumerate(names) if n.lower() == wanted), None)
    if target is None or stored.row.seats[target].user_id is None:
        await say(svc, update, tr._("Whom? Reply to the player's message with /kick, or write "
                                    "/kick and their name or seat number."))
        return
    svc.delivery.run(await svc.flow.timers.hand_over(stored, target, tr._(
        "{name} was taken off the table: the computer plays for them from now on (/back "
        "returns).", name=names[target])))


async def settings(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/settings [tidy=on|off]``: the group's own settings (admins change them)."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None:
        return
    if chat.type == ChatType.PRIVATE:
        await say(svc, update, tr._("/settings is for groups. Here, /lang changes the "
                                    "language."))
        return
    args = [a.lower() for a in (context.args or [])][:3]
    if args:
        if not await is_admin(update, context):
            await say(svc, update, tr._("Only a chat admin can change the settings."))
            return
        choice = {"tidy=on": True, "tidy=off": False}.get(args[0])
        if choice is None:
            await say(svc, update, tr._("I did not understand that. Try /settings tidy=on or "
                                        "/settings tidy=off."))
            return
        await svc.store.upsert_chat(chat.id, tidy=choice)
        svc.delivery.set_tidy(chat.id, choice)
    tidy = await svc.delivery.is_tidy(chat.id)
    await say(svc, update, "\n".join([
        tr._("Settings of this chat:"),
        tr._("• Keep only the newest board post: {state}.",
             state=tr._("on") if tidy else tr._("off")),
        tr._("Admins change it with /settings tidy=on or /settings tidy=off."),
    ]))


async def back(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/back``: take the seat back from the computer that played for you."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None:
        return
    actor = actor_of(update)
    if chat.type == ChatType.PRIVATE:
        matches = await svc.flow.my_matches(actor.user_id)
    else:
        found = await svc.flow.find_match(chat.id, thread_of(update), actor.user_id)
        matches = [found] if found else []
    if not matches:
        await say(svc, update, tr._("You are not in a match."))
        return
    await answer(svc, update, await svc.flow.timers.back(actor, matches))


async def match_by_number(svc: Services, update: Update, tr: Tr, word: str
                          ) -> StoredMatch | None:
    chat = update.effective_chat
    assert chat is not None
    number = word.lstrip("#")
    stored = None
    if ascii_number(number) and len(number) < 12:
        try:
            stored = await svc.flow.load(int(number))
        except NotFound:
            stored = None
    if stored is not None and chat.type != ChatType.PRIVATE:
        if stored.row.chat_id != chat.id:
            stored = None
    elif stored is not None and stored.row.seat_of(actor_of(update).user_id) is None:
        stored = None
    if stored is None:
        await say(svc, update, tr._("There is no match {number} here: /history lists them.",
                                    number=word[:12]))
    return stored


async def export(svc: Services, update: Update, stored: StoredMatch, tr: Tr) -> None:
    chat = update.effective_chat
    assert chat is not None
    finished = sum(1 for t in stored.game.tours if t.is_over)
    data = svc.exports.get((stored.match_id, finished))
    if data is None:
        data, finished = svc.flow.export(stored)
        svc.exports.put((stored.match_id, finished), data)
    if not finished:
        await say(svc, update, tr._("No tour is finished yet: the record is sent when a tour "
                                    "is over (a running tour's record would show the hands)."))
        return
    group = chat.type != ChatType.PRIVATE
    notices = [Send(chat.id, tr.n_("The record of {n} finished tour.",
                                   "The record of {n} finished tours.", finished),
                    thread_id=thread_of(update), document=(f"krendzu-{stored.match_id}.json",
                                                           data), group=group,
                    info=reply_kind(svc, update, "/record"))]
    # Drawn when its turn to be sent comes, once per (match, tour) while the painter keeps
    # it: twenty /export in a row queue twenty small notices sharing one record.
    gif = Drawing(draw_replay, (data, finished - 1), key=("replay", stored.match_id, finished))
    notices.append(Send(chat.id, tr._("Replay of tour {t}.", t=finished),
                        thread_id=thread_of(update), animation=("replay.gif", gif), group=group,
                        info=reply_kind(svc, update, "/replay")))
    svc.delivery.run(notices)


# Buttons --------------------------------------------------------------------------------


async def button(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    if query is None:
        return
    svc = services(context)
    actor = actor_of(update)
    tr = await svc.flow.see_user(actor)
    try:
        press = parse_press(query.data)
    except InputError as exc:
        await query.answer(tr._(exc.key, **exc.values))
        return
    message = query.message
    chat: Chat | None = message.chat if message is not None else None
    if isinstance(press, LobbyPress):
        if chat is None:
            await query.answer(tr._("This button is not valid any more."))
            return
        if press.lobby_id == NEW_MATCH_LOBBY and press.op == "new":
            # The greeting's button: /new without typing (privacy mode lets it through).
            thread = getattr(message, "message_thread_id", None) if getattr(
                message, "is_topic_message", False) else None
            outcome = await svc.flow.new_lobby(chat.id, thread, actor, [],
                                               title=visible(chat.title or ""))
            await query.answer((outcome.reply or "")[:190] or None)
            svc.delivery.run(outcome.notices or ([Send(chat.id, outcome.reply, thread_id=thread,
                                                       group=chat.id < 0)]
                                                 if outcome.reply else []))
            return
        outcome = await svc.flow.lobby_action(
            chat.id, getattr(message, "message_thread_id", None) if getattr(
                message, "is_topic_message", False) else None,
            actor, press.op, lobby_id=press.lobby_id,
            is_admin=await is_admin(update, context) if press.op == "cancel" else False)
    else:
        assert isinstance(press, MatchPress)
        private = chat is not None and chat.type == ChatType.PRIVATE
        if message is not None and private:
            key = (press.match_id, actor.user_id)
            known = svc.delivery.panels.get(key)
            # A panel the bot did not note yet is noted only for a match the presser plays:
            # the match id comes from (possibly forged) button data.
            if (known is None or known[0] != message.message_id) and (
                    known is not None or await svc.flow.plays_in(*key)):
                svc.delivery.panels[key] = (message.message_id,
                                            bool(getattr(message, "photo", None)))
        # A press in a group (Rematch) says nothing about whether the private chat is open.
        outcome = await svc.flow.panel_press(press.match_id, press.seq, press.op, actor,
                                             update_id=update.update_id, private=private)
    await query.answer((outcome.reply or "")[:190] or None,
                       show_alert=outcome.alert and outcome.url is None, url=outcome.url)
    svc.delivery.run(outcome.notices)


# Chat changes and errors ----------------------------------------------------------------


async def migrated(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    message = update.effective_message
    if message is not None and message.migrate_to_chat_id:
        await services(context).store.migrate_chat(message.chat.id, message.migrate_to_chat_id)


async def membership(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """The bot was removed from a group: end what it can no longer show."""
    change = update.my_chat_member
    if change is None:
        return
    if change.chat.type == ChatType.PRIVATE:
        if change.new_chat_member.status in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
            # Blocked: tell the tables at once (once each); /start brings everything back.
            svc = services(context)
            await svc.flow.mark_unreachable(change.chat.id)
            for stored in await svc.flow.my_matches(change.chat.id):
                await svc.delivery.report_unreachable(stored.match_id, change.chat.id)
        return
    if (change.new_chat_member.status in (ChatMemberStatus.MEMBER,
                                          ChatMemberStatus.ADMINISTRATOR)
            and change.old_chat_member.status in (ChatMemberStatus.LEFT,
                                                  ChatMemberStatus.BANNED)):
        await greet_group(services(context), change.chat.id, change.from_user.language_code
                          if change.from_user else None)
        return
    if change.new_chat_member.status in (ChatMemberStatus.LEFT, ChatMemberStatus.BANNED):
        # Every forum topic's match and set-up too, not only the chat's own.
        closed = await services(context).flow.close_chat(change.chat.id)
        log.info("removed from chat %s: %d match(es) and set-up(s) closed", change.chat.id,
                 closed)


#: The greeting's "New match" button: ``v1:l:0:new`` (no lobby has id 0).
NEW_MATCH_LOBBY = 0


async def greet_group(svc: Services, chat_id: int, language_code: str | None) -> None:
    """Added to a group: three lines and a button to set up a match. The greeting is the
    chat's newest message, so under privacy mode a bare ``/new`` reaches the bot too."""
    tr = await svc.flow.chat_tr(chat_id, svc.flow.catalogs.pick(None, language_code).language)
    text = "\n".join([
        tr._("Hi! I am the Krendzu bot: card renju, «four in a row», for 2 to 4 players."),
        tr._("Press the button (or send /new) to set up a match; everyone's cards come to "
             "them privately."),
        tr._("/rules explains the game with pictures, /help lists every command."),
    ])
    svc.delivery.run([Send(chat_id, text, group=True, keyboard=[[Button(
        tr._("▶ New match"), lobby_data(NEW_MATCH_LOBBY, "new"))]])])


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log the failure by type only (a message may hold a hand) and apologise."""
    if update is None and isinstance(context.error, NetworkError):
        # Fetching updates failed (PTB tries again by itself): one line, no traceback.
        log.warning("getting updates failed (%s); trying again", type(context.error).__name__)
        return
    log.error("handler failed: %s", type(context.error).__name__, exc_info=context.error)
    if not isinstance(update, Update) or update.effective_chat is None:
        return
    try:
        svc = services(context)
        tr = await reply_tr(svc, update)
        text = tr._("Sorry, something went wrong on my side. Please try again.")
        if update.callback_query is not None:
            await update.callback_query.answer(text)
        else:
            await say(svc, update, text)
    except Exception:  # the apology itself may fail; nothing more to do
        log.warning("could not send the error reply")
