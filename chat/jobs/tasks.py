"""What the jobs do (registered on an app by :func:`build_jobs`), with a worker's
:class:`JobServices`, and the sweeper of stalled jobs."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable
from dataclasses import replace

from procrastinate import App, JobContext, PsycopgConnector, RetryStrategy
from procrastinate.exceptions import AlreadyEnqueued, UniqueViolation
from procrastinate.jobs import Status

from chat.flow.base import chat_key, panel_lines_key, stand_ins_key, timer_key, user_key
from chat.jobs.core import (
    ANNOUNCE_QUEUE,
    COMPUTER_QUEUE,
    EARLY_SLACK,
    SERVICES,
    STALLED_AFTER,
    SWEEP_CRON,
    TIMERS_QUEUE,
    Jobs,
    at,
    defer_board,
    job_pool,
    timer_lock,
)
from chat.jobs.manager import JobEnd, QuietFetches
from chat.jobs.services import JobServices, Pending
from chat.notices import BOARD_KEY, Announced, BoardPost
from storage.pg_reads import AnnounceReads
from storage.pg_windows import BoardLook
from storage.postgres import PREPARE_AFTER

log = logging.getLogger(__name__)

#: The turn timers' and reminders' priority (announcements have procrastinate's 0).
TIMER_PRIORITY = 10
#: A board job waits this long for its group's window within the job; a longer wait is a
#: job scheduled for when the window opens (a worker's slot is not held meanwhile).
BOARD_WAIT = 1.0
#: The told key (:data:`chat.notices.Told`) whose number is the last move whose group
#: notices were all delivered (the board job's start).
GROUP_KEY = "group"


def build_jobs(url: str, *, prepare: bool = True) -> Jobs:
    """The app on ``url`` (a PostgreSQL URL) with the bot's tasks; open it before use
    (``async with jobs.app.open_async():``). ``prepare``: prepared statements, as the
    store's (:meth:`storage.postgres.PostgresStore.open`)."""
    app = App(connector=PsycopgConnector(conninfo=url, pool_factory=job_pool, kwargs={
        "prepare_threshold": PREPARE_AFTER if prepare else None}))
    app.job_manager = QuietFetches(connector=app.connector)
    announce = app.task(name="announce", queue=ANNOUNCE_QUEUE, pass_context=True,
                        retry=RetryStrategy(max_attempts=20, exponential_wait=2))(_announce)
    # Timers before announcements: procrastinate hands out the waiting jobs by priority,
    # then in id order, so a timer come due waited behind every older announcement.
    turn_timer = app.task(name="turn_timer", queue=TIMERS_QUEUE, pass_context=True,
                          priority=TIMER_PRIORITY,
                          retry=RetryStrategy(max_attempts=3, wait=1))(_turn_timer)
    reminder = app.task(name="reminder", queue=TIMERS_QUEUE, pass_context=True,
                        priority=TIMER_PRIORITY)(_reminder)
    computer_move = app.task(name="computer_move", queue=COMPUTER_QUEUE, pass_context=True,
                             retry=RetryStrategy(max_attempts=3, wait=1))(_computer_move)
    sweep = app.periodic(cron=SWEEP_CRON)(
        app.task(name="sweep", queue=TIMERS_QUEUE, pass_context=True)(_sweep))
    board = app.task(name="board", queue=ANNOUNCE_QUEUE, pass_context=True,
                     retry=RetryStrategy(max_attempts=20, exponential_wait=2))(_board)
    return Jobs(app, announce, turn_timer, reminder, computer_move, sweep, board)


def services_of(context: JobContext) -> JobServices:
    services: JobServices = context.additional_context[SERVICES]
    return services


class NotDelivered(Exception):
    """Some notices could not be delivered: the job fails and procrastinate retries it."""


# The tasks (registered by build_jobs) --------------------------------------------------------


async def _announce(context: JobContext, match_id: int, **_before: object) -> None:
    """The announcer, run by a job: who moved and through which door are read from the
    move's rows (a job deferred by an older version carried its mover in ``_before``'s
    arguments, now read from the rows as well)."""
    svc = services_of(context)
    # Followed before the read: a move stored from then on is not missed by ``more``.
    changed = await svc.news.watch(svc.store, match_id)
    try:
        await _tell(svc, match_id, changed, ending(context))
    finally:
        svc.news.forget(match_id)


def ending(context: JobContext) -> JobEnd | None:
    """The job's end, to be written with its last write (``None``: the worker writes it,
    as procrastinate's worker does for every job)."""
    manager = context.app.job_manager
    if context.job.id is None or not isinstance(manager, QuietFetches):
        return None
    return manager.ending(context.job.id)


async def _tell(svc: JobServices, match_id: int, changed: Callable[[], bool],
                end: JobEnd | None = None) -> None:
    """:func:`_announce`'s work; ``changed``: whether a newer move may have been stored
    since it last said so (:meth:`MatchNews.watch`); ``end``: the job's end, written with
    the marker."""
    reads = await svc.store.announce_reads(match_id)  # once the match's writers are done
    told, announced = reads.told, reads.announced
    if GROUP_KEY not in told and BOARD_KEY not in told:
        # The group's first board job starts where this announcement does (its start's
        # board went out with the match's start, or a match from before the board jobs).
        await svc.store.note_told(match_id, GROUP_KEY, announced)
        told[GROUP_KEY] = announced
    notices = await svc.flow.announce_pending(match_id, board=told.get(BOARD_KEY),
                                              read=(reads.stored, read_rows(reads)))

    async def more(told: int) -> Pending:
        """The moves after ``told`` (stored while this job's posts wait), their movers from
        their rows (their own waiting job then finds nothing left to tell), with the told
        keys of the same snapshot; the match's head alone (one statement) when a move may
        have come, nothing while none did."""
        if not changed():
            return [], None
        _row, count = await svc.store.match_head(match_id)
        if count <= told:
            return [], None
        newer = await svc.store.announce_reads(match_id)
        return (await svc.flow.announce_pending(match_id, since=told,
                                                read=(newer.stored, read_rows(newer))),
                newer.told)

    if not await svc.deliver(notices, more, match_id=match_id, told=told, end=end):
        raise NotDelivered(f"match {match_id}: announcement not delivered")


def read_rows(reads: AnnounceReads) -> dict[Hashable, object]:
    """The rows an announcement job read beforehand, by their keys in the flow's memo of
    the unit of work (:func:`chat.flow.base.read_once`): the announcer finds them there."""
    match_id = reads.stored.match_id
    rows: dict[Hashable, object] = {timer_key(match_id): reads.timer,
                                    stand_ins_key(match_id): reads.stand_ins}
    rows.update({user_key(user_id): row for user_id, row in reads.users.items()})
    # Every seated person's panel lines: none stored is none shown.
    rows.update({panel_lines_key(match_id, seat.user_id): reads.panel_lines.get(
        seat.user_id, []) for seat in reads.stored.row.seats if seat.user_id is not None})
    if reads.chat is not None:
        rows[chat_key(reads.chat.chat_id)] = reads.chat
    return rows


async def _board(context: JobContext, match_id: int) -> None:
    """Tell the group what its board post does not show yet (the match's moves after the
    store's ``group`` key: everything told to the group up to it; the board's lines after
    the ``board`` key, the last move its newest post shows), when its window lets a post
    out. While the window is shut for longer than :data:`BOARD_WAIT`, the job is deferred
    again for when it opens rather than holding a worker's slot; moves stored meanwhile
    join that post (their own board job finds this one waiting)."""
    svc = services_of(context)
    # One snapshot: the told keys, the match and every row its tell reads (as the
    # announcement's, :func:`read_rows`).
    reads = await svc.store.announce_reads(match_id)
    told = reads.told
    start = told.get(GROUP_KEY, told.get(BOARD_KEY, 0))
    notices = await svc.flow.announce_pending(match_id, since=start,
                                              board=told.get(BOARD_KEY), record=False,
                                              read=(reads.stored, read_rows(reads)))
    end = max((n.seq for n in notices if isinstance(n, Announced)), default=None)
    _private, group = await svc.untold(match_id, notices, told)
    with_post = False
    if group:
        # The group's newest post, looked at in the window's claim: when the post goes now,
        # in the slot claimed, it is the sender's read just before it (BoardPost.seen).
        looked: list[tuple[int, str] | None] = []
        asked = time.monotonic()
        wait = await svc.delivery.group_wait(reads.stored.row.chat_id,
                                             BoardLook(match_id, looked.append))
        if wait > BOARD_WAIT:
            await defer_board(svc.jobs, match_id, svc.clock() + wait)
            return
        post = group[0]
        if len(group) == 1 and isinstance(post, BoardPost) and end is not None:
            # The post is all the group is told: the group key goes with its note, in
            # the post's own write (noted after the post, as the job would; a post that
            # does not go out leaves both, and the next board job starts here again); its end too.
            post = replace(post, notes=((GROUP_KEY, end),), end=ending(context))
            group, with_post = [post.looked(looked[-1], asked) if wait <= 0 and looked
                                else post], True
        if not await svc.deliver(group):
            raise NotDelivered(f"match {match_id}: the group's board not delivered")
    if end is not None and not with_post:
        await svc.store.note_told(match_id, GROUP_KEY, end)


async def _turn_timer(context: JobContext, match_id: int, seq: int) -> None:
    svc = services_of(context)
    timer = await svc.store.timer_of(match_id)
    if timer is None or timer.seq != seq or timer.deadline is None:
        return  # the match moved on (or the timer was switched off)
    if timer.deadline > svc.clock() + EARLY_SLACK:  # the deadline was moved (a restart's grace)
        try:
            await svc.jobs.turn_timer.configure(
                schedule_at=at(timer.deadline), queueing_lock=timer_lock(match_id)
            ).defer_async(match_id=match_id, seq=seq)
        except AlreadyEnqueued:  # a move armed a newer timer meanwhile
            log.debug("match %s: a newer turn timer waits already", match_id)
        return
    await svc.deliver(await svc.flow.ticker.timeout(match_id, seq))


async def _reminder(context: JobContext, match_id: int, seq: int) -> None:
    svc = services_of(context)
    timer = await svc.store.timer_of(match_id)
    if timer is None or timer.seq != seq or timer.reminded or timer.deadline is None:
        return
    await svc.deliver(await svc.flow.ticker.remind(match_id, seq))


async def _computer_move(context: JobContext, match_id: int, seq: int) -> None:
    svc = services_of(context)
    outcome = await svc.flow.computer_turn(match_id, seq)
    await svc.deliver(outcome.notices)


async def _sweep(context: JobContext, timestamp: int) -> None:
    await sweep_stalled(context.app)


async def sweep_stalled(app: App, seconds_since_heartbeat: float = STALLED_AFTER) -> int:
    """Retry the jobs stalled workers left ``doing``; how many were retried. A stalled job
    whose queueing lock a newer waiting job holds is closed as failed instead (retrying it
    would break procrastinate's unique index, and the newer job does the same work); a
    turn timer or reminder so superseded is deleted, as a move deletes the waiting ones
    it replaces (:func:`chat.jobs.core.defer_timers`)."""
    retried = 0
    manager = app.job_manager
    for job in await manager.get_stalled_jobs(seconds_since_heartbeat=seconds_since_heartbeat):
        try:
            await manager.retry_job(job)
            retried += 1
            log.warning("jobs: %s #%s of a stalled worker retried", job.task_name, job.id)
        except UniqueViolation:
            try:
                await manager.finish_job(job, status=Status.FAILED, delete_job=job.task_name
                                         in ("turn_timer", "reminder"))
            except Exception:  # another worker's sweep (or the job itself) got there first
                log.info("jobs: %s #%s changed while it was being closed", job.task_name,
                         job.id, exc_info=True)
                continue
            log.warning("jobs: %s #%s of a stalled worker closed: a newer job with its "
                        "queueing lock %s waits", job.task_name, job.id, job.queueing_lock)
        except Exception:  # one job's trouble must not end the pass for the others
            log.warning("jobs: %s #%s of a stalled worker could not be retried",
                        job.task_name, job.id, exc_info=True)
    return retried
