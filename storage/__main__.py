"""``python -m storage``: back up, migrate, inspect and check the database.

    python -m storage backup OUT.db [--db PATH]   online backup (safe while the bot runs)
    python -m storage migrate [--db PATH]         bring the schema up to date
    python -m storage info [--db PATH]            schema version, pragmas, row counts
    python -m storage check [--db PATH]           integrity check and rebuild of every match

``--db`` defaults to ``$KRENDZU_DATABASE_URL``, else ``$KRENDZU_DB`` or ``krendzu.sqlite3``.
On PostgreSQL (a ``postgresql://`` URL) ``backup`` writes a ``pg_dump`` custom-format file
(restore it with ``pg_restore``), ``check`` rebuilds every active match and ``info`` is
SQLite's only. Output is one JSON object; exit 0 when all is well, 1 when ``check`` finds a
problem, 2 on errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import sys
import time
from typing import Any

from storage import StorageError, default_target, is_postgres, open_store, sqlite_path
from storage.migrations import LATEST
from storage.sqlite import MEMORY, SqliteStore, backup_file


def _db_file(target: str) -> str:
    path = sqlite_path(target)
    if path == MEMORY:
        raise StorageError("an in-memory database has nothing to back up or inspect")
    return path


async def pg_backup(db: str, out: str) -> dict[str, Any]:
    started = time.perf_counter()
    async with await open_store(db) as store:
        await store.backup(out)
        schema = await store.schema_version()
    return {"backup": out, "bytes": os.path.getsize(out), "schema_version": schema,
            "seconds": round(time.perf_counter() - started, 3)}


def cmd_backup(db: str, out: str) -> dict[str, Any]:
    if is_postgres(db):
        return asyncio.run(pg_backup(db, out))
    path = _db_file(db)
    started = time.perf_counter()
    backup_file(path, out)
    with sqlite3.connect(f"file:{out}?mode=ro", uri=True) as conn:
        version = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version")
        schema = version.fetchone()[0]
    return {
        "backup": out,
        "from": path,
        "bytes": os.path.getsize(out),
        "schema_version": schema,
        "seconds": round(time.perf_counter() - started, 3),
    }


async def cmd_migrate(db: str) -> dict[str, Any]:
    if is_postgres(db):
        async with await open_store(db) as pg:
            return {"schema_version": await pg.schema_version()}
    store = await SqliteStore.open(sqlite_path(db))
    try:
        return {"db": store.path, "schema_version": await store.schema_version()}
    finally:
        await store.close()


def cmd_info(db: str) -> dict[str, Any]:
    path = _db_file(db)
    if not os.path.exists(path):
        raise StorageError(f"no database at {path}")
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        version = 0
        if "schema_version" in tables:
            cur = conn.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version")
            version = cur.fetchone()[0]
        counts = {
            name: conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0]
            for name in sorted(tables)
            if not name.startswith("sqlite_")
        }
        statuses = {}
        if "matches" in tables:
            statuses = dict(conn.execute("SELECT status, COUNT(*) FROM matches GROUP BY status"))
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    return {
        "db": path,
        "bytes": os.path.getsize(path),
        "journal_mode": mode,
        "schema_version": version,
        "code_schema_version": LATEST,
        "rows": counts,
        "matches_by_status": statuses,
    }


async def cmd_check(db: str) -> tuple[dict[str, Any], bool]:
    if is_postgres(db):
        from storage.postgres import PostgresStore

        async with await PostgresStore.open(db, upgrade=False) as pg:
            problems = []
            rebuilt = 0
            for row in await pg.active_matches():
                try:
                    await pg.load_match(row.match_id)
                    rebuilt += 1
                except StorageError as exc:
                    problems.append(str(exc))
        return {"problems": problems, "active_rebuilt": rebuilt}, not problems
    store = await SqliteStore.open(_db_file(db), upgrade=False)
    try:
        problems = await store.integrity_check()
        rebuilt = 0
        for row in await store.active_matches():
            try:
                await store.load_match(row.match_id)
                rebuilt += 1
            except StorageError as exc:
                problems.append(str(exc))
        return {"db": store.path, "problems": problems, "active_rebuilt": rebuilt}, not problems
    finally:
        await store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m storage", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    backup = sub.add_parser("backup", help="online backup to a file (safe while the bot runs)")
    backup.add_argument("out", help="backup file to write (replaced atomically)")
    for name in ("migrate", "info", "check"):
        sub.add_parser(name)
    for p in sub.choices.values():
        p.add_argument("--db", help="database: a SQLite file or a postgresql:// URL "
                       "(default $KRENDZU_DATABASE_URL, $KRENDZU_DB or krendzu.sqlite3)")
    args = parser.parse_args(argv)
    db = args.db or default_target()
    ok = True
    try:
        if args.command == "backup":
            report = cmd_backup(db, args.out)
        elif args.command == "migrate":
            report = asyncio.run(cmd_migrate(db))
        elif args.command == "info":
            report = cmd_info(db)
        else:
            report, ok = asyncio.run(cmd_check(db))
    except (StorageError, sqlite3.Error, OSError) as exc:
        print(f"python -m storage {args.command}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report, indent=2, sort_keys=True))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
