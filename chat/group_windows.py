"""A group's windows of Telegram's flood limit as delivery keeps them: the gate of each group
(:mod:`chat.gates`), the share of it information replies leave to play, the ephemeral writes
that go ahead of the group's queue (issue 42), the notes a restart seeds them from, and the
scaled mode's shared windows. Each chat's worker (:class:`chat.chat_workers.ChatWorkers`),
and so :class:`chat.delivery.Delivery`, is built on it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

from chat.gates import WINDOW, Gate, GroupGate, Renewing, SharedGate, no_lease
from chat.sending import Sender
from storage import Store
from storage.pg_windows import BoardLook, FloodWindows

log = logging.getLogger(__name__)

#: Slots of a group's window kept for its play beyond what it wrote in the last one.
PLAY_MARGIN = 2
#: Seconds an ephemeral write (the answer to a press or an ephemeral command) waits for a
#: slot of the group's window at most: Telegram takes it only within 15 seconds of the
#: person's action, so after this it goes out anyway (docs/ephemeral.md, "Limits").
EPHEMERAL_WAIT = 8.0


class GroupBusy(Exception):
    """The group's window stays full longer than an answer may wait: ``wait`` seconds."""

    def __init__(self, wait: float) -> None:
        super().__init__(f"the group's window is full for {wait:.0f} s")
        self.wait = wait


class GroupWindows:
    """The part of delivery that counts each group's writes (see the module)."""

    store: Store
    sender: Sender
    clock: Callable[[], float]
    group_limit: int
    info_reserve: int
    #: Each group's play writes (board posts, lobbies) in the last window, as this
    #: process made them: what its play will need of the next window.
    _play_writes: dict[int, deque[float]]
    _gates: dict[int, Gate]
    #: Ephemeral writes waiting for a group's slot: its queue's posts let them go first.
    _urgent: dict[int, int]
    #: The windows every process shares (:meth:`share`); ``None``: this process's own.
    windows: FloodWindows | None
    _renewing: Renewing
    _tasks: set[asyncio.Task[Any]]

    def reserve_for_play(self, chat: int) -> int:
        """Slots of the group's window an information reply must leave free: a third of
        it, or as many as the group's play wrote in the last window and two more, whichever
        is more. A group playing a move every five seconds needs twelve board posts a
        minute; replies asked for meanwhile (a stranger's flood of distinct /score, /board,
        /top) must take the rest, never those (issue 43)."""
        writes = self._play_writes.get(chat)
        if not writes:
            return self.info_reserve
        since = self.clock() - WINDOW
        while writes and writes[0] <= since:
            writes.popleft()
        if not writes:
            del self._play_writes[chat]
            return self.info_reserve
        return max(self.info_reserve, min(self.group_limit - 1, len(writes) + PLAY_MARGIN))

    async def group_wait(self, chat: int, look: BoardLook | None = None) -> float:
        """Seconds until the group's window lets one more write out (0: now): the scaled
        mode's board job waits that long as a job scheduled later rather than holding a
        worker's slot (:mod:`chat.jobs`). A shared window takes the slot free now for the
        job's post, and ``look`` (the match's newest board post) in the same statement
        (:meth:`chat.gates.SharedGate.wait`)."""
        return await self._gate(chat).wait(look)

    @contextlib.asynccontextmanager
    async def group_slot(self, chat: int, *, answer: bool = False,
                         patience: float = EPHEMERAL_WAIT) -> AsyncIterator[None]:
        """One ephemeral write to a group (a panel, a reply, an edit of either). It counts
        against the group's window like any post (Telegram documents nothing either way:
        docs/ephemeral.md), and goes ahead of the group's queue: the posts waiting there
        let it take the next slot. The answer to a press or a command (``answer``) waits
        for one at most :data:`EPHEMERAL_WAIT` seconds, as Telegram takes it only within
        15 seconds of the person's action; then it is not sent (:class:`GroupBusy`), and
        the person is told when to try again, rather than the group paused by a 429.
        ``patience``: an answer's wait, when shorter (0: a slot now or none)."""
        gate = self._gate(chat)
        self._urgent[chat] = self._urgent.get(chat, 0) + 1
        taken = False
        try:
            # In delivery's clock, the gate's (a test's may run faster than real time); and
            # at most as many naps as real seconds allow, whatever that clock does.
            deadline, naps = self.clock() + min(patience, EPHEMERAL_WAIT), 0
            while True:
                try:
                    wait = await gate.claim(0)
                except Exception:  # the shared window cannot be read: go, it is one write
                    log.warning("group %s: its window cannot be read", chat, exc_info=True)
                    break
                if wait <= 0:
                    taken = True
                    break
                naps += 1
                if answer and (self.clock() + min(wait, 0.05) >= deadline
                               or naps > patience / 0.05):
                    raise GroupBusy(wait)
                await asyncio.sleep(min(wait, 0.05))
        finally:
            self._urgent[chat] -= 1
            if not self._urgent[chat]:
                del self._urgent[chat]
        try:
            yield
        finally:
            if taken:
                await gate.done()
                self._note_group_write(chat)

    def flood_wait(self, chat_id: int | str, seconds: float) -> None:
        """The rate limiter paused ``chat_id`` after a 429 (see :meth:`GroupGate.saturate`)."""
        if isinstance(chat_id, int) and chat_id < 0:
            gate = self._gate(self.sender.moved.get(chat_id, chat_id))
            if isinstance(gate, GroupGate):  # a shared one is filled by the limiter
                gate.saturate(seconds)

    def _note_group_write(self, chat: int) -> None:
        """Keep the write's time in the store (embedded mode), for a restart's
        :meth:`seed_groups`. In the background: it must not hold the chat's next write, and
        a lost note costs at most one 429 after a restart, never a message."""
        if self.windows is not None:  # the shared windows of the scaled mode count it
            return
        task = asyncio.create_task(self.store.note_group_write(chat, self.clock()))
        self._tasks.add(task)
        task.add_done_callback(self._noted)

    def _noted(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("a group write could not be noted: %s", type(task.exception()).__name__)

    def seed_groups(self, writes: list[tuple[int, float]]) -> None:
        """After a restart: each group's window starts with the writes the process before
        made in it (``(chat_id, time)``, from :meth:`storage.Store.group_writes`), so the
        first posts after the restart do not meet a 429 that pauses the group for up to a
        minute. The shared windows of the scaled mode know them already."""
        if self.windows is not None:
            return
        by_chat: dict[int, list[float]] = {}
        for chat_id, at in writes:
            by_chat.setdefault(chat_id, []).append(at)
        for chat_id, times in by_chat.items():
            gate = self._gate(chat_id)
            if isinstance(gate, GroupGate):
                gate.seed(times)

    def share(self, windows: FloodWindows, renewing: Renewing = no_lease) -> None:
        """Count group writes in ``windows`` (the scaled mode's PostgreSQL), with every
        other process writing for the bot; a write's claim renews the rate limiter's lease
        of bot-wide calls on the way when that is due (``renewing``: the limiter's)."""
        self.windows = windows
        self._renewing = renewing
        self._gates.clear()

    def _gate(self, chat: int) -> Gate:
        if chat not in self._gates:
            if self.windows is not None:
                self._gates[chat] = SharedGate(self.windows, chat, self.group_limit,
                                               clock=self.clock, renewing=self._renewing)
            else:
                self._gates[chat] = GroupGate(self.group_limit, clock=self.clock)
        return self._gates[chat]
