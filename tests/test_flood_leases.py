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
from tests.fakebot import FakeTelegram, FakeUser
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


def group_and_people(fake: FakeTelegram, first_id: int, count: int) -> list[FakeUser]:
    """The busy group and ``count`` people (ids from ``first_id``) who pressed Start, so
    that the bot may write to each."""
    fake.group(GROUP, "Busy")
    people = [fake.user(first_id + n, f"P{n}") for n in range(count)]
    for person in people:
        person.start_bot()
    return people


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



async def test_the_bot_wide_rate_costs_a_transaction_for_many_calls(tmp_path: Path,
                                                                    pg_url: str) -> None:
    """Forty messages to twenty people and four group posts from one instance: the bot-wide
    rate is leased in blocks spent in memory, each person's pace kept in memory, so the
    shared windows cost a transaction for four calls at most, where they cost one a call
    (the pause, the chat's pace and the bot's slot read and taken for each)."""
    fake = FakeTelegram()  # Telegram's 30 calls a second and 20 a minute per group
    people = group_and_people(fake, 5000, 20)
    async with instances(tmp_path, fake, pg_url, 1) as (bot,):
        counted = count_windows(bot.store)
        sends = [Send(p.id, f"hello {n}") for n in range(2) for p in people]
        runs = [bot.delivery.run(sends[i:i + 10]) for i in range(0, len(sends), 10)]
        runs += [bot.delivery.run([Send(GROUP, f"post {n}", group=True)]) for n in range(4)]
        results = await asyncio.wait_for(asyncio.gather(*[r for r in runs if r]), 30)
        assert all(r is True for rs in results for r in rs)
        calls = len(fake.calls_to("sendMessage", ok=True))
        assert calls == 44, fake.describe()
        # Four claims of the group's window, and a lease for four calls at the fewest (the
        # forty calls meet the bot's 30 a second: a lease takes what the window has left).
        assert counted.transactions <= 4 + calls // 4, (counted.transactions, counted.runs)
    assert fake.rate_limited() == []


async def test_two_processes_sharing_the_bot_wide_rate_never_go_past_it(
        tmp_path: Path, pg_url: str) -> None:
    """Two instances, each sending 75 messages to people of its own as fast as it may: the
    fake Bot API answers 429 past 30 calls in any second, and none comes, the 150 taking
    five seconds and more (a slot a call of before, dated when the call began, met a few:
    calls arrive a little after they begin, not all equally late). The same two with
    their own limiters alone meet 429s (each keeps 30 a second, together they make 60):
    what the shared leases prevent."""

    async def burst(fake: FakeTelegram, *, shared: bool) -> float:
        people = [fake.user(6000 + n, f"P{n}") for n in range(150)]
        for person in people:
            person.start_bot()
        async with instances(tmp_path, fake, pg_url, 2, shared=shared) as bots:
            start = fake.clock()
            runs = [bot.delivery.run([Send(p.id, f"from {i}") for p in people[i::2]])
                    for i, bot in enumerate(bots)]
            await asyncio.wait_for(asyncio.gather(*[r for r in runs if r]), 60)
            return fake.clock() - start

    fake = FakeTelegram()
    took = await burst(fake, shared=True)
    assert fake.rate_limited() == [], len(fake.rate_limited())
    assert len(fake.calls_to("sendMessage", ok=True)) == 150
    assert took >= 4.0, took
    alone = FakeTelegram()
    await burst(alone, shared=False)
    assert alone.rate_limited() != []


async def test_a_moves_calls_cost_the_windows_one_transaction(tmp_path: Path,
                                                              pg_url: str) -> None:
    """Eight moves as the scaled mode's jobs tell them: three people's panels and notes, then
    the group's board post. The board post's claim of the group's window renews the lease
    of bot-wide calls in the same transaction when it is half spent, so the next moves'
    calls are paid for already: eight claims and the first lease in all (a lease of its
    own every ten calls or so, before)."""
    fake = FakeTelegram()
    people = group_and_people(fake, 7000, 3)
    async with instances(tmp_path, fake, pg_url, 1) as (bot,):
        counted = count_windows(bot.store)
        for move in range(8):
            for notices in ([Send(p.id, f"move {move}") for p in people],
                            [Send(GROUP, f"board {move}", group=True)]):
                run = bot.delivery.run(notices)
                assert run is not None
                assert all(r is True for r in await asyncio.wait_for(run, 10))
            await asyncio.sleep(0.1)
        assert len(fake.calls_to("sendMessage", ok=True)) == 32
        assert counted.transactions <= 8 + 1, counted.runs
    assert fake.rate_limited() == []
