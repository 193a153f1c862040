"""What only PostgreSQL has to prove: its own migrations, and that one match stays consistent
when several processes (each a store with a pool of its own) write to it at once.

The store's contract itself runs on both backends (the ``store`` fixture of
``tests/conftest.py``); these tests look beneath it, with raw SQL where a writer that
bypasses the store is the point."""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import stat
import subprocess
from pathlib import Path

import psycopg
import pytest

from krendzu import Settings, Table
from storage import (
    ActiveMatchExists,
    DuplicateUpdate,
    LobbyExists,
    PanelMessage,
    SchemaTooNew,
    SequenceConflict,
    StorageError,
    Store,
    open_store,
)
from storage import migrations as sqlite_migrations
from storage.pg_migrations import POSTGRES_ONLY
from storage.postgres import LATEST, MIGRATIONS, PostgresStore, pg_tool
from tests.pg import PgServer
from tests.storage_helpers import add_users, play_and_store, seats_for, snapshot


def raw(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url, autocommit=True)


def versions(url: str) -> list[int]:
    with raw(url) as conn:
        return [int(v) for (v,) in conn.execute("SELECT version FROM schema_version ORDER BY 1")]


def pg_columns(url: str) -> dict[str, set[str]]:
    with raw(url) as conn:
        rows = conn.execute("SELECT table_name, column_name FROM information_schema.columns "
                            "WHERE table_schema = 'public'").fetchall()
    found: dict[str, set[str]] = {}
    for table, column in rows:
        found.setdefault(str(table), set()).add(str(column))
    return found


def sqlite_columns(path: Path) -> dict[str, set[str]]:
    with sqlite3.connect(path) as conn:
        tables = [t for (t,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        return {t: {c[1] for c in conn.execute(f"PRAGMA table_info({t})")} for t in tables}


def advisory_locks(url: str) -> int:
    with raw(url) as conn:
        row = conn.execute("SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory'").fetchone()
    assert row is not None
    return int(str(row[0]))


# Migrations ------------------------------------------------------------------------------


def test_migrations_are_numbered_densely() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert len(MIGRATIONS) == LATEST


async def test_from_empty_to_the_same_tables_and_columns_as_sqlite(
        empty_pg_url: str, tmp_path: Path) -> None:
    """The consolidated PostgreSQL schema has every table and column SQLite's newest has (a
    column added to one backend and forgotten in the other fails here)."""
    assert pg_columns(empty_pg_url) == {}
    async with await open_store(empty_pg_url) as store:
        assert isinstance(store, PostgresStore)
        assert await store.schema_version() == LATEST
    assert versions(empty_pg_url) == list(range(1, LATEST + 1))
    async with await open_store(tmp_path / "k.sqlite3") as lite:
        assert await lite.schema_version() == sqlite_migrations.LATEST
    shared = {t: c for t, c in pg_columns(empty_pg_url).items() if t not in POSTGRES_ONLY}
    assert set(pg_columns(empty_pg_url)) >= POSTGRES_ONLY
    lite_columns = sqlite_columns(tmp_path / "k.sqlite3")
    assert set(lite_columns) >= sqlite_migrations.SQLITE_ONLY
    assert shared == {t: c for t, c in lite_columns.items()
                      if t not in sqlite_migrations.SQLITE_ONLY}
    async with await open_store(empty_pg_url) as store:  # opening again changes nothing
        assert await store.schema_version() == LATEST
    assert versions(empty_pg_url) == list(range(1, LATEST + 1))


async def test_a_change_written_once_reaches_both_schemas(empty_pg_url: str,
                                                           tmp_path: Path) -> None:
    """A schema change after the shipped histories is written once (storage.migrations
    .CHANGES) and numbered on after each: SQLite's version 11, PostgreSQL's 7, the same
    columns in both with each database's types; one marked ``only`` reaches its own."""
    from psycopg.rows import dict_row

    from storage import postgres, sqlite
    from storage.migrations import Change, numbered
    from storage.pg_migrations import HISTORY as PG_HISTORY

    changes = (
        Change("notes", ("CREATE TABLE notes (note_id {id}, chat_id {bigint} NOT NULL, "
                         "pinned {flag} NOT NULL DEFAULT {false}, at {real} NOT NULL)",
                         "ALTER TABLE chats ADD COLUMN muted {flag} NOT NULL DEFAULT {true}")),
        Change("a scaled mode's table", ("CREATE TABLE pg_extra (k {bigint} PRIMARY KEY)",),
               only="postgres"),
    )
    lite_steps = numbered(sqlite_migrations.HISTORY, "sqlite", changes)
    pg_steps = numbered(PG_HISTORY, "postgres", changes)
    assert [m.version for m in lite_steps[-1:]] == [sqlite_migrations.HISTORY[-1].version + 1]
    assert [m.version for m in pg_steps[-2:]] == [PG_HISTORY[-1].version + i for i in (1, 2)]
    lite = await sqlite.connect(str(tmp_path / "k.sqlite3"))
    try:
        assert await sqlite.migrate(lite, migrations=lite_steps) == lite_steps[-1].version
    finally:
        await lite.close()
    conn = await psycopg.AsyncConnection.connect(empty_pg_url, autocommit=True,
                                                 row_factory=dict_row)
    async with conn:
        assert await postgres.migrate(conn, migrations=pg_steps) == pg_steps[-1].version
    pg = pg_columns(empty_pg_url)
    lite_columns = sqlite_columns(tmp_path / "k.sqlite3")
    assert pg["notes"] == lite_columns["notes"] == {"note_id", "chat_id", "pinned", "at"}
    assert "muted" in pg["chats"] and "muted" in lite_columns["chats"]
    assert "pg_extra" in pg and "pg_extra" not in lite_columns
    with raw(empty_pg_url) as pg_conn:
        pg_conn.execute("INSERT INTO chats (chat_id, created_at, updated_at) VALUES (1, 0, 0)")
        assert pg_conn.execute("SELECT muted FROM chats").fetchone() == (True,)
    with sqlite3.connect(tmp_path / "k.sqlite3") as lite_conn:
        lite_conn.execute("INSERT INTO chats (chat_id, created_at, updated_at) VALUES (1, 0, 0)")
        assert lite_conn.execute("SELECT muted FROM chats").fetchone() == (1,)


async def test_a_newer_schema_is_refused_and_left_alone(empty_pg_url: str) -> None:
    async with await open_store(empty_pg_url):
        pass
    with raw(empty_pg_url) as conn:
        conn.execute("INSERT INTO schema_version VALUES (%s, 'from the future', 0)",
                     (LATEST + 1,))
    before = pg_columns(empty_pg_url)
    with pytest.raises(SchemaTooNew) as info:
        await open_store(empty_pg_url)
    assert (info.value.found, info.value.supported) == (LATEST + 1, LATEST)
    with pytest.raises(SchemaTooNew):
        await PostgresStore.open(empty_pg_url, upgrade=False)
    assert pg_columns(empty_pg_url) == before
    assert versions(empty_pg_url) == [*range(1, LATEST + 1), LATEST + 1]


async def test_without_upgrade_an_empty_database_is_refused(empty_pg_url: str) -> None:
    with pytest.raises(StorageError, match="migrate it first"):
        await PostgresStore.open(empty_pg_url, upgrade=False)
    assert pg_columns(empty_pg_url) == {}


async def test_processes_starting_together_migrate_once(empty_pg_url: str) -> None:
    stores = await asyncio.gather(*(open_store(empty_pg_url) for _ in range(5)))
    try:
        assert [await s.schema_version() for s in stores] == [LATEST] * 5
    finally:
        for s in stores:
            await s.close()
    assert versions(empty_pg_url) == list(range(1, LATEST + 1))


async def test_statements_run_often_are_prepared_unless_switched_off(pg_url: str) -> None:
    """With ``prepare`` (the default, ``KRENDZU_PG_PREPARE``) a statement run a few times on
    a connection is prepared there (the server parses and plans it once); without it none
    is, as a transaction-mode pgbouncer older than 1.21 needs."""
    for prepare, expected in ((True, True), (False, False)):
        store = await PostgresStore.open(pg_url, min_size=1, max_size=1, prepare=prepare)
        try:
            for _ in range(8):
                await store.get_user(4242)
            prepared = await store._select(
                "SELECT statement FROM pg_prepared_statements", (), lambda r: r["statement"])
            assert any("FROM users WHERE user_id" in s for s in prepared) is expected, prepared
        finally:
            await store.close()


async def test_a_wrong_url_is_reported_as_the_server_words_it(pg_server: PgServer) -> None:
    with pytest.raises(StorageError, match="no_such_database"):
        await open_store(pg_server.url("no_such_database"))


async def test_the_environment_selects_postgresql(pg_url: str, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRENDZU_DB", str(tmp_path / "unused.sqlite3"))
    monkeypatch.setenv("KRENDZU_DATABASE_URL", pg_url)
    async with await open_store() as store:
        assert isinstance(store, PostgresStore)
        await store.upsert_chat(1, title="Friends")
    assert not (tmp_path / "unused.sqlite3").exists()
    with raw(pg_url) as conn:
        assert conn.execute("SELECT title FROM chats").fetchall() == [("Friends",)]


# Many processes, one match ---------------------------------------------------------------


async def two_processes(url: str) -> tuple[Store, Store]:
    """Two stores with a pool each: what two bot processes on one database are."""
    return await open_store(url), await open_store(url)


async def test_two_processes_race_for_every_move(pg_url: str) -> None:
    """Both processes try several moves for each number at once: exactly one wins each
    number, every other try is a SequenceConflict that left nothing behind (not even its
    update id), and the log ends gap-free and without a duplicate."""
    one, two = await two_processes(pg_url)
    try:
        await add_users(one, 1)
        stored = await one.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
        game = stored.game
        rng = random.Random(5)
        update_ids = iter(range(10_000, 20_000))
        refused: list[int] = []
        while not game.is_over and len(game.history) < 40:
            seq = len(game.history) + 1
            legal = game.legal_actions()
            tries = [(store, rng.choice(legal), next(update_ids))
                     for store in (one, two, one, two, one, two)]
            results = await asyncio.gather(
                *(store.append_move(stored.match_id, seq, action, update_id=uid)
                  for store, action, uid in tries), return_exceptions=True)
            won = [(r, t) for r, t in zip(results, tries, strict=True)
                   if not isinstance(r, BaseException)]
            assert len(won) == 1, results
            assert all(isinstance(r, SequenceConflict) and r.expected == seq
                       for r in results if not any(r is w for w, _ in won)), results
            refused += [uid for r, (_, _, uid) in zip(results, tries, strict=True)
                        if isinstance(r, BaseException)]
            game.apply(won[0][0].action)  # type: ignore[union-attr]
        loaded = await two.load_match(stored.match_id)
        assert [m.seq for m in loaded.moves] == list(range(1, len(game.history) + 1))
        assert snapshot(loaded.game) == snapshot(game)
        assert not any([await one.seen_update(uid) for uid in refused])
        with raw(pg_url) as conn:
            assert conn.execute(
                "SELECT COUNT(*) FROM (SELECT match_id, seq FROM moves "
                "GROUP BY match_id, seq HAVING COUNT(*) > 1) d").fetchone() == (0,)
    finally:
        await one.close()
        await two.close()
    assert advisory_locks(pg_url) == 0  # transaction-scoped: nothing left on pooled sessions


async def test_a_redelivered_update_applies_once_whichever_process_gets_it(
        pg_url: str) -> None:
    """Telegram redelivers an update to another worker while the first still processes it:
    both race with the same update id; one move is stored, the other call is a
    DuplicateUpdate (even when it reloaded the match and has a fresh number)."""
    one, two = await two_processes(pg_url)
    try:
        await add_users(one, 1)
        stored = await one.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
        game = stored.game
        for uid in range(500, 520):
            seq = len(game.history) + 1
            action = game.legal_actions()[0]
            results = await asyncio.gather(
                one.append_move(stored.match_id, seq, action, update_id=uid),
                two.append_move(stored.match_id, seq, action, update_id=uid),
                return_exceptions=True)
            assert sorted(type(r).__name__ for r in results) == ["DuplicateUpdate", "MoveRow"]
            game.apply(action)
            with pytest.raises(DuplicateUpdate):  # a later redelivery, after a reload
                await two.append_move(stored.match_id, seq + 1, game.legal_actions()[0],
                                      update_id=uid)
        assert (await two.get_match(stored.match_id)).move_count == 20
    finally:
        await one.close()
        await two.close()


async def test_the_unique_key_is_the_real_guarantee(pg_url: str) -> None:
    """A writer that skips the advisory lock (raw SQL) inserts move 1 and has not committed
    yet: the store's check cannot see it, its insert waits on the key, and when the other
    commits it is refused with the same SequenceConflict as a stale number, writing
    nothing (its update id is not remembered either)."""
    async with await open_store(pg_url) as store:
        await add_users(store, 1)
        stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
        first, second = stored.game.legal_actions()[:2]
        with psycopg.connect(pg_url) as other:  # a transaction of its own, open
            other.execute("INSERT INTO moves VALUES (%s, 1, %s, NULL, 0)",
                          (stored.match_id, str(first)))
            racing = asyncio.ensure_future(
                store.append_move(stored.match_id, 1, second, update_id=77))
            await asyncio.sleep(0.3)
            assert not racing.done()  # waiting on the key, not decided by the check
            other.commit()
        with pytest.raises(SequenceConflict) as info:
            await racing
        assert (info.value.expected, info.value.actual) == (1, 2)
        loaded = await store.load_match(stored.match_id)
        assert [m.action for m in loaded.moves] == [str(first)]
        assert not await store.seen_update(77)


async def test_a_match_is_locked_for_the_whole_transaction(pg_url: str) -> None:
    """The advisory lock per match orders writers across processes: while another session
    holds it (inside its transaction), a move waits; at its COMMIT the move goes ahead."""
    async with await open_store(pg_url) as store:
        await add_users(store, 1)
        stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
        other = await store.create_match(2, Settings(), seats_for(Table.DUEL, [1]))
        action = stored.game.legal_actions()[0]
        with psycopg.connect(pg_url) as holder:
            holder.execute("SELECT pg_advisory_xact_lock(%s)", (stored.match_id,))
            waiting = asyncio.ensure_future(store.append_move(stored.match_id, 1, action))
            # Another match is not held up by it.
            await store.append_move(other.match_id, 1, other.game.legal_actions()[0])
            await asyncio.sleep(0.2)
            assert not waiting.done()
            holder.commit()
        assert (await waiting).seq == 1
    assert advisory_locks(pg_url) == 0


async def test_one_active_match_and_one_lobby_per_topic_across_processes(pg_url: str) -> None:
    """Both processes start a match (or open a lobby) in the same chat at once: both checks
    pass, the unique index refuses the second insert, and it is reported as the usual
    ActiveMatchExists / LobbyExists."""
    one, two = await two_processes(pg_url)
    try:
        seats = seats_for(Table.DUEL, [])
        for chat in range(-1, -11, -1):
            results = await asyncio.gather(
                one.create_match(chat, Settings(), seats),
                two.create_match(chat, Settings(), seats), return_exceptions=True)
            assert sorted(type(r).__name__ for r in results) == [
                "ActiveMatchExists", "StoredMatch"], results
            results = await asyncio.gather(
                one.create_lobby(chat, 1, {}), two.create_lobby(chat, 2, {}),
                return_exceptions=True)
            assert sorted(type(r).__name__ for r in results) == ["LobbyExists", "LobbyRow"]
        assert len(await one.active_matches()) == 10 and len(await two.open_lobbies()) == 10
        with pytest.raises(ActiveMatchExists):
            await one.create_match(-1, Settings(), seats)
        with pytest.raises(LobbyExists):
            await two.create_lobby(-1, 3, {})
    finally:
        await one.close()
        await two.close()


async def test_panel_senders_in_two_processes_never_miss_the_old_panel(pg_url: str) -> None:
    """Each new panel replaces the previous one and returns it for deletion: with senders in
    two processes at once, every panel but the last is returned exactly once."""
    one, two = await two_processes(pg_url)
    try:
        sent = list(range(100, 160))
        results = await asyncio.gather(*(
            (one, two)[i % 2].set_panel(7, 1, PanelMessage(message_id, False))
            for i, message_id in enumerate(sent)))
        replaced = [r[0] for r in results if r is not None]
        last = await one.get_panel(7, 1)
        assert last is not None
        assert sorted([*replaced, last[0]]) == sent
    finally:
        await one.close()
        await two.close()


async def test_the_log_rules_hold_in_the_database_itself(pg_url: str) -> None:
    """As on SQLite: even SQL that bypasses the store cannot leave gaps, rewrite, delete or
    extend a closed log, nor start a second active match in a topic."""
    async with await open_store(pg_url) as store:
        await add_users(store, 1)
        stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
        await play_and_store(store, stored, random.Random(1), max_moves=3)
        m = stored.match_id
        with raw(pg_url) as conn:
            for sql in (
                f"INSERT INTO moves VALUES ({m}, 5, 'pass', NULL, 0)",  # gap
                f"INSERT INTO moves VALUES ({m}, 3, 'pass', NULL, 0)",  # duplicate
                f"UPDATE moves SET action = 'pass' WHERE match_id = {m} AND seq = 2",
                f"DELETE FROM moves WHERE match_id = {m} AND seq = 3",
                "INSERT INTO moves VALUES (999, 1, 'pass', NULL, 0)",  # no such match
                "INSERT INTO matches (chat_id, thread_id, table_kind, settings, seed, "
                f"created_at) SELECT chat_id, thread_id, table_kind, settings, 1, 0 "
                f"FROM matches WHERE match_id = {m}",  # a second active match
            ):
                with pytest.raises(psycopg.errors.IntegrityError):
                    conn.execute(sql)
        await store.abandon_match(m)
        with raw(pg_url) as conn, pytest.raises(psycopg.errors.IntegrityError):
            conn.execute(f"INSERT INTO moves VALUES ({m}, 4, 'pass', NULL, 0)")
        assert (await store.get_match(m)).move_count == 3


async def test_update_ids_are_pruned_automatically(pg_url: str,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import storage.store_core as backend  # the ledger is pruned by the shared code

    monkeypatch.setattr(backend, "PRUNE_EVERY", 4)
    now = [0.0]
    store = await PostgresStore.open(pg_url, clock=lambda: now[0], update_ttl=100)
    try:
        for uid in range(3):
            await store.mark_update(uid)
        now[0] = 1000.0
        for uid in range(3, 8):
            await store.mark_update(uid)
        assert not await store.seen_update(0)  # pruned on the 4th insertion
        assert all([await store.seen_update(u) for u in range(3, 8)])
    finally:
        await store.close()


# Backup ---------------------------------------------------------------------------------


async def test_backup_is_a_pg_dump_that_restores(pg_url: str, pg_server: PgServer,
                                                 tmp_path: Path) -> None:
    async with await open_store(pg_url) as store:
        await add_users(store, 1)
        stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
        live = await play_and_store(store, stored, random.Random(3), max_moves=12)
        dest = tmp_path / "krendzu.dump"
        await store.backup(str(dest))
    assert stat.S_IMODE(os.stat(dest).st_mode) == 0o600  # it holds the deal seeds
    assert not Path(f"{dest}.partial").exists()
    name = pg_server.new_database(empty=True)
    try:
        done = subprocess.run([pg_tool("pg_restore"), "--no-owner", "--dbname",
                               pg_server.url(name), str(dest)],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        async with await open_store(pg_server.url(name)) as copy:
            assert await copy.schema_version() == LATEST
            assert snapshot((await copy.load_match(stored.match_id)).game) == snapshot(live)
    finally:
        pg_server.drop_database(name)


def test_missing_postgresql_is_a_failure_that_says_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No PostgreSQL test is ever skipped: without the server programs the fixture fails
    with this message; Debian's directories are searched when PATH has none."""
    import tests.pg as pg

    monkeypatch.setattr(pg.shutil, "which", lambda name: None)
    assert (pg.find_bindir() / "initdb").exists()  # found under /usr/lib/postgresql
    monkeypatch.setattr(pg.glob, "glob", lambda pattern: [])
    with pytest.raises(RuntimeError, match="apt-get install postgresql"):
        pg.find_bindir()


def test_the_command_line_backs_up_and_checks_postgresql(pg_url: str, tmp_path: Path) -> None:
    """``python -m storage`` follows KRENDZU_DATABASE_URL as the bot does."""
    import json
    import sys

    async def fill() -> None:
        async with await open_store(pg_url) as store:
            await add_users(store, 1)
            stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
            await play_and_store(store, stored, random.Random(2), max_moves=7)

    asyncio.run(fill())
    env = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "PATH": "/usr/bin:/bin",
           "KRENDZU_DATABASE_URL": pg_url}
    for argv in (["migrate"], ["check"], ["backup", str(tmp_path / "out.dump")]):
        done = subprocess.run([sys.executable, "-m", "storage", *argv], capture_output=True,
                              text=True, env=env, cwd=tmp_path, timeout=60)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report.get("schema_version", LATEST) == LATEST
        assert report.get("problems", []) == []
    assert report["bytes"] == (tmp_path / "out.dump").stat().st_size > 0
    assert "krendzu-pg" not in done.stdout  # the URL (it may hold a password) is not shown
