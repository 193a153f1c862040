"""What a move costs PostgreSQL in the scaled mode (issue 39), counted through the real stack:
the bot (``KRENDZU_JOBS=procrastinate``) takes typed moves in a group, a job worker (another
process's services on the same configuration and fake Bot API) announces them, and the
database's own count of committed transactions (``pg_stat_database.xact_commit``, which
``benchmarks/cluster.py`` reports: every statement outside a transaction block is one) is
read before and after. The bot here polls for updates (no webhook ledger nor reply
outbox), so these figures are the move's request, its jobs and its Bot API calls' shared
flood windows; the benchmark adds the webhook worker's own."""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.pq import TransactionStatus
from psycopg.rows import dict_row

import chat.outbox as outbox_module
from chat.compose_scaled import open_job_services
from chat.jobs import ANNOUNCE_QUEUE, TIMERS_QUEUE, JobServices, worker_options
from krendzu import Place
from krendzu.coords import frame_for
from storage import StoredMatch, rebuild_game, store_matches
from storage.pg_reads import MATCH_AND_MOVES, match_and_log
from tests.bot_harness import BOT, FastClock, Harness, start_group_duel
from tests.fakebot import Chat, FakeTelegram
from tests.fakebot.model import FakeUser
from tests.test_jobs import bot_duel
from tests.test_webhook_pg import pg
from tests.webhook_harness import running_webhook_bot

#: What a typed move may cost at most, in PostgreSQL transactions (the request, the
#: announcement and its Bot API calls' flood windows, procrastinate's own), with a margin
#: for the run's timing (how many empty fetches the worker makes, how the idle rate is
#: measured: about ±3 from run to run). About 65 when the job queue's pool checked every
#: connection it lent; about 50 once it did not and the announcement read its match,
#: timer, stand-ins, people and chat in one transaction (about 43 while the announcement
#: posted the group's board itself when the window was open: that post went, since it
#: posted some boards twice under the chaos test's kills). About 40 now that the board job
#: reads the same one snapshot (it made eight reads of its own: the match twice, the told
#: keys, the seated people, the chat, the timer, the stand-ins, the mover's panel lines),
#: the panel lines come in that snapshot too, and an announcement waiting for its posts
#: reads only the match's head while no newer move came (it read the told keys as well).
#: About 35 now that a new panel is noted as told in the write that remembers it, and a
#: group's board post in the write that remembers the post, with the board job's ``group``
#: key when the post is all it tells the group (three writes were six). About 31 now that
#: an announcement waiting for its posts looks at the match's head when PostgreSQL
#: notifies a newer move, and once a second besides, where it looked every quarter of a
#: second (31–36 as the machine's load goes: docs/benchmarks.md, *The jobs' one read and
#: their joint notes*). The group's newest post is still read just before each post, not
#: in the board job's snapshot: a board job the sweeper took for stalled may run twice at
#: once, and only that late read finds the other's post.
#:
#: Measured as now (the test's own looks at the match rolled back on one connection, each
#: move announced before the next is typed, so one job tells one move as it does for
#: moves seconds apart) the code above cost about 21 (20.8–21.0). About 18 (17.8–18.0)
#: now: a worker fetches once a notified job (it fetched again after each, to find
#: nothing), its pool lends the connection given back last (each went round the pool and
#: was checked with a round trip of its own), an announcement ends in the write of its
#: marker, and a move's board job is deferred in the move's transaction (the announcement
#: deferred it in one of its own). About 17.7 once the request's move is written in its
#: chat's lock's own transaction (``test_a_typed_moves_request_costs_postgresql_two_...``
#: below); about 16.5 since the panels' lines go in the writes of the panels they are shown
#: in (they were a transaction of the announcement's own), 15.7 since a typed move's record
#: is noted in the write that forgets its mover's panel (each measured on its own branch).
#: About 13.3 (12.7–13.7 over four runs; 14.7–15.4 on the code before, two runs) since the
#: board job's end goes in the write that records its post (``JobEnd``, as the
#: announcement's in its marker's) and the group's newest post is read by the statement
#: that claims the group's window for the post (each was a transaction of its own).
#: About 12.0 since the announcement's marker and its job's end move in the record of
#: the last of its notices Telegram took (chat/markers.py, as the embedded mode's marker
#: does), where they were a transaction after every record.
#: What is left, a move: the request's read, its chat's lock with its write (2); two
#: fetches and two snapshots (4); the mover's panel forgotten with its record noted, the
#: next panel remembered, one of them with the marker and the job's end (2-3); the group's
#: window claimed with its newest post looked at, the post remembered with the board job's
#: end (2); a poll and a flood lease now and then.
CEILING = 14
#: Typed moves measured (their mean is the figure): few enough that the group's board posts
#: stay inside its window of 19 writes a minute with the lobby's and the start's (a post
#: the window holds back is a board job's, and costs more).
MOVES = 7
#: Seconds of the quiet spell whose transactions are not the moves'.
IDLE_SECONDS = 5.0


async def committed(url: str) -> tuple[int, float]:
    """The database's committed transactions and when they were read, once the backends
    have reported theirs (PostgreSQL 15 flushes a backend's statistics when it goes idle,
    at most once a second). The read itself commits two (the clear, the count)."""
    await asyncio.sleep(1.2)
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("SELECT pg_stat_clear_snapshot()")
        cur = await conn.execute("SELECT xact_commit FROM pg_stat_database "
                                 "WHERE datname = current_database()")
        row = await cur.fetchone()
        assert row is not None
        return int(row[0]), time.monotonic()


async def per_move(h: Harness, moves: Callable[[], Awaitable[int]]) -> float:
    """The transactions the moves ``moves()`` makes (it returns how many) add, each: the
    count over the moves, less what the database commits meanwhile without them (a job
    worker polls for jobs, beats its heart, runs the periodic sweep), measured over a
    quiet spell just before."""
    idle_from, idle_at = await committed(h.config.database)
    await asyncio.sleep(IDLE_SECONDS)
    start, start_at = await committed(h.config.database)
    idle_rate = (start - idle_from - 2) / (start_at - idle_at)
    made = await moves()
    end, end_at = await committed(h.config.database)
    return (end - start - 2 - idle_rate * (end_at - start_at)) / made


@asynccontextmanager
async def job_worker(h: Harness) -> AsyncIterator[JobServices]:
    """A job worker of announcements and timers running beside the bot until the block
    ends (then stopped, its running jobs finished)."""
    async with open_job_services(h.config, request=h.fake.request()) as svc:
        options = worker_options(svc, (ANNOUNCE_QUEUE, TIMERS_QUEUE), concurrency=4)
        # Quieter when idle, so that what the moves cost stands out: no heartbeat nor
        # sweep within the test's seconds (its polls for jobs scheduled later stay).
        options.update(install_signal_handlers=False, abort_job_polling_interval=60.0,
                       update_heartbeat_interval=60.0)
        svc.jobs.app.periodic_registry.periodic_tasks.clear()
        task = asyncio.create_task(svc.jobs.app.run_worker_async(**options))
        try:
            yield svc
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


class Peek:
    """The test's own looks at the match (to pick the move it types, to see it announced),
    on one connection opened before the count, each in a transaction rolled back: none is
    counted as the move's (``xact_commit`` counts the transactions committed, and a new
    connection commits some of its own as it starts)."""

    def __init__(self, conn: psycopg.AsyncConnection[dict[str, Any]]) -> None:
        self.conn = conn

    async def match(self, match_id: int) -> StoredMatch:
        async with self.conn.transaction(force_rollback=True):
            cur = await self.conn.execute(MATCH_AND_MOVES, (match_id,))
            found = await cur.fetchone()
        assert found is not None
        row, moves = match_and_log(found)
        return StoredMatch(row, tuple(moves), rebuild_game(row, [m.action for m in moves]))

    async def announced(self, match_id: int) -> bool:
        """Whether every stored move of the match is announced (its marker at its last
        move)."""
        async with self.conn.transaction(force_rollback=True):
            cur = await self.conn.execute(
                "SELECT announced_seq >= (SELECT COALESCE(MAX(seq), 0) FROM moves "
                "WHERE match_id = %(m)s) AS told FROM matches WHERE match_id = %(m)s",
                {"m": match_id})
            row = await cur.fetchone()
        return bool(row and row["told"])


async def next_typed(peek: Peek, fake: FakeTelegram, match_id: int, rng: random.Random
                     ) -> tuple[StoredMatch, FakeUser, str]:
    """The match as stored now, the person to move and the ``/play@bot CARD CELL`` they type
    (a placement picked by ``rng``)."""
    stored = await peek.match(match_id)
    game = stored.game
    user = fake.users[stored.row.seats[game.current_player].user_id or 0]
    step = rng.choice([a for a in game.legal_actions() if isinstance(a, Place)])
    cell = frame_for(game.tour.observation(None).placements).label(step.x, step.y)
    return stored, user, f"/play@{fake.bot_username} {step.card.code()} {cell}"


async def typed_move(h: Harness, group: Chat, match_id: int, rng: random.Random,
                     peek: Peek) -> None:
    """The player to move types ``/play@bot CARD CELL`` (or passes) in the group; returns
    once the move's board is posted in the group, it is announced and its panels are
    out."""
    stored = await peek.match(match_id)
    game = stored.game
    user = h.fake.users[stored.row.seats[game.current_player].user_id or 0]
    places = [a for a in game.legal_actions() if isinstance(a, Place)]
    if places:
        step = rng.choice(places)
        cell = frame_for(game.tour.observation(None).placements).label(step.x, step.y)
        text = f"/play@{h.fake.bot_username} {step.card.code()} {cell}"
    else:
        text = f"/pass@{h.fake.bot_username}"
    photos = len([m for m in h.fake.sent(group) if m.kind == "photo"])
    user.send(group, text)
    loop = asyncio.get_running_loop()
    end = loop.time() + 20
    while len([m for m in h.fake.sent(group) if m.kind == "photo"]) <= photos:
        assert loop.time() < end, h.fake.describe()
        await asyncio.sleep(0.02)
    # The board job runs beside the announcement: its post says nothing of whether the
    # announcement is done. A move typed before it is would be told with this one, by one
    # job, cheaper than moves a player makes seconds apart.
    while not await peek.announced(match_id):
        assert loop.time() < end, h.fake.describe()
        await asyncio.sleep(0.02)
    await h.fake.wait_until_idle(quiet=0.3, timeout=20)


async def test_a_typed_move_in_the_scaled_mode_costs_postgresql_few_transactions(
        tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # The same deal every run (a tour's end tells more than a move within it).
    monkeypatch.setattr(store_matches.secrets, "randbelow", lambda _n: 3939)
    async with bot_duel(tmp_path, pg_url, -3901) as (h, group, row):
        rng = random.Random(39)
        async with job_worker(h), await psycopg.AsyncConnection.connect(
                h.config.database, row_factory=dict_row) as conn:
            peek = Peek(conn)
            # The worker's first run apart.
            await typed_move(h, group, row.match_id, rng, peek)

            async def moves() -> int:
                for _ in range(MOVES):
                    await typed_move(h, group, row.match_id, rng, peek)
                return MOVES

            cost = await per_move(h, moves)
        done = await h.services.store.get_match(row.match_id)
        # A typed move may store two (a defender's one card ends the turn): counted as one,
        # as the benchmark counts the moves it sends.
        assert done.move_count > MOVES and done.announced_seq == done.move_count
        print(f"PostgreSQL transactions a move: {cost:.1f}")
        assert cost <= CEILING, cost



#: What a typed move's request alone may cost, in PostgreSQL transactions: the request's one
#: read (before the chat's lock) and the chat's lock, in whose transaction the move is
#: checked afresh where needed and written. It was three: the lock, the read and the
#: append, each a transaction of its own.
REQUEST_CEILING = 2


class Transactions:
    """The PostgreSQL transactions this process's connections begin, but ``apart``'s:
    counted on the client, as each begins (a block's ``BEGIN``, or a statement sent
    outside one, which is a transaction of its own). The server's count
    (``pg_stat_database.xact_commit``) would do for many moves, not for one: a busy
    connection reports its transactions a second or more after them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, apart: object) -> None:
        self.count = 0
        #: Each counted transaction's first statement (its first line), to tell which is
        #: which when a count is off.
        self.firsts: list[str] = []
        begun: dict[int, int] = {}  # connection → its transaction's place in ``firsts``
        execute = psycopg.AsyncConnection.execute
        enter = psycopg.AsyncTransaction.__aenter__
        counter = self

        async def counted_execute(conn: Any, *args: Any, **kwargs: Any) -> Any:
            sql = str(args[0] if args else kwargs.get("query", "")).split("\n")[0][:90]
            if conn is not apart and conn.info.transaction_status is TransactionStatus.IDLE:
                counter.count += 1
                counter.firsts.append(sql)
            elif id(conn) in begun:
                counter.firsts[begun.pop(id(conn))] = sql
            return await execute(conn, *args, **kwargs)

        async def counted_enter(tx: Any) -> Any:
            conn = tx.connection
            if conn is not apart and conn.info.transaction_status is TransactionStatus.IDLE:
                counter.count += 1
                begun[id(conn)] = len(counter.firsts)
                counter.firsts.append("BEGIN")
            return await enter(tx)

        monkeypatch.setattr(psycopg.AsyncConnection, "execute", counted_execute)
        monkeypatch.setattr(psycopg.AsyncTransaction, "__aenter__", counted_enter)


async def test_a_typed_moves_request_costs_postgresql_two_transactions(
        tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """No job worker runs: the transactions the bot begins from the update to the stored
    move (and its deferred jobs) are the request's alone (the bot polls: no webhook
    ledger nor reply outbox). The move is checked on the request's read and written in the
    chat's lock's own transaction."""
    monkeypatch.setattr(store_matches.secrets, "randbelow", lambda _n: 3939)
    async with bot_duel(tmp_path, pg_url, -3902) as (h, group, row), \
            await psycopg.AsyncConnection.connect(h.config.database,
                                                  row_factory=dict_row) as conn:
        peek = Peek(conn)
        rng = random.Random(39)
        counter = Transactions(monkeypatch, conn)
        costs: list[int] = []
        for _ in range(3):
            stored, user, text = await next_typed(peek, h.fake, row.match_id, rng)
            await h.fake.wait_until_idle(quiet=0.3, timeout=20)
            start = counter.count
            user.send(group, text)
            loop = asyncio.get_running_loop()
            end = loop.time() + 20
            while (await peek.match(row.match_id)).row.move_count == stored.row.move_count:
                assert loop.time() < end, h.fake.describe()
                await asyncio.sleep(0.02)
            await h.fake.wait_until_idle(quiet=0.3, timeout=20)
            costs.append(counter.count - start)
        print(f"PostgreSQL transactions of a typed move's request: {costs}")
        assert max(costs) <= REQUEST_CEILING, costs


#: What a typed move costs the webhook worker that takes it, in PostgreSQL transactions:
#: the request's read, which also reads the update ledger (whether Telegram delivered the
#: update before, its failed tries), and the chat's lock, in whose transaction the move is
#: written with the update's ledger row and its answer. It was four: the ledger's read, the
#: request's read, the lock with the move, and the ledger's write after the handler.
WEBHOOK_CEILING = 2


async def test_a_typed_move_costs_its_webhook_worker_two_transactions(
        tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A webhook worker (``KRENDZU_JOBS=procrastinate``, no job worker running: the
    announcements wait) takes typed moves posted by Telegram: the transactions it begins
    from the update's arrival to its 200, the outbox's sweep for dead workers' replies
    (once a second, not a move's) apart."""
    monkeypatch.setattr(store_matches.secrets, "randbelow", lambda _n: 3939)
    monkeypatch.setattr(outbox_module, "SWEEP_SECONDS", 3600.0)
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(1, "Ann"), fake.user(2, "Bob")
    group = fake.group(-3904, "Club", members=[ann, bob])
    async with running_webhook_bot(tmp_path, fake, database=pg_url, jobs=True) as h, \
            await psycopg.AsyncConnection.connect(pg_url, row_factory=dict_row) as conn:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        row = await start_group_duel(h, group, ann, bob, "duel timer=off")
        peek = Peek(conn)
        rng = random.Random(39)
        counter = Transactions(monkeypatch, conn)
        costs: list[int] = []
        for _ in range(3):
            stored, user, text = await next_typed(peek, fake, row.match_id, rng)
            await h.settle()
            # The replies told before (the lobby's, the start's) struck off the outbox: by
            # a statement of the outbox's own once delivered, not one of the move's.
            assert await fake.wait_for(lambda: pg(pg_url, "SELECT count(*) FROM reply_outbox")
                                       == [(0,)], timeout=5)
            start = len(counter.firsts)
            user.send(group, text)
            update_id = fake.update_log[-1]["update_id"]
            assert await fake.wait_for(functools.partial(fake.webhook_delivered, update_id),
                                       timeout=20)
            await h.settle()
            assert (await peek.match(row.match_id)).row.move_count > stored.row.move_count
            assert [a.status for a in fake.webhook_attempts(update_id)] == [200]
            # Remembered and answered: a copy Telegram sends again is answered 200 unplayed.
            assert pg(pg_url, "SELECT u.update_id FROM processed_updates u JOIN "
                      "update_answers a USING (update_id) WHERE update_id = %s",
                      (update_id,)) == [(update_id,)]
            costs.append(len(counter.firsts) - start)
            print("the move's transactions:", counter.firsts[start:])
        print(f"PostgreSQL transactions of a typed move's webhook worker: {costs}")
        assert max(costs) <= WEBHOOK_CEILING, costs
