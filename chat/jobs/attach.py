"""The scaled mode in a process that receives updates (``KRENDZU_JOBS`` in chat/app.py)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from procrastinate.exceptions import AlreadyEnqueued

from chat.config import Config
from chat.delivery import Delivery
from chat.flow import Flow
from chat.jobs.core import (
    Jobs,
    defer_computer,
    migrate,
    wire,
)
from chat.jobs.tasks import build_jobs
from storage.postgres import PostgresStore

log = logging.getLogger(__name__)


class Attached:
    """The scaled mode in a process that receives updates (polling or ``chat.web``): its
    app is open for deferring; computers' turns told outside a move (a match's start, a
    seat handed over) become jobs too."""

    def __init__(self, jobs: Jobs, store: PostgresStore, ai_delay: float) -> None:
        self.jobs = jobs
        self.store = store
        self.ai_delay = ai_delay
        self._tasks: set[asyncio.Task[None]] = set()

    def on_computer(self, match_id: int, seq: int) -> None:
        """Delivery's hook for a :class:`~chat.notices.ComputerTurn` (a sync callback)."""
        task = asyncio.create_task(self._defer(match_id, seq))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _defer(self, match_id: int, seq: int) -> None:
        try:
            await defer_computer(self.jobs, match_id, seq, self.ai_delay)
        except Exception:
            log.exception("match %s: the computer's move %s could not be queued", match_id, seq)

    async def resume(self) -> int:
        """At start: an announcement job for every match whose stored moves are not all
        announced (one already waiting is enough). How many matches had some."""
        owed = 0
        store = self.store
        for row in [*await store.unannounced_matches(), *await store.active_matches()]:
            if row.announced_seq >= row.move_count:
                continue
            owed += 1
            with contextlib.suppress(AlreadyEnqueued):
                await self.jobs.announce.configure(
                    lock=f"match:{row.match_id}",
                    queueing_lock=f"announce:{row.match_id}").defer_async(
                    match_id=row.match_id)
        return owed

    async def close(self) -> None:
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        await self.jobs.app.close_async()


async def attach(config: Config, store: object, flow: Flow, delivery: Delivery) -> Attached:
    """Switch a process that receives updates to the scaled mode (``KRENDZU_JOBS``):
    procrastinate's tables made if missing, moves and deadlines deferred as jobs with
    their own transactions. Called by :func:`chat.app.build_application`'s start-up."""
    if not isinstance(store, PostgresStore):
        raise TypeError("the scaled mode's jobs need the PostgreSQL store")
    await migrate(config.database)
    jobs = build_jobs(config.database)
    await jobs.app.open_async()
    wire(store, flow, jobs)
    attached = Attached(jobs, store, config.ai_delay)
    delivery.on_computer = attached.on_computer
    return attached
