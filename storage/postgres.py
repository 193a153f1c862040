"""The PostgreSQL backend (psycopg 3, async, with a pool): the one source of truth of the
scaled mode, where any number of processes serve the same matches.

Every call borrows a connection from a :class:`psycopg_pool.AsyncConnectionPool` (in
autocommit mode) and goes through one of three wrappers, as in ``storage.sqlite``:
:meth:`PostgresStore._select` (one query, one statement's snapshot), :meth:`_read` (several
queries in one ``REPEATABLE READ READ ONLY`` transaction, so they agree) and :meth:`_write`
(one ``READ COMMITTED`` transaction; :meth:`_change` is its one-statement form). Rows come
back as dicts and every row type is built from named columns. No group commit is needed:
each call has its own connection and PostgreSQL groups concurrent commits itself.

The SQL of the store's methods is not here: it is written once for both backends
(:class:`storage.store.Store`), and this module is its driver. It gives the shared code
the connector's four ways in over those wrappers (:class:`PgTx` translates SQLite's
parameter style to psycopg's) and the hooks where PostgreSQL does more in the same
transaction: the match's advisory lock, ``NOTIFY``, the scaled mode's jobs. What only
PostgreSQL has stays here: ``LISTEN``, the chats' flow locks, ``pg_dump``, the update
failures and the webhook workers' reply outbox.

A task that holds a chat's lock (:meth:`PostgresStore.hold_chat`) makes its calls of the
store in the lock's own transaction, each in a savepoint, committed with the lock at the end
of its block: one transaction for the lock and what the flow reads and writes under it.

One match is served by any process, so its writes are serialised in the database:
``append_move`` takes ``pg_advisory_xact_lock(match_id)`` (the ``_lock_match`` hook) inside
its transaction (released at COMMIT or ROLLBACK, so a pooled connection can never carry it
to the next borrower, as a session-level lock would), then checks the status and the next
sequence number. The primary key ``(match_id, seq)`` stays the real guarantee: a writer that
bypassed the lock and won makes the insert fail with a unique violation, reported as the same
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
import logging
import os
import secrets
import shutil
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import psycopg
from psycopg import AsyncConnection, errors
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

from storage import queries as q
from storage.base import (
    DuplicateUpdate,
    MatchRow,
    MoveRow,
    NotFound,
    StorageError,
)
from storage.common import (
    UPDATE_TTL_SECONDS,
    consume_exception,
)
from storage.connector import Params, Tx, UniqueViolation, format_style
from storage.migrations import Migration, Plan, require_latest
from storage.pg_held import (
    HELD,
    SNAPSHOT,
    Held,
    holding,
    in_transaction,
    rowcount_of,
    rows_of,
    run_held,
)
from storage.pg_ledger import UPDATE_STATE, answer_in, ledger_state
from storage.pg_migrations import LATEST, MIGRATIONS, VERSION_TABLE
from storage.pg_reads import (
    MATCH_AND_MOVES,
    AnnounceReads,
    match_and_log,
    read_for_announcement,
)
from storage.pg_windows import FloodWindows
from storage.queries import POSTGRES
from storage.store import Store, TxOp
from storage.store_core import Also

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")
Conn = AsyncConnection[DictRow]
Row = dict[str, Any]
#: One unit of work on a borrowed connection (inside the transaction the wrapper opened).
Op = Callable[[Conn], Awaitable[T]]
#: Called inside the transaction that stored move ``seq`` of a match, before its COMMIT
#: (:attr:`PostgresStore.after_append`): whatever it writes commits or rolls back with the
#: move. The scaled mode defers the match's announcement job there (chat/jobs/core.py).
AfterAppend = Callable[[Conn, int, int], Awaitable[None]]
#: Called inside the transaction that armed a match's turn timer for move ``seq`` with a
#: ``deadline`` (epoch seconds) and the timer's ``seconds`` (:attr:`PostgresStore.after_arm`).
AfterArm = Callable[[Conn, int, int, float, int], Awaitable[None]]
#: Called inside a transaction after which a computer may be the one to make move ``seq``
#: of a match, though no move was stored (:attr:`PostgresStore.after_computer`): a match
#: that starts with a computer to move, a seat handed to the computer. The scaled mode
#: defers the computer's job there, so a process killed right after loses no turn.
AfterComputer = Callable[[Conn, int, int], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class JobHooks:
    """What the scaled mode does inside a change's own transaction (chat/jobs/core.py
    :func:`~chat.jobs.core.job_hooks`), given to the store when it is opened: the one way
    a store is built for the scaled mode, never switched on afterwards."""

    after_append: AfterAppend | None = None
    after_arm: AfterArm | None = None
    after_computer: AfterComputer | None = None

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
    """Apply the steps :class:`Plan` names up to ``target`` (default: the newest), one
    transaction each, under the advisory lock :data:`MIGRATION_LOCK` (so processes starting
    together apply every step once). Returns the final version."""
    plan = Plan(migrations, target)
    while True:
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            version = await current_version(conn)
            step = plan.after(version)
            if step is None:
                return version  # nothing was written
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


def _conn(tx: Tx) -> Conn:
    """The connection under a transaction of this store (the jobs' hooks write on it)."""
    assert isinstance(tx, PgTx)
    return tx.conn


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


class PostgresStore(Store):
    """:class:`storage.Store` on a PostgreSQL database (a pool of connections)."""

    def __init__(self, pool: AsyncConnectionPool[Conn], *,
                 clock: Callable[[], float] = time.time,
                 update_ttl: float = UPDATE_TTL_SECONDS, url: str = "",
                 kwargs: dict[str, Any] | None = None, hooks: JobHooks | None = None) -> None:
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
        #: The scaled mode's (``hooks``, chat/jobs/core.py); ``None``: nothing more to do.
        hooks = hooks or JobHooks()
        self.after_append: AfterAppend | None = hooks.after_append
        self.after_arm: AfterArm | None = hooks.after_arm
        self.after_computer: AfterComputer | None = hooks.after_computer
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
        hooks: JobHooks | None = None,
    ) -> PostgresStore:
        """Connect, migrate to the newest schema (refusing a newer one) and return a store.
        With ``prepare`` a statement run :data:`PREPARE_AFTER` times on a connection is
        prepared there (parsed and planned once); off behind an old transaction-mode pgbouncer.
        ``hooks``: the scaled mode's jobs, deferred in the changes' own transactions.

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
                require_latest(await current_version(conn), LATEST, "the database")
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
        return cls(pool, clock=clock, update_ttl=update_ttl, url=url, kwargs=kwargs,
                   hooks=hooks)

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
        return await self._guard(rows_of(sql, params, map_row))

    async def _read(self, op: Op[T]) -> T:
        """Several queries that must agree: one read-only snapshot transaction."""
        return await self._guard(in_transaction(op, SNAPSHOT))

    async def _write(self, op: Op[T]) -> T:
        """One write transaction (READ COMMITTED), committed before this returns; any
        exception rolls all of it back."""
        return await self._guard(in_transaction(op))

    async def _change(self, sql: str, params: Sequence[Any] | Mapping[str, Any]) -> int:
        """One statement as one write; how many rows it changed."""
        return await self._guard(rowcount_of(sql, params))

    @staticmethod
    async def _one(conn: Conn, sql: str,
                   params: Sequence[Any] | Mapping[str, Any] = ()) -> Row | None:
        cur = await conn.execute(sql, params)
        return await cur.fetchone()

    async def _in_lock(self, work: Callable[[Conn], Awaitable[T]]) -> T:
        """Run ``work`` as the store's calls run, and in the transaction of the chat's lock
        when this task holds one (:meth:`hold_chat`, :func:`storage.pg_held.run_held`)."""
        held = holding(self)
        if held is None:
            return await self._guard(work)
        if self._closed:
            raise StorageError("the store is closed")
        try:
            return await run_held(held, work, self._calls)
        except psycopg.Error as exc:
            raise StorageError(f"{type(exc).__name__}: {exc.diag.message_primary or exc}"
                               ) from exc

    # The connector (storage.store.Store's four ways in, and its hooks) ---------------------

    dialect = POSTGRES

    async def _query(self, sql: str, params: Params, map_row: Callable[[Row], R]) -> list[R]:
        return await self._in_lock(rows_of(format_style(sql), params, map_row))

    async def _modify(self, sql: str, params: Params) -> int:
        return await self._in_lock(rowcount_of(format_style(sql), params))

    async def _in_read(self, op: TxOp[T]) -> T:
        return await self._in_lock(in_transaction(lambda conn: op(PgTx(conn)), SNAPSHOT))

    async def _in_write(self, op: TxOp[T]) -> T:
        return await self._in_lock(in_transaction(lambda conn: op(PgTx(conn))))

    async def _lock_match(self, tx: Tx, match_id: int) -> None:
        # Released at COMMIT or ROLLBACK: a pooled connection never carries it further.
        await tx.execute("SELECT pg_advisory_xact_lock(?)", (match_id,))

    def _notify_column(self, match_id: int) -> tuple[str, tuple[str, ...]]:
        return ", pg_notify(?, ?) AS notified", (NOTIFY_CHANNEL, str(match_id))

    async def _notify(self, tx: Tx, match_id: int) -> None:
        await tx.execute("SELECT pg_notify(?, ?)", (NOTIFY_CHANNEL, str(match_id)))

    async def _revoke(self, tx: Tx, engine_id: int) -> None:
        await tx.execute("SELECT pg_notify(?, ?)", (ENGINE_CHANNEL, str(engine_id)))

    async def _after_append(self, tx: Tx, match_id: int, seq: int) -> None:
        if self.after_append is not None:
            await self.after_append(_conn(tx), match_id, seq)

    async def _after_arm(self, tx: Tx, match_id: int, seq: int, deadline: float,
                         seconds: int) -> None:
        if self.after_arm is not None:
            await self.after_arm(_conn(tx), match_id, seq, deadline, seconds)

    async def _after_computer(self, tx: Tx, match_id: int, seq: int | None) -> None:
        if self.after_computer is None:
            return
        if seq is None:
            last = await tx.fetchone(q.LAST_SEQ, (match_id,))
            seq = int(last["last"] if last else 0) + 1
        await self.after_computer(_conn(tx), match_id, seq)

    async def _clear_failures(self, tx: Tx, update_id: int) -> None:
        await tx.execute("DELETE FROM update_failures WHERE update_id = ?", (update_id,))

    async def _also(self, tx: Tx, also: Also) -> None:
        await also(_conn(tx))

    async def _match_and_moves(self, match_id: int) -> tuple[MatchRow, list[MoveRow]]:
        # One statement (one snapshot, one round trip): the row and its log as arrays.
        found = await self._in_lock(rows_of(MATCH_AND_MOVES, (match_id,), match_and_log))
        if not found:
            raise NotFound(f"no match {match_id}")
        return found[0]

    async def announce_reads(self, match_id: int) -> AnnounceReads:
        """What an announcement job reads before it tells a match's news (chat/jobs/), once
        every write of the match's moves under way has committed or rolled back: the told
        keys and the marker, the match and its moves, its turn timer and stand-ins, its
        seated people and its chat, in one read-only transaction, pipelined (one round
        trip), where they were nine transactions of their own.

        The transaction first takes the match's advisory lock, which every append of its
        moves holds to its commit (:meth:`_lock_match`), and keeps it to its end: at READ
        COMMITTED each read then sees every move that was being stored, and no move can
        come between the reads, so they agree on the match as one snapshot would."""
        return await self._guard(lambda conn: read_for_announcement(conn, match_id))

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
        ``async with`` block: :class:`chat.flow.base.SharedLocks` takes it for the flow's
        critical sections (a timeout counted and its stand-in's move made, say), so that a
        move handled by another process cannot come in between.

        It is ``pg_advisory_xact_lock`` in a transaction of a connection of its own, open
        for the block and ended after it, never a session-level lock (a pooled connection
        would carry that to its next borrower). A killed process's connection closes, and
        the server ends its transaction and the lock with it.

        The block's own calls of the store run in that transaction too (:mod:`storage.pg_held`)
        and commit with it at the block's end, whatever ended it (each call was whole, as
        when it was a transaction of its own); a killed holder leaves nothing of its block."""
        if self._closed:
            raise StorageError("the store is closed")
        pool = await self._locks_pool()
        failure: BaseException | None = None
        cancelled = False
        async with pool.connection() as conn, conn.transaction():
            # set_config(..., true) is SET LOCAL: for this transaction only (no session
            # state, so a transaction-mode pgbouncer may sit in between).
            await conn.execute(
                "SELECT set_config('idle_in_transaction_session_timeout', %s, true), "
                "pg_advisory_xact_lock(%s, hashtext(%s))",
                (str(LOCK_IDLE_MS), CHAT_LOCKS, f"{chat_id}:{thread_id or 0}"))
            task = asyncio.current_task()
            assert task is not None
            held = Held(self, task, conn)
            token = HELD.set(held)
            try:
                yield
            except GeneratorExit:
                raise
            except BaseException as exc:  # re-raised once committed
                failure = exc
            finally:
                HELD.reset(token)
                cancelled = await held.settle()
            # The webhook's answer of the update, when it may ride here (storage/pg_ledger.py).
            answer = None if failure or cancelled else await answer_in(conn, self._clock())
        if answer is not None:
            answer.written = True
        # Committed whatever ended the block: each of its calls was whole (its own
        # savepoint), as each was once its own transaction.
        if failure is not None:
            raise failure
        if cancelled:
            raise asyncio.CancelledError

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

    async def update_state(self, update_id: int) -> tuple[bool, int | None]:
        [state] = await self._select(format_style(UPDATE_STATE), {"u": update_id}, ledger_state)
        return state

    async def _update_state_in(self, tx: Tx, update_id: int) -> tuple[bool, int | None]:
        return ledger_state(await tx.fetchone(UPDATE_STATE, {"u": update_id}))

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

    async def answer_update(self, update_id: int, owner: int, notices: Sequence[bytes], *,
                            delivered: Sequence[int] = ()) -> list[int]:
        """The update is done: remembered in the ledger (as :meth:`mark_update`; already
        there when its change stored it) and what it told (``notices``) kept in the reply
        outbox under ``owner``, in one transaction, before the update is answered 200.
        The rows' ids, in the order of ``notices``. ``delivered``: rows whose notices are
        out, struck off in the same transaction (as :meth:`drop_replies`, without one of
        its own)."""
        now = self._clock()

        async def work(conn: Conn) -> list[int]:
            if delivered:
                await conn.execute("DELETE FROM reply_outbox WHERE reply_id = ANY(%s)",
                                   (list(delivered),))
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
