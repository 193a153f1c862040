"""What the Prometheus metrics cost a move (issue 41: "with metrics on, benchmarks/bot.py's
saturation stays within 5 % of metrics off"): its saturation phase with ``KRENDZU_METRICS``
off and on, in pairs, on the same matches and moves.

    python benchmarks/metrics_cost.py [--pairs 8] [--matches 40] [--seconds 5]

Each pair plays the saturation phase (as many moves as the bot takes, every match waiting
for its board) once without metrics and once with them, each in a fresh bot on a fresh
database, the order alternating from pair to pair (off-on, on-off, ...), all in this one
process. With metrics on, ``/metrics`` is scraped every second beside the moves (fifteen
times as often as Prometheus' usual 15 s, so the scrape's own cost counts fully).

On a machine shared with other jobs one run's moves per second follows the CPU the others
leave, which changes from second to second (a single pair gave ×0.86 and ×1.22 on this
machine). So it gives three figures, the first two per pair (the two runs of a pair are
seconds apart, and weigh a slow or a quick moment alike), summed up by their median and
spread (lowest, quartiles, highest) over the pairs:

- ``throughput``: moves per second on / off (the target: median ≥ 0.95);
- ``cpu``: this process's CPU seconds a move, off / on (the bot's whole work but the drawing
  processes, with the fake Bot API's: less sensitive to the others' load);
- ``own``: the metrics' own time in the on runs, as a share of the run's CPU: every call of
  the hooks the bot's parts make (each timed, as ``chat.operations.instrument`` wires them),
  and the scrapes made, each counted at the CPU one scrape takes (measured after the run,
  the bot idle, scraper included). It hardly depends on the others' load, and bounds the
  cost from above (the scraper's CPU is Prometheus' in production).

It prints one JSON object; ``ok`` when the median throughput ratio meets the target.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from benchmarks.bot import BOT, UNLIMITED, Bench, ObservedTelegram, StepClock
from chat.metrics import Metrics
from chat.operations import instrument
from tests.bot_harness import Harness, running_bot
from tests.webhook_harness import free_port

#: Metrics on keep at least this share of the saturation without them.
TARGET_RATIO = 0.95


class TimedHooks:
    """Stands for a :class:`Metrics` in :func:`chat.operations.instrument`: each hook it
    hands out calls the real one and adds the time it took to :attr:`seconds`."""

    def __init__(self, metrics: Metrics) -> None:
        self.__dict__.update(_metrics=metrics, seconds=0.0, calls=0)

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._metrics, name)
        if not callable(target):
            return target

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return target(*args, **kwargs)
            finally:
                self.__dict__["seconds"] += time.perf_counter() - started
                self.__dict__["calls"] += 1

        return timed

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._metrics, name, value)  # instrument sets read_store


def time_hooks(h: Harness) -> TimedHooks:
    """Wire the bot's parts again, as the composition root did, through :class:`TimedHooks`."""
    metrics = h.app.bot_data["metrics"]
    hooks = TimedHooks(metrics)
    services = h.services
    instrument(cast(Metrics, hooks), store=services.store, flow=services.flow,
               delivery=services.delivery, limiter=h.app.bot.rate_limiter,
               processor=h.app.update_processor, thinker=services.thinker)
    return hooks


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


async def scrape_cpu(port: int, times: int) -> float:
    """The CPU seconds of one scrape, the median of ``times`` made one after another while
    the bot is idle (its registry as the run left it): this process's CPU from request to
    answer, the scraper's side (Prometheus' in production) and the store's read included."""
    spent = []
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as web:
        for _ in range(times):
            started = time.process_time()
            assert (await web.get("/metrics")).status_code == 200
            spent.append(time.process_time() - started)
    return statistics.median(spent)


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
        hooks = time_hooks(h) if metrics else None
        watchdog = asyncio.create_task(bench.watchdog())
        stop = asyncio.Event()
        scraper = (asyncio.create_task(scrape(port, stop, args.scrape_every))
                   if metrics and args.scrape_every > 0 else None)
        try:
            for game in bench.games:
                bench.ready.put_nowait(game)
            clock.advance(61)
            if hooks is not None:
                hooks.__dict__.update(seconds=0.0, calls=0)  # the set-up's calls aside
            saturation = await bench.saturation_phase(args.seconds)
            hook_seconds, hook_calls = (hooks.seconds, hooks.calls) if hooks else (0.0, 0)
        finally:
            stop.set()
            scrapes = await scraper if scraper is not None else 0
            watchdog.cancel()
            clock.advance(61)
            await h.settle(timeout=120)
        one_scrape = await scrape_cpu(port, 10) if metrics else 0.0
    moves = saturation["moves"]
    own = hook_seconds + scrapes * one_scrape
    return {"metrics": metrics, "moves": moves, "moves_per_s": saturation["moves_per_s"],
            "cpu_ms_a_move": round(1000 * saturation["cpu_s"] / moves, 3) if moves else None,
            "scrapes": scrapes, "scrape_cpu_ms": round(1000 * one_scrape, 3),
            "hook_calls": hook_calls, "hook_ms": round(1000 * hook_seconds, 2),
            "own_share": (round(own / saturation["cpu_s"], 5)
                          if metrics and saturation["cpu_s"] else None)}


def detach(h: Harness) -> None:
    """Unhook the metrics from the bot's parts: they run as with ``KRENDZU_METRICS=off``
    (the defaults of the attributes :func:`chat.operations.instrument` sets)."""
    services = h.services
    services.flow.matches.on_committed = lambda count: None
    services.delivery.on_board_posted = lambda moved_at: None
    services.delivery.sender.on_ephemeral_refused = None
    h.app.update_processor.on_handled = None  # type: ignore[attr-defined]
    h.app.bot.rate_limiter.on_flood_wait = None  # type: ignore[union-attr]
    services.thinker.on_decided = None


async def windows_run(args: argparse.Namespace, directory: Path) -> dict:
    """One bot, its metrics hooked on and off by turns: ``--quads`` times four saturation
    windows of ``--window-seconds``, off, on, on, off (a drift of the machine's speed over
    the four weighs on both alike); with them on, the scrapes run too. Each four gives
    sqrt(on₁·on₂ / (off₁·off₂)) of the moves per second and of the CPU a move."""
    clock = StepClock()
    fake = ObservedTelegram(bot_username=BOT, clock=clock, global_limit=None)
    port = free_port()
    windows: list[dict] = []
    async with running_bot(directory, fake, log_level="WARNING", overall_rate=1000.0,
                           draw_workers=args.draw_workers, user_per_minute=UNLIMITED,
                           info_per_user=UNLIMITED, info_per_chat=UNLIMITED, metrics=True,
                           web_listen=f"127.0.0.1:{port}") as h:
        bench = Bench(h, args.seed)
        await bench.setup(args.window_matches)
        watchdog = asyncio.create_task(bench.watchdog())
        for game in bench.games:
            bench.ready.put_nowait(game)
        try:
            for _ in range(args.quads):
                for metrics in (False, True, True, False):
                    hooks = time_hooks(h) if metrics else None
                    if not metrics:
                        detach(h)
                    stop = asyncio.Event()
                    scraper = (asyncio.create_task(scrape(port, stop, args.scrape_every))
                               if metrics and args.scrape_every > 0 else None)
                    clock.advance(61)
                    saturation = await bench.saturation_phase(args.window_seconds)
                    stop.set()
                    scrapes = await scraper if scraper is not None else 0
                    windows.append({
                        "metrics": metrics, "moves": saturation["moves"],
                        "moves_per_s": saturation["moves_per_s"],
                        "cpu_ms_a_move": (round(1000 * saturation["cpu_s"]
                                                / saturation["moves"], 3)
                                          if saturation["moves"] else None),
                        "hook_ms": round(1000 * hooks.seconds, 2) if hooks else 0.0,
                        "scrapes": scrapes})
        finally:
            watchdog.cancel()
            clock.advance(61)
            await h.settle(timeout=120)
    quads = [windows[i:i + 4] for i in range(0, len(windows), 4)]

    def drift_free(key: str, invert: bool = False) -> list[float]:
        ratios = []
        for off1, on1, on2, off2 in quads:
            ratio = math.sqrt(on1[key] * on2[key] / (off1[key] * off2[key]))
            ratios.append(1 / ratio if invert else ratio)
        return ratios

    return {"matches": args.window_matches, "window_seconds": args.window_seconds,
            "windows": windows, "throughput": spread(drift_free("moves_per_s")),
            "cpu": spread(drift_free("cpu_ms_a_move", invert=True))}


def spread(values: list[float]) -> dict | None:
    """The median of ``values`` and how far they spread: lowest, quartiles, highest."""
    ordered = sorted(values)
    if not ordered:
        return None
    if len(ordered) > 1:
        low_q, _, high_q = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        low_q = high_q = ordered[0]
    return {"median": round(statistics.median(ordered), 4), "min": round(ordered[0], 4),
            "q1": round(low_q, 4), "q3": round(high_q, 4), "max": round(ordered[-1], 4)}


async def run(args: argparse.Namespace, directory: str,
              progress: Callable[[str], None] = lambda line: None) -> dict:
    pairs: list[dict] = []
    for i in range(args.pairs):
        order = (False, True) if i % 2 == 0 else (True, False)
        runs = {}
        for metrics in order:
            where = Path(directory) / f"p{i}-{'on' if metrics else 'off'}"
            where.mkdir()
            runs[metrics] = await one_run(args, where, metrics)
        off, on = runs[False], runs[True]
        pair = {"order": "off-on" if order[0] is False else "on-off", "off": off, "on": on,
                "throughput": round(on["moves_per_s"] / off["moves_per_s"], 4),
                "cpu": round(off["cpu_ms_a_move"] / on["cpu_ms_a_move"], 4),
                "load": round(os.getloadavg()[0], 2)}
        pairs.append(pair)
        progress(f"pair {i + 1}/{args.pairs}: {off['moves_per_s']} → {on['moves_per_s']} "
                 f"moves/s (×{pair['throughput']}), CPU a move ×{pair['cpu']}, "
                 f"own {100 * on['own_share']:.2f} %, load {pair['load']}")
    throughput = spread([p["throughput"] for p in pairs])
    on_runs = [p["on"] for p in pairs]
    moves_on = max(1, sum(r["moves"] for r in on_runs))
    own = {"hook_us_a_move": round(1000 * sum(r["hook_ms"] for r in on_runs) / moves_on, 2),
           "hook_calls_a_move": round(sum(r["hook_calls"] for r in on_runs) / moves_on, 2),
           "scrape_cpu_ms": spread([r["scrape_cpu_ms"] for r in on_runs]),
           "share": spread([r["own_share"] for r in on_runs])}
    where = Path(directory) / "windows"
    where.mkdir()
    one_bot = await windows_run(args, where) if args.quads > 0 else None
    if one_bot is not None:
        progress(f"one bot, {args.quads} × off-on-on-off: moves/s on/off "
                 f"{one_bot['throughput']}, CPU a move off/on {one_bot['cpu']}")
    medians = [found["median"] for found in (throughput, one_bot and one_bot["throughput"])
               if found]
    return {"pairs": args.pairs, "matches": args.matches, "seconds": args.seconds,
            "scrape_every": args.scrape_every, "runs": pairs,
            "throughput": throughput, "cpu": spread([p["cpu"] for p in pairs]), "own": own,
            "one_bot": one_bot,
            "target_ratio": TARGET_RATIO, "ok": bool(medians) and min(medians) >= TARGET_RATIO,
            "python": platform.python_version(), "cpus": os.cpu_count(),
            "load": round(os.getloadavg()[0], 2), "at": time.strftime("%Y-%m-%d %H:%M")}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=8, help="pairs of runs, off and on")
    parser.add_argument("--matches", type=int, default=40, help="matches in progress")
    parser.add_argument("--seconds", type=float, default=5.0, help="each saturation run")
    parser.add_argument("--quads", type=int, default=6,
                        help="off-on-on-off windows of one bot (0: none)")
    parser.add_argument("--window-matches", type=int, default=100,
                        help="matches in progress in that bot")
    parser.add_argument("--window-seconds", type=float, default=3.0,
                        help="each window of that bot")
    parser.add_argument("--scrape-every", type=float, default=1.0,
                        help="seconds between two scrapes with metrics on (0: none)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the moves chosen")
    parser.add_argument("--draw-workers", type=int, default=2,
                        help="processes drawing pictures, as KRENDZU_DRAW_WORKERS")
    parser.add_argument("--dir", default=None, help="where the temporary databases go")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="krendzu-metrics-", dir=args.dir) as directory:
        result = asyncio.run(run(args, directory, progress))
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
