"""The per-match lock: one change at a time in a chat (or forum topic).

Everything that reads a match and writes what follows from it (a move, a set-up step, a
timeout) holds the lock of the chat the match is played in, so two of them never interleave.
The flow only sees the small :class:`Locks` interface; :class:`MatchLocks` is the one-process
implementation for SQLite (an :class:`asyncio.Lock` per chat). On PostgreSQL, where any
process may serve any match, :class:`SharedLocks` adds the database's lock of the chat (an
advisory lock held in a transaction for the critical section).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Protocol


class Locks(Protocol):
    """``async with locks.hold(chat_id, thread_id):`` — the chat's changes, one at a time."""

    def hold(self, chat_id: int, thread_id: int | None
             ) -> AbstractAsyncContextManager[None]: ...


class MatchLocks:
    """An :class:`asyncio.Lock` per chat and forum topic, kept only while someone holds or
    waits for it: a chat that played once and went quiet costs nothing (a bot in many
    groups must not keep a lock for every chat it ever saw)."""

    def __init__(self) -> None:
        #: (chat, topic) → the lock and how many hold it or wait for it.
        self._entries: dict[tuple[int, int], _Entry] = {}

    def hold(self, chat_id: int, thread_id: int | None) -> _Hold:
        return _Hold(self, (chat_id, thread_id or 0))

    def __len__(self) -> int:
        """How many chats have a lock now (for tests: it returns to 0 when all is quiet)."""
        return len(self._entries)


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class _Hold:
    """One ``async with``: counted before it waits, so the lock is not dropped under a
    waiter; uncounted when it is released, or when its wait is cancelled."""

    __slots__ = ("_entry", "_key", "_locks")

    def __init__(self, locks: MatchLocks, key: tuple[int, int]) -> None:
        self._locks = locks
        self._key = key
        self._entry: _Entry | None = None

    async def __aenter__(self) -> None:
        entries = self._locks._entries
        entry = entries.get(self._key)
        if entry is None:
            entry = entries[self._key] = _Entry()
        entry.users += 1
        self._entry = entry
        try:
            await entry.lock.acquire()
        except BaseException:
            self._leave()
            raise

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        assert self._entry is not None
        self._entry.lock.release()
        self._leave()

    def _leave(self) -> None:
        entry = self._entry
        assert entry is not None
        entry.users -= 1
        if entry.users == 0 and self._locks._entries.get(self._key) is entry:
            del self._locks._entries[self._key]
        self._entry = None


class SharedLocks:
    """The chat's lock for every process serving the bot (the scaled mode): this process's
    :class:`MatchLocks` first, so that however many of its tasks wait for one chat only one
    of them waits in the database, then ``shared``, the database's lock of the chat
    (:meth:`storage.postgres.PostgresStore.hold_chat`), held to the end of the block."""

    def __init__(self, shared: Callable[[int, int | None], AbstractAsyncContextManager[None]]
                 ) -> None:
        self.local = MatchLocks()
        self.shared = shared

    @contextlib.asynccontextmanager
    async def hold(self, chat_id: int, thread_id: int | None) -> AsyncIterator[None]:
        async with self.local.hold(chat_id, thread_id), self.shared(chat_id, thread_id):
            yield
