"""Telegram's limits across processes (the scaled mode): several bot instances on one
PostgreSQL database, each with its own python-telegram-bot application, rate limiter and
delivery (as several webhook and job workers have), write into one group of the fake Bot API.
The group's window, a 429's pause and the bot-wide rate are kept in the database
(storage/pg_windows.py), so together they behave as one process does."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from telegram.error import RetryAfter
from telegram.ext import Application

from chat.compose import build_application, share_windows
from chat.delivery import Delivery
from chat.notices import Send
from chat.ratelimit import ChatRateLimiter
from krendzu import Settings, Table
from storage.pg_windows import BoardLook
from storage.postgres import PostgresStore
from tests.bot_harness import FastClock
from tests.bot_harness import test_config as bot_config
from tests.fakebot import FakeClock, FakeTelegram
from tests.storage_helpers import add_users, seats_for

GROUP = -1009001


async def bot_pause(url: str, chat_id: int = 0) -> float:
    """The end of the pause a 429 stored for ``chat_id`` (0: the whole bot's), 0 if none."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cur = await conn.execute("SELECT paused_until FROM flood_chats WHERE chat_id = %s",
                                 (chat_id,))
        row = await cur.fetchone()
        return 0.0 if row is None or row[0] is None else float(row[0])


@dataclass
class Instance:
    """One process's share: its application (bot + limiter), store pool and delivery."""

    app: Application
    store: PostgresStore
    delivery: Delivery

    @property
    def limiter(self) -> ChatRateLimiter:
        limiter = self.app.bot.rate_limiter
        assert isinstance(limiter, ChatRateLimiter)
        return limiter


@contextlib.asynccontextmanager
async def instances(tmp_path: Path, fake: FakeTelegram, url: str, count: int, *,
                    shared: bool = True) -> AsyncIterator[list[Instance]]:
    """``count`` bot instances built as chat/compose.py's post_init builds them."""
    config = bot_config(tmp_path, fake, database=url, overall_rate=30.0)
    made: list[Instance] = []
    try:
        for _ in range(count):
            app = build_application(config, request=fake.request(), clock=fake.clock)
            await app.initialize()
            store = await PostgresStore.open(url, clock=fake.clock)
            limiter = app.bot.rate_limiter
            assert isinstance(limiter, ChatRateLimiter)
            delivery = Delivery(app.bot, store, group_limit=config.group_limit,
                                clock=fake.clock, limiter=limiter)
            limiter.on_pause = delivery.flood_wait
            if shared:
                share_windows(store, limiter, delivery, config.group_limit)
            made.append(Instance(app, store, delivery))
        yield made
    finally:
        for one in made:
            await one.delivery.close()
            await one.store.close()
            await one.app.shutdown()


def texts(fake: FakeTelegram) -> list[str]:
    return [m.text or "" for m in fake.sent(GROUP)]


async def test_three_processes_writing_into_one_group_stay_under_its_limit(
        tmp_path: Path, pg_url: str) -> None:
    """45 group messages from three instances at once: every one delivered, never more than
    19 in any 60 s of the group, no 429, about one query of the window per write. The same
    three with their own windows alone send 57 in the first minute (and would meet
    Telegram's 429): what the shared window prevents."""
    clock = FastClock(speed=40)  # a minute of the clock in 1.5 real seconds
    fake = FakeTelegram(clock=clock, global_limit=None)
    fake.group(GROUP, "Busy")
    async with instances(tmp_path, fake, pg_url, 3) as bots:
        claims = 0
        for bot in bots:
            claim = bot.store.windows.claim_group

            async def counted(*args: object, claim: Any = claim) -> Any:
                nonlocal claims
                claims += 1
                return await claim(*args)

            bot.store.windows.claim_group = counted  # type: ignore[method-assign]
        runs = [bot.delivery.run([Send(GROUP, f"p{i} m{n}", group=True) for n in range(15)])
                for i, bot in enumerate(bots)]
        results = await asyncio.wait_for(asyncio.gather(*[r for r in runs if r]), 60)
    # A full window is waited out without asking the database again and again (51 claims
    # for the 45 writes when this was written; polling it every 0.2 s made hundreds).
    assert claims < 2 * 45, claims
    assert all(r is True for rs in results for r in rs)
    assert len(texts(fake)) == 45, fake.describe()
    assert fake.max_sends_in_window(GROUP, 60, edits=True) <= 19
    assert fake.rate_limited() == []
    # Each instance's own window (the embedded mode's) cannot see the others' writes.
    alone = FakeTelegram(clock=clock, global_limit=None, group_limit=0)
    alone.group(GROUP, "Busy")
    async with instances(tmp_path, alone, pg_url, 3, shared=False) as bots:
        start = clock()
        runs = [bot.delivery.run([Send(GROUP, f"p{i} m{n}", group=True) for n in range(19)])
                for i, bot in enumerate(bots)]
        await asyncio.wait_for(asyncio.gather(*[r for r in runs if r]), 60)
        assert clock() - start < 60
    assert alone.max_sends_in_window(GROUP, 60, edits=True) == 57


def test_three_os_processes_writing_into_one_group_stay_under_its_limit(
        pg_url: str) -> None:
    """The same with three real processes (tests/shared_flood_child.py), each with its own
    application, pool and delivery, against the fake Bot API over HTTP: 45 messages, every
    one delivered, never more than 19 in any 60 s of the group, no 429."""
    import subprocess
    import sys

    clock = FastClock(speed=40)
    fake = FakeTelegram(clock=clock, global_limit=None)
    fake.group(GROUP, "Busy")
    base = fake.serve_http()
    root = Path(__file__).resolve().parent.parent
    try:
        children = [subprocess.Popen(
            [sys.executable, str(root / "tests" / "shared_flood_child.py"), pg_url, base,
             fake.token, repr(clock.start), repr(clock.speed), str(GROUP), "15", f"p{i}"],
            cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(3)]
        outputs = [child.communicate(timeout=90) for child in children]
    finally:
        fake.stop()
    for child, (out, err) in zip(children, outputs, strict=True):
        assert child.returncode == 0 and out.split() == ["ready", "done"], (out, err[-2000:])
    assert len(texts(fake)) == 45, fake.describe()
    assert fake.max_sends_in_window(GROUP, 60, edits=True) <= 19
    assert fake.rate_limited() == []


async def test_a_429_seen_by_one_process_pauses_the_chat_in_every_process(
        tmp_path: Path, pg_url: str) -> None:
    """Telegram asks one instance to wait 30 s in the group: the other two, which never met
    the 429, hold their writes to that group until the pause is over (one 429 in all);
    their writes to another chat go on at once."""
    clock = FastClock(speed=10)
    fake = FakeTelegram(clock=clock, global_limit=None)
    fake.group(GROUP, "Busy")
    quiet = fake.group(GROUP - 1, "Quiet")
    async with instances(tmp_path, fake, pg_url, 3) as bots:
        fake.flood(GROUP, 30)
        paused_at = clock()
        first = bots[0].delivery.run([Send(GROUP, "first", group=True)])
        await fake.wait_for(lambda: len(fake.rate_limited(GROUP)) == 1, timeout=5)
        # Once the first instance has stored the pause (a write sent between Telegram's
        # answer and that store would meet a 429 of its own, as it would on Telegram).
        for _ in range(100):
            if await bot_pause(pg_url, GROUP):
                break
            await asyncio.sleep(0.02)
        others = [bot.delivery.run([Send(GROUP, f"from {i}", group=True)])
                  for i, bot in enumerate(bots[1:], 1)]
        elsewhere = bots[1].delivery.run([Send(quiet.id, "elsewhere", group=True)])
        assert elsewhere is not None
        await asyncio.wait_for(elsewhere, 5)
        assert clock() - paused_at < 30, "another chat is not paused"
        await asyncio.wait_for(asyncio.gather(first, *others), 30)  # type: ignore[arg-type]
    assert len(fake.rate_limited()) == 1, [(c.method, c.chat_id) for c in fake.rate_limited()]
    sent = fake.calls_to("sendMessage", GROUP, ok=True)
    assert sorted(c.params["text"] for c in sent) == ["first", "from 1", "from 2"]
    assert min(c.time for c in sent) >= paused_at + 30


async def test_a_429_naming_no_chat_pauses_every_process_and_the_bot_rate_is_shared(
        pg_url: str) -> None:
    """Unit level on two limiters sharing one database: a 429 for a request without a chat
    pauses the other limiter's requests to any chat (the bot-wide rate they share is
    tests/test_flood_leases.py's)."""
    clock = FakeClock(1000.0)
    a, b = ChatRateLimiter(30.0, clock=clock), ChatRateLimiter(30.0, clock=clock)
    store = await PostgresStore.open(pg_url, clock=clock)
    try:
        a.share(store.windows, group_limit=19)
        b.share(store.windows, group_limit=19)
        calls: list[str] = []
        refuse = True

        async def call(name: str) -> dict[str, bool]:
            nonlocal refuse
            if name == "getMe" and refuse:
                refuse = False
                raise RetryAfter(20)
            calls.append(name)
            return {"ok": True}

        async def request(limiter: ChatRateLimiter, name: str,
                          chat: int | None) -> object:
            data = {} if chat is None else {"chat_id": chat}
            return await limiter.process_request(call, (name,), {}, name, data, None)

        chatless = asyncio.create_task(request(a, "getMe", None))
        for _ in range(100):  # until a's 429 is shared (within 0.3 s on a quiet machine)
            await asyncio.sleep(0.05)
            paused = await bot_pause(pg_url)
            if paused:
                break
        assert paused == 1020.0
        other = asyncio.create_task(request(b, "sendMessage", 55))
        await asyncio.sleep(0.5)
        assert not other.done() and calls == [], "b waits for a's bot-wide pause"
        clock.advance(20)
        for _ in range(100):  # the clock moves on (each slot of the bot's rate is 1/30 s)
            if chatless.done() and other.done():
                break
            await asyncio.sleep(0.05)
            clock.advance(0.05)
        await asyncio.wait_for(asyncio.gather(chatless, other), 1)
        assert sorted(calls) == ["getMe", "sendMessage"]
    finally:
        await store.close()


async def test_a_groups_window_is_claimed_in_one_statement(pg_url: str) -> None:
    """The group's one-statement claim keeps its window: writes fit up to the limit less the
    reserve, a write that does not fit is told how long to wait, and the window slides."""
    now = 5000.0
    store = await PostgresStore.open(pg_url)
    try:
        windows = store.windows
        # The group's window: 3 writes fit (limit 4, 1 left to others), the 4th waits
        # until the first leaves the 60 s window; a write that fits is there at once.
        group = -777_002
        claims = [await windows.claim_group(group, 4, 1, 60.0, now + i) for i in range(4)]
        assert [c[0] for c in claims[:3]] == [0.0, 0.0, 0.0]
        assert [c[1] for c in claims[:3]] == [now, now + 1, now + 2]
        assert claims[3] == (57.0, None, [now, now + 1, now + 2])
        assert await windows.group_sent(group) == [now, now + 1, now + 2]
        later = await windows.claim_group(group, 4, 1, 60.0, now + 60.5)
        assert later == (0.0, now + 60.5, [now + 1, now + 2, now + 60.5])
    finally:
        await store.close()


async def test_a_groups_claim_looks_at_a_matchs_newest_board_post_in_its_statement(
        pg_url: str) -> None:
    """A claim given a :class:`BoardLook` hands it the match's newest board post (message id,
    caption) read by the claim's own statement, with a slot taken or not, and ``None`` when
    the match has none: the board job's look just before its post, no read of its own."""
    now = 7000.0
    store = await PostgresStore.open(pg_url)
    try:
        await add_users(store, 1)
        stored = await store.create_match(-777_003, Settings(), seats_for(Table.DUEL, [1]))
        looked: list[Any] = []
        look = BoardLook(stored.match_id, looked.append)
        windows = store.windows
        assert (await windows.claim_group(-777_003, 2, 0, 60.0, now, look=look))[0] == 0.0
        await store.post_board(stored.match_id, 41, "the board\n⏱ 1:30")
        assert (await windows.claim_group(-777_003, 2, 0, 60.0, now + 1, look=look))[0] == 0.0
        full = await windows.claim_group(-777_003, 2, 0, 60.0, now + 2, look=look)
        assert full[0] > 0 and full[1] is None
        assert looked == [None, (41, "the board\n⏱ 1:30"), (41, "the board\n⏱ 1:30")]
        unlooked = await windows.claim_group(-777_003, 2, 0, 60.0, now + 61)
        assert unlooked[1] == now + 61 and len(looked) == 3
    finally:
        await store.close()


async def test_the_board_jobs_look_at_the_window_takes_the_slot_its_post_then_uses(
        tmp_path: Path, pg_url: str) -> None:
    """The scaled mode's board job asks how long the group's window makes it wait
    (``Delivery.group_wait``), then posts: the look takes the free slot and the post uses
    it, one statement of the window where there were two (a look, a claim), and the window
    holds the one write. Once the window is full the look takes nothing and says how long
    to wait."""
    clock = FastClock(speed=40)
    fake = FakeTelegram(clock=clock, global_limit=None)
    fake.group(GROUP, "Busy")
    async with instances(tmp_path, fake, pg_url, 1) as (bot,):
        windows = bot.store.windows
        asked: list[str] = []
        for name in ("group_sent", "claim_group"):
            real = getattr(windows, name)

            async def counted(*args: object, real: Any = real, name: str = name) -> Any:
                asked.append(name)
                return await real(*args)

            setattr(windows, name, counted)
        assert await bot.delivery.group_wait(GROUP) == 0
        run = bot.delivery.run([Send(GROUP, "the board", group=True)])
        assert run is not None
        assert await asyncio.wait_for(run, 10) == [True]
        assert asked == ["claim_group"], asked
        assert len(await store_sent(bot)) == 1
        for n in range(18):  # the window's other 18 writes
            run = bot.delivery.run([Send(GROUP, f"m{n}", group=True)])
            assert run is not None
            await asyncio.wait_for(run, 10)
        assert len(await store_sent(bot)) == 19
        assert await bot.delivery.group_wait(GROUP) > 0
        assert len(await store_sent(bot)) == 19
    assert len(texts(fake)) == 19 and fake.rate_limited() == []


async def store_sent(bot: Instance) -> list[float]:
    return list(await bot.store.windows.group_sent(GROUP))
