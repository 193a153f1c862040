"""The flow's chat lock across processes (the scaled mode): two flows, each with its own
store pool on one PostgreSQL database, as two processes have. A turn timer's timeout
(counted for the seat, then the stand-in's move) and the person's own move handled by the
other process must not interleave: with the database's lock
(:class:`chat.flow.base.SharedLocks` over ``PostgresStore.hold_chat``) the move waits for
the timeout's critical section; with one process's locks alone it comes in between."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from chat.computer import Thinker
from chat.flow import Actor, Flow
from chat.flow.base import SharedLocks
from chat.i18n import Catalogs
from storage.postgres import PostgresStore

ANN, BOB = Actor(1, "Ann", "en"), Actor(2, "Bob", "en")
GROUP = -4343


@contextlib.asynccontextmanager
async def two_processes(url: str, *, shared: bool) -> AsyncIterator[tuple[Flow, Flow]]:
    thinker = Thinker(workers=0, hard_budget_ms=50)
    stores = [await PostgresStore.open(url) for _ in range(2)]
    try:
        yield tuple(  # type: ignore[misc]
            Flow(store, Catalogs(), thinker.decide, bot_username="kbot",
                 locks=SharedLocks(store.hold_chat) if shared else None)
            for store in stores)
    finally:
        for store in stores:
            await store.close()
        thinker.close()


async def group_duel(flow: Flow) -> int:
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(GROUP, None, ANN, ["duel"], title="Club")
    await flow.lobby_action(GROUP, None, BOB, "join")
    await flow.lobby_action(GROUP, None, ANN, "go")
    row = await flow.store.active_match(GROUP)
    assert row is not None
    return row.match_id


async def race(url: str, *, shared: bool) -> tuple[bool, str, int, int, int]:
    """Process A times the seat out and stops once it found the seat still to move, right
    before it counts the timeout; process B gets the person's move meanwhile. Returns (B
    waited for A, B's reply, the timeouts counted, the moves stored, the move number the
    timeout was for)."""
    async with two_processes(url, shared=shared) as (a, b):
        match_id = await group_duel(a)
        stored = await a.load(match_id)
        seq, seat = stored.next_seq, stored.game.current_player
        mover = ANN if stored.row.seats[seat].user_id == ANN.user_id else BOB
        step = stored.game.legal_actions()[0]
        counted, release = asyncio.Event(), asyncio.Event()
        count = a.deadlines.set_stand_in

        async def slow_count(*args: Any, **kwargs: Any) -> None:
            # The seat was found still to move; the count is about to be written.
            counted.set()
            await release.wait()  # inside the timeout's critical section
            await count(*args, **kwargs)

        a.deadlines.set_stand_in = slow_count  # type: ignore[method-assign]
        timing_out = asyncio.create_task(a.ticker.timeout(match_id, seq))
        await asyncio.wait_for(counted.wait(), 10)
        moving = asyncio.create_task(b.play(match_id, mover, [step]))
        await asyncio.sleep(0.5)
        waited = not moving.done()
        release.set()
        await asyncio.wait_for(timing_out, 10)
        outcome = await asyncio.wait_for(moving, 10)
        stand_in = (await b.store.stand_ins(match_id)).get(seat)
        row = await b.store.get_match(match_id)
        return (waited, outcome.reply or "", stand_in.timeouts if stand_in else 0,
                row.move_count, seq)


async def test_a_timeout_and_a_move_from_another_process_never_interleave(
        pg_url: str) -> None:
    waited, reply, timeouts, moves, seq = await race(pg_url, shared=True)
    assert waited, "the move waited for the timeout's critical section in the other process"
    assert timeouts == 1 and moves == seq, "the timeout was counted and its move stored"
    assert not reply.startswith("✓"), "the person's move came after the stand-in's: refused"


async def test_without_the_database_lock_the_move_comes_in_between(pg_url: str) -> None:
    """The control: one process's locks alone let the move in between the timeout's check
    and its count, so a timeout is counted against a person who moved in time (at the
    second one their seat would go to the computer): the race the database's lock closes."""
    waited, reply, timeouts, moves, seq = await race(pg_url, shared=False)
    assert not waited and reply.startswith("✓"), reply
    assert timeouts == 1 and moves == seq, "counted though the person's own move was stored"


async def test_the_chat_lock_is_a_transaction_lock_released_with_its_connection(
        pg_url: str) -> None:
    """The lock lives in a transaction of the store's lock pool: released when the block
    ends (also by an exception), never left on a pooled connection; another chat is not
    held by it; a lock held by a killed process's connection is freed by the server."""
    import psycopg

    from storage.postgres import CHAT_LOCKS

    def held() -> int:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            row = conn.execute("SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' "
                               "AND classid = %s AND granted", (CHAT_LOCKS,)).fetchone()
            assert row is not None
            return int(row[0])

    one, two = await PostgresStore.open(pg_url), await PostgresStore.open(pg_url)
    try:
        async with one.hold_chat(GROUP, None):
            assert held() == 1
            async with asyncio.timeout(2):
                async with two.hold_chat(GROUP, 7):  # another forum topic: free
                    pass
            waiting = asyncio.create_task(_enter(two, GROUP))
            await asyncio.sleep(0.3)
            assert not waiting.done()
        await asyncio.wait_for(waiting, 5)
        assert held() == 0
        with contextlib.suppress(ZeroDivisionError):
            async with one.hold_chat(GROUP, None):
                _ = 1 / 0
        assert held() == 0
        # A holder whose connection dies (its process was killed): the server frees it.
        victim = await psycopg.AsyncConnection.connect(pg_url, autocommit=True)
        await victim.execute("BEGIN")
        await victim.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
                             (CHAT_LOCKS, f"{GROUP}:0"))
        waiting = asyncio.create_task(_enter(two, GROUP))
        await asyncio.sleep(0.3)
        assert not waiting.done()
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (victim.info.backend_pid,))
        await asyncio.wait_for(waiting, 5)
        with contextlib.suppress(Exception):
            await victim.close()
    finally:
        await one.close()
        await two.close()


async def test_the_holders_calls_run_in_the_locks_own_transaction(pg_url: str) -> None:
    """The store's calls of the task holding the chat's lock are made in the lock's
    transaction (one transaction where each was one of its own): the block sees its writes,
    another process sees them once the block ends; a refused append (a taken move number)
    undoes itself alone; a cancelled holder's calls commit whole, each as it finished; a
    holder killed (its connection ended) leaves nothing of its block, and the lock free."""
    import psycopg

    from storage import SequenceConflict
    from storage.postgres import CHAT_LOCKS

    async with two_processes(pg_url, shared=True) as (a, b):
        match_id = await group_duel(a)
        store, other = a.store, b.store

        async def next_step() -> tuple[int, Any, int]:
            stored = await other.load_match(match_id)
            return stored.next_seq, stored.game.legal_actions()[0], stored.row.move_count

        seq, step, count = await next_step()
        async with store.hold_chat(GROUP, None):
            with pytest.raises(SequenceConflict):
                await store.append_move(match_id, seq + 5, step)
            await store.append_move(match_id, seq, step, update_id=3901)
            assert (await store.get_match(match_id)).move_count == count + 1
            assert (await other.get_match(match_id)).move_count == count  # not yet
        assert (await other.get_match(match_id)).move_count == count + 1

        seq, step, count = await next_step()
        wrote = asyncio.Event()

        async def holder() -> None:
            async with store.hold_chat(GROUP, None):
                await store.append_move(match_id, seq, step)
                wrote.set()
                await asyncio.sleep(30)

        cancelled = asyncio.create_task(holder())
        await asyncio.wait_for(wrote.wait(), 5)
        cancelled.cancel()
        await asyncio.gather(cancelled, return_exceptions=True)
        assert cancelled.cancelled()
        assert (await other.get_match(match_id)).move_count == count + 1
        async with asyncio.timeout(2):
            await _enter(other, GROUP)

        seq, step, count = await next_step()
        wrote.clear()
        killed = asyncio.create_task(holder())
        await asyncio.wait_for(wrote.wait(), 5)
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE "
                          "locktype = 'advisory' AND classid = %s AND granted",
                          (CHAT_LOCKS,))
        async with asyncio.timeout(5):
            await _enter(other, GROUP)
        assert (await other.get_match(match_id)).move_count == count
        killed.cancel()
        await asyncio.gather(killed, return_exceptions=True)
        assert (await other.get_match(match_id)).move_count == count


async def test_a_process_hung_inside_a_critical_section_loses_the_lock(
        pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lock's transaction idle longer than LOCK_IDLE_MS is ended by the server (SET
    LOCAL, no session setting): a hung holder cannot keep the chat from every process."""
    import storage.postgres

    monkeypatch.setattr(storage.postgres, "LOCK_IDLE_MS", 300)
    one, two = await PostgresStore.open(pg_url), await PostgresStore.open(pg_url)
    try:
        import psycopg

        entered = False
        with pytest.raises(psycopg.Error):  # its COMMIT: the server closed the connection
            async with one.hold_chat(GROUP, None):
                await asyncio.wait_for(_enter(two, GROUP), 5)  # while "hung" here
                entered = True
        assert entered
    finally:
        await one.close()
        await two.close()


async def _enter(store: PostgresStore, chat_id: int) -> None:
    async with store.hold_chat(chat_id, None):
        pass
