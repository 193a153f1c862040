"""Issue 39's cheaper moves: on a file, SQLite's reads have a connection of their own, so a
read never waits for a write batch's commit (and its fsync), and still sees every write
committed before it began."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from storage.migrations import LATEST
from storage.sqlite import SqliteStore


async def test_a_read_does_not_wait_for_the_write_batch_in_progress(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "krendzu.sqlite3")
    started, release = asyncio.Event(), asyncio.Event()
    try:
        await store.note_group_write(-100, 1000.0)

        async def slow(conn: Any) -> None:
            # A write batch holding the writer (as its commit's fsync does), its own row
            # written but not committed yet.
            await conn.execute("INSERT INTO group_writes (chat_id, at) VALUES (?, ?)",
                               (-200, 1001.0))
            started.set()
            await release.wait()

        writing = asyncio.create_task(store._write(slow))
        await started.wait()
        # One query, and a read of several in one snapshot: neither waits for the batch,
        # and neither sees what it has not committed.
        assert await asyncio.wait_for(store.group_writes(0.0), 2) == [(-100, 1000.0)]
        assert await asyncio.wait_for(store.schema_version(), 2) == LATEST
        release.set()
        await writing
        # Committed before the read began: seen.
        assert await store.group_writes(0.0) == [(-100, 1000.0), (-200, 1001.0)]
    finally:
        release.set()
        await store.close()
