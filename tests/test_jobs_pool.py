"""The job queue's connections (chat/jobs/core.py :func:`~chat.jobs.core.job_pool`): a
connection used a moment ago is lent again without a round trip; one idle for a while, or
one psycopg knows to be broken, is checked or replaced as procrastinate's own pool did.
And the announcement job's one read waits for the match's writers."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import psycopg
import pytest

from chat.jobs import build_jobs
from chat.jobs import core as jobs_core
from krendzu import Settings
from storage import SeatSpec
from storage.postgres import PostgresStore

#: The statement procrastinate's check of a connection sends (psycopg_pool's
#: ``check_connection``): an empty one, seen as the backend's last query.
CHECK = ""
MARK = "SELECT 'used' AS mark"
#: The last statement of a connection that ran :data:`MARK` (procrastinate's connections
#: are not in autocommit: the work ends with its COMMIT).
WORKED = "COMMIT"


async def last_queries(url: str) -> dict[int, str]:
    """Each other backend of the database: its last statement."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cur = await conn.execute(
            "SELECT pid, query FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid() AND backend_type = 'client backend'")
        return {int(pid): str(query) for pid, query in await cur.fetchall()}


async def borrow_each(pool: Any, sql: str | None) -> set[int]:
    """Borrow every connection of the pool once (running ``sql`` on it, or nothing); their
    backends' process ids."""
    pids: set[int] = set()
    held = [await pool.getconn() for _ in range(pool.get_stats()["pool_size"])]
    for conn in held:
        if sql is not None:
            await conn.execute(sql)
            await conn.commit()
        pids.add(conn.info.backend_pid)
    for conn in held:
        await pool.putconn(conn)
    return pids


async def test_a_connection_used_a_moment_ago_is_lent_without_a_round_trip(
        pg_url: str) -> None:
    jobs = build_jobs(pg_url)
    async with jobs.app.open_async():
        pool = jobs.app.connector.pool
        used = await borrow_each(pool, MARK)
        assert await borrow_each(pool, None) == used
        queries = await last_queries(pg_url)
        # Lent again at once: no check, the last statement is still the work's.
        assert {queries[pid] for pid in used} == {WORKED}, queries


async def test_a_connection_idle_for_a_while_is_checked_before_it_is_lent(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jobs_core, "CHECK_IDLE_AFTER", 0.2)
    jobs = build_jobs(pg_url)
    async with jobs.app.open_async():
        pool = jobs.app.connector.pool
        used = await borrow_each(pool, MARK)
        await asyncio.sleep(0.3)
        assert await borrow_each(pool, None) == used
        queries = await last_queries(pg_url)
        assert {queries[pid] for pid in used} == {CHECK}, queries


async def test_work_done_one_piece_at_a_time_keeps_to_one_warm_connection(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's fetches, finishes and polls one after another reuse the connection just
    given back: none waits long enough to be checked (lent oldest first, they went round
    the pool's four connections and each was checked when it came round)."""
    monkeypatch.setattr(jobs_core, "CHECK_IDLE_AFTER", 0.2)
    jobs = build_jobs(pg_url)
    async with jobs.app.open_async():
        pool = jobs.app.connector.pool
        assert pool.get_stats()["pool_size"] > 1
        pids: set[int] = set()
        for _ in range(6):
            async with pool.connection() as conn:
                await conn.execute(MARK)
                pids.add(conn.info.backend_pid)
            await asyncio.sleep(0.08)
        assert len(pids) == 1, pids
        queries = await last_queries(pg_url)
        assert queries[pids.pop()] == WORKED, queries


async def test_a_connection_the_server_closed_is_replaced_once_it_was_idle(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jobs_core, "CHECK_IDLE_AFTER", 0.2)
    jobs = build_jobs(pg_url)
    async with jobs.app.open_async():
        pool = jobs.app.connector.pool
        used = await borrow_each(pool, MARK)
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as admin:
            await admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) pid",
                                (list(used),))
        await asyncio.sleep(0.3)
        # Lent again, they are found dead and replaced: the work goes on.
        for _ in range(len(used)):
            async with pool.connection() as conn:
                cur = await conn.execute(MARK)
                assert await cur.fetchone() == ("used",)
                assert conn.info.backend_pid not in used


async def test_an_announcements_reads_wait_for_the_matchs_writers_and_see_their_move(
        tmp_path: Path, pg_url: str) -> None:
    """:meth:`~storage.postgres.PostgresStore.announce_reads` (an announcement job's one
    read) waits for a move being stored, its match's advisory lock held, and reads the
    match with it: a move whose own job was refused because the job was still queued is
    announced by it all the same."""
    store = await PostgresStore.open(pg_url)
    holding, release = asyncio.Event(), asyncio.Event()
    try:
        await store.upsert_chat(-3902, title="Locked")
        stored = await store.create_match(-3902, Settings(), [SeatSpec.computer(1),
                                                              SeatSpec.computer(1)])

        async def slow(conn: Any, match_id: int, seq: int) -> None:
            holding.set()  # inside the move's transaction, its match's lock held
            await release.wait()

        store.after_append = slow
        appending = asyncio.create_task(store.append_move(
            stored.match_id, 1, stored.game.legal_actions()[0]))
        await holding.wait()
        reading = asyncio.create_task(store.announce_reads(stored.match_id))
        await asyncio.sleep(0.3)
        assert not reading.done(), "the reads did not wait for the move being stored"
        release.set()
        await appending
        reads = await reading
        assert len(reads.stored.moves) == 1 and reads.announced == 0
        assert reads.stored.game.history == [stored.game.legal_actions()[0]]
    finally:
        release.set()  # the move's transaction ends, whatever happened
        await store.close()
