"""Before any handler (group -1): the per-user and per-chat limits of :mod:`chat.throttle`."""

from __future__ import annotations

import contextlib

from telegram import Update
from telegram.error import TelegramError
from telegram.ext import ApplicationHandlerStop

from chat.handlers.context import BotContext, actor_of, command_of, resolve, services, thread_of
from chat.notices import Send
from chat.throttle import INFO_COMMANDS


async def admission(update: Update, context: BotContext) -> None:
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
        await resolve(svc, update)  # the user and the reply language, once for all handlers
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
