"""Storage benchmark: committed moves per second and the latency of loading a match.

    python benchmarks/storage.py [--moves 3000] [--writers 1,8,32] [--loads 1000] [--dir DIR]

Runs on a real SQLite file (WAL, synchronous=FULL) in a temporary directory (or ``--dir``):

* ``moves_per_second``: sequential ``append_move`` calls (one writer, so one transaction and
  one fsync each), with an update id, as the bot makes them: random legal moves of whole
  duel matches, generated beforehand so that only storage is timed. The last move of each
  match also closes it and records statistics.
* ``appends``: the same with 1, 8, 32 matches played at once (one task each); each caller
  still waits for its own durable commit, but concurrent moves share commits.
* ``disk_fdatasyncs_per_second``: the disk's own limit on sequential durable commits.
* ``load_30_move_match_ms``: ``load_match`` of random 30-move matches among 200 stored ones
  (two queries in one read transaction plus the engine replaying the 30 moves).

Prints one JSON object. Targets: >= 500 moves/s, p95 load <= 5 ms.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from krendzu import Match, Settings, Table
from storage import SeatSpec
from storage.sqlite import SqliteStore

SEATS = [SeatSpec.human(1), SeatSpec.computer(3)]
SETTINGS = Settings(table=Table.DUEL)


def random_game(seed: int, moves: int | None) -> tuple[int, list[str], Match]:
    """A seed, the texts of random legal moves from it (the whole match if None), the end."""
    game = Match([s.label(i) for i, s in enumerate(SEATS)], SETTINGS, seed=seed)
    rng = random.Random(seed)
    out = []
    while not game.is_over and (moves is None or len(out) < moves):
        action = rng.choice(game.legal_actions())
        game.apply(action)
        out.append(str(action))
    return seed, out, game


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def fsyncs_per_second(directory: str, n: int) -> float:
    """The disk's own limit: 4 KiB rewrite + fdatasync, as a WAL commit does."""
    path = os.path.join(directory, "fsync.bin")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.write(fd, b"x" * 4096)
        started = time.perf_counter()
        for _ in range(n):
            os.pwrite(fd, b"y" * 4096, 0)
            os.fdatasync(fd)
        return n / (time.perf_counter() - started)
    finally:
        os.close(fd)
        os.remove(path)


async def bench_appends(store: SqliteStore, writers: int, n_moves: int, base: int) -> dict:
    """``writers`` tasks, each playing its own matches move after move, all at once."""
    plans: list[list[tuple[int, list[str], Match]]] = [[] for _ in range(writers)]
    total = 0
    seed = base
    while total < n_moves:
        seed += 1
        game = random_game(seed, None)
        plans[seed % writers].append(game)
        total += len(game[1])
    latencies: list[float] = []
    update_ids = iter(range(base * 1000, base * 1000 + 10 * n_moves))

    async def writer(plan: list[tuple[int, list[str], Match]]) -> None:
        for seed, moves, end in plan:
            stored = await store.create_match(seed, SETTINGS, SEATS, seed=seed)
            for seq, text in enumerate(moves, start=1):
                final = end if seq == len(moves) else None
                t0 = time.perf_counter()
                await store.append_move(
                    stored.match_id, seq, text, update_id=next(update_ids), final=final
                )
                latencies.append(time.perf_counter() - t0)

    tx_before, writes_before = store.write_transactions, store.writes_committed
    started = time.perf_counter()
    await asyncio.gather(*(writer(plan) for plan in plans))
    elapsed = time.perf_counter() - started
    transactions = store.write_transactions - tx_before
    writes = store.writes_committed - writes_before  # moves and the create_match calls
    ms = 1000.0
    return {
        "writers": writers,
        "n": len(latencies),
        "moves_per_second": round(len(latencies) / elapsed, 1),
        "writes_per_commit": round(writes / transactions, 2),
        "p50_ms": round(statistics.median(latencies) * ms, 3),
        "p95_ms": round(percentile(latencies, 0.95) * ms, 3),
    }


async def bench(directory: str, n_moves: int, n_loads: int, writers: list[int]) -> dict:
    path = os.path.join(directory, "bench.sqlite3")
    store = await SqliteStore.open(path)
    try:
        await store.upsert_user(1, "bench")
        fsync_before = fsyncs_per_second(directory, 300)
        appends = []
        for i, w in enumerate(writers):
            appends.append(await bench_appends(store, w, n_moves, base=(i + 1) * 100_000))

        # Loads: 200 matches of exactly 30 moves.
        ids = []
        for i in range(200):
            s, moves, _ = random_game(10_000 + i, 30)
            stored = await store.create_match(-1 - i, SETTINGS, SEATS, seed=s)
            for seq, text in enumerate(moves, start=1):
                await store.append_move(stored.match_id, seq, text)
            ids.append(stored.match_id)
        rng = random.Random(1)
        for match_id in ids[:20]:  # warm up caches (engine tables, SQLite pages)
            await store.load_match(match_id)
        load_times = []
        for _ in range(n_loads):
            match_id = rng.choice(ids)
            t0 = time.perf_counter()
            loaded = await store.load_match(match_id)
            load_times.append(time.perf_counter() - t0)
            assert len(loaded.moves) == 30
        # Rebuild alone (engine), to see what the database part costs.
        loaded = await store.load_match(ids[0])
        t0 = time.perf_counter()
        for _ in range(200):
            game = Match(loaded.row.labels, loaded.row.settings, seed=loaded.row.seed)
            for move in loaded.moves:
                game.apply(move.action)
        rebuild_ms = (time.perf_counter() - t0) / 200 * 1000
        pragmas = await store.pragmas()
    finally:
        await store.close()
    ms = 1000.0
    sequential = next((a for a in appends if a["writers"] == 1), appends[0])
    return {
        "db": "sqlite file, " + ", ".join(f"{k}={v}" for k, v in pragmas.items()),
        "python": platform.python_version(),
        "disk_fdatasyncs_per_second": {
            "before": round(fsync_before, 1),
            "after": round(fsyncs_per_second(directory, 300), 1),
        },
        "moves_per_second": sequential["moves_per_second"],
        "appends": appends,
        "load_30_move_match_ms": {
            "n": len(load_times),
            "p50": round(statistics.median(load_times) * ms, 3),
            "p95": round(percentile(load_times, 0.95) * ms, 3),
            "max": round(max(load_times) * ms, 3),
            "engine_rebuild_only_mean": round(rebuild_ms, 3),
        },
        "targets": {"moves_per_second": 500, "load_p95_ms": 5},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--moves", type=int, default=3000, help="moves per writer setting")
    parser.add_argument(
        "--writers",
        default="1,8,32",
        help="concurrent writers (matches played at once), comma separated; 1 = sequential",
    )
    parser.add_argument("--loads", type=int, default=1000)
    parser.add_argument("--dir", default=None, help="directory for the database file")
    args = parser.parse_args()
    writers = [int(w) for w in args.writers.split(",")]
    if args.dir:
        result = asyncio.run(bench(args.dir, args.moves, args.loads, writers))
    else:
        with tempfile.TemporaryDirectory(prefix="krendzu-bench-") as tmp:
            result = asyncio.run(bench(tmp, args.moves, args.loads, writers))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
