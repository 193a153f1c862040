"""Durable jobs of the scaled mode, on procrastinate (a PostgreSQL task queue).

In the scaled mode (``KRENDZU_DATABASE_URL``, any number of processes) nothing that must
happen later lives in one process's memory: it is a procrastinate job in the same database
as the matches, so a killed process loses nothing. The jobs:

- ``announce(match_id)`` (queue ``announce``): tells the players about every stored move
  after the match's ``announced`` marker (:meth:`chat.flow.Flow.announce_pending`, the
  restart's logic), delivers it, then moves the marker; the group's notices are the board
  job's, so a private panel never waits behind a group's post for its window, and the next
  turn's deadline moves by the time its panel waited
  (:meth:`chat.flow.deadlines.Deadlines.start_late`). It is deferred **inside the transaction that
  stored the move** (:attr:`storage.postgres.PostgresStore.after_append`, given to the
  store when it is opened: :func:`chat.jobs.core.job_hooks`): a move that
  commits has its announcement queued, a move rolled back has none. ``lock=match:<id>`` runs
  one match's announcements one at a time, in order; ``queueing_lock=announce:<id>`` keeps
  one waiting job per match (a queued job announces everything up to the marker when it
  runs, so a second one would be pointless). The job first waits for the match's writers
  (:meth:`~storage.postgres.PostgresStore.announce_reads`): a move whose own job was
  refused because this one was still queued is then seen by it.
- ``board(match_id)`` (queue ``announce``, deferred with the announcement in the move's
  transaction for a match in a group, :func:`chat.jobs.core.defer_move_jobs`): tells the
  group what its newest board post does not show yet, in one post, when the group's window
  lets one out; while the window is shut it is a job scheduled for when it opens, holding
  no worker's slot. ``lock=`` and ``queueing_lock=board:<id>``.
- Every notice an announcement delivers is noted in the store right after Telegram took it
  (:data:`chat.notices.Told`: a key per notice; a group's board post notes the last move it
  shows), and both jobs skip what is noted: a job run again after its worker was killed
  resumes after the last notice delivered instead of telling the moves again. What stays is
  the request a kill cut in flight (Telegram has no idempotency key).
- ``turn_timer(match_id, seq)`` and ``reminder(match_id, seq)`` (queue ``timers``):
  scheduled at the turn's deadline and a third of the time before it, when the deadline is
  armed (:attr:`~storage.postgres.PostgresStore.after_arm`, same transaction). They carry the
  move number they were armed for: one that fires after the match moved on does nothing.
  No ``lock=``: a job with a lock and a future start would hold back the announcements.
- ``computer_move(match_id, seq)`` (queue ``computer``, workers of their own): the computer
  thinks and submits through the conditional append, so a stale decision is dropped. It is
  deferred by the announcement job whose move made a computer next, or, for a turn no move
  brought (a match that starts with a computer to move, a seat handed to the computer), in
  the transaction of that change (:attr:`~storage.postgres.PostgresStore.after_computer`);
  one for a seat that is not to move does nothing.
- ``sweep`` (periodic, every 10 s, no ``lock=``, which could stall the sweeper itself):
  jobs left ``doing`` by a killed worker (no heartbeat for :data:`STALLED_AFTER` s) are
  retried; when a newer job holds the same queueing lock (procrastinate's unique index
  covers ``todo`` jobs only) the stalled one is closed instead, the newer one doing its work.

procrastinate runs a job at least once, never exactly once, so every job is idempotent: the
announcement marker and the notes of what was delivered, the move number of timers and
computers, the conditional append.

Processes (each its own command; any number, on any machine)::

    python -m chat.jobs migrate                 # procrastinate's tables (once; idempotent)
    python -m chat.jobs worker                  # announcements and timers
    python -m chat.jobs worker --queue computer # computer players (one per core)

Nothing is built at import: :func:`build_jobs` makes the :class:`procrastinate.App` from a
URL; the composition root (:func:`chat.compose_scaled.open_job_services`) the bot, store and flow a
worker needs.
"""

from chat.jobs.attach import Attached, attach
from chat.jobs.core import (
    ANNOUNCE_QUEUE,
    COMPUTER_QUEUE,
    DEFAULT_QUEUES,
    TIMERS_QUEUE,
    Jobs,
    defer_announce,
    defer_board,
    defer_computer,
    defer_timers,
    job_hooks,
    migrate,
)
from chat.jobs.services import JobServices
from chat.jobs.tasks import build_jobs, sweep_stalled
from chat.jobs.worker import worker_options

__all__ = [
    "ANNOUNCE_QUEUE",
    "COMPUTER_QUEUE",
    "DEFAULT_QUEUES",
    "TIMERS_QUEUE",
    "Attached",
    "JobServices",
    "Jobs",
    "attach",
    "build_jobs",
    "defer_announce",
    "defer_board",
    "defer_computer",
    "defer_timers",
    "job_hooks",
    "migrate",
    "sweep_stalled",
    "worker_options",
]
