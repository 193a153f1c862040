"""What the scaled mode's shared flood windows cost PostgreSQL (issue 39), and that they still
keep Telegram's limits for every process together: bot instances on one database, each with
its own python-telegram-bot application, rate limiter and delivery (tests/test_shared_flood.py
builds them as chat/compose.py does), write through the fake Bot API, which counts the
group's writes and the bot's calls and answers 429 past them. Transactions are counted where
:class:`storage.pg_windows.FloodWindows` runs each of its own on the store's pool."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from chat.notices import Send
from storage.postgres import PostgresStore
from tests.fakebot import FakeTelegram
from tests.test_shared_flood import GROUP, instances, texts


class Counted:
    """The store as :class:`~storage.pg_windows.FloodWindows` borrows it, counting the
    transactions it runs (each of these runs one on the pool)."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.runs: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        real = getattr(self.store, name)
        if name not in ("_guard", "_write", "_change", "_select"):
            return real

        def counted(*args: Any, **kwargs: Any) -> Awaitable[Any]:
            self.runs[name] += 1
            result: Awaitable[Any] = real(*args, **kwargs)
            return result

        return counted

    @property
    def transactions(self) -> int:
        return sum(self.runs.values())


def count_windows(store: PostgresStore) -> Counted:
    """Count the transactions of ``store``'s shared windows from now on."""
    counted = Counted(store)
    store.windows._store = counted
    return counted


async def test_a_group_write_costs_its_window_one_statement(tmp_path: Path,
                                                           pg_url: str) -> None:
    """Twelve board-like posts into one group: each claims its slot of the group's window in
    one statement, which dates it when the write will have arrived, so the write's end
    stores nothing more (it re-dated its slot in a second statement, one a write). The
    window holds the twelve."""
    fake = FakeTelegram(global_limit=None)
    fake.group(GROUP, "Busy")
    async with instances(tmp_path, fake, pg_url, 1) as (bot,):
        counted = count_windows(bot.store)
        claims = 0
        claim = bot.store.windows.claim_group

        async def claiming(*args: Any, **kwargs: Any) -> Any:
            nonlocal claims
            claims += 1
            return await claim(*args, **kwargs)

        bot.store.windows.claim_group = claiming  # type: ignore[method-assign]
        for n in range(12):
            run = bot.delivery.run([Send(GROUP, f"post {n}", group=True)])
            assert run is not None
            assert await asyncio.wait_for(run, 10) == [True]
        assert claims == 12
        assert counted.runs["_change"] == 0, counted.runs  # no write re-dated
        assert len(await bot.store.windows.group_sent(GROUP)) == 12
    assert len(texts(fake)) == 12 and fake.rate_limited() == []

