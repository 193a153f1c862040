"""Turns notices into Bot API calls: pictures, keyboards, pacing and flood limits.

Every chat has one worker, so messages to a chat keep their order; information replies
(``Send.info``: /rules, /top, ...) wait behind board posts and panels, and a chat's queue keeps
only the newest of each kind. A group also has a :class:`GroupGate`: at most ``group_limit``
new messages *and edits* in any 60 seconds (Telegram counts both against about 20). Board
posts waiting for the gate are coalesced: a newer post for the same match replaces the queued
one and keeps every move line, so the newest post always shows the current position. Pictures
are drawn off the event loop, only when actually sent.

A 429 pauses only its own chat (:mod:`chat.ratelimit`). What could not be delivered because of
the network (or a flood wait longer than the limiter's retries) is tried again with back-off,
keeping its place; the outbox marker (:class:`chat.notices.Announced`) moves only past what was
delivered or definitively refused by Telegram, so a restart announces the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, InputMediaPhoto, Message
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    NetworkError,
    RetryAfter,
    TelegramError,
)

from chat.model import Keyboard
from chat.notices import (
    Announced,
    BoardPost,
    ComputerTurn,
    Drawing,
    DropPanel,
    EditPanel,
    Notice,
    Send,
    ShowLobby,
)
from chat.painter import Painter
from chat.ratelimit import ChatRateLimiter
from storage import NotFound, Store

log = logging.getLogger(__name__)

CAPTION_LIMIT = 1024
TEXT_LIMIT = 4096
WINDOW = 60.0
FOLLOW_LINES = 12  # move lines kept in a followed board's caption
#: Tries of one notice whose delivery failed for a passing reason (network, flood wait).
MAX_ATTEMPTS = 6
#: Back-off between them: 1, 2, 4, ... seconds, at most this.
MAX_BACKOFF = 30.0


def markup(keyboard: Keyboard | None) -> InlineKeyboardMarkup | None:
    if not keyboard:
        return None
    return InlineKeyboardMarkup([
        [InlineKeyboardButton(b.label, url=b.url) if b.url
         else InlineKeyboardButton(b.label, callback_data=b.data) for b in row]
        for row in keyboard if row
    ])


def fit(text: str, limit: int) -> str:
    """Keep the end of ``text`` (the newest lines and the footer) within ``limit``."""
    if len(text) <= limit:
        return text
    lines = text.split("\n")
    while len(lines) > 2 and len("\n".join(["…", *lines])) > limit:
        lines.pop(0)
    out = "\n".join(["…", *lines])
    return out if len(out) <= limit else out[: limit - 1] + "…"


class GroupGate:
    """Sliding-window limit of new messages and edits per group chat."""

    def __init__(self, limit: int, window: float = WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self.sent: deque[float] = deque()

    def wait_time(self, reserve: int = 0) -> float:
        """Seconds until a write may go out, leaving ``reserve`` slots of the window free
        (information replies leave room for play)."""
        now = self.clock()
        while self.sent and self.sent[0] <= now - self.window:
            self.sent.popleft()
        allowed = max(1, self.limit - reserve)
        if len(self.sent) < allowed:
            return 0.0
        return self.sent[len(self.sent) - allowed] + self.window - now

    def take(self) -> None:
        self.sent.append(self.clock())

    def saturate(self, retry_after: float) -> None:
        """Telegram said 429 for ``retry_after``: its window is full (writes this gate never
        saw, e.g. of the process before a restart). Assume ``limit`` writes spread over the
        window ending then, so the first slot opens when the pause ends and the next ones
        one by one, instead of a burst that would meet another 429."""
        start = self.clock() + retry_after - self.window
        step = self.window / self.limit
        self.sent = deque(start + i * step for i in range(self.limit))


    def written(self) -> None:
        """The write taken last is done: date it now. Telegram counts it when it arrives,
        which may be well after the slot was taken (a picture drawn, the bot-wide rate), and
        a window of slot times alone could then hold 20 arrivals."""
        if self.sent:
            self.sent[-1] = max(self.sent[-1], self.clock())


@dataclass
class _Item:
    notice: Notice
    #: True once delivered or definitively refused; False if it could not be delivered.
    done: asyncio.Future[bool] = field(default_factory=lambda: asyncio.get_running_loop()
                                       .create_future())
    attempts: int = 0

    @property
    def info(self) -> str | None:
        return self.notice.info if isinstance(self.notice, Send) else None

    def finish(self, delivered: bool) -> None:
        if not self.done.done():
            self.done.set_result(delivered)


class Delivery:
    def __init__(self, bot: Bot, store: Store, *, painter: Painter | None = None,
                 group_limit: int = 19,
                 clock: Callable[[], float] = time.time,
                 limiter: ChatRateLimiter | None = None,
                 max_attempts: int = MAX_ATTEMPTS) -> None:
        self.bot = bot
        self.store = store
        self.painter = painter or Painter(0)
        self.group_limit = group_limit
        self.clock = clock
        self.limiter = limiter
        self.max_attempts = max_attempts
        #: Slots of a group's window that information replies leave to play.
        self.info_reserve = max(1, group_limit // 3)
        #: Set by the application: schedule a computer's move.
        self.on_computer: Callable[[int, int], None] = lambda match_id, seq: None
        #: Set by the application: text for the group when a player cannot be written to.
        self.on_forbidden: Callable[[int, int], Awaitable[None]] | None = None
        self.panels: dict[tuple[int, int], tuple[int, bool]] = {}
        self._queues: dict[int, deque[_Item]] = {}
        self._workers: dict[int, asyncio.Task[None]] = {}
        self._gates: dict[int, GroupGate] = {}
        self._moved: dict[int, int] = {}  # group → supergroup after a migration
        self._tasks: set[asyncio.Task[Any]] = set()
        #: (match, user) pairs whose group was told the user cannot be written to.
        self._told: set[tuple[int, int]] = set()
        #: Private chats whose newest message is a board following computer moves:
        #: chat → (message id, its move lines). The next such board edits it in place.
        self._follow: dict[int, tuple[int, tuple[str, ...]]] = {}
        #: Chats that keep only their newest board post, and each match's newest one.
        self._tidy: dict[int, bool] = {}
        self._boards: dict[int, int] = {}

    # Entry ------------------------------------------------------------------------------

    def run(self, notices: list[Notice]) -> asyncio.Task[None] | None:
        """Queue the notices (in order per chat); returns a task finishing when all are out."""
        if not notices:
            return None
        items: list[_Item] = []
        for notice in notices:
            if isinstance(notice, ComputerTurn):
                self.on_computer(notice.match_id, notice.seq)
                continue
            if isinstance(notice, Announced):
                waits = [i.done for i in items]
                task = asyncio.create_task(self._mark(notice, waits))
                self._keep(task)
                continue
            chat = self._chat_of(notice)
            item = _Item(notice)
            queue = self._queues.setdefault(chat, deque())
            if item.info is not None:
                # A newer reply of the same kind makes a queued one pointless.
                for old in [i for i in queue if i.info == item.info]:
                    queue.remove(old)
                    old.finish(True)
            last = queue[-1] if queue else None
            if (isinstance(notice, BoardPost) and last is not None
                    and isinstance(last.notice, BoardPost)
                    and last.notice.match_id == notice.match_id):
                # Coalesce: the queued post now shows the newest position and every line.
                old = last.notice.lines[:-1] if last.notice.provisional else last.notice.lines
                last.notice = replace(notice, lines=old + notice.lines)
                items.append(last)
                continue
            queue.append(item)
            items.append(item)
            if chat not in self._workers or self._workers[chat].done():
                self._workers[chat] = asyncio.create_task(self._work(chat))
        waits = [i.done for i in items]
        task = asyncio.create_task(self._wait(waits))
        self._keep(task)
        return task

    def _keep(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _wait(self, waits: list[asyncio.Future[bool]]) -> list[object]:
        if not waits:
            return []
        return await asyncio.gather(*waits, return_exceptions=True)

    async def _mark(self, notice: Announced, waits: list[asyncio.Future[bool]]) -> None:
        results = await self._wait(waits)
        if not all(r is True for r in results):
            log.warning("match %s: %d of %d notices before move %s were not delivered; the "
                        "outbox marker stays, so a restart announces them", notice.match_id,
                        sum(r is not True for r in results), len(results), notice.seq)
            return
        try:
            await self.store.set_announced(notice.match_id, notice.seq)
        except Exception:
            log.exception("match %s: could not store the announcement marker", notice.match_id)

    def is_idle(self) -> bool:
        return not any(q for q in self._queues.values()) and all(
            t.done() for t in [*self._tasks, *self._workers.values()])

    async def idle(self) -> None:
        """Wait until every queued notice is out (tests, shutdown)."""
        while not self.is_idle():
            await asyncio.sleep(0.01)

    async def close(self) -> None:
        for task in [*self._workers.values(), *self._tasks]:
            task.cancel()
        for task in [*self._workers.values(), *self._tasks]:
            with contextlib.suppress(BaseException):
                await task
        self.painter.close()

    def _chat_of(self, notice: Notice) -> int:
        if isinstance(notice, Send | ShowLobby | BoardPost):
            return notice.chat_id
        if isinstance(notice, EditPanel | DropPanel):
            return notice.user_id
        raise TypeError(type(notice).__name__)

    async def _work(self, chat: int) -> None:
        queue = self._queues[chat]
        while queue:
            # Play (board posts, lobbies, panels) before information replies.
            item = next((i for i in queue if i.info is None), queue[0])
            if chat < 0:
                # Every group write (post, lobby edit) counts against the group's limit, and
                # replies leave part of it to play. While the gate is shut, look again after
                # a short nap: something more urgent may have arrived meanwhile.
                gate = self._gate(chat)
                wait = gate.wait_time(self.info_reserve if item.info is not None else 0)
                if wait > 0:
                    await asyncio.sleep(min(wait, 0.2))
                    continue
                gate.take()
            queue.remove(item)
            try:
                try:
                    await self._deliver(item.notice)
                finally:
                    if chat < 0:
                        self._gate(chat).written()
            except asyncio.CancelledError:
                queue.appendleft(item)  # still owed; the restart's outbox announces it
                raise
            except (NetworkError, RetryAfter) as exc:
                # Telegram neither got nor refused it: try again later, in its place.
                item.attempts += 1
                if item.attempts < self.max_attempts:
                    wait = min(MAX_BACKOFF, 2.0 ** (item.attempts - 1))
                    log.warning("could not deliver %s to chat %s (%s); trying again in %.0f s",
                                type(item.notice).__name__, chat, type(exc).__name__, wait)
                    queue.appendleft(item)
                    await self._nap(wait)
                    continue
                log.error("gave up delivering %s to chat %s after %d tries (%s)",
                          type(item.notice).__name__, chat, item.attempts, type(exc).__name__)
                item.finish(False)
            except TelegramError as exc:  # refused for good (bad request, ...)
                log.warning("Telegram refused %s for chat %s: %s", type(item.notice).__name__,
                            chat, type(exc).__name__)
                item.finish(True)
            except Exception:
                log.exception("could not deliver %s", type(item.notice).__name__)
                item.finish(False)
            else:
                item.finish(True)

    async def _nap(self, seconds: float) -> None:
        """Sleep ``seconds`` of the delivery clock (a test's may run faster than real time)."""
        end = self.clock() + seconds
        while (left := end - self.clock()) > 0:
            await asyncio.sleep(min(left, 0.2))

    def knows_panel(self, match_id: int, user_id: int) -> bool:
        return (match_id, user_id) in self.panels

    def panel_pressed(self, match_id: int, user_id: int, message_id: int, *,
                      is_photo: bool) -> None:
        """A button of ``message_id`` was pressed: it is the player's panel (after a restart
        the bot learns its panels this way), so the next edit goes there."""
        self.panels[(match_id, user_id)] = (message_id, is_photo)

    def flood_wait(self, chat_id: int | str, seconds: float) -> None:
        """The rate limiter paused ``chat_id`` after a 429 (see :meth:`GroupGate.saturate`)."""
        if isinstance(chat_id, int) and chat_id < 0:
            self._gate(self._moved.get(chat_id, chat_id)).saturate(seconds)

    def _gate(self, chat: int) -> GroupGate:
        if chat not in self._gates:
            self._gates[chat] = GroupGate(self.group_limit, clock=self.clock)
        return self._gates[chat]

    # Sending ----------------------------------------------------------------------------

    async def _deliver(self, notice: Notice) -> None:
        if isinstance(notice, Send):
            await self._send(notice)
        elif isinstance(notice, BoardPost):
            if notice.chat_id > 0:
                await self._follow_board(notice)
                return
            text = fit("\n".join([*notice.lines, notice.footer]), CAPTION_LIMIT)
            message = await self._send(Send(notice.chat_id, text, thread_id=notice.thread_id,
                                            silent=True, picture=notice.picture, group=True))
            if message is not None and await self.is_tidy(notice.chat_id):
                await self._drop_old_board(notice.match_id, notice.chat_id, message)
        elif isinstance(notice, ShowLobby):
            await self._lobby(notice)
        elif isinstance(notice, EditPanel):
            await self._edit_panel(notice)
        elif isinstance(notice, DropPanel):
            known = self.panels.pop((notice.match_id, notice.user_id), None)
            if known:
                with contextlib.suppress(TelegramError):
                    await self.bot.edit_message_reply_markup(notice.user_id, known[0],
                                                             reply_markup=None)

    async def is_tidy(self, chat_id: int) -> bool:
        """The chat keeps only its newest board post (``/settings tidy=on``)."""
        if chat_id not in self._tidy:
            row = await self.store.get_chat(chat_id)
            self._tidy[chat_id] = bool(row and row.tidy)
        return self._tidy[chat_id]

    def set_tidy(self, chat_id: int, on: bool) -> None:
        self._tidy[chat_id] = on

    async def _drop_old_board(self, match_id: int, chat_id: int, message: Message) -> None:
        old = self._boards.get(match_id)
        if old is None:
            with contextlib.suppress(NotFound):
                old = (await self.store.get_match(match_id)).board_message_id
        self._boards[match_id] = message.message_id
        with contextlib.suppress(NotFound):
            await self.store.set_board_message(match_id, message.message_id)
        if old and old != message.message_id:
            with contextlib.suppress(TelegramError):
                await self.bot.delete_message(self._moved.get(chat_id, chat_id), old)

    async def _follow_board(self, notice: BoardPost) -> None:
        """A player alone with computers watches them move: a run of their moves edits one
        board message (while it is the chat's newest) instead of posting a photo each."""
        chat = notice.chat_id
        known = self._follow.get(chat)
        if known is not None:
            message_id, shown = known
            lines = (*shown, *notice.lines)[-FOLLOW_LINES:]
            caption = fit("\n".join([*lines, notice.footer]), CAPTION_LIMIT)
            try:
                data = await self.painter.board(notice.picture)
                await self.bot.edit_message_media(InputMediaPhoto(data, caption=caption),
                                                  chat_id=chat, message_id=message_id)
                self._follow[chat] = (message_id, lines)
                return
            except TelegramError as exc:
                log.info("could not update the followed board (%s); posting anew", exc)
        text = fit("\n".join([*notice.lines, notice.footer]), CAPTION_LIMIT)
        message = await self._send(Send(chat, text, silent=True, picture=notice.picture))
        if message is not None:
            self._follow[chat] = (message.message_id, notice.lines)

    async def _send(self, send: Send) -> Message | None:
        chat_id = self._moved.get(send.chat_id, send.chat_id)
        kwargs: dict[str, Any] = {
            "chat_id": chat_id, "reply_markup": markup(send.keyboard),
            "disable_notification": send.silent,
        }
        if send.thread_id:
            kwargs["message_thread_id"] = send.thread_id
        try:
            message = await self._call_send(send, kwargs)
        except ChatMigrated as exc:
            self._moved[send.chat_id] = exc.new_chat_id
            with contextlib.suppress(Exception):
                await self.store.migrate_chat(send.chat_id, exc.new_chat_id)
            kwargs["chat_id"] = exc.new_chat_id
            message = await self._call_send(send, kwargs)
        except Forbidden:
            if send.chat_id > 0:
                await self._forbidden(send)
            else:
                log.info("chat %s does not let me write (removed?)", send.chat_id)
            return None
        if message is not None and send.chat_id > 0:
            self._told = {t for t in self._told if t[1] != send.chat_id}
            self._follow.pop(send.chat_id, None)  # a newer message: stop editing the old
        if message is not None and send.panel_of is not None:
            old = self.panels.get(send.panel_of)
            self.panels[send.panel_of] = (message.message_id, send.picture is not None)
            if old and old[0] != message.message_id:
                with contextlib.suppress(TelegramError):
                    await self.bot.edit_message_reply_markup(chat_id, old[0], reply_markup=None)
        return message

    async def _call_send(self, send: Send, kwargs: dict[str, Any]) -> Message | None:
        """One send. Flood waits are the rate limiter's; network trouble and longer flood
        waits reach the chat's worker, which tries again with back-off."""
        send = await self._draw(send)
        if send.picture is not None or send.hand is not None or send.photo:
            try:
                return await self._send_picture(send, kwargs)
            except BadRequest as exc:
                if "rights" not in str(exc).lower() and "photo" not in str(exc).lower():
                    raise
                log.info("chat %s refuses photos: sending text", kwargs["chat_id"])
        if send.document is not None:
            name, data = send.document
            return await self.bot.send_document(
                document=data, filename=name, caption=fit(send.text, CAPTION_LIMIT), **kwargs)
        if send.animation is not None:
            name, data = send.animation
            return await self.bot.send_animation(animation=data, filename=name,
                                                 caption=fit(send.text, CAPTION_LIMIT), **kwargs)
        return await self.bot.send_message(text=fit(send.text, TEXT_LIMIT), **kwargs)

    async def _draw(self, send: Send) -> Send:
        """Draw the reply's described picture (:class:`Drawing`) now that it is its turn to
        go: a reply still queued holds no picture, and one dropped is never drawn."""
        if isinstance(send.photo, Drawing):
            send = replace(send, photo=await self.painter.draw(send.photo))
        if send.animation is not None and isinstance(send.animation[1], Drawing):
            name, drawing = send.animation
            send = replace(send, animation=(name, await self.painter.draw(drawing)))
        return send

    async def _send_picture(self, send: Send, kwargs: dict[str, Any]) -> Message:
        if send.photo:
            data = send.photo
        elif send.picture is not None:
            data = await self.painter.board(send.picture)
        else:
            assert send.hand is not None
            data = await self.painter.hand(send.hand, send.language, send.hand_title)
        return await self.bot.send_photo(photo=data, caption=fit(send.text, CAPTION_LIMIT),
                                         **kwargs)

    async def report_unreachable(self, match_id: int, user_id: int) -> None:
        """Tell the match's group (once, until the user can be written to again) that a
        seated player cannot get their cards."""
        if self.on_forbidden is None or (match_id, user_id) in self._told:
            return
        self._told.add((match_id, user_id))
        await self.on_forbidden(match_id, user_id)

    async def _forbidden(self, send: Send) -> None:
        with contextlib.suppress(Exception):
            row = await self.store.get_user(send.chat_id)
            if row is not None:
                await self.store.upsert_user(send.chat_id, row.display_name,
                                             can_write_privately=False)
        match_id = send.match_id or (send.panel_of[0] if send.panel_of else None)
        if match_id is not None:
            await self.report_unreachable(match_id, send.chat_id)

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
        message = await self._send(Send(notice.chat_id, notice.text, thread_id=notice.thread_id,
                                        keyboard=notice.keyboard, group=notice.chat_id < 0))
        if message is not None and notice.keyboard:
            with contextlib.suppress(NotFound):
                await self.store.update_lobby(notice.lobby_id, message_id=message.message_id)

    async def _edit_panel(self, notice: EditPanel) -> None:
        known = self.panels.get((notice.match_id, notice.user_id))
        if known is None:
            if notice.fallback is not None:
                await self._send(notice.fallback)
            return
        message_id, is_photo = known
        try:
            if is_photo:
                await self.bot.edit_message_caption(
                    notice.user_id, message_id, caption=fit(notice.text, CAPTION_LIMIT),
                    reply_markup=markup(notice.keyboard))
            else:
                await self.bot.edit_message_text(
                    fit(notice.text, TEXT_LIMIT), notice.user_id, message_id,
                    reply_markup=markup(notice.keyboard))
        except BadRequest as exc:
            if "not modified" in str(exc):
                return
            log.info("panel edit failed (%s); sending a new one", exc)
            self.panels.pop((notice.match_id, notice.user_id), None)
            if notice.fallback is not None:
                await self._send(notice.fallback)
        if notice.keyboard is None:
            self.panels.pop((notice.match_id, notice.user_id), None)
