"""Fixtures shared by the test files: the storage contract suite's ``store`` on every backend,
and the flow's tests' ``flow``.

A test that takes ``store`` (or ``store_target``, to open and reopen stores itself) runs once
per backend: a SQLite file and a PostgreSQL database of its own (``tests/pg.py`` starts the
server once per session, only when a PostgreSQL case runs). A test that takes ``flow`` gets
the chat layer's logic without Telegram, on a store in memory, its computer players thinking
in this process."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from chat.computer import Thinker
from chat.flow import Flow
from chat.i18n import Catalogs
from storage import Store, open_store
from tests.pg import empty_pg_url, pg_server, pg_url  # noqa: F401 (fixtures)

BACKENDS = ["sqlite", "postgres"]

# Bots started as processes by the tests (the chaos test, the clusters, the shutdown tests)
# open a group's panels in the private chats, as the tests written before issue 42 expect;
# the tests of in-group play say KRENDZU_PANELS=group themselves.
os.environ.setdefault("KRENDZU_PANELS", "private")


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


@pytest.fixture
async def flow() -> AsyncIterator[Flow]:
    store = await open_store(":memory:")
    thinker = Thinker(workers=0)
    yield Flow(store, Catalogs(), thinker.decide, bot_username="kbot")
    thinker.close()
    await store.close()
