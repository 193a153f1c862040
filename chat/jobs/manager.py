"""The job manager of the bot's workers (the app's ``job_manager``, set by
:func:`chat.jobs.tasks.build_jobs`): procrastinate's, asking PostgreSQL for a job only when
there may be one (:class:`QuietFetches`), and letting a job write its own end within its
last write (:class:`JobEnd`)."""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from procrastinate import sql
from procrastinate.jobs import Job, Notification
from procrastinate.manager import JobManager, NotificationCallback, get_channel_for_queues
from psycopg import AsyncConnection, Error

from chat.jobs.core import HEARTBEAT_SECONDS, POLL_SECONDS

log = logging.getLogger(__name__)

#: procrastinate's end of a job that succeeded (its ``finish_job`` query, kept).
FINISH_SUCCEEDED = sql.queries["finish_job"]


#: The type of a worker's beat, the notification each job worker sends on its queues'
#: channels with its heartbeat (:meth:`QuietFetches.update_heartbeat`).
BEAT = "krendzu_worker"
#: A worker's heartbeat with its beat, in one statement (one transaction, as the heartbeat
#: alone was): the beat goes out when the heartbeat commits.
WITH_BEAT = """
SELECT {call}(%(worker_id)s),
       (SELECT count(pg_notify(channel, %(payload)s))
          FROM unnest(%(channels)s::text[]) AS channel)
"""
BEAT_QUERY = WITH_BEAT.format(call="procrastinate_update_heartbeat_v1")
#: A worker's unregistering with its last beat (``gone``): its peers stop leaving it jobs.
GONE_QUERY = WITH_BEAT.format(call="procrastinate_unregister_worker_v1")
#: A peer whose beat was not heard for this long no longer has jobs left to it: three of
#: its heartbeats (:data:`~chat.jobs.core.HEARTBEAT_SECONDS`) missed.
PEER_SILENT_AFTER = 3 * HEARTBEAT_SECONDS


class QuietFetches(JobManager):
    """procrastinate's job manager, whose worker asks PostgreSQL for a job only when there
    may be one for it: after a job notified to its queues that falls to it among the job
    workers of those queues, or on its poll (the app's ``job_manager``, set by
    :func:`chat.jobs.tasks.build_jobs`; one worker per app).

    *One fetch after a job.* procrastinate's worker fetches until a fetch finds nothing:
    every job woken by its insert's notification cost two fetches, the job's and an empty
    one after it (about 2 of a move's PostgreSQL transactions in the scaled mode: a move's
    announcement and its board job are one notification each). Here a round of fetches that
    a notification began ends when every job notified to this worker so far was fetched
    for; a round the worker's poll began (:data:`~chat.jobs.core.POLL_SECONDS`: jobs
    scheduled for now, jobs a lock held back, a notification lost) still fetches until none
    is left.

    *One worker for a job.* A job's insert notifies every worker listening on its queue,
    and each of them fetched: with the scaled mode's two job workers, the one that did not
    get the job made an empty fetch, another 2 of a move's transactions. Here a notified
    job is fetched for by one of them, the one whose rank among the live workers of that
    queue's channel is the job's id modulo their number (ids are consecutive: a move's two
    jobs go one to each of two workers). Each worker learns who they are from its peers'
    beats: with the heartbeat it writes anyway (:data:`BEAT_QUERY`, the same statement, no
    new transaction) it notifies ``{"type": "krendzu_worker", "worker_id": N}`` on the
    channels it listens on, so it is heard exactly by the workers of the same queues (the
    computer workers' ``computer`` queue has a channel of its own) and counted live while
    its beats come (:data:`PEER_SILENT_AFTER`); a worker that stops says so in its
    unregistering (:data:`GONE_QUERY`). Weighed against a short rank-based delay before a
    fetch, skipped when another took the job: that needs word that the job was taken (a
    notification from every fetch) and delays every other job; and against reading the
    ranks from ``procrastinate_workers``: that table does not say which queues a worker
    serves, and its rows outlive a killed worker by :data:`~chat.jobs.core.STALLED_AFTER`.

    *A job whose worker is dead or busy* (its chosen worker was killed within the last beats,
    hangs, or has every slot taken) is another worker's within its poll: a notification for
    a peer does not wake this worker's loop, so its poll comes :data:`POLL_SECONDS` after its
    last round at the latest; and while notifications of its own wake it more often than
    that, the first round more than :data:`POLL_SECONDS` after its last fetch that found
    nothing (its last drain) drains again, if a job was left to a peer since. That costs at
    most one empty fetch a poll's time a worker (about 4 a second for two workers when both
    are busy, 0.13 a move at 30 moves a second, where each worker's empty fetch after every
    job was 60 a second). Beats are heard only by workers whose heartbeat runs (tests turn
    it off): a worker that heard none fetches for every job notified, as before."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Jobs notified to this worker that no fetch has answered yet.
        self._owed = 0
        #: The last fetch found a job (the worker's loop is fetching again at once).
        self._found = False
        #: The current round of fetches began on a notification and ends when none is owed.
        self._notified_round = False
        #: Jobs that wrote their own end (:meth:`ending`): the worker's end is not written.
        self._ended: set[int] = set()
        #: This worker's id in ``procrastinate_workers`` (None before it registered).
        self._worker_id: int | None = None
        #: The channels its listener listens on (its queues'), where it beats.
        self._channels: list[str] = []
        #: Each channel's peers heard beating: worker id -> when (the monotonic clock).
        self._peers: dict[str, dict[int, float]] = {}
        #: A notified job was left to a peer since the last drain.
        self._left = False
        #: When a fetch last found nothing (the monotonic clock).
        self._drained_at = -math.inf

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

    # Peers ------------------------------------------------------------------------------

    async def register_worker(self) -> int:
        self._worker_id = await super().register_worker()
        return self._worker_id

    async def update_heartbeat(self, worker_id: int) -> None:
        await self.connector.execute_query_async(
            query=BEAT_QUERY, worker_id=worker_id, channels=list(self._channels),
            payload=json.dumps({"type": BEAT, "worker_id": worker_id}))

    async def unregister_worker(self, worker_id: int) -> None:
        await self.connector.execute_query_async(
            query=GONE_QUERY, worker_id=worker_id, channels=list(self._channels),
            payload=json.dumps({"type": BEAT, "worker_id": worker_id, "gone": True}))

    def _heard(self, channel: str, beat: dict[str, Any]) -> None:
        peers = self._peers.setdefault(channel, {})
        if beat.get("gone"):
            peers.pop(int(beat["worker_id"]), None)
        else:
            peers[int(beat["worker_id"])] = time.monotonic()

    def falls_to_me(self, channel: str, job_id: int) -> bool:
        """Whether the job ``job_id`` notified on ``channel`` is this worker's to fetch:
        its id modulo the live workers heard on the channel, this one counted always, picks
        this one (ranked by worker id)."""
        if self._worker_id is None:
            return True
        peers = self._peers.get(channel, {})
        now = time.monotonic()
        for silent in [w for w, at in peers.items() if now - at >= PEER_SILENT_AFTER]:
            del peers[silent]
        live = sorted(peers.keys() | {self._worker_id})
        return live[job_id % len(live)] == self._worker_id

    async def listen_for_jobs(self, *, on_notification: NotificationCallback,
                              queues: Any = None) -> None:
        self._channels = list(get_channel_for_queues(queues))

        async def counted(*, channel: str, notification: Notification) -> None:
            said: dict[str, Any] = dict(notification)
            if said["type"] == BEAT:
                self._heard(channel, said)
                return
            if said["type"] == "job_inserted":
                if not self.falls_to_me(channel, int(said["job_id"])):
                    self._left = True
                    return  # a peer's: left to it, and to this worker's poll
                self._owed += 1
            await on_notification(channel=channel, notification=notification)

        await super().listen_for_jobs(on_notification=counted, queues=queues)

    # Fetches ----------------------------------------------------------------------------

    async def fetch_job(self, queues: Any, worker_id: int) -> Job | None:
        if not self._found:  # a new round: a notification's, or the poll's
            overdue = self._left and time.monotonic() - self._drained_at >= POLL_SECONDS
            self._notified_round = self._owed > 0 and not overdue
        elif self._notified_round and self._owed == 0:
            self._found = False
            return None  # every notified job was fetched for: the round ends here
        self._owed = max(0, self._owed - 1)
        job = await super().fetch_job(queues, worker_id)
        self._found = job is not None
        if job is None:
            self._drained_at = time.monotonic()
            self._left = False
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
