"""Computer players off the event loop: a process pool (or threads) and paced turns."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import random
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from typing import Any

from krendzu import Action
from krendzu.ai import make_player, warm_up

log = logging.getLogger(__name__)


def decide_turn(level: str, view: Any, seed: int, budget_ms: float) -> list[Action]:
    """One decision, in a worker: the whole turn (or one exchange step) for ``view``."""
    player = make_player(level, budget_ms=budget_ms if level == "hard" else None)
    return player.decide(view, random.Random(seed))


class Thinker:
    """Runs decisions in worker processes (``workers`` > 0) or a thread pool (0)."""

    def __init__(self, workers: int = 2, hard_budget_ms: float = 1000.0) -> None:
        self.hard_budget_ms = hard_budget_ms
        self._executor: Executor
        if workers > 0:
            self._executor = ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=warm_up,
            )
        else:
            warm_up()
            self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="thinker")

    async def decide(self, level: str, view: Any, seed: int) -> list[Action]:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, decide_turn, level, view, seed,
                                          self.hard_budget_ms)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)


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
