"""Updates of one chat in the order they arrived, shared fairly among the people who send them;
different chats at the same time.

python-telegram-bot's ``concurrent_updates(True)`` runs every update as soon as it arrives,
so a ``/new`` followed at once by three ``/add`` could be handled out of order (an ``/add``
finding no lobby yet). :class:`ChatOrderedProcessor` is PTB's extension point for this,
:class:`telegram.ext.BaseUpdateProcessor`: it keeps PTB's bound on updates in progress and runs
one chat's updates one at a time (per user for updates without a chat).

Which waiting update goes next is decided per person, so that one person's flood can neither
push another's update out nor hold it back (issue 43):

- **Bounded per person.** A person may have :data:`MAX_WAITING_PER_PERSON` updates waiting,
  in all chats together; the next one is dropped and :attr:`ChatOrderedProcessor.on_drop` is
  told (the application tells them once to slow down). A chat's waiting updates together
  have a much higher bound (:data:`MAX_WAITING_PER_CHAT`); past it the newest update of the
  person with the most waiting is dropped, never that of someone with fewer.
- **Fair order.** Each waiting update gets a round (start-time fair queueing): a person's
  first waiting update the current round, their next one the round after, and so on, and
  updates go in (round, arrival) order. Someone sending one update waits for at most one
  update of each person already waiting, however many a flooder has queued; people who send
  one update each are served exactly in arrival order (a ``/join`` still goes before the
  ``▶ Start`` pressed after it).
- **The match in progress first.** An update :attr:`ChatOrderedProcessor.urgent` calls so
  (a seated player's, a press of the running match's buttons) always takes the current
  round, so it goes before everything a flooder has queued.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

from chat.logs import HANDLING

log = logging.getLogger(__name__)

#: Updates one person may have waiting (in all chats together); more are dropped.
MAX_WAITING_PER_PERSON = 32
#: Updates one chat may have waiting, from everyone together.
MAX_WAITING_PER_CHAT = 256

Key = tuple[str, int]
#: Whether an update belongs to the match in progress (asked only of updates that wait).
Urgent = Callable[[Update], Awaitable[bool]]


def chat_key(update: object) -> Key | None:
    """What orders an update: its chat, else its user; ``None`` for neither."""
    if not isinstance(update, Update):
        return None
    if update.effective_chat is not None:
        return ("chat", update.effective_chat.id)
    if update.effective_user is not None:
        return ("user", update.effective_user.id)
    return None


def person_of(update: object) -> int | None:
    """Who sent an update (``None``: nobody, e.g. a channel post)."""
    if isinstance(update, Update) and update.effective_user is not None:
        return update.effective_user.id
    return None


@dataclass(eq=False)
class _Waiting:
    """One update waiting for its chat: ``go`` says True when its turn comes, False when it
    was dropped to make room (:meth:`ChatOrderedProcessor._evict`)."""

    person: int | None
    round: int
    arrival: int
    go: asyncio.Future[bool]
    gone: bool = False  # handed its turn, dropped or cancelled: skipped in the heap


@dataclass(eq=False)
class _Line:
    """One chat's updates: the one in progress and those waiting."""

    busy: bool = False
    #: The round of the update in progress.
    round: int = 0
    heap: list[tuple[int, int, _Waiting]] = field(default_factory=list)
    #: Each person's latest round given out here (their next waiting update gets the one
    #: after it); forgotten when the chat has nothing to do.
    last: dict[int | None, int] = field(default_factory=dict)
    waiting: Counter[int | None] = field(default_factory=Counter)


class ChatOrderedProcessor(BaseUpdateProcessor):
    """At most ``max_concurrent_updates`` at once; one chat's updates one after another, in
    the fair order of the module docstring."""

    def __init__(self, max_concurrent_updates: int = 256, *,
                 max_per_person: int = MAX_WAITING_PER_PERSON,
                 max_per_chat: int = MAX_WAITING_PER_CHAT) -> None:
        super().__init__(max_concurrent_updates)
        self.max_per_person = max_per_person
        self.max_per_chat = max_per_chat
        #: Set by the application: whether a waiting update belongs to the match in progress.
        self.urgent: Urgent | None = None
        #: Set by the application: told of every update dropped (its sender is told once).
        self.on_drop: Callable[[Update], None] | None = None
        #: Set by the application: told each update handled and its seconds (metrics).
        self.on_handled: Callable[[Update, float], None] | None = None
        self._lines: dict[Key, _Line] = {}
        #: Updates each person has waiting, in every chat.
        self._waiting: Counter[int] = Counter()
        #: People whose updates are being dropped (logged once until they have none waiting).
        self._dropping: set[int] = set()
        self._arrivals = itertools.count()
        self.dropped = 0

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        if not isinstance(update, Update):
            await self._in_turn(update, coroutine)
            return
        chat = update.effective_chat
        # What this update's tasks log carries its id and chat kind (chat/logs.py).
        HANDLING.set((update.update_id, chat.type if chat is not None else None))
        started = time.perf_counter()
        try:
            await self._in_turn(update, coroutine)
        finally:
            took = time.perf_counter() - started
            log.debug("update %d handled in %.0f ms (its wait for its turn included)",
                      update.update_id, took * 1000)
            if self.on_handled is not None:
                self.on_handled(update, took)

    async def _in_turn(self, update: object, coroutine: Awaitable[Any]) -> None:
        """Runs ``coroutine`` in its chat's fair turn (the module docstring)."""
        key = chat_key(update)
        if key is None:
            await coroutine
            return
        line = self._lines.setdefault(key, _Line())
        if line.busy or line.heap:
            person = person_of(update)
            if person is not None and self._waiting[person] >= self.max_per_person:
                self._drop(update, coroutine, key)
                return
            turn = await self._wait(update, key, person)
            if turn is None:  # its chat fell idle meanwhile: it goes at once
                line = self._lines.setdefault(key, _Line())
                line.busy = True
                line.last[person] = line.round
            else:
                try:
                    granted = await turn.go
                except asyncio.CancelledError:
                    self._cancelled(key, turn)
                    _close(coroutine)
                    raise
                if not granted:
                    self._drop(update, coroutine, key)
                    return
                line = self._lines[key]
        else:
            line.busy = True
            line.last[person_of(update)] = line.round  # their next one: the round after
        try:
            await coroutine
        finally:
            self._next(key)

    async def _wait(self, update: object, key: Key, person: int | None) -> _Waiting | None:
        """Queue the update in its chat's line (``None`` if the line is free by then)."""
        arrival = next(self._arrivals)
        if person is not None:
            self._waiting[person] += 1  # counted before asking: arrivals meanwhile see it
        try:
            urgent = (self.urgent is not None and isinstance(update, Update)
                      and await self.urgent(update))
        except Exception:  # a failed look-up costs the update its priority, nothing more
            log.warning("could not tell whether an update belongs to a match", exc_info=True)
            urgent = False
        finally:
            if person is not None:
                self._uncount(person)
        line = self._lines.setdefault(key, _Line())
        if not line.busy and not line.heap:
            return None
        turn = _Waiting(person, 0, arrival, asyncio.get_running_loop().create_future())
        if len(line.heap) >= self.max_per_chat and not self._evict(line, person):
            turn.gone = True
            turn.go.set_result(False)  # theirs is the longest queue: this one goes
            return turn
        start = line.round if urgent else max(line.round, line.last.get(person, -1) + 1)
        line.last[person] = max(start, line.last.get(person, start))
        turn.round = start
        heapq.heappush(line.heap, (start, arrival, turn))
        line.waiting[person] += 1
        if person is not None:
            self._waiting[person] += 1
        return turn

    def _evict(self, line: _Line, newcomer: int | None) -> bool:
        """The chat's bound is reached: the newest waiting update of the person with the most
        waiting makes room; False when that person is the newcomer (their new update is the
        one to drop)."""
        most, count = max(line.waiting.items(), key=lambda item: item[1], default=(None, 0))
        if count <= line.waiting[newcomer] + 1:
            return False
        victims = [t for _, _, t in line.heap
                   if not t.gone and not t.go.done() and t.person == most]
        if not victims:
            return False
        victim = max(victims, key=lambda t: t.arrival)
        self._leave(line, victim)
        victim.go.set_result(False)
        return True

    def _leave(self, line: _Line, turn: _Waiting) -> None:
        """``turn`` no longer waits (it goes now, was dropped or cancelled)."""
        turn.gone = True
        line.waiting[turn.person] -= 1
        if line.waiting[turn.person] <= 0:
            del line.waiting[turn.person]
        if turn.person is not None:
            self._uncount(turn.person)

    def _uncount(self, person: int) -> None:
        self._waiting[person] -= 1
        if self._waiting[person] <= 0:
            del self._waiting[person]
            self._dropping.discard(person)

    def _next(self, key: Key) -> None:
        """The update in progress is done: hand the chat to the next one waiting."""
        line = self._lines.get(key)
        if line is None:
            return
        while line.heap:
            start, _, turn = heapq.heappop(line.heap)
            if turn.gone or turn.go.done():  # a cancelled one is let go by _cancelled
                continue
            self._leave(line, turn)
            line.round = start
            turn.go.set_result(True)  # busy stays True: the line is that update's now
            return
        line.busy = False
        del self._lines[key]

    def _cancelled(self, key: Key, turn: _Waiting) -> None:
        """The task of a waiting update was cancelled (the application stops)."""
        line = self._lines.get(key)
        if turn.go.done() and not turn.go.cancelled() and turn.go.result():
            self._next(key)  # it had been handed the line: hand it on
        elif line is not None and not turn.gone:
            self._leave(line, turn)

    def _drop(self, update: object, coroutine: Awaitable[Any], key: Key) -> None:
        self.dropped += 1
        _close(coroutine)
        person = person_of(update)
        if person is not None and person not in self._dropping:
            self._dropping.add(person)
            log.warning("%s %s: one person has %d updates waiting; their next ones are "
                        "dropped", key[0], key[1], self._waiting[person])
        if self.on_drop is not None and isinstance(update, Update):
            try:
                self.on_drop(update)
            except Exception:
                log.exception("telling a dropped update's sender failed")

    @property
    def busy_chats(self) -> int:
        return len(self._lines)

    def waiting(self, person: int) -> int:
        """Updates ``person`` has waiting, in every chat."""
        return self._waiting[person]


def _close(coroutine: Awaitable[Any]) -> None:
    """Never awaited: close it, so no "was never awaited" warning."""
    if asyncio.iscoroutine(coroutine):
        coroutine.close()
