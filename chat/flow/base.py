"""What every module of the flow shares: who acts, how a computer decides, what a hint needs,
the rows a unit of work reads once, and the chat's lock.

The bottom of :mod:`chat.flow`: it imports nothing of the flow, so any module may import it.

The chat's lock: everything that reads a match and writes what follows from it (a move, a
set-up step, a timeout) holds the lock of the chat the match is played in, so two of them
never interleave. The flow only sees the small :class:`Locks` interface; :class:`MatchLocks`
is the one-process implementation for SQLite (an :class:`asyncio.Lock` per chat). On
PostgreSQL, where any process may serve any match, :class:`SharedLocks` adds the database's
lock of the chat (an advisory lock held in a transaction for the critical section).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Mapping
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Protocol, TypeVar

from krendzu import Action, MatchView
from krendzu.coords import LabelFrame

T = TypeVar("T")

#: The rows read during the unit of work (an update, a computer's turn, a timer tick) that
#: runs in this task, by key. A task started from it copies the context, not the work: the
#: memo answers only the task that began it, so a later computer move never sees rows read
#: for the update that scheduled it.
_MEMO: ContextVar[tuple[object, dict[Hashable, Any]] | None] = ContextVar(
    "krendzu_work_memo", default=None)


def begin_work(rows: Mapping[Hashable, Any] | None = None) -> None:
    """A unit of work starts in this task: from now on each row is read once. ``rows``:
    those another task read for the same work, which this one carries on (the announcer
    telling the move a request stored, with the rows the request read under the same
    lock: :meth:`chat.flow.broadcast.Broadcast.stored`)."""
    _MEMO.set((asyncio.current_task(), dict(rows or {})))


def work_memo() -> dict[Hashable, Any] | None:
    """This task's memo (``None`` outside a unit of work: every read goes to the store)."""
    held = _MEMO.get()
    if held is None or held[0] is not asyncio.current_task():
        return None
    return held[1]


def timer_key(match_id: int) -> Hashable:
    """The memo's key of a match's turn timer (:mod:`chat.flow.deadlines` reads it; a read
    of the match that brings it along fills it)."""
    return ("timer", match_id)


def stand_ins_key(match_id: int) -> Hashable:
    """The memo's key of a match's stand-ins, as :func:`timer_key`."""
    return ("stand_ins", match_id)


def user_key(user_id: int) -> Hashable:
    """The memo's key of a user's row (:mod:`chat.flow.people` reads it)."""
    return ("user", user_id)


def chat_key(chat_id: int) -> Hashable:
    """The memo's key of a chat's row, as :func:`user_key`."""
    return ("chat", chat_id)


def here_key(chat_id: int, thread_id: int | None) -> Hashable:
    """The memo's key of the row of a group's (forum topic's) active match, ``None`` when
    it has none (:meth:`chat.flow.games.Games.read_request` fills it)."""
    return ("here", chat_id, thread_id or 0)


def early_key(match_id: int) -> Hashable:
    """The memo's key of a match as the request's one read found it, before the chat's lock
    (:meth:`chat.flow.games.Games.early` takes it once)."""
    return ("early", match_id)


def panel_lines_key(match_id: int, user_id: int) -> Hashable:
    """The memo's key of the move lines a player's newest panel shows
    (:meth:`chat.flow.games.Games.shown` reads them, :meth:`~chat.flow.games.Games.show`
    writes them)."""
    return ("panel_lines", match_id, user_id)


async def read_once(key: Hashable, load: Callable[[], Awaitable[T]]) -> T:
    """``load()``'s value, read once per unit of work under ``key``."""
    memo = work_memo()
    if memo is not None and key in memo:
        return memo[key]
    value = await load()
    if memo is not None:
        memo[key] = value
    return value


def wrote(key: Hashable, value: object) -> None:
    """A write of the unit of work: later reads under ``key`` see ``value``."""
    memo = work_memo()
    if memo is not None:
        memo[key] = value


#: What a hint needs, taken from the position under the lock: the seat's view, the board's
#: frame.
HintRequest = tuple[MatchView, LabelFrame]


class Decide(Protocol):
    """A computer's decision: (level, the seat's observation, a seed) → the actions of its
    turn. ``urgent``: a person is waiting for it (a hint, their timed-out turn, a computer
    move in a match they play), so it goes before computer-only work (:class:`Thinker`)."""

    def __call__(self, level: str, view: object, seed: int, *,
                 urgent: bool = False) -> Awaitable[list[Action]]: ...


@dataclass(frozen=True, slots=True)
class Actor:
    """Who did something: Telegram user id, display name and Telegram language code.

    ``reply_language``: the language the replies to this request are written in, set when
    it came from a group (the group's: a Russian speaker's typed ``/join`` in an English
    group is answered in English); ``None``: the user's own."""

    user_id: int
    name: str
    language_code: str | None = None
    reply_language: str | None = None


# The chat's lock ---------------------------------------------------------------------------


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
    (:meth:`storage.postgres.PostgresStore.hold_chat`), held to the end of the block, whose
    store calls run in the database lock's own transaction (one commit for the block)."""

    def __init__(self, shared: Callable[[int, int | None], AbstractAsyncContextManager[None]]
                 ) -> None:
        self.local = MatchLocks()
        self.shared = shared

    @contextlib.asynccontextmanager
    async def hold(self, chat_id: int, thread_id: int | None) -> AsyncIterator[None]:
        async with self.local.hold(chat_id, thread_id), self.shared(chat_id, thread_id):
            yield
