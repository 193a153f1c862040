"""The application's tick (chat/compose.py ``turn_timers``, every ``KRENDZU_TIMER_TICK`` in
each process): what it asks the store. The arenas and the leagues are rows of one table,
read once a tick for both (every webhook worker ticks them each second)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from chat.compose import turn_timers
from storage import ArenaStatus
from tests.bot_harness import BOT, running_bot
from tests.fakebot import FakeTelegram


async def test_a_tick_reads_the_open_arenas_once_for_the_arenas_and_the_leagues(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT)
    ann = fake.user(7101, "Ann")
    group = fake.group(-7100, "Tick club", members=[ann])
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        ann.send(group, f"/arena@{BOT} 20m")
        await h.settle()
        store: Any = h.services.store
        [arena] = await store.open_arenas()
        read = store.open_arenas
        reads: list[int] = []

        async def counted() -> Any:
            found = await read()
            reads.append(len(found))
            return found

        store.open_arenas = counted
        ticked: list[int] = []
        for kind in (h.services.flow.arenas, h.services.flow.leagues):
            tick = kind.tick

            async def seen(row: Any, tick: Any = tick) -> Any:
                ticked.append(row.arena_id)
                return await tick(row)
            kind.tick = seen
        await turn_timers(SimpleNamespace(application=h.app), timers_are_jobs=False)
        assert reads == [1], "one read of the open arenas a tick"
        # Each kind ticked what is its own of that read: the arena, once.
        assert ticked == [arena.arena_id]
        assert (await store.get_arena(arena.arena_id)).status is ArenaStatus.LOBBY
