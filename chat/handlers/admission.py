"""An update's admission and its request, before any handler runs: the typed context PTB
hands every handler, the facts read off an update (who acted, in which chat and topic, which
command), then in handler group -1 the per-user and per-chat limits of :mod:`chat.throttle`
(:func:`admission`, telling a flooder to slow down: :func:`slow_down`) and the preamble that
resolves the sender and the reply language once for all handlers (:class:`Request`,
:func:`resolve`). Also what :class:`chat.updates.ChatOrderedProcessor` asks of the application
before that: which waiting updates belong to the match in progress (:func:`urgent`), and
telling someone whose updates it dropped to slow down (:func:`dropped`).

Apart from :mod:`chat.handlers.context` (the handler's :class:`~chat.handlers.context.Call`)
and :mod:`chat.handlers.replies` (how an information reply is said) because both build on it:
this module is the bottom of the handlers' common code, importing neither."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, cast

from telegram import Update
from telegram.constants import ChatType
from telegram.error import TelegramError
from telegram.ext import ApplicationHandlerStop, CallbackContext, ContextTypes, ExtBot

from chat import ephemeral
from chat.ephemeral import EphemeralId
from chat.flow import Actor, MatchPress, is_reaction, parse_press, person_name
from chat.handlers.attempt import ATTEMPT, with_ledger
from chat.i18n import Tr
from chat.model import InputError
from chat.notices import Send
from chat.services import Services
from chat.throttle import INFO_COMMANDS

log = logging.getLogger(__name__)


class BotContext(CallbackContext[ExtBot[None], dict[Any, Any], dict[Any, Any], dict[Any, Any]]):
    """The context every handler gets (PTB's ``ContextTypes`` with our own class, as its
    ``contexttypesbot.py`` example does): the services built in ``post_init``."""

    @property
    def services(self) -> Services:
        return cast(Services, self.application.bot_data["services"])


#: Registered with the application builder (``chat/compose.py``).
CONTEXT_TYPES = ContextTypes(context=BotContext)


def services(context: BotContext) -> Services:
    return context.services


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


def command_source(update: Update) -> EphemeralId | None:
    """The ephemeral command ``update`` carries, if it is one (issue 42: its answers go
    back to its sender alone, chat/handlers/ephemeral_answers.py). An ordinary message (its
    ``message_id`` is not 0) is told apart here at once: the path of every typed command
    stays as short as it was (tests/test_one_request.py counts its modules)."""
    message = update.effective_message
    if update.callback_query is not None or message is None or message.message_id != 0:
        return None
    return ephemeral.incoming(message)


def is_private(update: Update) -> bool:
    chat = update.effective_chat
    return chat is not None and chat.type == ChatType.PRIVATE


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


@dataclass(frozen=True, slots=True)
class Request:
    """Who sent an update and the language to answer in, resolved once per update by the
    preamble (:func:`resolve`, run by :func:`admission` before any handler)."""

    update_id: int
    actor: Actor
    #: The reply language: the user's in a private chat, the group's in a group.
    tr: Tr
    #: A private update from someone we could not write to until now (blocked the bot, or
    #: never started it): ``/start`` then sends their hands and panels by itself.
    reopened: bool = False


#: The update being handled in this task (PTB runs each update in a task of its own, and
#: every handler group of one update in that task).
CURRENT: ContextVar[Request | None] = ContextVar("krendzu_request", default=None)


async def resolve(svc: Services, update: Update) -> Request | None:
    """The preamble: remember the user (one read of their row) and pick the reply language;
    every handler of this update then reads it from :data:`CURRENT`."""
    if update.effective_user is None:
        return None
    svc.flow.begin_request()
    actor = actor_of(update)
    private = is_private(update)
    chat = update.effective_chat
    if chat is not None and chat.type != ChatType.PRIVATE:
        read = svc.flow.read_request if ATTEMPT.get() is None else with_ledger(svc.flow, update)
        await read(actor.user_id, chat.id, thread_of(update))  # the one read (issue 39)
    # Read before see_user marks the private chat open again.
    reopened = private and await svc.flow.was_unreachable(actor.user_id)
    tr = await svc.flow.see_user(actor, private=private)
    if chat is not None and chat.type != ChatType.PRIVATE:
        await svc.flow.remember_title(chat.id, chat.title)
        tr = await svc.flow.chat_tr(chat.id, tr.language)
        if update.callback_query is None:
            # What the flow answers a typed command (/join, a refused move) is said in the
            # group: in the group's language, whatever the sender's own. (A button's toast
            # is read by the presser alone: their own language, chat/handlers/buttons.py.)
            actor = replace(actor, reply_language=tr.language)
    request = Request(update.update_id, actor, tr, reopened)
    CURRENT.set(request)
    return request


async def request_of(svc: Services, update: Update) -> Request:
    """This update's :class:`Request` (resolved now if the preamble did not run)."""
    known = CURRENT.get()
    if known is not None and known.update_id == update.update_id:
        return known
    request = await resolve(svc, update)
    assert request is not None, "an update without a user has no request"
    return request


async def reply_tr(svc: Services, update: Update) -> Tr:
    """The language to answer in: the user's in a private chat, the group's in a group."""
    return (await request_of(svc, update)).tr


async def slow_down(svc: Services, update: Update) -> None:
    """Tell the sender of ``update`` that they send too much (a button's toast, or a line in
    the chat); the callers make sure it is said once a minute at most."""
    user, chat = update.effective_user, update.effective_chat
    if user is None:
        return
    chat_id = chat.id if chat is not None else user.id
    tr = await (svc.flow.user_tr(user.id) if chat_id > 0 else svc.flow.chat_tr(chat_id))
    text = tr._("{name}, that is a lot of requests at once: please wait a minute.",
                name=actor_of(update).name)
    if update.callback_query is not None:
        with contextlib.suppress(TelegramError):
            await update.callback_query.answer(text[:190])
    else:
        svc.delivery.run([Send(chat_id, text, thread_id=thread_of(update),
                               group=chat_id < 0, info="slow down")])


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
