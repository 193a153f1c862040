"""Computer players off the event loop: a process pool (or threads) and paced turns."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import logging
import random
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

from chat.workers import close_pool, pool_closed, worker_pool
from krendzu import Action
from krendzu.ai import make_player, warm_up

log = logging.getLogger(__name__)


def decide_turn(level: str, view: Any, seed: int, budget_ms: float) -> list[Action]:
    """One decision, in a worker: the whole turn (or one exchange step) for ``view``."""
    player = make_player(level, budget_ms=budget_ms if level == "hard" else None)
    return player.decide(view, random.Random(seed))


class Thinker:
    """Runs decisions in worker processes (``workers`` > 0) or a thread pool (0), fairly.

    At most as many decisions as there are workers are handed to the executor; the rest wait
    here, in a priority queue, so that the executor's own FIFO never holds a person's request
    behind a pile of computer-only work. *Urgent* requests (a hint, a person's timed-out
    turn, a computer move a present person is waiting for) go first; background ones (no
    person waits for them) are let in only while one worker stays free for an urgent request
    (with one worker: only when it is idle), so an urgent request waits for at most the
    urgent requests ahead of it. ``work`` is the function run in a worker (tests pass a slow
    fake).
    """

    def __init__(self, workers: int = 2, hard_budget_ms: float = 1000.0, *,
                 work: Callable[..., list[Action]] = decide_turn) -> None:
        self.hard_budget_ms = hard_budget_ms
        self._work = work
        self._executor: Executor
        #: The pool's manager thread once closed, for :meth:`wait_closed`.
        self._manager: threading.Thread | None = None
        if workers > 0:
            self._executor = worker_pool(workers, warm_up)  # stops with the bot
        else:
            warm_up()
            self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="thinker")
        #: Decisions that may be in the executor at once (one per worker).
        self.slots = workers if workers > 0 else 2
        self._running = 0
        #: Waiting requests: (0 urgent / 1 background, arrival, wake-up future).
        self._queue: list[tuple[int, int, asyncio.Future[None]]] = []
        self._arrivals = itertools.count()
        self._closed = False
        #: Set by the application: told each decision's level and seconds (metrics).
        self.on_decided: Callable[[str, float], None] | None = None

    def _limit(self, urgent: bool) -> int:
        """Decisions in flight under which a request may start: background work leaves one
        worker free for urgent work."""
        return self.slots if urgent else max(1, self.slots - 1)

    @property
    def running(self) -> int:
        return self._running

    @property
    def queued(self) -> int:
        return sum(1 for _, _, future in self._queue if not future.done())

    async def decide(self, level: str, view: Any, seed: int, *,
                     urgent: bool = False) -> list[Action]:
        await self._admit(urgent)
        started = time.perf_counter()
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._executor, self._work, level, view, seed,
                                              self.hard_budget_ms)
        finally:
            self._running -= 1
            self._wake()
            if self.on_decided is not None:  # the decision's own time, not its wait
                self.on_decided(level, time.perf_counter() - started)

    async def _admit(self, urgent: bool) -> None:
        """Wait for a slot: at once if one is free and nobody of the same or a higher
        priority waits; otherwise in the queue, urgent first, then in arrival order."""
        if self._closed:
            raise RuntimeError("the thinker is closed")
        priority = 0 if urgent else 1
        ahead = any(p <= priority and not f.done() for p, _, f in self._queue)
        if not ahead and self._running < self._limit(urgent):
            self._running += 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._queue, (priority, next(self._arrivals), future))
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled() and future.exception() is None:
                # The slot was granted just as the caller gave up: pass it on.
                self._running -= 1
                self._wake()
            raise

    def _wake(self) -> None:
        """Grant free slots to the waiting requests, urgent first."""
        while self._queue:
            priority, _, future = self._queue[0]
            if future.done():  # the caller was cancelled while waiting
                heapq.heappop(self._queue)
                continue
            if self._running >= self._limit(priority == 0):
                return
            heapq.heappop(self._queue)
            self._running += 1
            future.set_result(None)

    def close(self) -> None:
        self._closed = True
        for _, _, future in self._queue:
            if not future.done():
                future.set_exception(RuntimeError("the thinker is closed"))
        self._queue.clear()
        self._manager = close_pool(self._executor)

    async def wait_closed(self) -> None:
        """After :meth:`close`: until the pool's processes are gone (chat/workers.py)."""
        await pool_closed(self._manager)


class Pacer:
    """Plays computer turns after a delay, one pending turn per (match, move number)."""

    def __init__(self, play: Callable[[int, int], Awaitable[None]], delay: float) -> None:
        self._play = play
        self.delay = delay
        self._pending: dict[tuple[int, int], asyncio.Task[None]] = {}

    def schedule(self, match_id: int, seq: int) -> None:
        key = (match_id, seq)
        if key in self._pending:
            return
        task = asyncio.create_task(self._run(match_id, seq))
        self._pending[key] = task
        task.add_done_callback(lambda _: self._pending.pop(key, None))

    async def _run(self, match_id: int, seq: int) -> None:
        if self.delay > 0:
            await asyncio.sleep(self.delay)
        try:
            await self._play(match_id, seq)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("match %s: the computer's move %s failed", match_id, seq)

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def idle(self) -> None:
        while self._pending:
            await asyncio.gather(*list(self._pending.values()), return_exceptions=True)

    async def close(self) -> None:
        for task in list(self._pending.values()):
            task.cancel()
        for task in list(self._pending.values()):
            with contextlib.suppress(BaseException):
                await task
