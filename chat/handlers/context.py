"""The typed context and the helpers every handler shares: who acted, where, in which
language, and how to answer (the services they use: :mod:`chat.services`)."""

from __future__ import annotations

import contextlib
import functools
import logging
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any, cast

from telegram import Chat, Update
from telegram.constants import ChatMemberStatus, ChatType
from telegram.error import TelegramError
from telegram.ext import CallbackContext, ContextTypes, ExtBot

from chat import ephemeral
from chat.answers import answer_key
from chat.ephemeral import EphemeralId
from chat.flow import Actor, Flow, person_name
from chat.handlers.attempt import ATTEMPT, with_ledger
from chat.handlers.ephemeral_answers import privately
from chat.i18n import Tr
from chat.notices import Accepted, Notice, Outcome, Send
from chat.services import Services
from chat.throttle import INFO_COMMANDS

log = logging.getLogger(__name__)

Handler = Callable[[Update, "BotContext"], Coroutine[Any, Any, None]]
#: A handler written against :class:`Call` (wrapped by :func:`handler`).
CallHandler = Callable[["Call"], Awaitable[None]]

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


@dataclass(frozen=True, slots=True)
class Request:
    """Who sent an update and the language to answer in, resolved once per update by the
    preamble (:func:`resolve`, run by ``chat/handlers/admission.py`` before any handler)."""

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


@dataclass(slots=True)
class Call:
    """One update as a handler sees it: the services, who acted, in which chat, and the
    language to answer in — put together once by :func:`handler`, so no handler repeats
    the preamble."""

    update: Update
    context: BotContext
    svc: Services
    request: Request
    chat: Chat

    @property
    def flow(self) -> Flow:
        return self.svc.flow

    @property
    def tr(self) -> Tr:
        return self.request.tr

    @property
    def actor(self) -> Actor:
        return self.request.actor

    @property
    def args(self) -> list[str]:
        return list(self.context.args or [])

    @property
    def thread(self) -> int | None:
        return thread_of(self.update)

    @property
    def private(self) -> bool:
        return self.chat.type == ChatType.PRIVATE

    @property
    def unseen(self) -> bool:
        """Sent as an ephemeral command: nobody in the group saw it (issue 42)."""
        return command_source(self.update) is not None

    async def say(self, text: str) -> None:
        """Answer in this chat (an information reply: it waits behind play)."""
        await say(self.svc, self.update, text)

    async def inform(self, notices: Sequence[Notice]) -> None:
        """Deliver an information command's answer (:func:`inform`)."""
        await inform(self.svc, self.update, notices)

    async def answer(self, outcome: Outcome) -> None:
        if outcome.private_reply and outcome.reply and await self.private_chat_closed():
            # A refusal that names a held card goes to the private chat only; closed, the
            # group's line says where the answer would be, and the card stays unnamed.
            outcome = replace(outcome, reply=None)
        await answer(self.svc, self.update, outcome)

    async def private_chat_closed(self) -> bool:
        """For a command answered in the private chat (``/hand``, ``/hint``, ``/exchange``,
        ``/discard``, a refusal naming a card): whether it was typed in a group by someone
        the bot cannot write to privately (never pressed Start, or blocked the bot). Then
        the command goes no further, and the group gets one line with a button that opens
        the private chat, at most once per person and group every
        :data:`chat.services.PRIVATE_NUDGE_SECONDS`: the answer would meet
        Telegram's 403 and end in silence, and a repeated command must not repeat the line."""
        if self.private or command_source(self.update) is not None:
            return False  # an ephemeral command is answered in the group, to its sender
        command = command_of(self.update, self.flow.bot_username) or "text"
        line = await self.flow.private_chat_closed(self.chat.id, self.thread, self.actor,
                                                   f"/{command}", self.tr)
        if line is None:
            return False
        key = (self.chat.id, self.actor.user_id)
        if self.svc.nudged.get(key) is None:
            self.svc.nudged.put(key, True)
            self.deliver([replace(line, info=self.reply_kind("/private"))])
        return True

    def deliver(self, notices: Sequence[Notice]) -> None:
        source = command_source(self.update)
        self.svc.delivery.run(list(notices) if source is None else privately(source, notices))

    def reply_kind(self, part: str = "") -> str:
        return reply_kind(self.svc, self.update, part)

    async def is_admin(self) -> bool:
        return await is_admin(self.update, self.context)


def handler(body: CallHandler) -> Handler:
    """A PTB callback from ``body(call)``: updates without a chat or a user are ignored."""

    @functools.wraps(body)
    async def run(update: Update, context: BotContext) -> None:
        chat = update.effective_chat
        if update.effective_user is None:
            return
        svc = services(context)
        request = await request_of(svc, update)
        if chat is None:
            if update.callback_query is not None:
                # A button of an inline message: none of ours has one.
                await update.callback_query.answer(
                    request.tr._("This button is not valid any more."))
            return
        await body(Call(update, context, svc, request, chat))

    return run


async def reply_tr(svc: Services, update: Update) -> Tr:
    """The language to answer in: the user's in a private chat, the group's in a group."""
    return (await request_of(svc, update)).tr


async def answer(svc: Services, update: Update, outcome: Outcome, tr: Tr | None = None) -> None:
    """Deliver the notices; say the reply (privately if it names a held card; in a group
    not again while the same reply to the same person is recent: :func:`unrepeated`)."""
    notices = list(outcome.notices)
    source = command_source(update)
    if source is not None:
        # An ephemeral command: the reply, or the echo of an accepted move, to its sender
        # alone (chat/handlers/ephemeral_answers.py).
        text = outcome.reply or (outcome.verdict.echo
                                 if isinstance(outcome.verdict, Accepted) else None)
        replies = [Send(source.chat_id, text, thread_id=thread_of(update))] if text else []
        svc.delivery.run(privately(source, [*replies, *notices], replies))
        return
    if outcome.reply and (chat := update.effective_chat) is not None:
        if outcome.private_reply and chat.type != ChatType.PRIVATE:
            notices.insert(0, Send(actor_of(update).user_id, outcome.reply))
        elif not outcome.accepted or outcome.alert:
            reply = Send(chat.id, outcome.reply, thread_id=thread_of(update),
                         group=chat.type != ChatType.PRIVATE)
            notices[:0] = ([reply] if chat.type == ChatType.PRIVATE
                           else await unrepeated(svc, update, [reply]))
    if notices:  # an accepted typed move's are its announcer's, told later
        svc.delivery.run(notices)


async def say(svc: Services, update: Update, text: str) -> None:
    chat = update.effective_chat
    if chat is not None:
        await inform(svc, update, [Send(chat.id, text, thread_id=thread_of(update),
                                        group=chat.type != ChatType.PRIVATE,
                                        info=reply_kind(svc, update))])


async def inform(svc: Services, update: Update, notices: Sequence[Notice]) -> None:
    """Deliver the answer to an update: its replies in a group (``Send.info``) unless they
    repeat a recent answer (:func:`unrepeated`)."""
    notices = list(notices)
    chat = update.effective_chat
    source = command_source(update)
    if source is not None:  # an ephemeral command: no repeat to spare the group
        svc.delivery.run(privately(source, notices))
        return
    replies = [n for n in notices if isinstance(n, Send) and n.info is not None
               and chat is not None and n.chat_id == chat.id]
    if chat is None or chat.type == ChatType.PRIVATE or not replies:
        svc.delivery.run(notices)
        return
    kept = await unrepeated(svc, update, replies)
    out: list[Notice] = []
    for notice in notices:
        if notice is replies[0]:
            out.extend(kept)
        elif not any(notice is reply for reply in replies):
            out.append(notice)
    svc.delivery.run(out)


async def unrepeated(svc: Services, update: Update, replies: list[Send]) -> list[Send]:
    """What to post of the replies to a command in a group (issue 43: the bot must never
    amplify a spammer). An answer given there lately (:mod:`chat.answers`) is not given
    again: the first repeat after it went out gets a short reply pointing to it, later ones
    nothing. An information command's answer is the group's, whoever asks again; any other
    reply (a refused move, a set-up's "you are seated already") only its person's. Only a
    new information answer counts against the group's information budget
    (:meth:`chat.throttle.Throttle.new_answer`)."""
    chat, user = update.effective_chat, update.effective_user
    command = command_of(update, svc.flow.bot_username)
    if chat is None or user is None or command is None:
        return replies
    info = command in INFO_COMMANDS
    thread = thread_of(update)
    key = answer_key(chat.id, thread, replies, person=None if info else user.id)
    given = svc.answers.get(key)
    if given is not None:  # a repeat
        if given.message_id is None or given.pointed:
            return []  # on its way, or pointed to already: nothing more
        given.pointed = True
        request = await request_of(svc, update)
        return [Send(chat.id, request.tr._("{name}, the answer is just above ↑",
                                           name=request.actor.name),
                     thread_id=thread, group=True, info=reply_kind(svc, update, "/again"),
                     reply_to=given.message_id)]
    if info and not await svc.throttle.new_answer(chat.id, user.id):
        if svc.throttle.warn_once(user.id):
            await slow_down(svc, update)
        return []
    svc.answers.remember(key)
    return [replace(replies[0], answer=key), *replies[1:]]


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


def reply_kind(svc: Services, update: Update, part: str = "") -> str:
    """What a reply answers (the command and who asked): replies wait behind board posts
    and panels, and a newer reply of the same kind replaces a queued one (chat/delivery)."""
    command = command_of(update, svc.flow.bot_username) or "text"
    user = update.effective_user
    return f"{command}{part}:{user.id if user else 0}"


async def is_admin(update: Update, context: BotContext) -> bool:
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
