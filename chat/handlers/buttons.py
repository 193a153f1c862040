"""Inline buttons: the lobby's, the private panel's and the greeting's."""

from __future__ import annotations

from telegram import Chat, Update
from telegram.constants import ChatType

from chat.describe import visible
from chat.flow import LobbyPress, MatchPress, parse_press
from chat.handlers.chats import NEW_MATCH_LOBBY
from chat.handlers.context import BotContext, actor_of, is_admin, services
from chat.model import InputError
from chat.notices import Send


async def button(update: Update, context: BotContext) -> None:
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
            # The pressed message is that player's panel now (delivery owns the ids); one
            # it did not know yet is noted only for a match the presser plays: the match id
            # comes from (possibly forged) button data.
            key = (press.match_id, actor.user_id)
            if svc.delivery.knows_panel(*key) or await svc.flow.plays_in(*key):
                svc.delivery.panel_pressed(*key, message.message_id,
                                           is_photo=bool(getattr(message, "photo", None)))
        # A press in a group (Rematch) says nothing about whether the private chat is open.
        outcome = await svc.flow.panel_press(press.match_id, press.seq, press.op, actor,
                                             update_id=update.update_id, private=private)
    await query.answer((outcome.reply or "")[:190] or None,
                       show_alert=outcome.alert and outcome.url is None, url=outcome.url)
    svc.delivery.run(outcome.notices)
