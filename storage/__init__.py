"""Durable storage of chats, users, matches, move logs and statistics.

The bot talks only to :class:`Store` (every operation, with its contract: written once in
:mod:`storage.store`) and the rows and errors re-exported here; SQL stays inside this
package. ``open_store()`` picks the backend from a URL or path::

    store = await open_store("krendzu.sqlite3")      # SQLite file (WAL), the default
    store = await open_store(":memory:")             # tests
    store = await open_store("postgresql://u:pw@host/krendzu")  # PostgreSQL (scaled mode)
    stored = await store.create_match(chat_id, Settings(), [SeatSpec.human(7), ...])
    await store.append_move(stored.match_id, stored.next_seq, "QC@0,0", update_id=42)

A match is stored as its settings, seats, seed and move log; ``load_match`` rebuilds the
engine state from them, so what is stored is the single source of truth.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from storage.base import (
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
    engine_user_id,
    is_arena_chat,
    is_detached_chat,
    is_engine_user,
    is_pool_chat,
    pool_chat_id,
    rebuild_game,
)
from storage.store import Store

if TYPE_CHECKING:
    from storage.postgres import JobHooks

#: Environment variable naming the database; the default file is in the working directory.
DB_ENV = "KRENDZU_DB"
DEFAULT_DB = "krendzu.sqlite3"
#: Environment variable with a PostgreSQL URL; when set it wins over ``KRENDZU_DB``.
DATABASE_URL_ENV = "KRENDZU_DATABASE_URL"


def default_target() -> str:
    """``$KRENDZU_DATABASE_URL`` (PostgreSQL) if set, else ``$KRENDZU_DB`` or the default
    SQLite file."""
    return os.environ.get(DATABASE_URL_ENV) or os.environ.get(DB_ENV) or DEFAULT_DB


def is_postgres(target: str | os.PathLike[str]) -> bool:
    """Whether a target is a PostgreSQL URL (``postgresql://`` or ``postgres://``)."""
    return os.fspath(target).startswith(("postgresql://", "postgres://"))


def sqlite_path(target: str | os.PathLike[str]) -> str:
    """The SQLite file (or ``:memory:``) a target names; StorageError for other backends.

    Accepts a plain path, ``:memory:``, ``sqlite:///relative.db``, ``sqlite:////abs.db``
    and ``sqlite://:memory:``.
    """
    text = os.fspath(target)
    if text.startswith("sqlite:"):
        rest = text[len("sqlite:") :]
        if rest.startswith("//"):
            rest = rest[2:]
            if rest.startswith("/"):
                rest = rest[1:]  # sqlite:///rel -> rel, sqlite:////abs -> /abs
        return rest or ":memory:"
    if is_postgres(text):
        raise StorageError("a PostgreSQL URL names no SQLite file (storage.postgres serves it)")
    if "://" in text:
        raise StorageError(f"unknown storage URL {text!r}")
    return text


async def open_store(target: str | os.PathLike[str] | None = None, *,
                     clock: Callable[[], float] = time.time, prepare: bool = True,
                     hooks: JobHooks | None = None) -> Store:
    """Open (creating and migrating as needed) the store ``target`` names.

    ``None`` means ``$KRENDZU_DATABASE_URL``, else ``$KRENDZU_DB`` or ``krendzu.sqlite3``;
    a ``postgresql://`` URL opens the PostgreSQL backend, anything else a SQLite file.
    ``clock`` dates what is stored (tests inject one); ``prepare``: PostgreSQL's prepared
    statements (:meth:`~storage.postgres.PostgresStore.open`); ``hooks``: the scaled mode's
    jobs, deferred in the changes' own transactions (PostgreSQL only). Raises
    :class:`SchemaTooNew` for a database written by a newer version of the code.
    """
    chosen = default_target() if target is None else target
    if is_postgres(chosen):
        from storage.postgres import PostgresStore

        return await PostgresStore.open(os.fspath(chosen), clock=clock, prepare=prepare,
                                        hooks=hooks)
    if hooks is not None:
        raise StorageError("the scaled mode's jobs need PostgreSQL (KRENDZU_DATABASE_URL)")
    path = sqlite_path(chosen)
    from storage.sqlite import SqliteStore

    return await SqliteStore.open(path, clock=clock)


__all__ = [
    "DATABASE_URL_ENV",
    "DB_ENV",
    "DEFAULT_DB",
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
    "Store",
    "StoredMatch",
    "TimerRow",
    "UserRow",
    "Visibility",
    "arena_chat_id",
    "arena_game_of",
    "default_target",
    "engine_user_id",
    "is_arena_chat",
    "is_detached_chat",
    "is_engine_user",
    "is_pool_chat",
    "is_postgres",
    "open_store",
    "pool_chat_id",
    "rebuild_game",
    "sqlite_path",
]
