"""Moves typed as commands or plain text: ``/play``, ``/pass``, ``/exchange``, ``/discard``."""

from __future__ import annotations

from telegram import Update
from telegram.constants import ChatType

from chat.flow import StoredMatch, words_to_steps
from chat.handlers.context import (
    BotContext,
    Services,
    actor_of,
    answer,
    is_private,
    reply_tr,
    say,
    services,
    thread_of,
)
from chat.i18n import Tr
from chat.model import (
    MAX_INPUT,
    PASS_WORDS,
    InputError,
    ascii_number,
    looks_like_move,
)
from chat.notices import Outcome, Send
from krendzu import Announce, Discard, parse_card


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


async def play(update: Update, context: BotContext) -> None:
    await _play_words(update, context, context.args or [])


async def _play_words(update: Update, context: BotContext,
                      words: list[str]) -> None:
    svc = services(context)
    tr = await reply_tr(svc, update)
    stored = await target_match(svc, update, tr)
    if stored is None:
        return
    actor = actor_of(update)
    try:
        steps = words_to_steps(stored.game, stored.row.seat_of(actor.user_id), words)
    except InputError as exc:
        await answer(svc, update, Outcome(tr._(exc.key, **exc.values), private_reply=True))
        return
    outcome = await svc.flow.play(stored.match_id, actor, steps, update_id=update.update_id)
    await answer(svc, update, outcome)


async def pass_command(update: Update, context: BotContext) -> None:
    await _play_words(update, context, ["pass"])


async def exchange(update: Update, context: BotContext) -> None:
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


async def discard(update: Update, context: BotContext) -> None:
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


async def text_move(update: Update, context: BotContext) -> None:
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
