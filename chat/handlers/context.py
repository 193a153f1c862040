"""The handler's view of one update and how it answers a move or a set-up: :class:`Call`
(the services, who acted, where, in which language), :func:`handler` (a PTB callback from a
function of a :class:`Call`) and :func:`answer` (an :class:`~chat.outcomes.Outcome`'s reply and
notices). A typed move runs through all of this; who acted and the reply language come from
the request :mod:`chat.handlers.admission` resolved, and the replies to information commands
are said by :mod:`chat.handlers.replies` (the services they use: :mod:`chat.services`)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from typing import Any

from telegram import Chat, Update
from telegram.constants import ChatType

from chat.flow import Actor, Flow
from chat.handlers.admission import (
    BotContext,
    Request,
    actor_of,
    command_of,
    command_source,
    request_of,
    services,
    thread_of,
)
from chat.handlers.ephemeral_answers import privately
from chat.handlers.replies import inform, is_admin, reply_kind, say, unrepeated
from chat.i18n import Tr
from chat.notices import Notice, Send
from chat.outcomes import Accepted, Outcome
from chat.services import Services

Handler = Callable[[Update, "BotContext"], Coroutine[Any, Any, None]]
#: A handler written against :class:`Call` (wrapped by :func:`handler`).
CallHandler = Callable[["Call"], Awaitable[None]]


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
