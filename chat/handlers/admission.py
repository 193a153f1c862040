"""Before any handler (group -1): the per-user and per-chat limits of :mod:`chat.throttle`;
and what :class:`chat.updates.ChatOrderedProcessor` asks of the application before that: which
waiting updates belong to the match in progress (:func:`urgent`), and telling someone whose
updates it dropped to slow down (:func:`dropped`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from telegram import Update
from telegram.constants import ChatType
from telegram.ext import ApplicationHandlerStop

from chat.flow import MatchPress, is_reaction, parse_press
from chat.handlers.context import (
    BotContext,
    Services,
    command_of,
    resolve,
    services,
    slow_down,
    thread_of,
)
from chat.model import InputError
from chat.throttle import INFO_COMMANDS

log = logging.getLogger(__name__)


async def admission(update: Update, context: BotContext) -> None:
    """Runs before every handler (group -1): per-user and per-chat limits. A refused update
    stops here; its sender is told once to slow down (:mod:`chat.throttle`)."""
    user, chat = update.effective_user, update.effective_chat
    if user is None or update.my_chat_member is not None:
        return
    svc = services(context)
    info = (command_of(update, context.bot.username or "") in INFO_COMMANDS
            or reacts(update))
    chat_id = chat.id if chat is not None else user.id
    admitted, warn = await svc.throttle.admit(user.id, chat_id, info=info)
    if admitted:
        await resolve(svc, update)  # the user and the reply language, once for all handlers
        return
    if warn:
        await slow_down(svc, update)
    raise ApplicationHandlerStop


def reacts(update: Update) -> bool:
    """Whether ``update`` presses an emoji reaction of a pool match: one person's reactions
    to strangers are held to the per-person budget of information requests, so that a
    flood of faces reaches nobody (chat/flow/reactions.py)."""
    query = update.callback_query
    if query is None or not query.data:
        return False
    try:
        press = parse_press(query.data)
    except InputError:
        return False
    return isinstance(press, MatchPress) and is_reaction(press.op)


def dropped(svc: Services, update: Update) -> None:
    """The update processor dropped ``update`` (its sender had too many waiting): they are
    told to slow down, once a minute as the throttle tells them."""
    user = update.effective_user
    if user is None or not svc.throttle.warn_once(user.id):
        return
    task = asyncio.create_task(slow_down(svc, update))
    svc.tasks.add(task)
    task.add_done_callback(svc.tasks.discard)
    task.add_done_callback(_logged)


def _logged(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("could not tell a flooding user to slow down: %s",
                    type(task.exception()).__name__)


async def urgent(svc: Services, update: Update) -> bool:
    """Whether a waiting update belongs to the match being played in its group (topic): a
    seated player's, or a press of that match's buttons. Those go before what others have
    queued (chat/updates.py). Asked only of updates that must wait; the match is looked up
    at most once a second per topic (:attr:`Services.playing`)."""
    chat, user = update.effective_chat, update.effective_user
    if chat is None or user is None or chat.type == ChatType.PRIVATE:
        return False  # a private chat has one person: nobody to go before
    where = (chat.id, thread_of(update))
    known = svc.playing.get(where)
    if known is None:
        known = (await svc.flow.match_here(*where),)
        svc.playing.put(where, known)
    row = known[0]
    if row is None:
        return False
    query = update.callback_query
    if query is not None:
        with contextlib.suppress(InputError):
            press = parse_press(query.data)
            if isinstance(press, MatchPress) and press.match_id == row.match_id:
                return True
    return row.seat_of(user.id) is not None
