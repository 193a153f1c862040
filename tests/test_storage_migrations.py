"""Schema migrations: from empty, from every earlier version, refusal of newer, atomicity."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
from pathlib import Path

import aiosqlite
import pytest

from krendzu import Match, Settings, Table, export_record
from storage import SchemaTooNew, SeatSpec, StorageError, open_store
from storage.migrations import LATEST, MIGRATIONS, Migration
from storage.sqlite import SqliteStore, connect, current_version, migrate
from tests.storage_helpers import play_and_store


def schema_of(path: Path) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return {
            name: " ".join(sql.split())
            for name, sql in conn.execute(
                "SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL "
                "AND name NOT LIKE 'sqlite_%' ORDER BY name"
            )
        }


def versions_of(path: Path) -> list[int]:
    with sqlite3.connect(path) as conn:
        return [r[0] for r in conn.execute("SELECT version FROM schema_version ORDER BY 1")]


def test_migrations_are_numbered_densely() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert LATEST == len(MIGRATIONS) >= 2


async def test_from_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    async with await open_store(path) as store:
        assert await store.schema_version() == LATEST
    assert versions_of(path) == list(range(1, LATEST + 1))
    schema = schema_of(path)
    for table in ("chats", "users", "matches", "seats", "moves", "processed_updates",
                  "user_stats", "schema_version"):
        assert table in schema
    # Opening again changes nothing.
    async with await open_store(path) as store:
        assert await store.schema_version() == LATEST
    assert schema_of(path) == schema
    assert versions_of(path) == list(range(1, LATEST + 1))


async def _make_v1_database(path: Path) -> tuple[Match, int]:
    """A database left by version 1 of the code, with a chat, users and a half-played match."""
    conn = await connect(str(path))
    try:
        assert await migrate(conn, target=1) == 1
        game = Match(["u1", "cpu2"], Settings(table=Table.DUEL), seed=1234)
        rng = random.Random(5)
        for _ in range(20):
            game.apply(rng.choice(game.legal_actions()))
        await conn.execute("BEGIN")
        await conn.execute(
            "INSERT INTO chats VALUES (-100, 'ru', NULL, 1.0, 1.0)"
        )
        await conn.execute("INSERT INTO users VALUES (1, 'Ann', 'en', 1, 1.0, 1.0)")
        cur = await conn.execute(
            "INSERT INTO matches (chat_id, thread_id, table_kind, settings, seed, status, "
            "board_message_id, created_at) VALUES (-100, 0, 'duel', ?, 1234, 'active', 77, 2.0)",
            (json.dumps(Settings(table=Table.DUEL).to_json()),),
        )
        match_id = cur.lastrowid
        await conn.execute(
            "INSERT INTO seats VALUES (?, 0, 'human', 1, NULL, 'u1'), "
            "(?, 1, 'computer', NULL, 3, 'cpu2')",
            (match_id, match_id),
        )
        for seq, action in enumerate(game.history, start=1):
            await conn.execute(
                "INSERT INTO moves VALUES (?, ?, ?, NULL, 3.0)", (match_id, seq, str(action))
            )
        await conn.execute("COMMIT")
        assert match_id is not None
        return game, match_id
    finally:
        await conn.close()


async def test_from_version_1_keeps_and_uses_data(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    live, match_id = await _make_v1_database(path)
    assert versions_of(path) == [1]
    assert "processed_updates" not in schema_of(path)

    async with await open_store(path) as store:
        assert await store.schema_version() == LATEST
        chat = await store.get_chat(-100)
        assert chat is not None and chat.language == "ru"
        user = await store.get_user(1)
        assert user is not None and user.can_write_privately and user.display_name == "Ann"
        active = await store.active_match(-100)
        assert active is not None and active.match_id == match_id
        assert active.board_message_id == 77 and active.move_count == 20
        assert [s.level for s in active.seats] == [None, 3]
        stored = await store.load_match(match_id)
        assert export_record(stored.game) == export_record(live)
        # The new features work on old data: update ids, finishing with statistics.
        game = await play_and_store(store, stored, random.Random(9))
        assert game.is_over
        stats = await store.user_stats(1, -100)
        assert stats is not None and stats.matches == 1
        assert (await store.get_match(match_id)).totals == game.totals()
        # ... and so do the later ones: the outbox marker counts the old moves as announced,
        # timers, stand-ins, finer statistics and ratings start empty.
        row = await store.get_match(match_id)
        assert row.announced_seq >= 20 and row.conceded_by is None
        assert await store.timer_of(match_id) is None and await store.stand_ins(match_id) == {}
        assert stats.tours_attacked + stats.tours_defended == len(game.tours)
        assert await store.ratings_of([1]) == {}
        assert [r.match_id for r in await store.unrated_matches()] == [match_id]
        # One live board is the default since v7, for old groups too.
        assert (await store.get_chat(-100)).tidy is True  # type: ignore[union-attr]

    # The upgraded file has exactly the schema of a fresh one.
    fresh = tmp_path / "fresh.db"
    async with await open_store(fresh):
        pass
    assert schema_of(path) == schema_of(fresh)


@pytest.mark.parametrize("start", range(0, LATEST + 1))
async def test_from_each_version_reaches_latest(tmp_path: Path, start: int) -> None:
    path = tmp_path / f"v{start}.db"
    conn = await connect(str(path))
    try:
        assert await migrate(conn, target=start) == start
    finally:
        await conn.close()
    assert await _version_on_disk(path) == start
    async with await open_store(path) as store:
        assert await store.schema_version() == LATEST
    assert versions_of(path) == list(range(1, LATEST + 1))


async def _version_on_disk(path: Path) -> int:
    conn = await aiosqlite.connect(path)
    try:
        return await current_version(conn)
    finally:
        await conn.close()


async def test_newer_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    async with await open_store(path):
        pass
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO schema_version VALUES (?, 'from the future', 0)", (LATEST + 1,))
    before = schema_of(path)
    with pytest.raises(SchemaTooNew) as info:
        await open_store(path)
    assert info.value.found == LATEST + 1 and info.value.supported == LATEST
    assert "newer" in str(info.value)
    assert schema_of(path) == before
    assert versions_of(path)[-1] == LATEST + 1
    with pytest.raises(SchemaTooNew):
        await SqliteStore.open(path, upgrade=False)


async def test_older_database_without_upgrade_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    conn = await connect(str(path))
    await migrate(conn, target=1)
    await conn.close()
    with pytest.raises(StorageError, match="migrate"):
        await SqliteStore.open(path, upgrade=False)
    assert versions_of(path) == [1]


async def test_failing_migration_rolls_back_to_previous_version(tmp_path: Path) -> None:
    path = tmp_path / "broken.db"
    broken = (
        *MIGRATIONS,
        Migration(
            LATEST + 1,
            "half good, half bad",
            ("CREATE TABLE extra (x INTEGER)", "ALTER TABLE no_such_table ADD COLUMN y"),
        ),
    )
    conn = await connect(str(path))
    try:
        with pytest.raises(sqlite3.OperationalError):
            await migrate(conn, migrations=broken)
        assert not conn.in_transaction
        assert await current_version(conn) == LATEST
    finally:
        await conn.close()
    assert "extra" not in schema_of(path)  # the good half was rolled back too
    assert versions_of(path) == list(range(1, LATEST + 1))


async def test_concurrent_openers_migrate_once(tmp_path: Path) -> None:
    path = tmp_path / "race.db"
    stores = await asyncio.gather(*(open_store(path) for _ in range(6)))
    for store in stores:
        assert await store.schema_version() == LATEST
        await store.close()
    assert versions_of(path) == list(range(1, LATEST + 1))


async def test_pragmas_on_every_connect(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    for _ in range(2):
        store = await SqliteStore.open(path)
        try:
            assert await store.pragmas() == {
                "journal_mode": "wal",
                "synchronous": 2,  # FULL
                "foreign_keys": 1,
                "busy_timeout": 5000,
            }
        finally:
            await store.close()


async def test_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not a database file at all" * 200)
    with pytest.raises(StorageError):
        await open_store(path)


async def test_flags_written_as_integers_read_the_same(tmp_path: Path) -> None:
    """A file written before the SQL was written once keeps working: the SQLite driver then
    stored every flag with ``int()`` and compared it with ``= 0`` / ``= 1``; the shared SQL
    passes booleans and reads ``WHERE resigned``, ``NOT t.reminded``, ``NOT m.rated``. Rows
    with the old integers, put in beneath the store, read and select as they did."""
    path = tmp_path / "flags.db"
    async with await open_store(path) as store:
        for uid in (1, 2):
            await store.upsert_user(uid, f"player {uid}")
        stored = await store.create_match(-5, Settings(table=Table.DUEL),
                                          [SeatSpec.human(1), SeatSpec.human(2)], seed=3)
        await store.set_timer(stored.match_id, 60)
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO chats (chat_id, created_at, updated_at, tidy) "
                     "VALUES (-6, 0, 0, 0)")
        conn.execute("UPDATE users SET can_write_privately = 1 WHERE user_id = 1")
        conn.execute("UPDATE turn_timers SET seq = 1, deadline = 100, reminded = 0")
        conn.execute("INSERT INTO stand_ins (match_id, seat, timeouts, computer, resigned) "
                     "VALUES (?, 1, 2, 1, 1), (?, 0, 0, 0, 0)",
                     (stored.match_id, stored.match_id))
        conn.execute("UPDATE matches SET rated = 0")
    async with await open_store(path) as store:
        chat = await store.get_chat(-6)
        assert chat is not None and chat.tidy is False
        assert (await store.upsert_chat(-6, language="ru")).tidy is False  # kept
        user = await store.get_user(1)
        assert user is not None and user.can_write_privately is True
        stand_ins = await store.stand_ins(stored.match_id)
        assert {seat: (s.computer, s.resigned) for seat, s in stand_ins.items()} \
            == {0: (False, False), 1: (True, True)}
        await store.set_stand_in(stored.match_id, 1, timeouts=3, computer=False)
        assert (await store.stand_ins(stored.match_id))[1].resigned  # stays resigned
        # A timer not yet reminded is due at two thirds of its time, once.
        [due] = await store.due_timers(100 - 60 / 3 + 1)
        assert due.reminded is False
        await store.set_reminded(stored.match_id, 1)
        assert await store.due_timers(100 - 60 / 3 + 1) == []
        assert await store.concede_match(stored.match_id, 1)
        assert [m.match_id for m in await store.unrated_matches()] == [stored.match_id]
        assert await store.apply_ratings(stored.match_id, {1: (25.0, 8.0)})
        assert await store.unrated_matches() == []
