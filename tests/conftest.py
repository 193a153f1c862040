"""Fixtures shared by the storage contract suite: every backend behind one ``store``.

A test that takes ``store`` (or ``store_target``, to open and reopen stores itself) runs once
per backend: a SQLite file and a PostgreSQL database of its own (``tests/pg.py`` starts the
server once per session, only when a PostgreSQL case runs)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from storage import Store, open_store
from tests.pg import empty_pg_url, pg_server, pg_url  # noqa: F401 (fixtures)

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """What ``open_store`` opens: a new SQLite file, or a new PostgreSQL database's URL."""
    if request.param == "sqlite":
        return str(tmp_path / "k.sqlite3")
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture
async def store(store_target: str) -> AsyncIterator[Store]:
    s = await open_store(store_target)
    yield s
    await s.close()
