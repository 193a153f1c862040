"""The chat's lock's own transaction (:meth:`storage.postgres.PostgresStore.hold_chat`):
while a task holds a chat's lock, the store's calls it makes run on the lock's connection,
in the transaction that holds the lock, each in a savepoint of its own (a failing statement
undoes its call only), and commit with the lock at the end of the block. The lock, the
block's reads and its writes are one transaction where each was one of its own.

Kept apart from the driver, which stays under the package's 800 lines; it imports nothing
of the driver's (the store is only compared by identity here)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar

from psycopg import AsyncConnection
from psycopg.pq import TransactionStatus
from psycopg.rows import DictRow

from storage.common import consume_exception

T = TypeVar("T")
R = TypeVar("R")
Conn = AsyncConnection[DictRow]


class Held:
    """A chat's lock held by a task: the connection whose open transaction holds it, where
    the task's calls of the store run meanwhile."""

    __slots__ = ("calls", "conn", "store", "task", "turn")

    def __init__(self, store: object, task: asyncio.Task[Any], conn: Conn) -> None:
        self.store = store
        self.task = task
        self.conn = conn
        #: One call at a time on the connection (each in a savepoint of its own).
        self.turn = asyncio.Lock()
        #: The calls under way (shielded: a cancelled caller's call runs to its end).
        self.calls: set[asyncio.Task[Any]] = set()

    async def settle(self) -> bool:
        """Wait for the calls under way before the lock's transaction ends, so that none is
        cut in two by its COMMIT; whether this task was cancelled meanwhile."""
        cancelled = False
        while self.calls:
            try:
                await asyncio.shield(asyncio.wait(set(self.calls)))
            except asyncio.CancelledError:
                cancelled = True
        return cancelled


#: The chat's lock this task holds, if any. A task started in the block copies the context
#: but does not hold the lock (``Held.task`` tells them apart): it uses the pool.
HELD: ContextVar[Held | None] = ContextVar("krendzu_held_chat", default=None)


def holding(store: object) -> Held | None:
    """The chat's lock of ``store`` that the running task holds, if any."""
    held = HELD.get()
    if held is None or held.store is not store or held.task is not asyncio.current_task():
        return None
    return held


async def run_held(held: Held, work: Callable[[Conn], Awaitable[T]],
                   calls: set[asyncio.Task[Any]]) -> T:
    """``work`` on the lock's connection in a savepoint of its own, run to its end even if
    the caller is cancelled (as every call of the store is; ``calls``: the store's, which
    its closing waits for)."""

    async def in_savepoint() -> T:
        async with held.turn, held.conn.transaction():
            return await work(held.conn)

    task = asyncio.ensure_future(in_savepoint())
    for running in (calls, held.calls):
        running.add(task)
        task.add_done_callback(running.discard)
    task.add_done_callback(consume_exception)
    return await asyncio.shield(task)


#: A read's snapshot when it is a transaction of its own (in the chat's lock's transaction,
#: at READ COMMITTED, the lock keeps the chat's writers out, so the reads agree).
SNAPSHOT = "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY"


def in_transaction(op: Callable[[Conn], Awaitable[T]], first: str | None = None
                   ) -> Callable[[Conn], Awaitable[T]]:
    """``op`` in a transaction of its own (opened with ``first``), or in the one the
    connection is in: the savepoint :func:`run_held` opened in the chat's lock's."""

    async def work(conn: Conn) -> T:
        if conn.info.transaction_status is not TransactionStatus.IDLE:
            return await op(conn)
        async with conn.transaction():
            if first is not None:
                await conn.execute(first)
            return await op(conn)

    return work


def rows_of(sql: str, params: Any, map_row: Callable[[Any], R]
            ) -> Callable[[Conn], Awaitable[list[R]]]:
    """One query's rows, each mapped by ``map_row``."""

    async def work(conn: Conn) -> list[R]:
        cur = await conn.execute(sql, params)
        return [map_row(r) for r in await cur.fetchall()]

    return work


def rowcount_of(sql: str, params: Any) -> Callable[[Conn], Awaitable[int]]:
    """One statement's count of the rows it changed."""

    async def work(conn: Conn) -> int:
        cur = await conn.execute(sql, params)
        return cur.rowcount

    return work
