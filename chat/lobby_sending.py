"""The lobbies' and arenas' posts a :class:`chat.sending.Sender` edits in place, or posts
anew (their message ids kept in the store, issue 40)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable

from telegram import Bot, Message
from telegram.error import BadRequest

from chat.markup import TEXT_LIMIT, fit, markup
from chat.notices import Send, ShowLobby
from storage import NotFound, Store

log = logging.getLogger(__name__)


class LobbySending:
    """What :class:`chat.sending.Sender` does with a lobby's or an arena's post."""

    bot: Bot
    store: Store

    #: The sender's own post (:meth:`chat.sending.Sender.send`), which a lobby's fresh post
    #: goes through like any other.
    send: Callable[[Send], Awaitable[Message | None]]

    async def _lobby(self, notice: ShowLobby) -> None:
        if notice.message_id is not None:
            try:
                await self.bot.edit_message_text(fit(notice.text, TEXT_LIMIT), notice.chat_id,
                                                 notice.message_id,
                                                 reply_markup=markup(notice.keyboard))
                return
            except BadRequest as exc:
                if "not modified" in str(exc):
                    return
                # A refused edit did not count at Telegram: its slot of the gate serves the post.
                log.info("lobby %s: edit failed (%s); posting anew", notice.lobby_id, exc)
        message = await self.send(Send(notice.chat_id, notice.text, thread_id=notice.thread_id,
                                       keyboard=notice.keyboard, group=notice.chat_id < 0))
        if message is not None and (notice.keyboard or notice.arena):
            with contextlib.suppress(NotFound):  # an arena's post or a lobby's (issue 40)
                await (self.store.update_arena if notice.arena else self.store.update_lobby)(
                    notice.lobby_id, message_id=message.message_id)
