"""The thin connector between the store written once (:mod:`storage.store`) and a driver.

The shared store's methods hold their SQL in one style, SQLite's: ``?`` for a positional
parameter and ``:name`` for a named one. A backend gives them two things:

- a :class:`Tx`, one open transaction of its driver with four calls (``execute``,
  ``fetchone``, ``fetchall``, ``executemany``) and rows read by column name;
- four ways in, on the store: one query (``_query``), one statement (``_modify``), a read
  transaction (``_in_read``) and a write transaction (``_in_write``), each with its own
  guarantees (the SQLite store's group commit, the PostgreSQL store's pool and snapshot).

PostgreSQL's driver (psycopg) wants ``%s`` and ``%(name)s``: :func:`format_style` turns one
style into the other once per distinct statement. A unique constraint that a statement
breaks leaves either driver as :class:`UniqueViolation`, so that the shared code can turn
it into the error the contract names (``ActiveMatchExists``, ``EngineExists``, ...).
"""

from __future__ import annotations

import abc
import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from storage.base import StorageError

#: A row, read by column name (``sqlite3.Row`` and psycopg's dict rows both are).
Row = Mapping[str, Any]
#: A statement's parameters: positional for ``?``, a mapping for ``:name``.
Params = Sequence[Any] | Mapping[str, Any]


class UniqueViolation(StorageError):
    """A statement broke a unique constraint (a primary key too). Uncaught, it reads as the
    driver's own error did (the constraint's name, never the row: a row of ``matches`` holds
    the deal seed)."""


class Tx(abc.ABC):
    """One open transaction: statements in SQLite's parameter style, rows by column name.

    It never commits or rolls back: the store's ``_in_read``/``_in_write`` that opened it
    does, once the shared code returns (or raises)."""

    @abc.abstractmethod
    async def execute(self, sql: str, params: Params = ()) -> int:
        """Run one statement; how many rows it changed."""

    @abc.abstractmethod
    async def fetchone(self, sql: str, params: Params = ()) -> Row | None:
        """The first row of a query (or of a statement's ``RETURNING``), or ``None``."""

    @abc.abstractmethod
    async def fetchall(self, sql: str, params: Params = ()) -> list[Row]:
        """Every row of a query."""

    @abc.abstractmethod
    async def executemany(self, sql: str, rows: Sequence[Params]) -> None:
        """One statement once per parameter row."""


_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@functools.lru_cache(maxsize=1024)
def format_style(sql: str) -> str:
    """``sql`` in psycopg's parameter style: ``?`` → ``%s``, ``:name`` → ``%(name)s``, and a
    literal ``%`` doubled. A cast (``x::int``) is left alone; no shared statement has a
    ``?`` or a ``:word`` inside a string literal."""
    return _NAMED.sub(r"%(\1)s", sql.replace("%", "%%")).replace("?", "%s")


def marks(count: int) -> str:
    """``?, ?, ?``: the placeholders of an ``IN (...)`` list of ``count`` values."""
    return ", ".join("?" * count)
