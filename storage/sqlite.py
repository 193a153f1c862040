"""The SQLite backend (aiosqlite): the embedded default.

One connection per store for its writes, used by one task at a time (an ``asyncio.Lock``),
and on a file a second one for its reads, so that a read never waits for a write batch's
commit (WAL lets it read beside the writer): aiosqlite runs every call on its connection's
thread, so the event loop never blocks on SQLite, and explicit transactions from concurrent
tasks cannot interleave on a shared connection. Several
stores (or processes) on one file are serialised by SQLite itself: writes start with
``BEGIN IMMEDIATE`` and wait up to the busy timeout for the write lock.

Each public call runs in a shielded task: if the caller is cancelled, the transaction still
finishes (commit or rollback) and the connection is never left inside a transaction.

Every call reaches the connection through one of two wrappers: :meth:`SqliteStore._read`
(one read transaction; ``_select`` runs one query through it) and
:meth:`SqliteStore._write` (group commit; ``_change`` runs one statement through it). Rows
come back as ``sqlite3.Row`` and each row type is built from named columns.

The SQL of the store's methods is not here: it is written once for both backends
(:class:`storage.store.Store`), and this module is its driver, giving it the connector's
four ways in over those wrappers (:class:`SqliteTx` around the connection). SQLite needs
none of the shared code's hooks (one writer at a time, one process); what only it has stays
here: the pragmas, the group commit, file backups and the embedded mode's group writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from functools import partial
from typing import Any, TypeVar, cast

import aiosqlite

from storage.base import (
    StorageError,
    name_key,
)
from storage.common import UPDATE_TTL_SECONDS
from storage.common import consume_exception as _consume_exception
from storage.connector import Params, Row, Tx, UniqueViolation
from storage.migrations import LATEST, MIGRATIONS, VERSION_TABLE, Migration, Plan, require_latest
from storage.queries import SQLITE
from storage.store import Store, TxOp

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")
#: One write: runs inside a transaction the writer opened, must not commit or roll back.
WriteOp = Callable[[aiosqlite.Connection], Awaitable[T]]
#: One read: runs inside a read transaction the reader opened.
ReadOp = Callable[[aiosqlite.Connection], Awaitable[T]]

MEMORY = ":memory:"
BUSY_TIMEOUT_MS = 5000
#: At most this many writes share one commit (bounds the latency of a busy moment).
MAX_BATCH = 128
#: Seconds a group write is kept (storage.Store.note_group_write): twice Telegram's
#: one-minute window.
KEEP_GROUP_WRITES = 120.0


# Connecting and migrating -------------------------------------------------------------


async def connect(path: str) -> aiosqlite.Connection:
    """Open a connection with the pragmas every connection needs.

    WAL lets readers (and the backup) run beside the writer; ``synchronous=FULL`` syncs the
    WAL on every commit, so a committed move survives a power cut, not just a crash;
    foreign keys are off by default in SQLite and must be switched on per connection.
    """
    owner_only(path)
    try:
        conn = await aiosqlite.connect(path, isolation_level=None)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open {path}: {exc}") from exc
    try:
        await conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        if path != MEMORY:
            mode = await _retry_busy(lambda: _scalar(conn, "PRAGMA journal_mode = WAL"))
            if str(mode).lower() != "wal":
                raise StorageError(f"{path}: cannot switch to WAL (journal mode is {mode})")
        await conn.execute("PRAGMA synchronous = FULL")
        await conn.execute("PRAGMA foreign_keys = ON")
        if await _scalar(conn, "PRAGMA foreign_keys") != 1:
            raise StorageError("this SQLite build cannot enforce foreign keys")
        # Migration 6 fills users.name_key with it (SQL's lower() folds ASCII only).
        await conn.create_function("casefold", 1, name_key, deterministic=True)
    except BaseException as exc:
        await conn.close()
        if isinstance(exc, sqlite3.Error):
            raise StorageError(f"cannot open {path}: {exc}") from exc
        raise
    return conn


def owner_only(path: str) -> None:
    """Make the database file readable and writable by its owner only (mode 0600).

    It holds every match's deal seed, from which all hands can be recomputed. A new file is
    created here, empty and 0600, before SQLite opens it (SQLite would create it 0644 under
    the usual umask); an existing one, and its ``-wal``/``-shm``/``-journal`` companions,
    lose any group and other permissions. SQLite gives the companions it creates later the
    main file's permissions. Failures are left to SQLite to report (or to the file's owner).
    """
    if path in ("", MEMORY):
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    except OSError:
        return  # no such directory, no rights: SQLite says so in its own words
    else:
        os.close(fd)
    for name in (path, f"{path}-wal", f"{path}-shm", f"{path}-journal"):
        try:
            mode = os.stat(name).st_mode
            if mode & 0o077:
                os.chmod(name, mode & 0o7700)
        except OSError:
            continue


async def _retry_busy(call: Callable[[], Awaitable[T]]) -> T:
    """Retry a call that SQLite refuses with BUSY without consulting the busy handler.

    Switching a fresh file to WAL needs an exclusive lock, and SQLite reports a concurrent
    opener's lock at once instead of waiting (the busy timeout does not apply there).
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return await call()
        except sqlite3.OperationalError as exc:
            name = getattr(exc, "sqlite_errorname", "")
            if not name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
                raise
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.005)


async def _scalar(conn: aiosqlite.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    async with conn.execute(sql, params) as cur:
        row = await cur.fetchone()
    return None if row is None else row[0]


async def _on_thread(conn: aiosqlite.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """``fn(connection)`` on the connection's own thread, in one round trip.

    aiosqlite's helpers take a round trip each (a queue to the thread, the result back
    through the event loop's self-pipe): a cursor's execute, fetch and close are three, and
    a write's ``BEGIN``, savepoint, statement, release and ``COMMIT`` five. At about ten
    writes a move those trips were a good part of the embedded mode's CPU a move, so the
    store sends what it can together. ``_execute`` and ``_conn`` are aiosqlite's own way
    to run a call on that thread (every one of its helpers goes through them)."""
    return cast(T, await conn._execute(lambda: fn(conn._conn)))


def _fetchone(raw: sqlite3.Connection, sql: str, params: Params) -> Any:
    cursor = raw.execute(sql, params)
    try:
        return cursor.fetchone()
    finally:
        cursor.close()


def _run_all(raw: sqlite3.Connection, statements: Sequence[str]) -> None:
    for statement in statements:
        raw.execute(statement)


class _Statements:
    """A write that is only statements (``SqliteStore._change``, the group writes): the
    group commit runs it on the connection's thread in one round trip, with its savepoint
    and whatever framing was waiting (``BEGIN``, the previous write's release, ``COMMIT``).
    Its result is the last statement's row count."""

    __slots__ = ("statements",)

    def __init__(self, *statements: tuple[str, Params]) -> None:
        self.statements = statements

    def framed(self, raw: sqlite3.Connection, before: Sequence[str], *, savepoint: bool,
               commit: bool) -> tuple[int | None, Exception | None]:
        """Run ``before``, then the statements (in a savepoint of their own when they share
        the transaction), then ``COMMIT`` when asked: the row count or the statements' own
        error. An error of ``before`` or of the commit fails the whole batch (raised); a
        lone write's error leaves its transaction for the caller to roll back."""
        _run_all(raw, before)
        if savepoint:
            raw.execute("SAVEPOINT write_op")
        result: int | None = None
        error: Exception | None = None
        try:
            for sql, params in self.statements:
                result = raw.execute(sql, params).rowcount
        except Exception as exc:
            if not savepoint:
                return None, exc
            raw.execute("ROLLBACK TO write_op")
            raw.execute("RELEASE write_op")
            result, error = None, exc
        else:
            if savepoint:
                raw.execute("RELEASE write_op")
        if commit:
            raw.execute("COMMIT")
        return result, error


async def current_version(conn: aiosqlite.Connection) -> int:
    """Schema version of an open database (0 when empty)."""
    exists = await _scalar(
        conn, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    )
    if not exists:
        return 0
    return int(await _scalar(conn, "SELECT COALESCE(MAX(version), 0) FROM schema_version"))


async def migrate(
    conn: aiosqlite.Connection,
    *,
    target: int | None = None,
    migrations: Sequence[Migration] = MIGRATIONS,
    clock: Callable[[], float] = time.time,
) -> int:
    """Bring the schema up to ``target`` (default: the newest) as :class:`Plan` says, one
    ``BEGIN IMMEDIATE`` transaction per step (SQLite's write lock orders two processes).
    Returns the final version."""
    plan = Plan(migrations, target)
    while True:
        await conn.execute("BEGIN IMMEDIATE")
        try:
            await conn.execute(VERSION_TABLE)
            version = await current_version(conn)
            step = plan.after(version)
            if step is None:
                await conn.execute("ROLLBACK")  # nothing to do; keep the file as it was
                return version
            for statement in step.statements:
                await conn.execute(statement)
            await conn.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                (step.version, step.name, clock()),
            )
            await conn.execute("COMMIT")
            log.info("storage: migrated to schema version %d (%s)", step.version, step.name)
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                await conn.execute("ROLLBACK")
            raise


def backup_file(src: str, dest: str) -> None:
    """Online backup of the database file ``src`` to ``dest`` with SQLite's backup API.

    Synchronous (run it in a thread). Copies every page in one step under one read
    transaction, so the copy is a consistent snapshot even while another connection or
    process writes (WAL readers do not block writers). The copy is switched to a rollback
    journal so it is one self-contained file, checked, and renamed into place atomically.
    """
    if not os.path.exists(src):
        raise StorageError(f"no database at {src}")
    partial = f"{dest}.partial"
    for leftover in (partial, f"{partial}-journal", f"{partial}-wal", f"{partial}-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(leftover)
    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True, isolation_level=None)
    try:
        source.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        owner_only(partial)  # a copy holds the deal seeds too
        target = sqlite3.connect(partial, isolation_level=None)
        try:
            source.backup(target, pages=-1)
            target.execute("PRAGMA journal_mode = DELETE")
            check = target.execute("PRAGMA integrity_check").fetchone()[0]
            if check != "ok":
                raise StorageError(f"backup failed its integrity check: {check}")
        finally:
            target.close()
    except sqlite3.Error as exc:
        raise StorageError(f"backup of {src} failed: {exc}") from exc
    finally:
        source.close()
    os.replace(partial, dest)
    _fsync_dir(os.path.dirname(os.path.abspath(dest)))


def _fsync_dir(path: str) -> None:
    """Make a rename durable (POSIX); harmless where directories cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# The connector ----------------------------------------------------------------------------


class SqliteTx(Tx):
    """:class:`storage.connector.Tx` on the store's connection, inside a transaction (or a
    savepoint of the group commit) that :class:`SqliteStore` opened."""

    __slots__ = ("conn",)

    def __init__(self, conn: aiosqlite.Connection) -> None:
        self.conn = conn

    async def execute(self, sql: str, params: Params = ()) -> int:
        try:
            cur = await self.conn.execute(sql, params)
        except sqlite3.IntegrityError as exc:
            raise _unique(exc) from exc
        return cur.rowcount

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        try:  # one round trip, not three (execute, fetch, close)
            return cast(Row | None, await _on_thread(
                self.conn, partial(_fetchone, sql=sql, params=params)))
        except sqlite3.IntegrityError as exc:
            raise _unique(exc) from exc

    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        return cast(list[Row], list(await self.conn.execute_fetchall(sql, params)))

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        try:
            await self.conn.executemany(sql, rows)
        except sqlite3.IntegrityError as exc:
            raise _unique(exc) from exc


def _unique(exc: sqlite3.IntegrityError) -> BaseException:
    """A broken unique constraint as :class:`UniqueViolation`; any other as it came."""
    name = getattr(exc, "sqlite_errorname", "")
    if name in ("SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"):
        return UniqueViolation(f"{type(exc).__name__}: {exc}")
    return exc


# The store ------------------------------------------------------------------------------


class SqliteStore(Store):
    """:class:`storage.Store` on one SQLite file (or ``:memory:``)."""

    def __init__(
        self,
        conn: aiosqlite.Connection,
        path: str,
        *,
        clock: Callable[[], float] = time.time,
        update_ttl: float = UPDATE_TTL_SECONDS,
        reader: aiosqlite.Connection | None = None,
    ) -> None:
        self._conn = conn
        conn.row_factory = sqlite3.Row  # rows are read by column name
        #: A second connection for the reads (a file's: WAL lets it read beside the
        #: writer), so that a read never waits for a write batch's commit and its fsync;
        #: each read sees every write committed before it began. ``None``: the one.
        self._reader = reader
        if reader is not None:
            reader.row_factory = sqlite3.Row
        self.path = path
        self._clock = clock
        self._update_ttl = update_ttl
        self._lock = asyncio.Lock()
        self._read_lock = asyncio.Lock() if reader is not None else self._lock
        self._inserts_since_prune = 0
        self._closed = False
        self._queue: list[tuple[WriteOp[Any] | _Statements, asyncio.Future[Any]]] = []
        self._flusher: asyncio.Task[None] | None = None
        #: Writes committed and the transactions that carried them (group commit shows here).
        self.writes_committed = 0
        self.write_transactions = 0

    @classmethod
    async def open(
        cls,
        path: str | os.PathLike[str],
        *,
        clock: Callable[[], float] = time.time,
        update_ttl: float = UPDATE_TTL_SECONDS,
        upgrade: bool = True,
    ) -> SqliteStore:
        """Connect, migrate to the newest schema (refusing a newer one) and return a store.

        With ``upgrade=False`` the schema must already be the newest (nothing is written).
        """
        path = os.fspath(path)
        conn = await connect(path)
        try:
            if upgrade:
                await migrate(conn, clock=clock)
            else:
                require_latest(await current_version(conn), LATEST, path)
            reader = await connect(path) if path != MEMORY else None
        except BaseException as exc:
            await conn.close()
            if isinstance(exc, sqlite3.Error):
                raise StorageError(f"cannot migrate {path}: {exc}") from exc
            raise
        return cls(conn, path, clock=clock, update_ttl=update_ttl, reader=reader)

    # Plumbing: one read wrapper, one write wrapper ----------------------------------------

    async def _guard(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run ``work`` to completion even if the caller is cancelled; wrap SQLite errors."""
        if self._closed:
            raise StorageError("the store is closed")
        task = asyncio.ensure_future(work())
        task.add_done_callback(_consume_exception)
        try:
            return await asyncio.shield(task)
        except sqlite3.Error as exc:
            raise StorageError(f"{type(exc).__name__}: {exc}") from exc

    async def _read(self, op: ReadOp[T]) -> T:
        """Run one read: ``op`` inside a read transaction of its own (a consistent snapshot,
        so the queries of one call agree), finished even if the caller is cancelled.

        Every read goes through here; :meth:`_select` is the one-query shorthand."""

        async def work() -> T:
            async with self._tx("DEFERRED", reading=True) as conn:
                return await op(conn)

        return await self._guard(work)

    async def _select(self, sql: str, params: Params, map_row: Callable[[Row], R]) -> list[R]:
        """One query as one read, each row mapped by ``map_row`` (by column name). A lone
        statement is a consistent snapshot of its own in autocommit mode, so it needs no
        ``BEGIN``/``COMMIT`` around it (each a round trip to the connection's thread: most
        of the store's calls are such reads); the lock keeps it out of a write's
        transaction all the same."""

        async def work() -> list[R]:
            async with self._read_lock:
                rows = await (self._reader or self._conn).execute_fetchall(sql, params)
            return [map_row(cast(Row, r)) for r in rows]

        return await self._guard(work)

    async def _change(self, sql: str, params: Params) -> int:
        """One statement as one write (see :meth:`_write`); how many rows it changed."""

        return cast(int, await self._write(_Statements((sql, params))))

    async def _write(self, op: WriteOp[T] | _Statements) -> T:
        """Run one write atomically and return once it is durably committed.

        Group commit: writes that arrive while a commit is in progress are queued and then
        run together in the next transaction, each inside its own savepoint, so one failing
        write (a conflict, a duplicate update) is undone alone while the others commit. The
        commit (one fsync under ``synchronous=FULL``) is shared, which is what lets the store
        go beyond one fsync per move when many chats play at once. A lone write gets a
        transaction of its own. No caller hears "done" before the COMMIT returned. A caller
        cancelled before its write started writes nothing; once started, it completes.
        """
        if self._closed:
            raise StorageError("the store is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._queue.append((op, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        return await future

    async def _flush(self) -> None:
        try:
            while self._queue:
                async with self._lock:
                    batch = [(op, f) for op, f in self._queue[:MAX_BATCH] if not f.done()]
                    del self._queue[:MAX_BATCH]
                    if batch:
                        await self._run_batch(batch)
        except BaseException as exc:
            # The writer itself was cancelled (loop shutdown): nobody may wait forever.
            for _, fut in self._queue:
                if not fut.done():
                    fut.set_exception(_public(exc))
            self._queue.clear()
            raise

    async def _run_batch(
            self, batch: list[tuple[WriteOp[Any] | _Statements, asyncio.Future[Any]]]) -> None:
        """One transaction for ``batch`` (see :meth:`_write`). The framing statements go to
        the connection's thread with the next thing sent there (``BEGIN`` and a savepoint
        with the first write, a release with the next savepoint, ``COMMIT`` with the last
        write's release), and a :class:`_Statements` write goes with its framing: a lone
        one-statement write is one round trip in all, where it was three."""
        conn = self._conn
        single = len(batch) == 1
        outcomes: list[tuple[asyncio.Future[Any], Any, BaseException | None]] = []
        failure: BaseException | None = None
        pending: list[str] = ["BEGIN IMMEDIATE"]  # framing not yet sent to the thread
        committed = False
        try:
            try:
                for i, (op, fut) in enumerate(batch):
                    if isinstance(op, _Statements):
                        last = i == len(batch) - 1
                        result, refused = await _on_thread(conn, partial(
                            op.framed, before=pending, savepoint=not single, commit=last))
                        pending = []
                        outcomes.append((fut, result, refused))
                        if refused is not None and single:
                            raise _Undo() from refused
                        committed = last
                        continue
                    if not single:
                        pending.append("SAVEPOINT write_op")
                    await _on_thread(conn, partial(_run_all, statements=pending))
                    pending = []
                    try:
                        result = await op(conn)
                    except Exception as exc:
                        outcomes.append((fut, None, exc))
                        if single:
                            raise _Undo() from exc
                        await _on_thread(conn, partial(
                            _run_all, statements=("ROLLBACK TO write_op", "RELEASE write_op")))
                    else:
                        outcomes.append((fut, result, None))
                        if not single:
                            pending.append("RELEASE write_op")
                if not committed:
                    await _on_thread(conn, partial(_run_all, statements=[*pending, "COMMIT"]))
                self.write_transactions += 1
                self.writes_committed += sum(1 for _, _, e in outcomes if e is None)
            except BaseException:
                if conn.in_transaction:
                    try:
                        await conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        log.exception("storage: rollback failed")
                raise
        except _Undo:
            pass  # the lone write failed: its own error is reported below
        except BaseException as exc:
            # BEGIN, a savepoint or COMMIT failed (or the writer task was cancelled):
            # nothing of this batch is stored, so every write of it fails.
            failure = exc
        for fut, result, error in outcomes if failure is None else []:
            if fut.done():
                continue
            if error is None:
                fut.set_result(result)
            else:
                fut.set_exception(_public(error))
        if failure is not None:
            for _, fut in batch:
                if not fut.done():
                    fut.set_exception(_public(failure))
            if not isinstance(failure, Exception):
                raise failure

    @contextlib.asynccontextmanager
    async def _tx(self, mode: str = "DEFERRED", *,
                  reading: bool = False) -> AsyncIterator[aiosqlite.Connection]:
        """One transaction on the shared connection (``reading``: on the reads' own, when
        there is one); rolled back on any exception."""
        async with self._read_lock if reading else self._lock:
            conn = (self._reader or self._conn) if reading else self._conn
            await conn.execute(f"BEGIN {mode}")
            try:
                yield conn
            except BaseException:
                try:
                    await conn.execute("ROLLBACK")
                except sqlite3.Error:
                    log.exception("storage: rollback failed")
                raise
            try:
                await conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        await conn.execute("ROLLBACK")
                raise

    # The connector (storage.store.Store's four ways in) ---------------------------------

    dialect = SQLITE

    async def _query(self, sql: str, params: Params, map_row: Callable[[Row], R]) -> list[R]:
        return await self._select(sql, params, map_row)

    async def _modify(self, sql: str, params: Params) -> int:
        return await self._change(sql, params)

    async def _in_read(self, op: TxOp[T]) -> T:
        return await self._read(lambda conn: op(SqliteTx(conn)))

    async def _in_write(self, op: TxOp[T]) -> T:
        return await self._write(lambda conn: op(SqliteTx(conn)))

    # Lifecycle --------------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True  # refuse new calls; queued writes still commit
        while self._flusher is not None and not self._flusher.done():
            await asyncio.wait([self._flusher])
        if self._reader is not None:
            async with self._read_lock:
                await self._reader.close()
        async with self._lock:
            with contextlib.suppress(sqlite3.Error):
                await self._conn.execute("PRAGMA optimize")
            await self._conn.close()

    # The embedded mode's group writes (the scaled mode keeps them in pg_windows) ------

    async def note_group_write(self, chat_id: int, at: float) -> None:
        await self._write(_Statements(
            ("DELETE FROM group_writes WHERE at < ?", (at - KEEP_GROUP_WRITES,)),
            ("INSERT INTO group_writes (chat_id, at) VALUES (?, ?)", (chat_id, at))))

    async def group_writes(self, since: float) -> list[tuple[int, float]]:
        return await self._select(
            "SELECT chat_id, at FROM group_writes WHERE at >= ? ORDER BY at", (since,),
            lambda r: (int(r["chat_id"]), float(r["at"])))

    # Administration and inspection ------------------------------------------------------
    # Nothing in the bot calls these: ``python -m storage``, the benchmarks, operators and
    # tests do.

    async def schema_version(self) -> int:
        return await self._read(current_version)

    async def pragmas(self) -> dict[str, Any]:
        """The connection settings that durability depends on (for ``info`` and tests)."""

        async def op(conn: aiosqlite.Connection) -> dict[str, Any]:
            return {
                name: await _scalar(conn, f"PRAGMA {name}")
                for name in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
            }

        return await self._read(op)

    async def integrity_check(self) -> list[str]:
        """``PRAGMA integrity_check`` and ``foreign_key_check``; empty when all is well."""

        async def op(conn: aiosqlite.Connection) -> list[str]:
            rows = await conn.execute_fetchall("PRAGMA integrity_check")
            problems = [str(r[0]) for r in rows if r[0] != "ok"]
            fk = await conn.execute_fetchall("PRAGMA foreign_key_check")
            problems += [f"foreign key: {tuple(r)}" for r in fk]
            return problems

        return await self._read(op)

    async def backup(self, dest: str) -> None:
        dest = os.fspath(dest)
        if self.path != MEMORY:
            # A separate connection in a worker thread: the store keeps serving meanwhile.
            await asyncio.to_thread(backup_file, self.path, dest)
            return

        async def work() -> None:
            async with self._lock:  # not in a transaction: the backup API takes its own
                target = await aiosqlite.connect(dest, isolation_level=None)
                try:
                    await self._conn.backup(target)
                finally:
                    await target.close()

        await self._guard(work)

class _Undo(Exception):
    """Internal: roll back a lone write's transaction after it failed."""


def _public(exc: BaseException) -> BaseException:
    """SQLite's own errors do not leave the package: wrap them in StorageError."""
    if isinstance(exc, sqlite3.Error):
        wrapped = StorageError(f"{type(exc).__name__}: {exc}")
        wrapped.__cause__ = exc
        return wrapped
    if isinstance(exc, asyncio.CancelledError):
        return StorageError("the write was interrupted (the store is closing)")
    return exc


__all__ = [
    "LATEST",
    "MEMORY",
    "SqliteStore",
    "backup_file",
    "connect",
    "current_version",
    "migrate",
]
