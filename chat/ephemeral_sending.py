"""The ephemeral messages a :class:`chat.sending.Sender` sends and edits (issue 42): a
player's panel or an answer in the group that its receiver alone sees, through
:mod:`chat.ephemeral` (Bot API 10.3 by python-telegram-bot's escape hatches)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from telegram import Bot, Message
from telegram.error import BadRequest

from chat import ephemeral
from chat.ephemeral import EphemeralId
from chat.markup import markup
from chat.notices import EditPanel, Ephemeral, Send
from chat.painter import Painter
from storage import PanelMessage, Store

log = logging.getLogger(__name__)


class EphemeralSending:
    """What :class:`chat.sending.Sender` does with ephemeral messages."""

    bot: Bot
    store: Store
    painter: Painter
    moved: dict[int, int]
    #: Set by delivery: the group's window for one ephemeral write, which answers a
    #: person now (:meth:`chat.group_windows.GroupWindows.group_slot`).
    slot: Callable[..., AbstractAsyncContextManager[None]]
    #: Set by the application: whether the bot administers a group, as a push into it
    #: showed (refused: it does not; the admins are told once what rights would bring).
    on_bot_admin: Callable[[int, bool], Awaitable[None]] | None
    #: Groups where a push was refused (this process's memory, for :attr:`on_bot_admin`).
    pushes_refused: set[int]
    #: Set by the operator's metrics (chat/operations.py): an ephemeral message was not
    #: sent, and why (``refused``: by Telegram; ``busy``: the group's window stayed full).
    on_ephemeral_refused: Callable[[str], None] | None = None

    def ephemeral_refused(self, reason: str) -> None:
        """Count an ephemeral message not sent (here, and by delivery when it waited for
        the group's window too long)."""
        if self.on_ephemeral_refused is not None:
            self.on_ephemeral_refused(reason)

    async def _call_send(self, send: Send, kwargs: dict[str, Any]) -> Message | None:
        raise NotImplementedError

    async def _retire_panel(self, chat_id: int, old: PanelMessage,
                            note: str | None) -> None:
        raise NotImplementedError

    async def send(self, send: Send) -> Message | None:
        raise NotImplementedError

    async def send_ephemeral(self, notice: Ephemeral, *, notes: bool = False
                             ) -> Message | None:
        """Send a message of a group that its receiver alone sees: the answer to their press
        or ephemeral command, or pushed (then only where the bot administers the group: a
        refusal is remembered, and nothing is pushed there until its rights change).
        Returns the message, or ``None`` when Telegram refused it. ``notes``: as
        :meth:`chat.sending.Sender.send`'s."""
        send = notice.send
        group = self.moved.get(send.chat_id, send.chat_id)
        pushed = notice.callback_query_id is None and notice.reply_to is None
        kwargs: dict[str, Any] = {
            "chat_id": group, "reply_markup": markup(send.keyboard),
            "disable_notification": True,
            "api_kwargs": ephemeral.send_kwargs(notice.receiver,
                                                callback_query_id=notice.callback_query_id,
                                                reply_to=notice.reply_to),
        }
        if send.thread_id:
            kwargs["message_thread_id"] = send.thread_id
        try:
            async with self.slot(group, answer=not pushed):
                message = await self._call_send(send, kwargs)
        except BadRequest as exc:
            if not ephemeral.not_allowed(exc):
                raise
            log.info("group %s refused an ephemeral message (%s)", group, exc.message)
            self.ephemeral_refused("refused")
            if pushed and self.on_bot_admin is not None and group not in self.pushes_refused:
                # Told once per process (several pushes of one announcement fail at once).
                self.pushes_refused.add(group)
                await self.on_bot_admin(send.chat_id, False)
            return None
        if pushed and self.on_bot_admin is not None and group in self.pushes_refused:
            self.pushes_refused.discard(group)
            await self.on_bot_admin(send.chat_id, True)
        number = ephemeral.sent_id(message)
        if message is not None and number is not None and send.panel_of is not None:
            match_id, user_id = send.panel_of
            old = await self.store.set_panel(match_id, user_id, PanelMessage(
                number, send.picture is not None, group), notes=told_notes(send, notes))
            if old and (old.message_id, old.in_group) != (number, group):
                await self._retire_panel(user_id, old, send.replaces)
        return message

    async def _edit_ephemeral(self, where: EphemeralId, is_photo: bool,
                              notice: EditPanel, *, answer: bool = False) -> None:
        """Edit a panel that is an ephemeral message of the group (``editEphemeralMessage…``:
        its ``message_id`` is 0). Telegram keeps none for long ("may disappear automatically
        after some time, or if the app is restarted"): one gone raises, and the caller sends
        the fallback, the player's new panel."""
        async with self.slot(where.chat_id, answer=answer, patience=0.0):
            if is_photo and notice.picture is not None:
                data = await self.painter.board(notice.picture)
                await ephemeral.edit_photo(self.bot, where, data, notice.text, notice.keyboard)
            elif is_photo:
                await ephemeral.edit_caption(self.bot, where, notice.text, notice.keyboard)
            else:
                await ephemeral.edit_text(self.bot, where, notice.text, notice.keyboard)
        if notice.keyboard is None:
            await self.store.set_panel(notice.match_id, notice.user_id, None)

    async def _send_fallback(self, notice: EditPanel, *, in_group: bool = False) -> None:
        """The new panel an edit falls back to. One that replaces a panel of the group
        (``in_group``) is never sent to the private chat instead: the player did not ask
        for it there, and may never have pressed Start; they open it again from the board
        post (docs/ephemeral.md)."""
        if isinstance(notice.fallback, Send) and not in_group:
            await self.send(notice.fallback)
        elif isinstance(notice.fallback, Ephemeral):
            await self.send_ephemeral(notice.fallback)


def told_notes(send: Send, notes: bool) -> dict[str, int] | None:
    """The told key (:data:`chat.notices.Told`) noted in the same write as the panel
    ``send`` makes, when the sender was asked to (``notes``): the panel of an announcement
    is then remembered as told with its message, one transaction instead of two."""
    if not notes or send.told is None or send.panel_of is None \
            or send.told[0] != send.panel_of[0]:
        return None
    return {send.told[1]: 0}


def remembers_panel(notice: Send | Ephemeral, message: Message | None) -> bool:
    """Whether sending ``notice`` stored the panel it made, and so noted its told key in the
    same write (:func:`told_notes`; its sender then notes nothing more)."""
    send = notice.send if isinstance(notice, Ephemeral) else notice
    return (message is not None and told_notes(send, True) is not None
            and (isinstance(notice, Send) or ephemeral.sent_id(message) is not None))
