"""The scaled mode in a process that receives updates (``KRENDZU_JOBS``, attached by
chat/compose.py)."""

from __future__ import annotations

import contextlib
import logging

from procrastinate.exceptions import AlreadyEnqueued

from chat.config import Config
from chat.jobs.core import Jobs, announce_lock, migrate
from storage.postgres import PostgresStore

log = logging.getLogger(__name__)


class Attached:
    """The scaled mode in a process that receives updates (polling or ``chat.web``): its
    app is open for deferring. A computer's turn is never queued from this process's
    memory: a move's comes with the move's announcement job, and one that no move brought
    (a match starting with a computer to move, a seat handed to the computer on /leave,
    /kick or a timeout) is a job deferred in the transaction of that change
    (:attr:`storage.postgres.PostgresStore.after_computer`), so this process may die right
    after and a computer worker still moves."""

    def __init__(self, jobs: Jobs, store: PostgresStore, ai_delay: float) -> None:
        self.jobs = jobs
        self.store = store
        self.ai_delay = ai_delay

    @staticmethod
    def on_computer(match_id: int, seq: int) -> None:
        """Delivery's hook for a :class:`~chat.notices.ComputerTurn`: its job was deferred
        with the change that brought it (see the class), nothing is left to do here."""
        log.debug("match %s: the computer's move %s was queued with its change", match_id,
                  seq)

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
                    queueing_lock=announce_lock(row.match_id)).defer_async(
                    match_id=row.match_id)
        return owed

    async def close(self) -> None:
        await self.jobs.app.close_async()


async def attach(config: Config, jobs: Jobs, store: PostgresStore) -> Attached:
    """The scaled mode in a process that receives updates (``KRENDZU_JOBS``), whose store
    was opened with the jobs' hooks (:func:`chat.jobs.core.job_hooks`) and whose flow
    leaves announcements to the jobs: procrastinate's tables made if missing and its app
    opened for deferring. Called by :func:`chat.compose.build_application`'s start-up."""
    await migrate(config.database)
    await jobs.app.open_async()
    return Attached(jobs, store, config.ai_delay)
