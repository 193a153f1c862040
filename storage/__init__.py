"""Durable storage of chats, users, matches, move logs and statistics.

The bot talks only to :class:`Store` and the rows and errors re-exported here; SQL stays
inside this package. ``open_store()`` picks the backend from a URL or path::

    store = await open_store("krendzu.sqlite3")      # SQLite file (WAL), the default
    store = await open_store(":memory:")             # tests
    stored = await store.create_match(chat_id, Settings(), [SeatSpec.human(7), ...])
    await store.append_move(stored.match_id, stored.next_seq, "QC@0,0", update_id=42)

A match is stored as its settings, seats, seed and move log; ``load_match`` rebuilds the
engine state from them, so what is stored is the single source of truth.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from storage.base import (
    ActiveMatchExists,
    ChatRow,
    CorruptMatch,
    DuplicateUpdate,
    LobbyExists,
    LobbyRow,
    LobbyStatus,
    MatchClosed,
    MatchRow,
    MatchStatus,
    MoveRow,
    NotFound,
    RatingRow,
    SchemaTooNew,
    SeatKind,
    SeatRow,
    SeatSpec,
    SequenceConflict,
    StandIn,
    StatsRow,
    StorageError,
    Store,
    StoredMatch,
    TimerRow,
    UserRow,
    rebuild_game,
)

#: Environment variable naming the database; the default file is in the working directory.
DB_ENV = "KRENDZU_DB"
DEFAULT_DB = "krendzu.sqlite3"


def default_target() -> str:
    return os.environ.get(DB_ENV) or DEFAULT_DB


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
    if text.startswith(("postgres://", "postgresql://")):
        raise StorageError("no PostgreSQL backend yet: implement storage.base.Store for it")
    if "://" in text:
        raise StorageError(f"unknown storage URL {text!r}")
    return text


async def open_store(target: str | os.PathLike[str] | None = None, *,
                     clock: Callable[[], float] = time.time) -> Store:
    """Open (creating and migrating as needed) the store ``target`` names.

    ``None`` means ``$KRENDZU_DB`` or ``krendzu.sqlite3``. ``clock`` dates what is stored
    (tests inject one). Raises :class:`SchemaTooNew` for a database written by a newer
    version of the code.
    """
    path = sqlite_path(default_target() if target is None else target)
    from storage.sqlite import SqliteStore

    return await SqliteStore.open(path, clock=clock)


__all__ = [
    "DB_ENV",
    "DEFAULT_DB",
    "ActiveMatchExists",
    "ChatRow",
    "CorruptMatch",
    "DuplicateUpdate",
    "LobbyExists",
    "LobbyRow",
    "LobbyStatus",
    "MatchClosed",
    "MatchRow",
    "MatchStatus",
    "MoveRow",
    "NotFound",
    "RatingRow",
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
    "default_target",
    "open_store",
    "rebuild_game",
    "sqlite_path",
]
