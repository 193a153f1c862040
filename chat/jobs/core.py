"""The scaled mode's jobs: their names, the app's tasks as a :class:`Jobs`, procrastinate's
schema, and deferring inside a move's transaction (see :mod:`chat.jobs`)."""

from __future__ import annotations

import collections
import datetime
import logging
import time
import weakref
from dataclasses import dataclass
from typing import Any

from procrastinate import App
from procrastinate.exceptions import AlreadyEnqueued
from procrastinate.schema import SchemaManager
from procrastinate.tasks import Task
from psycopg import AsyncConnection, OperationalError
from psycopg.pq import ConnStatus
from psycopg.rows import tuple_row
from psycopg_pool import AsyncConnectionPool

from storage.postgres import JobHooks

log = logging.getLogger(__name__)

ANNOUNCE_QUEUE = "announce"
TIMERS_QUEUE = "timers"
COMPUTER_QUEUE = "computer"
#: What ``python -m chat.jobs worker`` serves without ``--queue``.
DEFAULT_QUEUES = (ANNOUNCE_QUEUE, TIMERS_QUEUE)
#: The key of :class:`JobServices` in the worker's ``additional_context``.
SERVICES = "krendzu"
#: How often a worker tells PostgreSQL it is alive (procrastinate's default: 10 s).
HEARTBEAT_SECONDS = 2.0
#: A job whose worker sent no heartbeat for this long is stalled: its worker was killed.
#: A killed worker's announcement holds its match's ``lock=`` until then, so the match's
#: next panels and boards wait that long (procrastinate's default, 30 s, with a 10 s
#: heartbeat, made a crash freeze a match for up to 40 s). Five heartbeats: a worker whose
#: event loop is only busy is not taken for dead.
STALLED_AFTER = 10.0
#: How often the sweeper looks: every 5 s. procrastinate reads cron lines with croniter,
#: whose seconds are the *sixth* field ("*/5 * * * * *" would mean every second of the
#: minutes :00, :05, :10 ..., leaving a killed worker's jobs stalled for up to five minutes).
SWEEP_CRON = "* * * * * */5"
#: Fallback poll for new jobs when a LISTEN notification was lost (procrastinate: 5 s).
POLL_SECONDS = 0.5
#: A turn timer that fires this much before its (moved) deadline waits for it instead.
EARLY_SLACK = 0.5
#: The advisory lock key ``migrate`` takes (negative: never a match id).
SCHEMA_LOCK = -(int.from_bytes(b"krendzu-jobs", "big") % 2**62)
#: A connection back in the job queue's pool for longer than this is checked with a round
#: trip before it is lent again (:func:`job_pool`); one back sooner is lent as it is.
CHECK_IDLE_AFTER = 1.0


# The app and its tasks ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Jobs:
    """The procrastinate app and its tasks (made by :func:`build_jobs`)."""

    app: App
    announce: Task[Any, Any, Any]
    turn_timer: Task[Any, Any, Any]
    reminder: Task[Any, Any, Any]
    computer_move: Task[Any, Any, Any]
    sweep: Task[Any, Any, Any]
    board: Task[Any, Any, Any]


#: procrastinate's insert trigger, narrowed to jobs due within a second: a worker woken for a
#: job scheduled later (a turn timer, a reminder: two of a move's three jobs) finds nothing
#: to run, and every worker serving the queue was woken and asked PostgreSQL in vain. A
#: scheduled job is found when it is due by the workers' poll (:data:`POLL_SECONDS`), as it
#: was before. The same trigger name and function as procrastinate's own (3.x), so its
#: migrations replace it as they would their own.
QUIET_SCHEDULED_JOBS = """
CREATE OR REPLACE TRIGGER procrastinate_jobs_notify_queue_job_inserted_v1
    AFTER INSERT ON procrastinate_jobs
    FOR EACH ROW WHEN (new.status = 'todo'::procrastinate_job_status
                       AND (new.scheduled_at IS NULL
                            OR new.scheduled_at <= clock_timestamp() + interval '1 second'))
    EXECUTE PROCEDURE procrastinate_notify_queue_job_inserted_v1()
"""


async def migrate(url: str) -> bool:
    """Create procrastinate's tables unless they are there (under an advisory lock, so
    processes starting together do it once), with :data:`QUIET_SCHEDULED_JOBS`. True if
    they were created now.

    procrastinate's own schema, not one of ``storage/pg_migrations.py``: it belongs to the
    installed procrastinate, whose release notes give the SQL to move it to a newer one
    (``procrastinate schema --migrations-path``)."""
    async with await AsyncConnection.connect(url, autocommit=True) as conn, \
            conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        cur = await conn.execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL")
        row = await cur.fetchone()
        created = row is None or not row[0]
        if created:
            # No parameters: psycopg sends the script as it is (several statements, % kept).
            await conn.execute(SchemaManager.get_schema())
            log.info("jobs: procrastinate's schema created")
        cur = await conn.execute(
            "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = "
            "'procrastinate_jobs'::regclass AND tgname = "
            "'procrastinate_jobs_notify_queue_job_inserted_v1'")
        trigger = await cur.fetchone()
        if trigger is not None and "clock_timestamp" not in trigger[0]:
            # Only when it is procrastinate's own: replacing takes a lock on the jobs table.
            await conn.execute(QUIET_SCHEDULED_JOBS)
        return created


# The job queue's connections ----------------------------------------------------------------


class NewestFirst(collections.deque[Any]):
    """A pool's idle connections, lent newest first (psycopg_pool takes the next one with
    ``popleft`` and puts one back with ``append``: oldest first).

    Oldest first, a worker's one-at-a-time work (its polls every :data:`POLL_SECONDS`, a
    move's fetch, deferral and finish) went round every connection of the pool, so each
    had waited longer than :data:`CHECK_IDLE_AFTER` when it came round again and was checked
    before it was lent: about 1.5 of a move's PostgreSQL transactions in the scaled mode.
    Newest first, that work keeps to the connection it just used; the others serve work
    done at the same time, and are checked when they come back after a pause as before."""

    def popleft(self) -> Any:
        return self.pop()


def job_pool(**kwargs: Any) -> AsyncConnectionPool[Any]:
    """procrastinate's pool (its ``PsycopgConnector``'s ``pool_factory``), checking a
    connection before lending it only when it was idle for :data:`CHECK_IDLE_AFTER`, and
    lending the connection given back last first (:class:`NewestFirst`).

    procrastinate asks its pool to check every connection it lends
    (``AsyncConnectionPool.check_connection``: an empty statement, a round trip and, for
    PostgreSQL, a transaction of its own). A worker borrows one for each fetch, start,
    finish and deferral of a job, so that check was about 9 of a move's PostgreSQL
    transactions in the scaled mode, on connections used a moment before. A connection that
    psycopg knows to be broken is still refused without a round trip, and one that waited
    long enough for the server or the network to have dropped it is checked as before; one
    dropped within the last seconds fails its statement as it could have failed right after
    any check, and procrastinate reports that operation's error as before."""
    returned: weakref.WeakKeyDictionary[AsyncConnection[Any], float] = (
        weakref.WeakKeyDictionary())

    async def check(conn: AsyncConnection[Any]) -> None:
        if conn.closed or conn.pgconn.status != ConnStatus.OK:
            raise OperationalError("the connection is closed")
        since = returned.pop(conn, None)
        if since is None or time.monotonic() - since >= CHECK_IDLE_AFTER:
            await AsyncConnectionPool.check_connection(conn)

    async def reset(conn: AsyncConnection[Any]) -> None:
        returned[conn] = time.monotonic()

    kwargs["check"] = check
    kwargs["reset"] = reset
    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(**kwargs)
    pool._pool = NewestFirst(pool._pool)  # before it is opened: still empty
    return pool


# Deferring ------------------------------------------------------------------------------------


def at(epoch: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC)


async def defer_announce(jobs: Jobs, conn: AsyncConnection[Any], match_id: int,
                         seq: int = 0) -> None:
    """Queue the match's announcement inside ``conn``'s transaction (a SAVEPOINT, so that a
    job already waiting, which will announce this move too, does not abort the move). It
    carries the match alone: who moved and through which door are in the move's rows."""
    try:
        async with conn.transaction():
            await jobs.announce.configure(
                connection=conn, lock=f"match:{match_id}",
                queueing_lock=announce_lock(match_id)).defer_async(match_id=match_id)
    except AlreadyEnqueued:
        log.debug("match %s: an announcement is queued already (move %s)", match_id, seq)


async def defer_board(jobs: Jobs, match_id: int, when: float | None = None, *,
                      conn: AsyncConnection[Any] | None = None) -> None:
    """Queue the match's board job (the group's notices, :func:`chat.jobs.tasks._board`),
    at once or at ``when`` (the group's window opens); one waiting is enough, and one
    match's run one at a time. With ``conn``, inside its transaction (a SAVEPOINT, so that
    a job already waiting does not abort it)."""
    task = jobs.board.configure(
        lock=board_lock(match_id), queueing_lock=board_lock(match_id), connection=conn,
        schedule_at=at(when) if when is not None else None)
    try:
        if conn is None:
            await task.defer_async(match_id=match_id)
        else:
            async with conn.transaction():
                await task.defer_async(match_id=match_id)
    except AlreadyEnqueued:
        log.debug("match %s: a board job waits already", match_id)


async def defer_move_jobs(jobs: Jobs, conn: AsyncConnection[Any], match_id: int,
                          seq: int) -> None:
    """A stored move's jobs, inside its transaction: its announcement and, for a match in
    a group, the group's board job (the announcement deferred that one once it had told
    the players, in a transaction of its own: one of a move's PostgreSQL transactions in
    the scaled mode). The two are independent: the board job tells the group from the
    rows and its own told keys, whether the announcement ran before it or not."""
    await defer_announce(jobs, conn, match_id, seq)
    async with conn.cursor(row_factory=tuple_row) as cur:
        await cur.execute("SELECT chat_id < 0 FROM matches WHERE match_id = %s", (match_id,))
        row = await cur.fetchone()
    if row is not None and row[0]:
        await defer_board(jobs, match_id, conn=conn)


def board_lock(match_id: int) -> str:
    """The lock and queueing lock of a match's board job (one waiting, one running)."""
    return f"board:{match_id}"


def announce_lock(match_id: int) -> str:
    """The queueing lock of a match's waiting announcement (one at a time)."""
    return f"announce:{match_id}"


def timer_lock(match_id: int) -> str:
    """The queueing lock of a match's waiting turn timer (one at a time)."""
    return f"timer:{match_id}"


def reminder_lock(match_id: int) -> str:
    return f"reminder:{match_id}"


async def defer_timers(jobs: Jobs, conn: AsyncConnection[Any], match_id: int, seq: int,
                       deadline: float, seconds: int) -> None:
    """Queue the turn timer of move ``seq`` at ``deadline`` and its reminder a third of
    ``seconds`` before, inside ``conn``'s transaction (where the deadline is armed), in
    place of the match's timer and reminder still waiting: those were for an earlier move
    and would do nothing. Left waiting, every move of every match added two jobs that every
    worker's fetch walks past until they are due (procrastinate's fetch takes the waiting
    jobs in id order and skips those scheduled later): thousands at a few dozen moves a
    second, and each fetch cost milliseconds of PostgreSQL's time."""
    await conn.execute(
        "DELETE FROM procrastinate_jobs WHERE queueing_lock = ANY(%s) AND status = 'todo'",
        ([timer_lock(match_id), reminder_lock(match_id)],))
    await jobs.turn_timer.configure(connection=conn, schedule_at=at(deadline),
                                    queueing_lock=timer_lock(match_id)).defer_async(
        match_id=match_id, seq=seq)
    await jobs.reminder.configure(
        connection=conn, schedule_at=at(deadline - seconds / 3.0),
        queueing_lock=reminder_lock(match_id)).defer_async(match_id=match_id, seq=seq)


async def defer_computer(jobs: Jobs, match_id: int, seq: int, delay: float = 0.0, *,
                         conn: AsyncConnection[Any] | None = None) -> None:
    """Queue the computer's move ``seq`` (after the pacing ``delay``); a job for the same
    move already waiting is enough. With ``conn``, inside its transaction (a SAVEPOINT, so
    that a job already waiting does not abort it)."""
    task = jobs.computer_move.configure(
        queueing_lock=f"computer:{match_id}:{seq}",
        schedule_at=at(time.time() + delay) if delay > 0 else None, connection=conn)
    try:
        if conn is None:
            await task.defer_async(match_id=match_id, seq=seq)
        else:
            async with conn.transaction():
                await task.defer_async(match_id=match_id, seq=seq)
    except AlreadyEnqueued:
        log.debug("match %s: the computer's move %s is queued already", match_id, seq)


def job_hooks(jobs: Jobs, ai_delay: float = 0.0) -> JobHooks:
    """What a store of the scaled mode does in a change's own transaction, given to it when
    it is opened (:func:`storage.open_store`'s ``hooks``; its flow is built with
    ``announced_by_jobs``): a move defers its ``announce`` job (the announcer, which reads
    who moved from the move's rows) and its group's ``board`` job (:func:`defer_move_jobs`),
    an armed deadline its timer jobs, and a computer's
    turn that no move brought (a match starting with a computer to move, a seat handed to
    the computer) a ``computer_move`` job (it does nothing if the computer is not to move
    after all)."""

    async def after_append(conn: AsyncConnection[Any], match_id: int, seq: int) -> None:
        await defer_move_jobs(jobs, conn, match_id, seq)

    async def after_arm(conn: AsyncConnection[Any], match_id: int, seq: int, deadline: float,
                        seconds: int) -> None:
        await defer_timers(jobs, conn, match_id, seq, deadline, seconds)

    async def after_computer(conn: AsyncConnection[Any], match_id: int, seq: int) -> None:
        await defer_computer(jobs, match_id, seq, ai_delay, conn=conn)

    return JobHooks(after_append, after_arm, after_computer)
