"""The backend's interface, :class:`StoreBackend`, with the typed rows and errors of
:mod:`storage.model` re-exported.

Nothing here knows SQL. :class:`StoreBackend` is the little a backend provides beyond the
SQL written once (connections, a backup, the schema version, news of changes); the
operations and their contracts are :class:`storage.store.Store` (``storage.Store``), which
both backends subclass. The bot only ever sees that store and these rows and errors. The
stored form of a match is its settings, seat labels, seed and move log:
:func:`rebuild_game` turns them back into a :class:`krendzu.Match` with the engine, so the
database is the single source of truth.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from types import TracebackType
from typing import Self

from storage.model import (
    ARENA_CHAT_BASE,
    DEFAULT_ENGINE_MATCHES,
    ENGINE_COLUMNS,
    ENGINE_USER_BASE,
    POOL_CHAT_BASE,
    ActiveMatchExists,
    ArenaEntry,
    ArenaGameRow,
    ArenaRow,
    ArenaStatus,
    ChatRow,
    CorruptMatch,
    Door,
    DuplicateUpdate,
    EngineExists,
    EngineRow,
    LobbyExists,
    LobbyRow,
    LobbyStatus,
    MatchClosed,
    MatchRow,
    MatchStatus,
    MovedBy,
    MoveRow,
    NotFound,
    OperatingFigures,
    PanelMessage,
    PoolRow,
    RatingRow,
    RequestRows,
    SchemaTooNew,
    SeatKind,
    SeatRow,
    SeatSpec,
    SequenceConflict,
    StandIn,
    StatsRow,
    StorageError,
    StoredMatch,
    TimerRow,
    UserRow,
    Visibility,
    arena_chat_id,
    arena_game_of,
    engine_display_name,
    engine_row,
    engine_user_id,
    is_arena_chat,
    is_detached_chat,
    is_engine_user,
    is_pool_chat,
    name_key,
    normalize_action,
    pool_chat_id,
    rebuild_game,
)

__all__ = [
    "ARENA_CHAT_BASE",
    "DEFAULT_ENGINE_MATCHES",
    "ENGINE_COLUMNS",
    "ENGINE_USER_BASE",
    "POOL_CHAT_BASE",
    "ActiveMatchExists",
    "ArenaEntry",
    "ArenaGameRow",
    "ArenaRow",
    "ArenaStatus",
    "ChatRow",
    "CorruptMatch",
    "Door",
    "DuplicateUpdate",
    "EngineExists",
    "EngineRow",
    "LobbyExists",
    "LobbyRow",
    "LobbyStatus",
    "MatchClosed",
    "MatchRow",
    "MatchStatus",
    "MoveRow",
    "MovedBy",
    "NotFound",
    "OperatingFigures",
    "PanelMessage",
    "PoolRow",
    "RatingRow",
    "RequestRows",
    "SchemaTooNew",
    "SeatKind",
    "SeatRow",
    "SeatSpec",
    "SequenceConflict",
    "StandIn",
    "StatsRow",
    "StorageError",
    "StoreBackend",
    "StoredMatch",
    "TimerRow",
    "UserRow",
    "Visibility",
    "arena_chat_id",
    "arena_game_of",
    "engine_display_name",
    "engine_row",
    "engine_user_id",
    "is_arena_chat",
    "is_detached_chat",
    "is_engine_user",
    "is_pool_chat",
    "name_key",
    "normalize_action",
    "pool_chat_id",
    "rebuild_game",
]


# What a backend provides ----------------------------------------------------------------


class StoreBackend(abc.ABC):
    """What a backend provides beyond the SQL written once: its connections (closed by
    :meth:`close`, or by ``async with``), a backup, the schema version, and news of changes.

    Every operation the bot calls (matches, moves, lobbies, timers, ratings, ...) is
    :class:`storage.store.Store`, exported as ``storage.Store``: written once over a thin
    connector (:mod:`storage.connector`), each method with its contract (errors, what one
    transaction holds). ``storage.sqlite`` and ``storage.postgres`` subclass that store and
    supply this interface and the connector. Every write is one transaction: it happens
    completely or not at all, also if the process dies or the calling task is cancelled
    midway.
    """

    @abc.abstractmethod
    async def close(self) -> None:
        """Close connections; pending writes are committed or rolled back first."""

    @abc.abstractmethod
    async def backup(self, dest: str) -> None:
        """Write a consistent copy of the whole database to ``dest``, safe while running
        (``python -m storage``, operators and tests call it, never the bot)."""

    @abc.abstractmethod
    async def schema_version(self) -> int:
        """The schema version the database is at."""

    async def listen(self, on_change: Callable[[int], None],
                     on_revoke: Callable[[int], None] | None = None) -> bool:
        """Call ``on_change(match_id)`` whenever any process stores a change of a match (a
        move, its start, its end), and ``on_revoke(engine_id)`` whenever one gives an
        engine a new token or deletes it, until the store is closed; whether this store can
        tell (PostgreSQL: ``LISTEN``/``NOTIFY``). A store that cannot returns ``False`` and
        its readers poll (the engine protocol's streams re-read every second)."""
        del on_change, on_revoke
        return False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.close()
