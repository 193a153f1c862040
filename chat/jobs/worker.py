"""A worker process: its services, the worker's options, ``python -m chat.jobs``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import psycopg
from telegram.ext import Application
from telegram.request import BaseRequest

from chat.computer import Thinker
from chat.config import Config
from chat.delivery import Delivery
from chat.eventloop import run
from chat.flow import Flow
from chat.i18n import Catalogs
from chat.jobs.core import (
    ANNOUNCE_QUEUE,
    COMPUTER_QUEUE,
    DEFAULT_QUEUES,
    HEARTBEAT_SECONDS,
    POLL_SECONDS,
    SERVICES,
    STALLED_AFTER,
    TIMERS_QUEUE,
    Jobs,
    migrate,
    wire,
)
from chat.jobs.tasks import JobServices, build_jobs
from storage.postgres import PostgresStore

log = logging.getLogger(__name__)

#: Jobs a worker of announcements and timers runs at once. They mostly wait (for Telegram,
#: for a group's 20-a-minute window), and a job waiting holds its slot: with 8, a few busy
#: groups' waiting announcements could hold every slot while a turn timer came due.
ANNOUNCE_CONCURRENCY = 16
#: Seconds the jobs running when a stop comes (SIGTERM, SIGINT; to the worker alone or to
#: its whole process group, its drawing and computer processes included) get to finish.
#: The rest are aborted, and procrastinate retries a job a stop aborted: the next worker
#: (or a sibling) announces from the stored marker. An announcement waiting for a group's
#: window or a 429 would otherwise hold the stop for a minute and more; so a stop ends
#: within :data:`chat.app.STOP_SECONDS`.
GRACEFUL_SECONDS = 5.0

# A worker process ---------------------------------------------------------------------------


async def start_services(config: Config, jobs: Jobs, *, request: BaseRequest | None = None,
                         clock: Callable[[], float] = time.time,
                         stop: asyncio.Event | None = None) -> JobServices:
    """The bot (built as :func:`chat.app.build_application` builds it: the same rate
    limiter and API address; it sends, it never polls), the store, the flow and delivery
    of a worker, wired to ``jobs``. ``request`` and ``clock`` are for tests; ``stop`` set
    while the Bot API cannot be reached raises :class:`chat.app.StoppedBeforeStart`."""
    from chat.app import (
        StoppedBeforeStart,
        app_links,
        build_application,
        flow_locks,
        reach_bot_api,
        share_windows,
    )
    from chat.painter import Painter
    from chat.ratelimit import ChatRateLimiter

    application: Application = build_application(config, request=request, clock=clock)
    if not await reach_bot_api(application, stop=stop):  # getMe: the username for links
        raise StoppedBeforeStart
    store = await PostgresStore.open(config.database, clock=clock, prepare=config.pg_prepare)
    catalogs = Catalogs()
    thinker = Thinker(workers=config.ai_workers, hard_budget_ms=config.hard_budget_ms)
    flow = Flow(store, catalogs, thinker.decide, bot_username=application.bot.username,
                clock=clock, timer_grace=config.timer_grace,
                max_matches_per_user=config.max_matches_per_user,
                max_matches_per_chat=config.max_matches_per_chat,
                engine_api_url=config.engine_api_url,
                app_links=app_links(config, application.bot.username),
                locks=flow_locks(store))
    limiter = application.bot.rate_limiter
    delivery = Delivery(application.bot, store, painter=Painter(config.draw_workers, catalogs),
                        group_limit=config.group_limit, clock=clock,
                        limiter=limiter if isinstance(limiter, ChatRateLimiter) else None)
    if isinstance(limiter, ChatRateLimiter):
        limiter.on_pause = delivery.flood_wait
        share_windows(store, limiter, delivery, config.group_limit)
    wire(store, flow, jobs, config.ai_delay)
    return JobServices(jobs, store, flow, delivery, ai_delay=config.ai_delay, clock=clock,
                       thinker=thinker, application=application)


@contextlib.asynccontextmanager
async def serving(config: Config, *, request: BaseRequest | None = None,
                  clock: Callable[[], float] = time.time,
                  stop: asyncio.Event | None = None) -> AsyncIterator[JobServices]:
    """The app open and a worker's services, for the ``async with`` block."""
    jobs = build_jobs(config.database, prepare=config.pg_prepare)
    async with jobs.app.open_async():
        services = await start_services(config, jobs, request=request, clock=clock,
                                        stop=stop)
        try:
            yield services
        finally:
            await services.close()


def worker_options(services: JobServices, queues: Sequence[str], *, concurrency: int = 1,
                   wait: bool = True) -> dict[str, Any]:
    """What :meth:`procrastinate.App.run_worker_async` is given."""
    return {"queues": list(queues), "concurrency": concurrency, "wait": wait,
            "additional_context": {SERVICES: services},
            "fetch_job_polling_interval": POLL_SECONDS, "name": "+".join(queues),
            "update_heartbeat_interval": HEARTBEAT_SECONDS,
            "stalled_worker_timeout": STALLED_AFTER,
            "shutdown_graceful_timeout": GRACEFUL_SECONDS}


async def run_worker(config: Config, queues: Sequence[str], concurrency: int) -> None:
    """Take jobs until SIGTERM or SIGINT. procrastinate handles those once the worker takes
    jobs; while it starts (waiting for the Bot API, as a webhook worker does), they end the
    start quietly instead of killing the process or raising ``KeyboardInterrupt``."""
    from chat.app import StoppedBeforeStart

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    starting = True
    try:
        async with serving(config, stop=stop) as services:
            for sig in signals:
                loop.remove_signal_handler(sig)
            starting = False
            if stop.is_set():
                return
            await services.jobs.app.run_worker_async(
                **worker_options(services, queues, concurrency=concurrency))
    except StoppedBeforeStart:
        log.info("stopped before the Bot API answered")
    finally:
        if starting:
            for sig in signals:
                loop.remove_signal_handler(sig)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m chat.jobs migrate|worker [--queue Q ...] [--concurrency N]``."""
    from chat.config import HOW_TO_GET_A_TOKEN, ConfigError, load_config
    from chat.logs import configure as configure_logging
    from storage import is_postgres

    parser = argparse.ArgumentParser(prog="python -m chat.jobs",
                                     description="The scaled mode's job workers.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("migrate", help="create procrastinate's tables (idempotent)")
    worker = sub.add_parser("worker", help="run jobs until SIGTERM")
    worker.add_argument("--queue", action="append", dest="queues",
                        choices=(ANNOUNCE_QUEUE, TIMERS_QUEUE, COMPUTER_QUEUE),
                        help="a queue to serve (repeatable; default: announce and timers)")
    worker.add_argument("--concurrency", type=int, default=None,
                        help="jobs at once (default: 1 for computer, else "
                             f"{ANNOUNCE_CONCURRENCY})")
    args = parser.parse_args(argv)
    try:
        config = load_config()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    if not is_postgres(config.database):
        print("KRENDZU_DATABASE_URL (postgresql://…) is required: jobs live in PostgreSQL.",
              file=sys.stderr)
        return 1
    configure_logging(config.log_level, config.token, config.webhook_secret)
    if args.command == "migrate":
        try:
            asyncio.run(migrate(config.database))
        except psycopg.Error as exc:
            print(f"cannot create procrastinate's tables: {exc}", file=sys.stderr)
            return 1
        return 0
    if not config.token:
        print(HOW_TO_GET_A_TOKEN, file=sys.stderr)
        return 78  # EX_CONFIG, as bot.py
    queues = tuple(args.queues or DEFAULT_QUEUES)
    concurrency = args.concurrency or (1 if queues == (COMPUTER_QUEUE,) else ANNOUNCE_CONCURRENCY)
    asyncio.run(migrate(config.database))
    run(run_worker(config, queues, concurrency))
    return 0

