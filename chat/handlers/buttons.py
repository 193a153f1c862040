"""Inline buttons: the lobby's, the private panel's and the greeting's."""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from telegram import CallbackQuery
from telegram.error import BadRequest

from chat import ephemeral
from chat.flow import (
    BLOCK_OP,
    LobbyPress,
    MatchPress,
    arena_op,
    is_hint_play,
    is_open_panel,
    is_reaction,
    parse_press,
    pool_op,
    turn_link,
    visible,
)
from chat.handlers.chats import NEW_MATCH_LOBBY
from chat.handlers.context import Call, handler
from chat.model import InputError
from chat.notices import EditPanel, Ephemeral, Send
from chat.outcomes import Outcome

log = logging.getLogger(__name__)


async def toast(query: CallbackQuery, text: str | None, **options: Any) -> None:
    """Answer a press. Telegram refuses answers to presses older than about 15 s ("query is
    too old": a slow moment, or an update delivered again after a restart): what the press
    did is already stored and its notices queued, so that refusal is only logged."""
    try:
        await query.answer(text, **options)
    except BadRequest as exc:
        log.info("a button press could not be answered: %s", exc.message)


@handler
async def button(call: Call) -> None:
    query = call.update.callback_query
    if query is None:
        return
    actor = call.actor
    # The toast is read by the presser alone: in their own language, even in a group.
    tr = await call.flow.user_tr(actor.user_id)
    try:
        press = parse_press(query.data)
    except InputError as exc:
        await toast(query, tr._(exc.key, **exc.values))
        return
    message = query.message
    if message is None:
        await toast(query, tr._("This button is not valid any more."))
        return
    if isinstance(press, LobbyPress) and (arena := arena_op(press)) is not None:
        # An arena post's Join / Pause / Start (issue 40): answered by a toast.
        outcome = await call.flow.arena_press(actor, *arena, is_admin=arena[0] == "go"
                                              and not call.private and await call.is_admin())
        call.deliver(outcome.notices)
        await toast(query, (outcome.reply or "")[:190] or None)
        return
    if isinstance(press, LobbyPress) and (op := pool_op(press)) is not None:
        # "Play now" (issue 40): the greeting's button, Leave the queue, the computer offer.
        if not call.private:
            await toast(query, tr._("This button is not valid any more."))
            return
        outcome = await call.flow.pool_press(actor, op)
    elif isinstance(press, LobbyPress):
        if press.lobby_id == NEW_MATCH_LOBBY and press.op == "new":
            # The greeting's button: /new without typing (privacy mode lets it through).
            outcome = await call.flow.new_lobby(call.chat.id, call.thread, actor, [],
                                                title=visible(call.chat.title or ""))
            call.deliver(outcome.notices or ([Send(call.chat.id, outcome.reply,
                                                   thread_id=call.thread, group=not call.private)]
                                             if outcome.reply else []))
            await toast(query, (outcome.reply or "")[:190] or None)
            return
        outcome = await call.flow.lobby_action(
            call.chat.id, call.thread, actor, press.op, lobby_id=press.lobby_id,
            is_admin=await call.is_admin() if press.op == "cancel" else False,
            update_id=call.update.update_id)
    else:
        assert isinstance(press, MatchPress)
        on_ephemeral = ephemeral.pressed(query)
        if on_ephemeral is not None and not is_hint_play(press.op):
            # A press on a panel that is an ephemeral message of the group: that is the
            # player's panel now, named by the group, the presser and its ephemeral id.
            key = (press.match_id, actor.user_id)
            if await call.flow.plays_in(*key):
                await call.svc.delivery.panel_pressed(
                    *key, on_ephemeral.ephemeral_message_id,
                    is_photo=bool(getattr(message, "photo", None)), in_group=call.chat.id)
        if call.private and not is_hint_play(press.op) and press.op != BLOCK_OP \
                and not is_reaction(press.op):
            # The pressed message is that player's panel now (delivery owns the ids); one
            # it did not know yet is noted only for a match the presser plays: the match id
            # comes from (possibly forged) button data.
            key = (press.match_id, actor.user_id)
            if await call.svc.delivery.knows_panel(*key) or await call.flow.plays_in(*key):
                await call.svc.delivery.panel_pressed(
                    *key, message.message_id, is_photo=bool(getattr(message, "photo", None)))
        # A press in a group (Rematch) says nothing about whether the private chat is open.
        outcome = await call.flow.panel_press(press.match_id, press.seq, press.op, actor,
                                              update_id=call.update.update_id,
                                              private=call.private, chat_id=call.chat.id)
        if not call.private and (on_ephemeral is not None or is_open_panel(press.op)):
            await answer_in_group(call, query, press, outcome)
            return
    # The notices first: the press is stored, and its board post must go out even when
    # Telegram refuses the answer.
    call.deliver(outcome.notices)
    await toast(query, (outcome.reply or "")[:190] or None,
                show_alert=outcome.alert and outcome.url is None, url=outcome.url)


async def answer_in_group(call: Call, query: CallbackQuery, press: MatchPress,
                          outcome: Outcome) -> None:
    """A press in a group whose panels open there (issue 42): the board post's "your
    move", or a button of an ephemeral panel. What the flow addresses to the presser (their
    panel, a hint) becomes the ephemeral answer to the press, sent *before* the press is
    answered (an answered press may no longer carry one: docs/ephemeral.md) and within its
    15 seconds; the rest is queued as usual.

    When Telegram refuses the ephemeral answer, the panel goes to the private chat of a
    player who pressed Start, with a short note; anyone else gets the link that opens the
    private chat with Start, which brings the panel there (``/start t<match>``)."""
    actor = call.actor

    def answer(send: Send) -> Ephemeral:
        return Ephemeral(replace(send, chat_id=call.chat.id, thread_id=call.thread, group=True),
                         actor.user_id, callback_query_id=query.id)

    own = [n for n in outcome.notices if isinstance(n, Send) and n.chat_id == actor.user_id]
    # A tap's edit of the panel goes at once too: if the panel has vanished, the new one it
    # falls back to is the press's answer, which must go before the press is answered.
    edits = [replace(n, fallback=answer(n.fallback)) if isinstance(n.fallback, Send) else n
             for n in outcome.notices
             if isinstance(n, EditPanel) and n.user_id == actor.user_id]
    call.svc.delivery.run([n for n in outcome.notices if not any(n is o for o in own)
                           and not (isinstance(n, EditPanel) and n.user_id == actor.user_id)])
    sent = await call.svc.delivery.answer_now([*(answer(send) for send in own), *edits])
    if all(fate == "sent" for fate in sent):
        await toast(query, (outcome.reply or "")[:190] or None, show_alert=outcome.alert)
        return
    tr = await call.flow.user_tr(actor.user_id)
    if "busy" in sent:
        # The group wrote its ~20 messages of the minute: a panel now would pause it all.
        await toast(query, tr._("This group is busy: press again in a few seconds."))
        return
    if call.svc.refusals_told.get(call.chat.id) is None:
        # The admins hear of it once (a day): panels in the group are not working here.
        call.svc.refusals_told.put(call.chat.id, True)
        call.svc.delivery.run([Send(call.chat.id, call.tr._(
            "Admins: Telegram did not let me show a player's hand here in the group, so it "
            "goes to their private chat with me. Making me an administrator usually helps; "
            "/settings panels=private sends every hand there."), thread_id=call.thread,
            group=True)])
    if await call.flow.started_bot(actor.user_id):
        call.svc.delivery.run([send for send, fate in zip(own, sent, strict=True)
                               if fate != "sent"])
        await toast(query, tr._("Open your hand in the private chat."), show_alert=True)
    else:
        await toast(query, None, url=turn_link(call.flow.bot_username, press.match_id))
