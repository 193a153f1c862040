"""The PostgreSQL backend (psycopg 3, async, with a pool): the one source of truth of the
scaled mode, where any number of processes serve the same matches.

Every call borrows a connection from a :class:`psycopg_pool.AsyncConnectionPool` (in
autocommit mode) and goes through one of three wrappers, as in ``storage.sqlite``:
:meth:`PostgresStore._select` (one query, one statement's snapshot), :meth:`_read` (several
queries in one ``REPEATABLE READ READ ONLY`` transaction, so they agree) and :meth:`_write`
(one ``READ COMMITTED`` transaction; :meth:`_change` is its one-statement form). Rows come
back as dicts and every row type is built from named columns. No group commit is needed:
each call has its own connection and PostgreSQL groups concurrent commits itself.

One match is served by any process, so its writes are serialised in the database:
``append_move`` takes ``pg_advisory_xact_lock(match_id)`` inside its transaction (released
at COMMIT or ROLLBACK, so a pooled connection can never carry it to the next borrower, as a
session-level lock would), then checks the status and the next sequence number. The primary
key ``(match_id, seq)`` stays the real guarantee: a writer that bypassed the lock and won
makes the insert fail with a unique violation, reported as the same
:class:`SequenceConflict` SQLite gives. The update ledger is a primary key too, so a
redelivered update id applies once whichever process receives it.

Nothing here relies on session state. Statements are prepared (psycopg prepares one run
:data:`PREPARE_AFTER` times on a connection) unless ``prepare=False``
(``KRENDZU_PG_PREPARE=off``): a transaction-mode pgbouncer older than 1.21 cannot carry
prepared statements; 1.21 and newer can, with ``max_prepared_statements`` set. Each
public call runs in a shielded task: a cancelled caller never leaves a transaction half
done.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import json
import logging
import os
import secrets
import shutil
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection, errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from krendzu import Match, Outcome, PlayerAction, Settings, match_outcome
from krendzu.stats import seat_statistics
from storage.base import (
    ENGINE_COLUMNS,
    ActiveMatchExists,
    DuplicateUpdate,
    EngineExists,
    EngineRow,
    MatchClosed,
    MatchRow,
    MatchStatus,
    MoveRow,
    NotFound,
    SchemaTooNew,
    SeatKind,
    SeatSpec,
    SequenceConflict,
    StorageError,
    StoredMatch,
    Visibility,
    engine_display_name,
    engine_row,
    engine_user_id,
    name_key,
    rebuild_game,
)
from storage.common import (
    MAX_SEED,
    STATS_SUMS,
    UPDATE_TTL_SECONDS,
    at,
    check_new_match,
    consume_exception,
    move_steps,
    new_seats,
    settings_json,
    stats_params,
)
from storage.connector import Params, Tx, UniqueViolation, format_style
from storage.migrations import Migration
from storage.pg_migrations import LATEST, MIGRATIONS, VERSION_TABLE
from storage.pg_windows import FloodWindows
from storage.queries import POSTGRES
from storage.rows import match_row
from storage.store import SqlStore, TxOp

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")
Conn = AsyncConnection[DictRow]
Row = dict[str, Any]
#: One unit of work on a borrowed connection (inside the transaction the wrapper opened).
Op = Callable[[Conn], Awaitable[T]]
#: Called inside the transaction that stored move ``seq`` of a match, before its COMMIT
#: (:attr:`PostgresStore.after_append`): whatever it writes commits or rolls back with the
#: move. The scaled mode defers the match's announcement job there (chat/jobs.py).
AfterAppend = Callable[[Conn, int, int], Awaitable[None]]
#: Called inside the transaction that armed a match's turn timer for move ``seq`` with a
#: ``deadline`` (epoch seconds) and the timer's ``seconds`` (:attr:`PostgresStore.after_arm`).
AfterArm = Callable[[Conn, int, int, float, int], Awaitable[None]]
#: Called inside a transaction after which a computer may be the one to make move ``seq``
#: of a match, though no move was stored (:attr:`PostgresStore.after_computer`): a match
#: that starts with a computer to move, a seat handed to the computer. The scaled mode
#: defers the computer's job there, so a process killed right after loses no turn.
AfterComputer = Callable[[Conn, int, int], Awaitable[None]]

#: Connections per store (per process): enough for the requests one process serves at once.
POOL_MIN, POOL_MAX = 1, 10
#: A statement run this many times on a connection is prepared there (psycopg's default):
#: parsed and planned once, which takes about a fifth of the server's CPU off a move.
PREPARE_AFTER = 5
#: Seconds to wait for a connection (first connect or a free one from the pool).
CONNECT_TIMEOUT = 10.0
#: Connections for the chats' flow locks (:meth:`PostgresStore.hold_chat`), apart from the
#: pool of the store's calls, which the code inside a lock uses: one per chat locked now (a
#: critical section lasts milliseconds; more chats at once wait for a connection).
LOCK_POOL_MAX = 8
#: The first key of a chat's flow lock, in the two-number advisory key space (which never
#: meets the one-number space of the match locks); the second is a hash of chat and topic.
CHAT_LOCKS = int.from_bytes(b"KRND", "big")
#: The first key of a webhook worker's liveness lock (the second: its owner number in
#: ``reply_outbox``), in the two-number key space too.
REPLY_OWNERS = int.from_bytes(b"KRPY", "big")
#: A lock's transaction idle longer than this (a process hung inside a critical section) is
#: ended by the server, so one stuck process cannot hold a chat for ever.
LOCK_IDLE_MS = 120_000
#: The advisory lock key migrations take: negative, so that it is never a match id.
MIGRATION_LOCK = -int.from_bytes(b"krendzu", "big")


# Migrating -------------------------------------------------------------------------------


async def _scalar(conn: Conn, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> Any:
    cur = await conn.execute(sql, params)
    row = await cur.fetchone()
    return None if row is None else next(iter(row.values()))


async def current_version(conn: Conn) -> int:
    """Schema version of a database (0 when it has no schema yet)."""
    if not await _scalar(conn, "SELECT to_regclass('schema_version') IS NOT NULL AS here"):
        return 0
    return int(await _scalar(conn, "SELECT COALESCE(MAX(version), 0) FROM schema_version"))


async def migrate(
    conn: Conn,
    *,
    target: int | None = None,
    migrations: Sequence[Migration] = MIGRATIONS,
    clock: Callable[[], float] = time.time,
) -> int:
    """Bring the schema up to ``target`` (default: the newest), one transaction per step.

    Each step takes an advisory lock first and reads the version under it, so processes
    starting together apply every step once. A database newer than ``migrations`` raises
    :class:`SchemaTooNew` and is left untouched. Returns the final version.
    """
    latest = migrations[-1].version if migrations else 0
    want = latest if target is None else target
    if want > latest:
        raise ValueError(f"no migration {want}: the newest is {latest}")
    by_version = {m.version: m for m in migrations}
    while True:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            version = await current_version(conn)
            if version > latest:
                raise SchemaTooNew(version, latest)
            if version >= want:
                return version  # nothing was written
            step = by_version.get(version + 1)
            if step is None:
                raise StorageError(f"migration {version + 1} is missing")
            await conn.execute(VERSION_TABLE)
            for statement in step.statements:
                await conn.execute(statement)
            await conn.execute(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (%s, %s, %s)",
                (step.version, step.name, clock()))
        log.info("storage: migrated to schema version %d (%s)", step.version, step.name)


def pg_tool(name: str) -> str:
    """A PostgreSQL client program (``pg_dump``, ``pg_restore``): the newest Debian
    installs, else the one on PATH (a dump needs a client at least as new as the server)."""
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"),
                   key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    path = found[-1] if found else shutil.which(name)
    if path is None:
        raise StorageError(f"{name} not found: install PostgreSQL's client programs")
    return path


def _secret_free(url: str) -> tuple[str, dict[str, str]]:
    """A connection string without its password, and the environment that carries it, so
    that no password shows in a process list."""
    params = conninfo_to_dict(url)
    password = params.pop("password", None)
    env = {"PGPASSWORD": str(password)} if password is not None else {}
    return make_conninfo(**{k: str(v) for k, v in params.items()}), env


# The connector ----------------------------------------------------------------------------


class PgTx(Tx):
    """:class:`storage.connector.Tx` on a borrowed connection, inside the transaction that
    :class:`PostgresStore` opened; the shared SQL is translated to psycopg's style."""

    __slots__ = ("conn",)

    def __init__(self, conn: Conn) -> None:
        self.conn = conn

    async def execute(self, sql: str, params: Params = ()) -> int:
        try:
            cur = await self.conn.execute(format_style(sql), params)
        except errors.UniqueViolation as exc:
            raise _unique(exc) from exc
        return cur.rowcount

    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        try:
            cur = await self.conn.execute(format_style(sql), params)
        except errors.UniqueViolation as exc:
            raise _unique(exc) from exc
        return await cur.fetchone()

    async def fetchall(self, sql: str, params: Params = ()) -> list[Mapping[str, Any]]:
        cur = await self.conn.execute(format_style(sql), params)
        return list(await cur.fetchall())

    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        try:
            async with self.conn.cursor() as cur:
                await cur.executemany(format_style(sql), rows)
        except errors.UniqueViolation as exc:
            raise _unique(exc) from exc


def _unique(exc: errors.UniqueViolation) -> UniqueViolation:
    # The server's primary message only: its DETAIL may quote the row (a deal seed).
    return UniqueViolation(f"{type(exc).__name__}: {exc.diag.message_primary or exc}")


# The store ------------------------------------------------------------------------------


#: The channel every stored change of a match is announced on (its payload: the match id);
#: the engine protocol's streams in every process listen (:meth:`PostgresStore.listen`).
NOTIFY_CHANNEL = "krendzu_match"
#: The channel a revoked token is announced on (a new token or a deleted engine; its payload:
#: the engine id): every process closes the streams opened with the old token at once.
ENGINE_CHANNEL = "krendzu_engine"


async def notify(conn: Conn, match_id: int) -> None:
    """``NOTIFY`` the change of ``match_id`` inside the caller's transaction: delivered to
    the listeners at COMMIT, never for a rolled-back change."""
    await conn.execute("SELECT pg_notify(%s, %s)", (NOTIFY_CHANNEL, str(match_id)))


class PostgresStore(SqlStore):
    """:class:`storage.base.Store` on a PostgreSQL database (a pool of connections)."""

    def __init__(self, pool: AsyncConnectionPool[Conn], *,
                 clock: Callable[[], float] = time.time,
                 update_ttl: float = UPDATE_TTL_SECONDS, url: str = "",
                 kwargs: dict[str, Any] | None = None) -> None:
        self._pool = pool
        self._url = url  # for pg_dump and the lock pool: it may hold a password, never log it
        #: The connections' settings (the lock pool's connections are made alike).
        self._kwargs = kwargs or {"autocommit": True, "row_factory": dict_row,
                                  "prepare_threshold": None}
        self._clock = clock
        self._update_ttl = update_ttl
        self._inserts_since_prune = 0
        self._closed = False
        self._calls: set[asyncio.Task[Any]] = set()
        self._listeners: set[asyncio.Task[None]] = set()
        self._listening: asyncio.Future[None] | None = None
        self._lock_pool: AsyncConnectionPool[Conn] | None = None
        self._lock_pool_made = asyncio.Lock()
        #: The connection whose open transaction holds this process's reply-owner lock.
        self._owner_conn: AsyncConnection[Any] | None = None
        #: Set by the scaled mode's wiring (chat/jobs.py); ``None``: nothing more to do.
        self.after_append: AfterAppend | None = None
        self.after_arm: AfterArm | None = None
        self.after_computer: AfterComputer | None = None
        #: Telegram's flood windows shared by every process (storage/pg_windows.py).
        self.windows = FloodWindows(self)

    @classmethod
    async def open(
        cls,
        url: str,
        *,
        clock: Callable[[], float] = time.time,
        update_ttl: float = UPDATE_TTL_SECONDS,
        upgrade: bool = True,
        min_size: int = POOL_MIN,
        max_size: int = POOL_MAX,
        prepare: bool = True,
    ) -> PostgresStore:
        """Connect, migrate to the newest schema (refusing a newer one) and return a store.
        With ``prepare`` a statement run :data:`PREPARE_AFTER` times on a connection is
        prepared there (parsed and planned once); off behind an old transaction-mode pgbouncer.

        With ``upgrade=False`` the schema must already be the newest (nothing is written).
        The first connection is made alone, so a wrong URL or password is reported as the
        server words it rather than as a pool timeout.
        """
        kwargs: dict[str, Any] = {"autocommit": True, "row_factory": dict_row,
                                  "prepare_threshold": PREPARE_AFTER if prepare else None}
        try:
            conn = await AsyncConnection.connect(url, connect_timeout=int(CONNECT_TIMEOUT),
                                                 **kwargs)
        except psycopg.Error as exc:
            raise StorageError(f"cannot connect to PostgreSQL: {exc}") from exc
        try:
            if upgrade:
                await migrate(conn, clock=clock)
            else:
                version = await current_version(conn)
                if version > LATEST:
                    raise SchemaTooNew(version, LATEST)
                if version < LATEST:
                    raise StorageError(f"the database is at schema version {version}, not "
                                       f"{LATEST}: migrate it first")
        except psycopg.Error as exc:
            raise StorageError(f"cannot migrate the database: {exc}") from exc
        finally:
            await conn.close()
        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            url, min_size=min_size, max_size=max(min_size, max_size), kwargs=kwargs,
            connection_class=AsyncConnection[DictRow], timeout=CONNECT_TIMEOUT, open=False,
            name="krendzu")
        try:
            await pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except psycopg.Error as exc:
            await pool.close()
            raise StorageError(f"cannot connect to PostgreSQL: {exc}") from exc
        return cls(pool, clock=clock, update_ttl=update_ttl, url=url, kwargs=kwargs)

    # Plumbing: one query, one read, one write ----------------------------------------------

    async def _guard(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """Run ``work`` on a borrowed connection to completion even if the caller is
        cancelled; psycopg's errors leave as :class:`StorageError`."""
        if self._closed:
            raise StorageError("the store is closed")

        async def borrowed() -> T:
            async with self._pool.connection() as conn:
                return await work(conn)

        task = asyncio.ensure_future(borrowed())
        self._calls.add(task)
        task.add_done_callback(self._calls.discard)
        task.add_done_callback(consume_exception)
        try:
            return await asyncio.shield(task)
        except psycopg.Error as exc:
            # The server's primary message only: its DETAIL may quote a failing row, and a
            # row of matches holds the deal seed.
            raise StorageError(f"{type(exc).__name__}: {exc.diag.message_primary or exc}"
                               ) from exc

    async def _select(self, sql: str, params: Sequence[Any] | Mapping[str, Any],
                      map_row: Callable[[Row], R]) -> list[R]:
        """One query (one statement: one snapshot), each row mapped by ``map_row``."""

        async def work(conn: Conn) -> list[R]:
            cur = await conn.execute(sql, params)
            return [map_row(r) for r in await cur.fetchall()]

        return await self._guard(work)

    async def _read(self, op: Op[T]) -> T:
        """Several queries that must agree: one read-only snapshot transaction."""

        async def work(conn: Conn) -> T:
            async with conn.transaction():
                await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                return await op(conn)

        return await self._guard(work)

    async def _write(self, op: Op[T]) -> T:
        """One write transaction (READ COMMITTED), committed before this returns; any
        exception rolls all of it back."""

        async def work(conn: Conn) -> T:
            async with conn.transaction():
                return await op(conn)

        return await self._guard(work)

    async def _change(self, sql: str, params: Sequence[Any] | Mapping[str, Any]) -> int:
        """One statement as one write; how many rows it changed."""

        async def work(conn: Conn) -> int:
            cur = await conn.execute(sql, params)
            return cur.rowcount

        return await self._guard(work)

    @staticmethod
    async def _one(conn: Conn, sql: str,
                   params: Sequence[Any] | Mapping[str, Any] = ()) -> Row | None:
        cur = await conn.execute(sql, params)
        return await cur.fetchone()

    # The connector (storage.store.SqlStore's four ways in, and its hooks) ------------------

    dialect = POSTGRES

    async def _query(self, sql: str, params: Params, map_row: Callable[[Row], R]) -> list[R]:
        return await self._select(format_style(sql), params, map_row)

    async def _modify(self, sql: str, params: Params) -> int:
        return await self._change(format_style(sql), params)

    async def _in_read(self, op: TxOp[T]) -> T:
        return await self._read(lambda conn: op(PgTx(conn)))

    async def _in_write(self, op: TxOp[T]) -> T:
        return await self._write(lambda conn: op(PgTx(conn)))

    async def _lock_match(self, tx: Tx, match_id: int) -> None:
        # Released at COMMIT or ROLLBACK: a pooled connection never carries it further.
        await tx.execute("SELECT pg_advisory_xact_lock(?)", (match_id,))

    async def _forget_updates(self, tx: Tx, before: float) -> int:
        # The webhook workers' kept answers go with the update ids they answered.
        await tx.execute("DELETE FROM update_answers WHERE answered_at < ?", (before,))
        return await super()._forget_updates(tx, before)

    # Lifecycle --------------------------------------------------------------------------

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True  # refuse new calls; those under way finish first
        for task in self._listeners:
            task.cancel()
        while self._calls:
            await asyncio.wait(set(self._calls))
        if self._lock_pool is not None:
            await self._lock_pool.close()
        if self._owner_conn is not None:
            with contextlib.suppress(Exception):
                await self._owner_conn.close()
        await self._pool.close()

    async def listen(self, on_change: Callable[[int], None],
                     on_revoke: Callable[[int], None] | None = None) -> bool:
        """``LISTEN`` on :data:`NOTIFY_CHANNEL` (and :data:`ENGINE_CHANNEL` for
        ``on_revoke``) on a connection of its own (not the pool's: it stays subscribed), in
        a task until :meth:`close`. Every change of a match, and every revoked token, is
        ``NOTIFY``-ed in the transaction that stores it, so it arrives after the commit and
        only then. A lost connection is made again a second later; what happened meanwhile
        reaches the readers by their own re-reading (they never trust news alone)."""
        if self._closed:
            raise StorageError("the store is closed")
        task = asyncio.create_task(self._listen(on_change, on_revoke), name="krendzu LISTEN")
        self._listeners.add(task)
        task.add_done_callback(self._listeners.discard)
        ready = self._listening = asyncio.get_running_loop().create_future()
        await asyncio.wait({task, ready}, timeout=CONNECT_TIMEOUT,
                           return_when=asyncio.FIRST_COMPLETED)
        return True

    async def _listen(self, on_change: Callable[[int], None],
                      on_revoke: Callable[[int], None] | None) -> None:
        while not self._closed:
            try:
                conn = await AsyncConnection.connect(
                    self._url, autocommit=True, connect_timeout=int(CONNECT_TIMEOUT))
                async with conn:
                    await conn.execute(f"LISTEN {NOTIFY_CHANNEL}")
                    if on_revoke is not None:
                        await conn.execute(f"LISTEN {ENGINE_CHANNEL}")
                    if self._listening is not None and not self._listening.done():
                        self._listening.set_result(None)
                    async for note in conn.notifies():
                        if not note.payload.isdigit():
                            continue
                        if note.channel == ENGINE_CHANNEL:
                            if on_revoke is not None:
                                on_revoke(int(note.payload))
                        else:
                            on_change(int(note.payload))
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("LISTEN %s: the connection failed; again in a second",
                            NOTIFY_CHANNEL, exc_info=True)
            await asyncio.sleep(1.0)

    # The chats' flow locks (across processes) ------------------------------------------------

    @contextlib.asynccontextmanager
    async def hold_chat(self, chat_id: int, thread_id: int | None) -> AsyncIterator[None]:
        """The chat's (or forum topic's) lock for every process of the bot, held for the
        ``async with`` block: :class:`chat.flow.locks.SharedLocks` takes it for the flow's
        critical sections (a timeout counted and its stand-in's move made, say), so that a
        move handled by another process cannot come in between.

        It is ``pg_advisory_xact_lock`` in a transaction of a connection of its own, open
        for the block and ended after it, never a session-level lock (a pooled connection
        would carry that to its next borrower). A killed process's connection closes, and
        the server ends its transaction and the lock with it. The block's own reads and
        writes go through the store's pool as usual."""
        if self._closed:
            raise StorageError("the store is closed")
        pool = await self._locks_pool()
        async with pool.connection() as conn, conn.transaction():
            # set_config(..., true) is SET LOCAL: for this transaction only (no session
            # state, so a transaction-mode pgbouncer may sit in between).
            await conn.execute(
                "SELECT set_config('idle_in_transaction_session_timeout', %s, true), "
                "pg_advisory_xact_lock(%s, hashtext(%s))",
                (str(LOCK_IDLE_MS), CHAT_LOCKS, f"{chat_id}:{thread_id or 0}"))
            yield

    async def _locks_pool(self) -> AsyncConnectionPool[Conn]:
        async with self._lock_pool_made:
            if self._lock_pool is not None:
                return self._lock_pool
            pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
                self._url, min_size=1, max_size=LOCK_POOL_MAX, kwargs=self._kwargs,
                connection_class=AsyncConnection[DictRow], timeout=CONNECT_TIMEOUT,
                open=False, name="krendzu-locks")
            await pool.open(wait=True, timeout=CONNECT_TIMEOUT)
            self._lock_pool = pool
            return pool

    # Chats and users --------------------------------------------------------------------

    # Matches ----------------------------------------------------------------------------

    async def create_match(self, chat_id: int, settings: Settings, seats: Sequence[SeatSpec],
                           *, thread_id: int | None = None, seed: int | None = None,
                           board_message_id: int | None = None,
                           lobby_id: int | None = None) -> StoredMatch:
        if seed is None:
            seed = secrets.randbelow(MAX_SEED)
        check_new_match(seed, thread_id)
        seat_rows = new_seats(seats)
        game = Match([s.label for s in seat_rows], settings, seed=seed)  # validates them
        now = self._clock()

        async def work(conn: Conn) -> StoredMatch:
            await conn.execute(
                "INSERT INTO chats (chat_id, created_at, updated_at) VALUES (%s, %s, %s) "
                "ON CONFLICT (chat_id) DO NOTHING", (chat_id, now, now))
            humans = [s.user_id for s in seat_rows if s.user_id is not None]
            if humans:
                cur = await conn.execute(
                    "SELECT user_id FROM users WHERE user_id = ANY(%s)", (humans,))
                found = {r["user_id"] for r in await cur.fetchall()}
                missing = [u for u in humans if u not in found]
                if missing:
                    raise NotFound(f"users {missing} are not stored: upsert_user first")
            busy = await self._one(
                conn, "SELECT match_id FROM matches WHERE chat_id = %s AND thread_id = %s "
                "AND status = 'active'", (chat_id, thread_id or 0))
            if busy is not None:
                raise ActiveMatchExists(
                    f"chat {chat_id} topic {thread_id} already plays match {busy['match_id']}")
            try:
                inserted = await self._one(conn, """
                    INSERT INTO matches (chat_id, thread_id, table_kind, settings, seed,
                                         status, board_message_id, created_at)
                    VALUES (%s, %s, %s, %s, %s, 'active', %s, %s) RETURNING match_id""",
                    (chat_id, thread_id or 0, settings.table.value,
                     json.dumps(settings_json(settings)), seed, board_message_id, now))
            except errors.UniqueViolation as exc:  # another process started one meanwhile
                raise ActiveMatchExists(f"chat {chat_id} topic {thread_id} already plays "
                                        "a match") from exc
            assert inserted is not None
            match_id = int(inserted["match_id"])
            if lobby_id is not None:
                started = await conn.execute(
                    "UPDATE lobbies SET status = 'started', match_id = %s, updated_at = %s "
                    "WHERE lobby_id = %s AND status = 'open'", (match_id, now, lobby_id))
                if not started.rowcount:
                    raise NotFound(f"no open lobby {lobby_id}")
            async with conn.cursor() as cur:
                await cur.executemany(
                    "INSERT INTO seats (match_id, seat, kind, user_id, level, label) "
                    "VALUES (%s, %s, %s, %s, %s, %s)",
                    [(match_id, s.seat, s.kind.value, s.user_id, s.level, s.label)
                     for s in seat_rows])
            await notify(conn, match_id)
            if (self.after_computer is not None
                    and seat_rows[game.current_player].kind is SeatKind.COMPUTER):
                await self.after_computer(conn, match_id, 1)  # commits with the match
            row = MatchRow(match_id=match_id, chat_id=chat_id, thread_id=thread_id,
                           settings=settings, seed=seed, status=MatchStatus.ACTIVE,
                           seats=seat_rows, move_count=0, board_message_id=board_message_id,
                           created_at=at(now), finished_at=None, totals=None)
            return StoredMatch(row, (), game)

        return await self._write(work)

    async def load_match(self, match_id: int) -> StoredMatch:
        # One statement (one snapshot, one round trip): the row and its log as arrays.
        def split(r: Row) -> tuple[MatchRow, list[MoveRow]]:
            log = zip(r["log_seq"] or [], r["log_action"] or [], r["log_update"] or [],
                      r["log_at"] or [], strict=True)
            return match_row(r), [MoveRow(match_id, seq, action, update, at(created))
                                   for seq, action, update, created in log]

        rows = await self._select(
            f"SELECT {POSTGRES.match_columns()}, log.* FROM matches m, LATERAL ("
            "SELECT array_agg(seq ORDER BY seq) AS log_seq, "
            "array_agg(action ORDER BY seq) AS log_action, "
            "array_agg(update_id ORDER BY seq) AS log_update, "
            "array_agg(created_at ORDER BY seq) AS log_at "
            "FROM moves WHERE moves.match_id = m.match_id) AS log "
            "WHERE m.match_id = %s", (match_id,), split)
        if not rows:
            raise NotFound(f"no match {match_id}")
        row, moves = rows[0]
        game = rebuild_game(row, [m.action for m in moves])
        return StoredMatch(row, tuple(moves), game)

    async def match_head(self, match_id: int) -> tuple[MatchRow, int]:
        # The row's move count is the last stored move's number (the log has no gaps), and
        # both come from one statement, so they agree.
        row = await self.get_match(match_id)
        return row, row.move_count

    async def append_move(self, match_id: int, expected_seq: int, action: PlayerAction | str,
                          *, update_id: int | None = None,
                          final: Match | None = None) -> MoveRow:
        return (await self.append_moves(match_id, [(expected_seq, action)],
                                        update_id=update_id, final=final))[0]

    #: One transaction stores every step of a move (:meth:`append_moves`).
    appends_atomically = True

    async def append_moves(self, match_id: int,
                           moves: Sequence[tuple[int, PlayerAction | str]], *,
                           update_id: int | None = None,
                           final: Match | None = None) -> list[MoveRow]:
        """:meth:`append_move` for the steps of one move (a card and "end" typed together)
        in one transaction: all of them are stored, or none (a process killed in between
        would otherwise leave the turn half made, and the update that made it recorded)."""
        texts = move_steps(moves, final)
        if not texts:
            return []
        now = self._clock()

        async def work(conn: Conn) -> list[MoveRow]:
            # Writers of this match, in any process, queue here until COMMIT or ROLLBACK;
            # the statements after it see everything they committed.
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (match_id,))
            if update_id is not None:
                await self._remember_update(PgTx(conn), update_id, now)
            # The NOTIFY for the engine streams rides on this read (no round trip of its
            # own): it is delivered at COMMIT only, so a refused move notifies nobody.
            first = texts[0][0]
            r = await self._one(
                conn, "SELECT status, (SELECT COALESCE(MAX(seq), 0) FROM moves "
                "WHERE match_id = %s) AS last_seq, pg_notify(%s, %s) FROM matches "
                "WHERE match_id = %s", (match_id, NOTIFY_CHANNEL, str(match_id), match_id))
            if r is None:
                raise NotFound(f"no match {match_id}")
            if r["status"] != MatchStatus.ACTIVE:
                raise MatchClosed(f"match {match_id} is {r['status']}")
            if r["last_seq"] + 1 != first:
                raise SequenceConflict(match_id, first, r["last_seq"] + 1)
            rows: list[MoveRow] = []
            for i, (seq, text) in enumerate(texts):
                mark = update_id if i == 0 else None
                try:
                    await conn.execute(
                        "INSERT INTO moves (match_id, seq, action, update_id, created_at) "
                        "VALUES (%s, %s, %s, %s, %s)", (match_id, seq, text, mark, now))
                except errors.UniqueViolation as exc:  # a writer that skipped the lock won
                    raise SequenceConflict(match_id, seq, seq + 1) from exc
                rows.append(MoveRow(match_id, seq, text, mark, at(now)))
            if final is not None:
                await self._close_finished(conn, match_id, final, now)
            if self.after_append is not None:  # commits with the moves, or not at all
                await self.after_append(conn, match_id, texts[-1][0])
            return rows

        return await self._write(work)

    async def wait_for_writers(self, match_id: int) -> None:
        """Return once every write of the match under way (holding its advisory lock) has
        committed or rolled back. The scaled mode's announcement job starts with it: a move
        whose job was refused because this job was still queued (its queueing lock) is then
        visible to it, never left unannounced."""

        async def work(conn: Conn) -> None:
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (match_id,))

        await self._write(work)

    async def _close_finished(self, conn: Conn, match_id: int, game: Match, now: float) -> None:
        """Final status, totals and per-user statistics (the engine's figures, added up):
        inside the caller's transaction."""
        row = await self._get_match(PgTx(conn), match_id)
        if tuple(row.labels) != game.players:
            raise ValueError(f"that game is not match {match_id} (players differ)")
        cur = await conn.execute(
            "SELECT seat FROM stand_ins WHERE match_id = %s AND resigned", (match_id,))
        resigned = {r["seat"] for r in await cur.fetchall()}
        gained = seat_statistics(game, match_outcome(game, resigned))
        await conn.execute(
            "UPDATE matches SET status = 'finished', finished_at = %s, totals = %s "
            "WHERE match_id = %s AND status = 'active'",
            (now, json.dumps(list(game.totals())), match_id))
        params = [stats_params(seat.user_id, row.chat_id, gained[seat.seat])
                  for seat in row.seats if seat.user_id is not None]
        if params:
            async with conn.cursor() as c:
                await c.executemany(format_style(POSTGRES.add_stats()), params)

    async def abandon_match(self, match_id: int) -> bool:
        now = self._clock()

        async def work(conn: Conn) -> bool:
            cur = await conn.execute(
                "UPDATE matches SET status = 'abandoned', finished_at = %s "
                "WHERE match_id = %s AND status = 'active'", (now, match_id))
            if cur.rowcount:
                await notify(conn, match_id)
                return True
            if await self._one(conn, "SELECT 1 FROM matches WHERE match_id = %s", (match_id,)):
                return False
            raise NotFound(f"no match {match_id}")

        return await self._write(work)

    async def concede_match(self, match_id: int, seat: int) -> bool:
        now = self._clock()

        async def work(conn: Conn) -> bool:
            row = await self._get_match(PgTx(conn), match_id)
            cur = await conn.execute(
                "UPDATE matches SET status = 'abandoned', finished_at = %s, conceded_by = %s "
                "WHERE match_id = %s AND status = 'active'", (now, seat, match_id))
            if not cur.rowcount:
                return False
            # The engine's outcome of a concession: the conceding side loses, the rest win.
            outcome = Outcome.of_totals(row.table, [0] * row.table.players, conceded=seat)
            params = [(s.user_id, row.chat_id, int(outcome.won(s.seat)))
                      for s in row.seats if s.user_id is not None]
            if params:
                async with conn.cursor() as c:
                    await c.executemany(
                        "INSERT INTO user_stats (user_id, chat_id, matches, wins) "
                        "VALUES (%s, %s, 1, %s) ON CONFLICT (user_id, chat_id) DO UPDATE SET "
                        "matches = user_stats.matches + 1, "
                        "wins = user_stats.wins + excluded.wins", params)
            await notify(conn, match_id)
            return True

        return await self._write(work)

    async def set_board_message(self, match_id: int, message_id: int | None,
                                caption: str | None = None) -> int | None:
        async def work(conn: Conn) -> int | None:
            old = await self._one(
                conn, "SELECT board_message_id FROM matches WHERE match_id = %s FOR UPDATE",
                (match_id,))
            if old is None:
                raise NotFound(f"no match {match_id}")
            await conn.execute(
                "UPDATE matches SET board_message_id = %s, board_caption = %s "
                "WHERE match_id = %s", (message_id, caption, match_id))
            previous: int | None = old["board_message_id"]
            return previous

        return await self._write(work)

    @staticmethod
    async def note_told_on(conn: Conn, match_id: int, key: str, seq: int = 0) -> None:
        """:meth:`note_told` inside ``conn``'s transaction (a move's, for what it says
        about its announcement: :func:`chat.notices.then_key`)."""
        await conn.execute(format_style(POSTGRES.note_told()), (match_id, key, seq))

    # Ratings and history ----------------------------------------------------------------

    # Turn timers and absent players ------------------------------------------------------

    async def arm_timer(self, match_id: int, seq: int | None, deadline: float | None) -> None:
        hook = self.after_arm

        async def work(conn: Conn) -> None:
            row = await self._one(
                conn, "UPDATE turn_timers SET seq = %s, deadline = %s, reminded = FALSE "
                "WHERE match_id = %s RETURNING seconds", (seq, deadline, match_id))
            if hook is not None and row is not None and seq is not None \
                    and deadline is not None:
                await hook(conn, match_id, seq, deadline, int(row["seconds"]))

        await self._write(work)

    async def set_stand_in(self, match_id: int, seat: int, *, timeouts: int,
                           computer: bool, resigned: bool = False,
                           update_id: int | None = None) -> None:
        hook = self.after_computer if computer else None
        now = self._clock()

        async def work(conn: Conn) -> None:
            if update_id is not None:
                await self._remember_update(PgTx(conn), update_id, now)
            await conn.execute(
                "INSERT INTO stand_ins (match_id, seat, timeouts, computer, resigned) "
                "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (match_id, seat) DO UPDATE SET "
                "timeouts = excluded.timeouts, computer = excluded.computer, "
                "resigned = stand_ins.resigned OR excluded.resigned",
                (match_id, seat, max(0, timeouts), bool(computer), bool(resigned)))
            if hook is not None:  # the seat may be the one to move: its job commits too
                last = await self._one(conn, "SELECT COALESCE(MAX(seq), 0) AS seq FROM moves "
                                       "WHERE match_id = %s", (match_id,))
                await hook(conn, match_id, int(last["seq"] if last else 0) + 1)

        await self._write(work)

    async def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        now = self._clock()
        columns = ", ".join(("matches", "best_tour", *STATS_SUMS))

        async def work(conn: Conn) -> None:
            await conn.execute(
                "INSERT INTO chats (chat_id, language, default_settings, created_at, "
                "updated_at, tidy, title) SELECT %s, language, default_settings, created_at, "
                "%s, tidy, title FROM chats WHERE chat_id = %s "
                "ON CONFLICT (chat_id) DO NOTHING", (new_chat_id, now, old_chat_id))
            for table in ("matches", "lobbies"):
                await conn.execute(f"UPDATE {table} SET chat_id = %s WHERE chat_id = %s",
                                   (new_chat_id, old_chat_id))
            await conn.execute(
                f"INSERT INTO user_stats (user_id, chat_id, {columns}) SELECT user_id, %s, "
                f"{columns} FROM user_stats WHERE chat_id = %s ON CONFLICT DO NOTHING",
                (new_chat_id, old_chat_id))
            await conn.execute("DELETE FROM user_stats WHERE chat_id = %s", (old_chat_id,))

        await self._write(work)

    # Lobbies ----------------------------------------------------------------------------

    # Statistics -------------------------------------------------------------------------

    # The update ledger ------------------------------------------------------------------

    # Outside engines (issue 31) -----------------------------------------------------------

    async def create_engine(self, owner_id: int, name: str, token_hash: str) -> EngineRow:
        now = self._clock()

        async def work(conn: Conn) -> EngineRow:
            if await self._one(conn, "SELECT 1 FROM engines WHERE name_key = %s",
                               (name_key(name),)) is not None:
                raise EngineExists(f"an engine is called {name!r} already")
            try:
                made = await self._one(
                    conn, "INSERT INTO engines (owner_id, name, name_key, token_hash, "
                    "created_at) VALUES (%s, %s, %s, %s, %s) RETURNING engine_id",
                    (owner_id, name, name_key(name), token_hash, now))
            except errors.UniqueViolation as exc:  # another process took the name meanwhile
                raise EngineExists(f"an engine is called {name!r} already") from exc
            assert made is not None
            engine_id = int(made["engine_id"])
            display = engine_display_name(name)
            await conn.execute(
                "INSERT INTO users (user_id, display_name, can_write_privately, created_at, "
                "updated_at, name_key) VALUES (%s, %s, FALSE, %s, %s, %s) "
                "ON CONFLICT (user_id) DO UPDATE SET display_name = excluded.display_name, "
                "name_key = excluded.name_key",
                (engine_user_id(engine_id), display, now, now, name_key(display)))
            row = await self._one(
                conn, f"SELECT {ENGINE_COLUMNS} FROM engines WHERE engine_id = %s",
                (engine_id,))
            assert row is not None
            return engine_row(row)

        return await self._write(work)

    async def update_engine(self, engine_id: int, *, token_hash: str | None = None,
                            visibility: Visibility | None = None,
                            max_matches: int | None = None) -> EngineRow:
        async def work(conn: Conn) -> EngineRow:
            if token_hash is not None:  # the old token's streams close, in every process
                await conn.execute("SELECT pg_notify(%s, %s)",
                                   (ENGINE_CHANNEL, str(engine_id)))
            await conn.execute(
                "UPDATE engines SET token_hash = COALESCE(%s, token_hash), "
                "visibility = COALESCE(%s, visibility), "
                "max_matches = COALESCE(%s, max_matches) WHERE engine_id = %s",
                (token_hash, None if visibility is None else str(visibility), max_matches,
                 engine_id))
            row = await self._one(
                conn, f"SELECT {ENGINE_COLUMNS} FROM engines WHERE engine_id = %s",
                (engine_id,))
            if row is None:
                raise NotFound(f"engine {engine_id}")
            return engine_row(row)

        return await self._write(work)

    async def delete_engine(self, engine_id: int) -> bool:
        async def work(conn: Conn) -> bool:
            # Its token's streams close, in every process (delivered at COMMIT).
            await conn.execute("SELECT pg_notify(%s, %s)", (ENGINE_CHANNEL, str(engine_id)))
            cur = await conn.execute("DELETE FROM engines WHERE engine_id = %s", (engine_id,))
            return cur.rowcount > 0

        return await self._write(work)

    # Administration and inspection ------------------------------------------------------

    async def schema_version(self) -> int:
        return await self._guard(current_version)

    async def backup(self, dest: str) -> None:
        """``pg_dump`` in its custom format (restore with ``pg_restore``): one snapshot of
        the whole database, taken while the bot keeps writing; renamed into place whole."""
        dest = os.fspath(dest)
        partial = f"{dest}.partial"
        conninfo, env = _secret_free(self._url)
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # deal seeds
        os.close(fd)
        proc = await asyncio.create_subprocess_exec(
            pg_tool("pg_dump"), "--format=custom", "--no-owner", "--file", partial,
            "--dbname", conninfo, env={**os.environ, **env},
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        _, err = await proc.communicate()
        if proc.returncode != 0:
            with contextlib.suppress(FileNotFoundError):
                os.remove(partial)
            raise StorageError(f"pg_dump failed: {err.decode(errors='replace').strip()}")
        os.replace(partial, dest)

    async def mark_update(self, update_id: int) -> bool:
        now = self._clock()

        async def work(conn: Conn) -> bool:
            await conn.execute("DELETE FROM update_failures WHERE update_id = %s",
                               (update_id,))
            await self._remember_update(PgTx(conn), update_id, now)
            return True

        try:
            return await self._write(work)
        except DuplicateUpdate:
            return False

    async def update_state(self, update_id: int) -> tuple[bool, int | None]:
        rows = await self._select(
            "SELECT EXISTS (SELECT 1 FROM processed_updates WHERE update_id = %(u)s) AS seen, "
            "COALESCE((SELECT failures FROM update_failures WHERE update_id = %(u)s), 0) "
            "AS failures", {"u": update_id}, lambda r: (bool(r["seen"]), int(r["failures"])))
        return rows[0]

    async def count_update_failure(self, update_id: int) -> int | None:
        now = self._clock()

        async def work(conn: Conn) -> int:
            row = await self._one(
                conn, "INSERT INTO update_failures AS f (update_id, failures, failed_at) "
                "VALUES (%s, 1, %s) ON CONFLICT (update_id) DO UPDATE SET "
                "failures = f.failures + 1, failed_at = excluded.failed_at "
                "RETURNING f.failures", (update_id, now))
            assert row is not None
            if self._inserts_since_prune == 0:  # now and then, with the ledger's pruning
                await conn.execute("DELETE FROM update_failures WHERE failed_at < %s",
                                   (now - self._update_ttl,))
            return int(row["failures"])

        return await self._write(work)

    # The webhook workers' reply outbox (chat/outbox.py) --------------------------------------

    async def claim_reply_owner(self) -> int:
        """A number no live process uses, held as this process's until it dies: the
        advisory lock (:data:`REPLY_OWNERS`, number) taken in a transaction left open on a
        connection of its own. A killed process's connection closes and the server ends
        the transaction and the lock with it, so :meth:`take_orphan_replies` knows at once
        that its replies are nobody's. A transaction, not a session lock, so that a
        transaction-mode pgbouncer in between keeps the lock with this client (it drops a
        server connection whose client left in a transaction)."""
        if self._closed:
            raise StorageError("the store is closed")
        conn = await AsyncConnection.connect(self._url, autocommit=True,
                                             connect_timeout=int(CONNECT_TIMEOUT))
        try:
            await conn.execute("BEGIN")
            # Left idle in this transaction for the process's life: never ended by the
            # server's idle timeout (it takes no snapshot and no transaction id).
            await conn.execute("SET LOCAL idle_in_transaction_session_timeout = 0")
            while True:
                owner = secrets.randbelow(2**31 - 1) + 1
                cur = await conn.execute("SELECT pg_try_advisory_xact_lock(%s, %s)",
                                         (REPLY_OWNERS, owner))
                row = await cur.fetchone()
                if row is not None and row[0]:
                    break
        except BaseException:
            await conn.close()
            raise
        old, self._owner_conn = self._owner_conn, conn
        if old is not None:
            with contextlib.suppress(Exception):
                await old.close()
        return owner

    async def holds_reply_owner(self) -> bool:
        """Whether the lock of :meth:`claim_reply_owner` is still held (its connection
        answers): after a lost connection (the server restarted, the network) the other
        workers take this process's replies, and it must claim a new number."""
        conn = self._owner_conn
        if conn is None or conn.closed:
            return False
        try:
            await conn.execute("SELECT 1")
        except Exception:
            return False
        return True

    async def answer_update(self, update_id: int, owner: int,
                            notices: Sequence[bytes]) -> list[int]:
        """The update is done: remembered in the ledger (as :meth:`mark_update`; already
        there when its change stored it) and what it told (``notices``) kept in the reply
        outbox under ``owner``, in one transaction, before the update is answered 200.
        The rows' ids, in the order of ``notices``."""
        now = self._clock()

        async def work(conn: Conn) -> list[int]:
            await conn.execute("DELETE FROM update_failures WHERE update_id = %s",
                               (update_id,))
            with contextlib.suppress(DuplicateUpdate):  # ON CONFLICT: no error, no abort
                await self._remember_update(PgTx(conn), update_id, now)
            await conn.execute(
                "INSERT INTO update_answers (update_id, answered_at) VALUES (%s, %s) "
                "ON CONFLICT (update_id) DO NOTHING", (update_id, now))
            if not notices:
                return []
            cur = await conn.execute(
                "INSERT INTO reply_outbox (update_id, owner, notice, created_at) "
                "SELECT %s, %s, n, %s FROM unnest(%s::bytea[]) WITH ORDINALITY AS t(n, i) "
                "ORDER BY i RETURNING reply_id", (update_id, owner, now, list(notices)))
            return sorted(int(r["reply_id"]) for r in await cur.fetchall())

        return await self._write(work)

    async def update_answered(self, update_id: int) -> bool:
        """Whether the update was answered with its replies stored (:meth:`answer_update`),
        rather than only remembered by the change it made."""
        return bool(await self._select(
            "SELECT 1 AS answered FROM update_answers WHERE update_id = %s", (update_id,),
            lambda r: r))

    async def take_orphan_replies(self, owner: int) -> list[tuple[int, int, bytes]]:
        """The outbox rows of workers that died (their lock is free), now ``owner``'s:
        ``(reply id, update id, notice)`` in the order they were stored. Two workers
        looking at once take each dead worker's rows once (the lock, tried inside this
        transaction, is held by one of them until it commits)."""

        async def work(conn: Conn) -> list[tuple[int, int, bytes]]:
            cur = await conn.execute(
                "SELECT DISTINCT owner FROM reply_outbox WHERE owner <> %s", (owner,))
            others = [int(r["owner"]) for r in await cur.fetchall()]
            taken: list[tuple[int, int, bytes]] = []
            for other in others:
                row = await self._one(conn, "SELECT pg_try_advisory_xact_lock(%s, %s) AS free",
                                      (REPLY_OWNERS, other))
                if row is None or not row["free"]:
                    continue  # alive (or another worker is taking its rows just now)
                cur = await conn.execute(
                    "UPDATE reply_outbox SET owner = %s WHERE owner = %s "
                    "RETURNING reply_id, update_id, notice", (owner, other))
                taken += [(int(r["reply_id"]), int(r["update_id"]), bytes(r["notice"]))
                          for r in await cur.fetchall()]
            return sorted(taken)

        return await self._write(work)

    async def drop_replies(self, reply_ids: Sequence[int]) -> int:
        """Delivered (or refused by Telegram for good): out of the outbox."""
        if not reply_ids:
            return 0
        return await self._change("DELETE FROM reply_outbox WHERE reply_id = ANY(%s)",
                                  (list(reply_ids),))


__all__ = ["LATEST", "PostgresStore", "current_version", "migrate", "pg_tool"]
