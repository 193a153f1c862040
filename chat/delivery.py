"""Turns notices into Bot API calls: pictures, keyboards, pacing and flood limits.

Every chat has one worker (:mod:`chat.chat_workers`), so messages to a chat keep their order;
information replies (``Send.info``: /rules, /top, ...) wait behind board posts and panels, and
a chat's queue keeps only the newest of each kind. A group also has a gate (:mod:`chat.gates`):
at most ``group_limit`` new messages *and edits* in any 60 seconds (Telegram counts both against
about 20). Board posts waiting for the gate are coalesced: a newer post for the same match
replaces the queued one and keeps every move line, so the newest post always shows the current
position (unless the board's labels moved in between: one caption never mixes two labellings).
Pictures are drawn off the event loop, only when actually sent.

With several processes (the scaled mode's PostgreSQL) the group's window is shared
(:meth:`Delivery.share`): every process's writes to a group count in one window in the
database, so together they stay under the limit as one process does.

A 429 pauses only its own chat (:mod:`chat.ratelimit`). What could not be delivered because of
the network (or a flood wait longer than the limiter's retries) is tried again with back-off,
keeping its place (the chat's worker); the outbox marker (:class:`chat.notices.Announced`)
moves only past what was delivered or definitively refused by Telegram, so a restart announces
the rest.

A webhook worker on PostgreSQL holds what handling an update tells (:class:`Held`, set by
chat/web.py around the update): :meth:`Delivery.run` then collects the notices instead of
queueing them, so that they are stored in the reply outbox (chat/outbox.py) before the update
is answered 200, and only then queued, each one tracked (:meth:`Delivery.track`) until it is
out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Sequence
from typing import Any, Literal

from telegram import Bot
from telegram.error import TelegramError

from chat.chat_workers import MAX_ATTEMPTS, ChatWorkers, Queued
from chat.gates import Gate
from chat.group_windows import GroupBusy
from chat.markers import Ending, Mark, marker_alone
from chat.notices import (
    HELD,
    Announced,
    BoardPost,
    ComputerTurn,
    EditPanel,
    Ephemeral,
    Notice,
    chat_of,
)
from chat.painter import Painter
from chat.ratelimit import ChatRateLimiter
from chat.sending import Sender
from storage import Store, is_detached_chat, is_engine_user
from storage.pg_windows import FloodWindows

log = logging.getLogger(__name__)

#: What became of an answer sent at once (:meth:`Delivery.answer_now`).
Answered = Literal["sent", "refused", "busy"]


class Delivery(ChatWorkers):
    def __init__(self, bot: Bot, store: Store, *, painter: Painter | None = None,
                 group_limit: int = 19, clock: Callable[[], float] = time.time,
                 limiter: ChatRateLimiter | None = None, max_attempts: int = MAX_ATTEMPTS
                 ) -> None:
        self.store = store
        self.painter = painter or Painter(0)
        #: Makes the Bot API calls of one notice (:mod:`chat.sending`).
        self.sender = Sender(bot, store, self.painter)
        self.group_limit = group_limit
        self.clock = clock
        self.limiter = limiter
        self.max_attempts = max_attempts
        #: Slots of a group's window that information replies leave to play, at least;
        #: more while the group plays (:meth:`reserve_for_play`).
        self.info_reserve = max(1, group_limit // 3)
        #: Each group's play writes (board posts, lobbies) in the last window, as this
        #: process made them: what its play will need of the next window.
        self._play_writes: dict[int, deque[float]] = {}
        #: Set by the application: schedule a computer's move.
        self.on_computer: Callable[[int, int], None] = lambda match_id, seq: None
        #: Set by the application: told the message id of an information answer's first
        #: message (``Send.answer``), or ``None`` when it was not sent (chat/answers.py).
        self.on_answer: Callable[[Hashable, int | None], None] = lambda key, message_id: None
        #: Set by the application: a board post is out, of moves committed at this time
        #: (Unix seconds; the metrics' move → board post).
        self.on_board_posted: Callable[[float], None] = lambda moved_at: None
        self._queues: dict[int, deque[Queued]] = {}
        self._workers: dict[int, asyncio.Task[None]] = {}
        self._gates: dict[int, Gate] = {}
        #: Ephemeral writes waiting for a group's slot: its queue's posts let them go first.
        self._urgent: dict[int, int] = {}
        self.sender.slot = self.group_slot
        #: The windows every process shares (:meth:`share`); ``None``: this process's own.
        self.windows: FloodWindows | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._marks: list[Mark] = []  # the markers waiting for their notices (_mark)

    @property
    def on_forbidden(self) -> Callable[[int, int], Awaitable[None]] | None:
        """Set by the application: text for the group when a player cannot be written to."""
        return self.sender.on_forbidden

    @on_forbidden.setter
    def on_forbidden(self, tell: Callable[[int, int], Awaitable[None]] | None) -> None:
        self.sender.on_forbidden = tell

    # Entry ------------------------------------------------------------------------------

    def run(self, notices: list[Notice]) -> asyncio.Task[list[object]] | None:
        """Queue the notices (in order per chat); returns a task finishing when all are out.
        While an update holds its notices (:data:`HELD`), they are collected instead (and
        ``None`` returned): its webhook request stores and then queues them."""
        held = HELD.get()
        if held is not None and held.open:
            held.notices.extend(notices)
            return None
        if not notices:
            return None
        done = self.track(notices)
        # What a caller waits for: the messages (not the marker's write after them).
        waits = [f for n, f in zip(notices, done, strict=True)
                 if not isinstance(n, Announced | ComputerTurn)]
        all_out = asyncio.create_task(self._wait(waits))
        self._keep(all_out)
        return all_out

    def track(self, notices: Sequence[Notice], *,
              end: Ending | None = None) -> list[asyncio.Future[bool]]:
        """Queue the notices as :meth:`run` does, never held; one future per notice, done
        with True once it is out (delivered or refused by Telegram for good; a computer's
        turn handed on; a notice for an outside engine's seat, which learns through the
        engine protocol; the outbox marker stored), False if it could not be delivered.
        A notice merged into a queued board post shares that post's future. A notice still
        queued when the process stops leaves its future pending. ``end``: a job's end
        that goes with the markers among ``notices`` (:mod:`chat.markers`)."""
        loop = asyncio.get_running_loop()
        items: list[Queued] = []
        futures: list[asyncio.Future[bool]] = []
        ready: asyncio.Future[bool] = loop.create_future()
        ready.set_result(True)
        for notice in notices:
            if isinstance(notice, ComputerTurn):
                self.on_computer(notice.match_id, notice.seq)
                futures.append(ready)
                continue
            if isinstance(notice, Announced):
                self._marks.append(mark := Mark(notice, [i.done for i in items], end=end))
                task = asyncio.create_task(self._mark(mark))
                self._keep(task)
                futures.append(task)
                continue
            chat = chat_of(notice)
            if is_engine_user(chat) or is_detached_chat(chat):
                # An outside engine's seat: it learns through the engine protocol. A pool
                # match's own chat is no Telegram chat: its players follow it privately.
                futures.append(ready)
                continue
            item = Queued(notice)
            queue = self._queues.setdefault(chat, deque())
            if item.info is not None:
                # A newer reply of the same kind makes a queued one pointless.
                for old in [i for i in queue if i.info == item.info]:
                    queue.remove(old)
                    self._answered(old, None)
                    old.finish(True)
            last = queue[-1] if queue else None
            if (isinstance(notice, BoardPost) and last is not None
                    and isinstance(last.notice, BoardPost)
                    and (merged := last.notice.merged(notice)) is not None):
                # Coalesce: the queued post now shows the newest position and every line
                # (of the same match and labelling: BoardPost.merged).
                last.notice = merged
                items.append(last)
                futures.append(last.done)
                continue
            queue.append(item)
            items.append(item)
            futures.append(item.done)
            if chat not in self._workers or self._workers[chat].done():
                self._workers[chat] = asyncio.create_task(self._work(chat))
        return futures

    def _keep(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _wait(self, waits: list[asyncio.Future[bool]]) -> list[object]:
        return await asyncio.gather(*waits, return_exceptions=True)  # [] for none

    async def _mark(self, mark: Mark) -> bool:
        """The marker, once every notice before it is out, unless the last of them moved
        it in its own record's write (:mod:`chat.markers`)."""
        notice = mark.notice
        try:
            results = await self._wait(mark.waits)
        finally:
            self._marks.remove(mark)
        if mark.written:  # every notice before it was taken by Telegram
            return True
        if not all(r is True for r in results):
            log.warning("match %s: %d of %d notices before move %s were not delivered; the "
                        "outbox marker stays, so a restart announces them", notice.match_id,
                        sum(r is not True for r in results), len(results), notice.seq)
            return False
        try:
            await marker_alone(mark, lambda end: self.store.set_announced(
                notice.match_id, notice.seq, also=end))
        except Exception:
            log.exception("match %s: could not store the announcement marker", notice.match_id)
            return False
        return True

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
        await self.painter.wait_closed()

    async def answer_now(self, notices: Sequence[Notice]) -> list[Answered]:
        """Send the answer to a press or an ephemeral command at once, outside the queues
        (its 15 seconds run, and the press waits for it to be answered): for each notice,
        ``"sent"``; ``"refused"`` (an ephemeral one Telegram refused: the door falls back
        to the private chat, docs/ephemeral.md); or ``"busy"``, the group's window full
        longer than an answer may wait (:class:`~chat.group_windows.GroupBusy`)."""
        sent: list[Answered] = []
        for notice in notices:
            try:
                if isinstance(notice, Ephemeral):
                    ok = await self.sender.send_ephemeral(notice) is not None
                    sent.append("sent" if ok else "refused")
                elif isinstance(notice, EditPanel):
                    # A tap's edit: at once if the group's window has room (then a vanished
                    # panel's new one is the press's answer), else queued for its slot.
                    try:
                        await self.sender.edit_panel(notice, answer=True)
                    except GroupBusy:
                        self.run([notice])
                    sent.append("sent")
                else:
                    await self.sender.deliver(notice)
                    sent.append("sent")
            except GroupBusy:
                self.sender.ephemeral_refused("busy")
                sent.append("busy")
            except TelegramError as exc:
                log.info("an answer to chat %s could not be sent (%s)", chat_of(notice),
                         type(exc).__name__)
                if isinstance(notice, Ephemeral):
                    self.sender.ephemeral_refused("refused")
                sent.append("refused")
        return sent

    async def knows_panel(self, match_id: int, user_id: int) -> bool:
        return await self.sender.knows_panel(match_id, user_id)

    async def panel_pressed(self, match_id: int, user_id: int, message_id: int, *,
                            is_photo: bool, in_group: int | None = None) -> None:
        await self.sender.panel_pressed(match_id, user_id, message_id, is_photo=is_photo,
                                        in_group=in_group)

    async def report_unreachable(self, match_id: int, user_id: int) -> None:
        await self.sender.report_unreachable(match_id, user_id)
