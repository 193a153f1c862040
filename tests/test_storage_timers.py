"""Turn timers and stand-ins for absent players (schema v4)."""

from __future__ import annotations

from krendzu import Settings
from storage import MatchStatus, SeatSpec, StandIn, open_store


async def test_timer_deadline_reminder_and_stretch(store_target: str) -> None:
    path = store_target
    async with await open_store(path) as store:
        await store.upsert_user(7, "Ann")
        stored = await store.create_match(-1, Settings(), [SeatSpec.human(7),
                                                           SeatSpec.computer(2)])
        mid = stored.match_id
        assert await store.timer_of(mid) is None
        await store.set_timer(mid, 90)
        timer = await store.timer_of(mid)
        assert timer is not None and (timer.seconds, timer.seq, timer.deadline) == (90, None, None)
        await store.arm_timer(mid, 1, 1000.0)
        assert await store.due_timers(900.0) == []  # 100 s left
        assert await store.due_timers(969.0) == []  # 31 s left
        due = await store.due_timers(971.0)  # 29 s left: the reminder is due
        assert [(t.match_id, t.seq, t.reminded) for t in due] == [(mid, 1, False)]
        await store.set_reminded(mid, 2)  # another move's reminder: ignored
        assert not (await store.timer_of(mid)).reminded  # type: ignore[union-attr]
        await store.set_reminded(mid, 1)
        assert await store.due_timers(971.0) == []
        assert [t.deadline for t in await store.due_timers(1000.0)] == [1000.0]
        # After an outage every deadline gets at least the grace period.
        assert await store.stretch_deadlines(1060.0) == 1
        assert (await store.timer_of(mid)).deadline == 1060.0  # type: ignore[union-attr]
        assert await store.stretch_deadlines(1000.0) == 0
        await store.arm_timer(mid, 2, 2000.0)  # a new turn: the reminder again
        assert not (await store.timer_of(mid)).reminded  # type: ignore[union-attr]
        await store.arm_timer(mid, None, None)
        assert await store.due_timers(10**9) == []
    async with await open_store(path) as store:  # survives a reopen
        assert (await store.timer_of(mid)).seconds == 90  # type: ignore[union-attr]
        await store.set_timer(mid, None)
        assert await store.timer_of(mid) is None


async def test_finished_matches_have_no_due_timers_and_stand_ins(store_target: str) -> None:
    async with await open_store(store_target) as store:
        await store.upsert_user(7, "Ann")
        stored = await store.create_match(-1, Settings(), [SeatSpec.human(7),
                                                           SeatSpec.computer(2)])
        mid = stored.match_id
        await store.set_timer(mid, 30)
        await store.arm_timer(mid, 1, 5.0)
        assert await store.stand_ins(mid) == {}
        await store.set_stand_in(mid, 0, timeouts=1, computer=False)
        await store.set_stand_in(mid, 0, timeouts=2, computer=True)
        assert await store.stand_ins(mid) == {0: StandIn(0, 2, True)}
        await store.set_stand_in(mid, 0, timeouts=0, computer=False)
        assert await store.stand_ins(mid) == {0: StandIn(0, 0, False)}
        await store.abandon_match(mid)
        assert (await store.get_match(mid)).status is MatchStatus.ABANDONED
        assert await store.due_timers(10.0) == []
