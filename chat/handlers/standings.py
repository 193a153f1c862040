"""``/history``, ``/stats [NAME]`` (or in reply to a player), ``/top [global]``: parse, ask
:class:`chat.standings.Standings`, deliver."""

from __future__ import annotations

from telegram import Update
from telegram.constants import ChatType

from chat.handlers.context import (
    BotContext,
    actor_of,
    reply_kind,
    reply_tr,
    say,
    services,
    thread_of,
)
from chat.notices import Send
from chat.standings import EVERYWHERE, Card


async def history(update: Update, context: BotContext) -> None:
    """``/history``: the chat's recent matches with their results."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is not None:
        await say(svc, update, await svc.standings.history(chat.id, thread_of(update), tr))


async def stats(update: Update, context: BotContext) -> None:
    """``/stats [name]``: a card with a player's figures and rating plot (yours by default;
    in a group the figures of that group, in private over all chats)."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None:
        return
    group = chat.type != ChatType.PRIVATE
    user_id = actor_of(update).user_id
    message = update.effective_message
    replied = message.reply_to_message if message is not None else None
    typed = None
    if replied is not None and replied.from_user is not None and not replied.from_user.is_bot:
        user_id = replied.from_user.id
    elif context.args:
        typed = " ".join(context.args).strip().lstrip("@")[:64]
    found = await svc.standings.stats(user_id, tr, scope=chat.id if group else None,
                                      scope_title=chat.title or "" if group else "",
                                      typed_name=typed)
    await send_card(update, context, found)


async def top(update: Update, context: BotContext) -> None:
    """``/top``: the chat's leaderboard; ``/top global``: over all chats."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None:
        return
    overall = bool(context.args) and context.args[0].lower() in EVERYWHERE
    group = chat.type != ChatType.PRIVATE
    card = await svc.standings.top(tr, scope=None if overall or not group else chat.id,
                                   scope_title=chat.title or "")
    await send_card(update, context, card)


async def send_card(update: Update, context: BotContext,
                    card: Card | str) -> None:
    svc = services(context)
    chat = update.effective_chat
    if chat is None:
        return
    if isinstance(card, str):
        await say(svc, update, card)
        return
    svc.delivery.run([Send(chat.id, card.caption, thread_id=thread_of(update),
                           photo=card.picture, group=chat.type != ChatType.PRIVATE,
                           info=reply_kind(svc, update))])
