"""What an operator reads of a running bot: Prometheus metrics (issue 41).

One :class:`Metrics` per process, built by the composition root when ``KRENDZU_METRICS=on``
and served at ``GET /metrics`` on the process's web listener (``KRENDZU_WEB_LISTEN``), in
Prometheus' text format through ``prometheus_client``. Each process serves its own figures
(one endpoint per process, not prometheus_client's multiprocess mode): a webhook worker, a
job worker and ``python bot.py`` are scraped apart, and Prometheus adds them up by job. The
multiprocess mode would need one shared directory on one host; the scaled mode's workers
run in containers of their own (deploy/compose.yaml).

The registry is this object's own (never prometheus_client's global one, which a second
application in the same process, as the tests build, would find already full). A label
never holds a user id, a chat id or a card: the kinds of update, the computer's level, why
an ephemeral message was not sent and what is counted are the only labels. The names
follow Prometheus' conventions (``krendzu_…_total`` for counters, ``…_seconds`` for
durations); docs/operations.md says what each means and its healthy range.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)

#: The content type of :meth:`Metrics.render`'s text.
CONTENT_TYPE = CONTENT_TYPE_LATEST

#: Buckets of the latencies players feel (seconds): an update's answer, a move's board post.
LATENCY_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
#: Buckets of a computer's decision (seconds): easy is milliseconds, hard about a second.
DECISION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0)
#: Why an ephemeral message (issue 42) was not sent: Telegram refused it (too late after
#: the person's action, or pushed where the bot is no administrator), or the group's window
#: stayed full longer than an answer may wait.
EPHEMERAL_REFUSALS = ("refused", "busy")


class StoreFigures(Protocol):
    """What a scrape reads of the store (storage.OperatingFigures has these)."""

    @property
    def open_lobbies(self) -> int: ...
    @property
    def active_matches(self) -> int: ...
    @property
    def unannounced_moves(self) -> int: ...
    @property
    def oldest_unannounced(self) -> float | None: ...
    @property
    def pool_waiting(self) -> int: ...


#: How the figures that live in the store are read at a scrape.
ReadStore = Callable[[], Awaitable[StoreFigures]]


def update_kind(update: object) -> str:
    """An update's kind for the ``kind`` label: command, button, message, member or other
    (never its chat, its sender or its text)."""
    message = getattr(update, "message", None) or getattr(update, "edited_message", None)
    if getattr(update, "callback_query", None) is not None:
        return "button"
    if message is not None:
        text = getattr(message, "text", None) or ""
        return "command" if text.startswith("/") else "message"
    if getattr(update, "my_chat_member", None) is not None or getattr(
            update, "chat_member", None) is not None:
        return "member"
    return "other"


class Metrics:
    """The process's instruments, its registry, and the readers of the figures that live in
    the store (set by the composition root: :attr:`read_store`)."""

    def __init__(self, *, process: bool = True) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        if process:  # process_resident_memory_bytes, CPU seconds, open files (Linux /proc)
            ProcessCollector(registry=r)
        self.updates = Counter("krendzu_updates", "Updates handled, by kind.", ["kind"],
                               registry=r)
        self.update_seconds = Histogram(
            "krendzu_update_seconds", "From an update's arrival to the end of its handling "
            "(its wait for its chat's turn included).", buckets=LATENCY_BUCKETS, registry=r)
        self.moves = Counter("krendzu_moves", "Moves committed to the store.", registry=r)
        self.board_post_seconds = Histogram(
            "krendzu_board_post_seconds", "From a move's commit to its board post (or the "
            "board's edit) accepted by Telegram.", buckets=LATENCY_BUCKETS, registry=r)
        self.flood_waits = Counter("krendzu_flood_waits", "429 answers (Too Many Requests) "
                                   "met from the Bot API.", registry=r)
        self.flood_wait_seconds = Counter(
            "krendzu_flood_wait_seconds", "Seconds the 429 answers asked to wait.",
            registry=r)
        self.decision_seconds = Histogram(
            "krendzu_computer_decision_seconds", "A computer player's time to decide a "
            "turn, by level.", ["level"], buckets=DECISION_BUCKETS, registry=r)
        self.active = Gauge("krendzu_active", "What is open now: set-ups waiting for "
                            "players, running matches and people waiting in the Play now "
                            "pool.",
                            ["what"], registry=r)
        self.backlog_size = Gauge(
            "krendzu_announcement_backlog", "Moves of running matches stored but not yet "
            "announced (read from the store: the same figure in every process).", registry=r)
        self.backlog_age = Gauge(
            "krendzu_announcement_backlog_oldest_seconds", "Age of the oldest move stored "
            "but not yet announced (0 when none waits).", registry=r)
        self.ephemeral_refusals = Counter(
            "krendzu_ephemeral_refused", "Ephemeral messages not sent, by reason: refused "
            "(by Telegram) or busy (the group's window stayed full).", ["reason"], registry=r)
        for reason in EPHEMERAL_REFUSALS:  # shown at 0 from the start
            self.ephemeral_refusals.labels(reason)
        self.scrape_errors = Counter(
            "krendzu_metrics_read_errors", "Scrapes whose store figures could not be read.",
            registry=r)
        #: Read at each scrape (``None``: not known in this process).
        self.read_store: ReadStore | None = None

    # -- what the bot's parts report --------------------------------------------------

    def update_handled(self, update: object, seconds: float) -> None:
        self.updates.labels(update_kind(update)).inc()
        self.update_seconds.observe(max(0.0, seconds))

    def moves_committed(self, count: int = 1) -> None:
        if count > 0:
            self.moves.inc(count)

    def board_posted(self, committed_at: float, now: float | None = None) -> None:
        """A move's board reached Telegram; ``committed_at`` is the move's wall-clock time."""
        self.board_post_seconds.observe(max(0.0, (now or time.time()) - committed_at))

    def flood_wait(self, seconds: float) -> None:
        self.flood_waits.inc()
        self.flood_wait_seconds.inc(max(0.0, seconds))

    def decided(self, level: str, seconds: float) -> None:
        self.decision_seconds.labels(level).observe(max(0.0, seconds))

    def ephemeral_refused(self, reason: str) -> None:
        """An ephemeral message not sent; ``reason`` is one of :data:`EPHEMERAL_REFUSALS`."""
        self.ephemeral_refusals.labels(reason if reason in EPHEMERAL_REFUSALS
                                       else "refused").inc()

    # -- a scrape ---------------------------------------------------------------------

    async def refresh(self) -> None:
        """Read the figures that live in the store (the gauges); a failure is counted and
        leaves the last figures, so a slow database never breaks the scrape."""
        if self.read_store is None:
            return
        try:
            figures = await self.read_store()
        except Exception:
            self.scrape_errors.inc()
            return
        self.set_store_figures(figures)

    def set_store_figures(self, figures: StoreFigures, now: float | None = None) -> None:
        self.active.labels("lobbies").set(figures.open_lobbies)
        self.active.labels("matches").set(figures.active_matches)
        self.active.labels("pool").set(figures.pool_waiting)
        self.backlog_size.set(figures.unannounced_moves)
        oldest = figures.oldest_unannounced
        self.backlog_age.set(0.0 if oldest is None else max(0.0, (now or time.time()) - oldest))

    async def render(self) -> bytes:
        """The text Prometheus scrapes: the gauges read afresh, then every instrument."""
        await self.refresh()
        return generate_latest(self.registry)
