"""What the Prometheus metrics cost a move (issue 41): benchmarks/bot.py's saturation phase
with ``KRENDZU_METRICS`` off and on, in turns, on the same matches and moves.

    python benchmarks/metrics_cost.py [--matches 40] [--seconds 10] [--rounds 3]

Each round plays the saturation phase (as many moves as the bot takes, every match waiting
for its board) once without metrics and once with them (the order alternates, so a machine
that slows down or speeds up during the run weighs on both alike), each in a fresh bot on a
fresh database. It prints one JSON object: the moves per second of each run, the medians,
their ratio (on / off) and whether it meets the target, metrics on ≥ 95 % of off (``ok``).
With metrics on, a scrape of ``/metrics`` every second runs beside the moves, as Prometheus
would scrape (more often than its usual 15 s, to count the scrape's own cost too).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from benchmarks.bot import BOT, UNLIMITED, Bench, ObservedTelegram, StepClock
from tests.bot_harness import running_bot
from tests.webhook_harness import free_port

#: Metrics on keep at least this share of the saturation without them.
TARGET_RATIO = 0.95


async def scrape(port: int, stop: asyncio.Event, every: float) -> int:
    """GET /metrics every ``every`` seconds until ``stop``; how many scrapes answered."""
    done = 0
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as web:
        while not stop.is_set():
            if (await web.get("/metrics")).status_code == 200:
                done += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), every)
    return done


async def one_run(args: argparse.Namespace, directory: Path, metrics: bool) -> dict:
    clock = StepClock()
    fake = ObservedTelegram(bot_username=BOT, clock=clock, global_limit=None)
    port = free_port()
    extra = {"metrics": True, "web_listen": f"127.0.0.1:{port}"} if metrics else {}
    async with running_bot(directory, fake, log_level="WARNING", overall_rate=1000.0,
                           draw_workers=args.draw_workers, user_per_minute=UNLIMITED,
                           info_per_user=UNLIMITED, info_per_chat=UNLIMITED, **extra) as h:
        bench = Bench(h, args.seed)
        await bench.setup(args.matches)
        watchdog = asyncio.create_task(bench.watchdog())
        stop = asyncio.Event()
        scraper = (asyncio.create_task(scrape(port, stop, args.scrape_every))
                   if metrics and args.scrape_every > 0 else None)
        try:
            for game in bench.games:
                bench.ready.put_nowait(game)
            clock.advance(61)
            saturation = await bench.saturation_phase(args.seconds)
        finally:
            stop.set()
            scrapes = await scraper if scraper is not None else 0
            watchdog.cancel()
            clock.advance(61)
            await h.settle(timeout=120)
    return {"metrics": metrics, "moves_per_s": saturation["moves_per_s"], "scrapes": scrapes}


async def run(args: argparse.Namespace, directory: str) -> dict:
    runs = []
    for i in range(args.rounds):
        order = (False, True) if i % 2 == 0 else (True, False)
        for metrics in order:
            where = Path(directory) / f"r{i}-{'on' if metrics else 'off'}"
            where.mkdir()
            runs.append(await one_run(args, where, metrics))
    off = statistics.median(r["moves_per_s"] for r in runs if not r["metrics"])
    on = statistics.median(r["moves_per_s"] for r in runs if r["metrics"])
    ratio = round(on / off, 3) if off else None
    return {"matches": args.matches, "seconds": args.seconds, "rounds": args.rounds,
            "runs": runs, "median_moves_per_s": {"off": off, "on": on}, "ratio": ratio,
            "target_ratio": TARGET_RATIO, "ok": ratio is not None and ratio >= TARGET_RATIO,
            "python": platform.python_version(), "cpus": os.cpu_count(),
            "load": os.getloadavg()[0], "at": time.strftime("%Y-%m-%d %H:%M")}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=40, help="matches in progress")
    parser.add_argument("--seconds", type=float, default=10.0, help="each saturation run")
    parser.add_argument("--rounds", type=int, default=3, help="pairs of runs, off and on")
    parser.add_argument("--scrape-every", type=float, default=1.0,
                        help="seconds between two scrapes with metrics on (0: none)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the moves chosen")
    parser.add_argument("--draw-workers", type=int, default=2,
                        help="processes drawing pictures, as KRENDZU_DRAW_WORKERS")
    parser.add_argument("--dir", default=None, help="where the temporary databases go")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="krendzu-metrics-", dir=args.dir) as directory:
        result = asyncio.run(run(args, directory))
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
