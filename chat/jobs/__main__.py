"""The job worker's program: ``python -m chat.jobs migrate|worker [--queue Q ...]
[--concurrency N]``. Its services are built by the composition root
(:func:`chat.compose_scaled.open_job_services`); this module only runs them: the options, the
signals while it starts, the exit status. Nothing imports it (it sits above the composition
root although its file lives in the package whose jobs it runs)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Sequence

import psycopg

from chat.botapi import StoppedBeforeStart
from chat.compose_scaled import open_job_services
from chat.config import HOW_TO_GET_A_TOKEN, Config, ConfigError, load_config
from chat.eventloop import run
from chat.jobs.core import ANNOUNCE_QUEUE, COMPUTER_QUEUE, DEFAULT_QUEUES, TIMERS_QUEUE, migrate
from chat.jobs.worker import ANNOUNCE_CONCURRENCY, worker_options
from chat.logs import configure as configure_logging
from storage import is_postgres

log = logging.getLogger("chat.jobs.worker")


async def run_worker(config: Config, queues: Sequence[str], concurrency: int) -> None:
    """Take jobs until SIGTERM or SIGINT. procrastinate handles those once the worker takes
    jobs; while it starts (waiting for the Bot API, as a webhook worker does), they end the
    start quietly instead of killing the process or raising ``KeyboardInterrupt``."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    starting = True
    try:
        async with open_job_services(config, stop=stop) as services:
            for sig in signals:
                loop.remove_signal_handler(sig)
            starting = False
            if stop.is_set():
                return
            await services.jobs.app.run_worker_async(
                **worker_options(services, queues, concurrency=concurrency,
                                 graceful_seconds=config.stop_share))
    except StoppedBeforeStart:
        log.info("stopped before the Bot API answered")
    finally:
        if starting:
            for sig in signals:
                loop.remove_signal_handler(sig)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m chat.jobs migrate|worker [--queue Q ...] [--concurrency N]``."""
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
    configure_logging(config.log_level, config.token, config.webhook_secret,
                      log_format=config.log_format)
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


if __name__ == "__main__":
    sys.exit(main())
