"""The board posts a :class:`chat.sending.Sender` makes: a group's post of a move (never
twice for the same board, the old one deleted in a tidy group, the post recorded with its
told notes and its job's end in one write), its clock line refreshed at the reminder, and
the one board a player alone with computers watches edited in place.

Apart from :mod:`chat.sending` (one notice, one or two Bot API calls) because a board post is
the one notice that reads and writes the store around its call, and the one the chaos test
counts twice (:func:`without_clock`).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace

from telegram import Bot, InputMediaPhoto, Message
from telegram.error import BadRequest, TelegramError

from chat.markers import Ride, both, riding
from chat.markup import CAPTION_LIMIT, fit, markup
from chat.notices import BOARD_KEY, BoardClock, BoardPost, Send
from chat.painter import Painter
from storage import NotFound, Store

log = logging.getLogger(__name__)

FOLLOW_LINES = 12  # move lines kept in a followed board's caption


class BoardSending:
    """What :class:`chat.sending.Sender` does with a board post."""

    bot: Bot
    store: Store
    painter: Painter
    #: Group → supergroup after a migration (the sender's).
    moved: dict[int, int]
    #: Private chats whose newest message is a board following computer moves: chat →
    #: (message id, the post as it shows). The next such board edits it in place.
    _follow: dict[int, tuple[int, BoardPost]]

    #: The sender's own post (:meth:`chat.sending.Sender.send`).
    send: Callable[[Send], Awaitable[Message | None]]

    async def _board(self, notice: BoardPost, ride: Ride | None = None) -> None:
        if notice.chat_id > 0:
            await self._follow_board(notice)
            return
        text = fit("\n".join([*notice.lines, notice.footer]), CAPTION_LIMIT)
        # Read just before the post, never earlier: a board job the sweeper took for stalled
        # may run twice at once, and this read is what finds the other's post. The board
        # job's window claim, made right before it hands the post over, read it already.
        seen = notice.seen
        posted = ((seen.message_id, seen.caption) if seen is not None and seen.fresh()
                  else await self.store.board_message(notice.match_id))
        if posted is not None and posted[0] is not None and (
                without_clock(posted[1]) == without_clock(text)):
            # This board is the group's already: the announcement runs again (its job's
            # worker died after the post, before the announcement was marked done).
            return
        message = await self.send(Send(notice.chat_id, text, thread_id=notice.thread_id,
                                       silent=True, picture=notice.picture, group=True,
                                       keyboard=notice.keyboard))
        if message is None:
            return
        try:
            # The chat's tidy setting comes with the old post's id, and the post is noted
            # as told (a job run again skips it) in the same transaction: both or neither.
            # The board job's end goes in it too, when the post is the job's last write.
            old, tidy = await riding(ride, notice.match_id, lambda announced, end: self.store
                                     .post_board(notice.match_id, message.message_id, text,
                                                 notes={BOARD_KEY: notice.seq,
                                                        **dict(notice.notes)},
                                                 announced=announced,
                                                 also=both(notice.end, end)))
        except NotFound:
            return
        if notice.end is not None:
            notice.end.committed()
        if old and old != message.message_id and tidy:
            # One live board (the default; /settings tidy=off keeps every post): a new post
            # and the old one deleted, rather than an edit in place, so that the newest board
            # is always the group's newest message and the move notifies like any message.
            with contextlib.suppress(TelegramError):
                await self.bot.delete_message(self.moved.get(notice.chat_id, notice.chat_id),
                                              old)

    async def _board_clock(self, notice: BoardClock) -> None:
        """The clock line of the newest board post, refreshed (at the turn's reminder)."""
        known = await self.store.board_message(notice.match_id)
        if known is None:
            return
        message_id, caption = known
        lines = caption.split("\n")
        if lines and lines[-1].startswith("⏱"):
            lines.pop()
        caption = fit("\n".join([*lines, notice.clock]), CAPTION_LIMIT)
        try:
            await self.bot.edit_message_caption(
                self.moved.get(notice.chat_id, notice.chat_id), message_id, caption=caption,
                reply_markup=markup(notice.keyboard))
        except BadRequest as exc:
            log.info("match %s: could not refresh the board's clock (%s)", notice.match_id,
                     exc)
            return
        await self.store.set_board_message(notice.match_id, message_id, caption)

    async def _follow_board(self, notice: BoardPost) -> None:
        """A player alone with computers watches them move: a run of their moves edits one
        board message (while it is the chat's newest) instead of posting a photo each."""
        chat = notice.chat_id
        known = self._follow.get(chat)
        if known is not None:
            message_id, shown = known
            # Its lines stay above the new ones unless the labels moved (BoardPost.merged).
            lines = (shown.merged(notice) or notice).lines[-FOLLOW_LINES:]
            caption = fit("\n".join([*lines, notice.footer]), CAPTION_LIMIT)
            try:
                data = await self.painter.board(notice.picture)
                await self.bot.edit_message_media(InputMediaPhoto(data, caption=caption),
                                                  chat_id=chat, message_id=message_id)
                self._follow[chat] = (message_id, replace(notice, lines=lines))
                return
            except TelegramError as exc:
                log.info("could not update the followed board (%s); posting anew", exc)
        text = fit("\n".join([*notice.lines, notice.footer]), CAPTION_LIMIT)
        message = await self.send(Send(chat, text, silent=True, picture=notice.picture))
        if message is not None:
            self._follow[chat] = (message.message_id, notice)


def without_clock(caption: str) -> str:
    """A board post's caption without its turn clock ("⏱ …", which counts down)."""
    return "\n".join(line for line in caption.split("\n") if not line.startswith("⏱"))
