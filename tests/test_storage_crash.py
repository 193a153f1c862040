"""Crash test: SIGKILL a writer at random moments; no committed move is ever lost.

A child process appends random legal moves and reports each move on a pipe only after its
commit returned. After every kill the database must open, pass ``PRAGMA integrity_check``,
hold every reported move, hold at most the one move in flight per writer beyond them (one
writer, or four tasks whose moves share commits), close a match exactly when its last move
is stored, and rebuild every match through the engine.
"""

from __future__ import annotations

import asyncio
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storage import MatchStatus, open_store

ROOT = Path(__file__).resolve().parent.parent
CHILD = Path(__file__).resolve().parent / "storage_crash_child.py"
KILLS = 30


def run_child_and_kill(
    db: Path, seed: int, writers: int, rng: random.Random
) -> tuple[dict[int, int], int]:
    """Start the child, kill it at a random moment; return reported {match: max seq}."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(db), str(seed), str(writers)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    buffer = b""
    reported: dict[int, int] = {}
    commits = 0
    started = time.monotonic()
    # Mostly kill while moves are flowing; sometimes during start-up and resume.
    early = rng.random() < 0.15
    kill_at = started + (rng.uniform(0.0, 0.6) if early else 30.0)
    flowing = False

    def take(chunk: bytes) -> None:
        nonlocal buffer, commits, kill_at, flowing
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")  # a torn last line stays in the buffer
        for line in lines:
            parts = line.decode().split()
            if parts and parts[0] == "committed":
                match_id, seq = int(parts[1]), int(parts[2])
                reported[match_id] = max(reported.get(match_id, 0), seq)
                commits += 1
                if not flowing and not early:
                    flowing = True
                    kill_at = time.monotonic() + rng.uniform(0.0, 0.25)

    try:
        while True:
            now = time.monotonic()
            if now >= kill_at or proc.poll() is not None:
                break
            ready, _, _ = select.select([fd], [], [], min(0.01, kill_at - now))
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    break
                take(chunk)
        alive = proc.poll() is None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        # Whatever the child wrote before dying was written after a commit returned.
        rest = proc.stdout.read()
        take(rest)
        err = proc.stderr.read().decode() if proc.stderr else ""
        assert alive, f"the child died on its own:\n{err}"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
    return reported, commits


def stored_counts(db: Path) -> dict[int, int]:
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        return dict(
            conn.execute(
                "SELECT m.match_id, COUNT(v.seq) FROM matches m "
                "LEFT JOIN moves v ON v.match_id = m.match_id GROUP BY m.match_id"
            )
        )


async def rebuild_all(db: Path) -> int:
    async with await open_store(db) as store:
        counts = stored_counts(db)
        for match_id in counts:
            loaded = await store.load_match(match_id)
            assert loaded.row.move_count == counts[match_id]
            # The final move and the closing of the match are one transaction.
            finished = loaded.row.status is MatchStatus.FINISHED
            assert finished == loaded.game.is_over, match_id
            if finished:
                assert loaded.row.totals == loaded.game.totals()
        assert await store.integrity_check() == []
        return len(counts)


@pytest.mark.timeout(240)
def test_sigkill_never_loses_a_committed_move(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    rng = random.Random(20240607)
    verified: dict[int, int] = {}  # match -> moves known to be stored (reported or verified)
    total_commits = 0
    in_flight_seen = 0
    for run in range(KILLS):
        # Odd runs: one writer, so at most one move is in flight. Even runs: four tasks
        # writing at once (their moves share commits), so up to four are in flight.
        writers = 1 if run % 2 else 4
        reported, commits = run_child_and_kill(db, seed=run + 1, writers=writers, rng=rng)
        total_commits += commits
        if not db.exists():
            continue  # killed before the database was even created
        counts = stored_counts(db)
        for match_id, seq in reported.items():
            assert counts.get(match_id, 0) >= seq, (
                f"run {run}: match {match_id} lost reported move {seq} "
                f"(stored {counts.get(match_id, 0)})"
            )
        known = {m: max(verified.get(m, 0), reported.get(m, 0)) for m in counts}
        extra = {m: counts[m] - known[m] for m in counts if counts[m] != known[m]}
        assert all(v > 0 for v in extra.values())
        assert len(extra) <= writers, f"run {run}: more than the moves in flight: {extra}"
        assert all(v == 1 for v in extra.values()), f"run {run}: beyond one in flight: {extra}"
        in_flight_seen += sum(extra.values())
        asyncio.run(rebuild_all(db))
        verified = counts
    assert total_commits > 0, "the child never committed anything: the test proved nothing"
    # Sanity of the harness: it really did kill while moves were flowing.
    assert total_commits >= KILLS
    print(f"{KILLS} kills, {total_commits} reported commits, {in_flight_seen} in flight found")
