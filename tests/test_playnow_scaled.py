"""Issue 40's proof of the "Play now" pool in the scaled mode: two webhook workers (the real
application in webhook mode, twice, on one PostgreSQL database, with the durable jobs) behind
a load balancer that sends each person to one of them. Two people reaching different workers
are paired into exactly one match, though both workers tick the pool at the same moment, and each
plays a move from their private panel (the announcements are a job worker's). One person
whose /playnow and greeting button reach both workers at once is queued once."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import AsyncIterator
from pathlib import Path

import psycopg
import pytest

from chat.compose_scaled import open_job_services
from chat.jobs import ANNOUNCE_QUEUE, JobServices, worker_options
from storage import is_pool_chat
from tests.bot_harness import FastClock, Harness, play_step_with_buttons
from tests.fakebot import FakeTelegram
from tests.test_playnow import POOL, pool_button, texts
from tests.webhook_harness import running_webhook_bot

#: The durable jobs; the workers' own ticks of the pool are the test's (tests/bot_harness.py
#: leaves the job queue's tick to each test).
WORKER = {**POOL, "jobs": True}


@contextlib.asynccontextmanager
async def two_workers(tmp_path: Path, fake: FakeTelegram, database: str
                      ) -> AsyncIterator[tuple[Harness, Harness]]:
    """Two webhook workers of the scaled mode on ``database``."""
    (tmp_path / "web1").mkdir()
    (tmp_path / "web2").mkdir()
    async with running_webhook_bot(tmp_path / "web1", fake, database=database, **WORKER) as one, \
            running_webhook_bot(tmp_path / "web2", fake, database=database, **WORKER) as two:
        yield one, two


async def announce(svc: JobServices) -> None:
    """A job worker runs the announcements waiting (the next player's panel among them)."""
    options = worker_options(svc, (ANNOUNCE_QUEUE,), wait=False)
    options["install_signal_handlers"] = False
    await svc.jobs.app.run_worker_async(**options)


async def test_two_people_on_two_webhook_workers_are_paired_once_and_play(
        tmp_path: Path, pg_url: str, caplog: pytest.LogCaptureFixture) -> None:
    clock = FastClock(speed=1.0)
    fake = FakeTelegram(clock=clock)
    ann, bob, cy = fake.user(4201, "Ann"), fake.user(4202, "Bob"), fake.user(4203, "Cy")
    async with two_workers(tmp_path, fake, pg_url) as (one, two), \
            open_job_services(one.config, request=fake.request(),
                                              clock=clock) as jobs:
        first, second = one.config.webhook_url, two.config.webhook_url
        # The load balancer: Ann's updates reach the first worker, Bob's the second; Cy's
        # messages the first and her button presses the second.
        fake.webhook_route = lambda update: (
            first if update.get("message", {}).get("from", {}).get("id") in (ann.id, cy.id)
            or update.get("callback_query", {}).get("from", {}).get("id") == ann.id
            else second)

        async def settle() -> None:
            for h in (one, two):
                await h.settle()

        store = one.services.store
        for user in (ann, bob, cy):
            user.start_bot()
        await settle()
        async with await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
            await conn.execute(  # Bob is 300 points above Ann on the pool's scale
                "INSERT INTO ratings (user_id, mu, sigma, rated_matches, updated_at) "
                "VALUES (%s, 32.5, 3.0, 5, 0)", (bob.id,))
        ann.send(ann.chat, "/playnow")
        await settle()
        assert [e.user_id for e in await store.pool_entries()] == [ann.id]
        bob.send(bob.chat, "/playnow")
        await settle()
        assert {e.user_id for e in await store.pool_entries()} == {ann.id, bob.id}
        # Their windows widen to take in each other; both workers tick the pool at the same
        # moment, and both find the same pair: one seats it, the other nobody.
        clock.advance(30)
        ticks = await asyncio.gather(one.services.flow.pool.tick(),
                                     two.services.flow.pool.tick())
        for h, notices in zip((one, two), ticks, strict=True):
            h.services.delivery.run(notices)
        await settle()
        rows = await store.matches_of_user(ann.id, status=None)
        assert len(rows) == 1 and is_pool_chat(rows[0].chat_id), fake.describe()
        row = rows[0]
        assert {s.user_id for s in row.seats} == {ann.id, bob.id}
        assert await store.matches_of_user(bob.id, status=None) == rows
        assert await store.pool_entries() == []
        # The other worker found the pair gone from the pool (all or none), and tried no
        # second match (the reserved chat would have refused it, with an error).
        assert not [r for r in caplog.records if r.name == "chat.flow.pool"], caplog.text
        for user, other in ((ann, "Bob (rating 1300)"), (bob, "Ann (rating 1000)")):
            found = [t for t in texts(fake, user) if t.startswith("⚡ Opponent found")]
            assert len(found) == 1 and other in found[0], found
        # Each plays from their private panel, through their own worker, until both have
        # moved; each move's announcement (the next panel) is a job worker's.
        moved: set[int] = set()
        rng = random.Random(5)
        for _ in range(60):
            if moved == {ann.id, bob.id}:
                break
            stored = await one.services.flow.load(row.match_id)
            mover = fake.users[stored.row.seats[stored.game.current_player].user_id or 0]
            before = stored.row.move_count
            assert await play_step_with_buttons(one, mover, rng), fake.describe()
            await settle()
            await announce(jobs)
            await settle()
            if (await store.get_match(row.match_id)).move_count > before:
                moved.add(mover.id)
        assert moved == {ann.id, bob.id}, fake.describe()

        # Cy's /playnow reaches the first worker and her greeting's ⚡ Play now the second,
        # both released at the same moment: one of them queues her, never both (the other
        # finds her queued, or takes her out again when it comes after).
        greeting = next(m for m in fake.sent(cy) if "Play now" in str(m.buttons()))
        with fake._lock:
            cy.send(cy.chat, "/playnow")
            cy.press(greeting, data=pool_button(greeting, "Play now")["callback_data"])
        await settle()
        entries = [e.user_id for e in await store.pool_entries()]
        told = texts(fake, cy) + [str(c.params.get("text", "")) for c in fake.calls
                                  if c.method == "answerCallbackQuery"]
        answers = [t for t in told if t.startswith("⚡ Looking for an opponent")
                   or t in ("You are already in the queue.", "You left the queue.")]
        assert sum("Looking for an opponent" in t for t in answers) == 1, answers
        if entries:
            assert entries == [cy.id] and "You are already in the queue." in answers, answers
        else:
            assert "You left the queue." in answers, answers
