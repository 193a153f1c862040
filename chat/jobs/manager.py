"""The job manager of the bot's workers (the app's ``job_manager``, set by
:func:`chat.jobs.tasks.build_jobs`): procrastinate's, asking PostgreSQL for a job only when
there may be one (:class:`QuietFetches`), and letting a job write its own end within its
last write (:class:`JobEnd`)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from procrastinate import sql
from procrastinate.jobs import Job, Notification
from procrastinate.manager import JobManager, NotificationCallback
from psycopg import AsyncConnection, Error

log = logging.getLogger(__name__)

#: procrastinate's end of a job that succeeded (its ``finish_job`` query, kept).
FINISH_SUCCEEDED = sql.queries["finish_job"]


class QuietFetches(JobManager):
    """procrastinate's job manager, whose worker asks PostgreSQL for another job right
    after one it found only when there may be one: a job was notified since, or the
    worker is draining what its poll found (the app's ``job_manager``, set by
    :func:`chat.jobs.tasks.build_jobs`; one worker per app).

    procrastinate's worker fetches until a fetch finds nothing: every job woken by its
    insert's notification cost two fetches, the job's and an empty one after it (about 2
    of a move's PostgreSQL transactions in the scaled mode: a move's announcement and its
    board job are one notification each). Here a round of fetches that a notification
    began ends when every job notified so far was fetched for; a round the worker's poll
    began (:data:`~chat.jobs.core.POLL_SECONDS`: jobs scheduled for now, jobs a lock held
    back, a notification lost) still fetches until none is left. A job a round so left
    waiting (one notified while another worker took the one fetched for it, one scheduled
    for now) is the next poll's, at most that poll's seconds later."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Jobs notified that no fetch has answered yet.
        self._owed = 0
        #: The last fetch found a job (the worker's loop is fetching again at once).
        self._found = False
        #: The current round of fetches began on a notification.
        self._notified_round = False
        #: Jobs that wrote their own end (:meth:`ending`): the worker's end is not written.
        self._ended: set[int] = set()

    def ending(self, job_id: int) -> JobEnd:
        """The end of job ``job_id``, for the job to write within its own last write
        (:class:`JobEnd`)."""
        return JobEnd(self, job_id)

    async def finish_job(self, job: Job, status: Any, delete_job: bool) -> None:
        if job.id in self._ended:
            self._ended.discard(job.id)
            return  # written with the job's last write
        await super().finish_job(job, status, delete_job)

    async def retry_job(self, job: Job, *args: Any, **kwargs: Any) -> None:
        if job.id in self._ended:
            self._ended.discard(job.id)
            return  # it ended (its work was done) before what failed after
        await super().retry_job(job, *args, **kwargs)

    async def listen_for_jobs(self, *, on_notification: NotificationCallback,
                              queues: Any = None) -> None:
        async def counted(*, channel: str, notification: Notification) -> None:
            if notification["type"] == "job_inserted":
                self._owed += 1
            await on_notification(channel=channel, notification=notification)

        await super().listen_for_jobs(on_notification=counted, queues=queues)

    async def fetch_job(self, queues: Any, worker_id: int) -> Job | None:
        if not self._found:  # a new round: a notification's, or the poll's
            self._notified_round = self._owed > 0
        elif self._notified_round and self._owed == 0:
            self._found = False
            return None  # every notified job was fetched for: the round ends here
        self._owed = max(0, self._owed - 1)
        job = await super().fetch_job(queues, worker_id)
        self._found = job is not None
        return job


@dataclass(slots=True)
class JobEnd:
    """A job's end (``succeeded``) written inside the job's own last write transaction,
    so the work's last change and the job's end commit together, one commit where
    procrastinate's worker made a second one after the job returned (one of a move's
    PostgreSQL transactions in the scaled mode: the announcement's, with its marker).

    Call it inside that transaction (a SAVEPOINT: a job that is no longer running, which
    the sweeper took for stalled, leaves the write whole and its end to the worker as
    before), then :meth:`committed` once the transaction committed: the worker then writes
    no end of its own. The job must end right after: what fails after it is not retried."""

    manager: QuietFetches
    job_id: int
    written: bool = False
    #: Not to be written with a marker any more: the job goes on after it (it tells moves
    #: stored meanwhile) and ends with its last marker (:mod:`chat.markers`).
    withheld: bool = False
    #: A write carried it (maybe rolled back since; :meth:`committed` tells).
    taken: bool = False

    async def __call__(self, conn: AsyncConnection[Any]) -> None:
        try:
            async with conn.transaction():
                await conn.execute(FINISH_SUCCEEDED, {"job_id": self.job_id,
                                                      "status": "succeeded",
                                                      "delete_job": False})
        except Error as exc:
            log.info("job %s: its end left to the worker (%s)", self.job_id, exc)
            return
        self.written = True

    def committed(self) -> None:
        if self.written:
            self.manager._ended.add(self.job_id)
