"""Issue 40's arena in the scaled mode: two webhook workers on one PostgreSQL database, behind
a load balancer that sends each person to one of them. People join through either; both
workers tick the arena at the same moment, again and again, and nobody is ever seated in two
games; a game's result is counted once; the end comes once, with one podium."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chat.flow.views.arena_view import arena_players
from chat.notices import Send
from storage import ArenaStatus
from tests.bot_harness import BOT, FastClock
from tests.fakebot import FakeTelegram
from tests.test_arena_bot import arena_button, arena_post
from tests.test_playnow_scaled import two_workers
from tournaments.arena import ArenaState, pair


async def test_two_workers_tick_one_arena_and_seat_nobody_twice(
        tmp_path: Path, pg_url: str, caplog: pytest.LogCaptureFixture) -> None:
    clock = FastClock(speed=1.0)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    users = [fake.user(4601 + i, name) for i, name in enumerate(("Ann", "Bob", "Cid", "Dee"))]
    ann, cid = users[0], users[2]
    group = fake.group(-4600, "Scaled club", members=users)
    async with two_workers(tmp_path, fake, pg_url) as (one, two):
        first, second = one.config.webhook_url, two.config.webhook_url
        # Ann's and Cid's updates reach the first worker, Bob's and Dee's the second.
        fake.webhook_route = lambda update: (
            first if (update.get("message") or update.get("callback_query") or {}).get(
                "from", {}).get("id") in (ann.id, cid.id) else second)

        async def settle() -> None:
            for h in (one, two):
                await h.settle()

        async def both_tick() -> list[object]:
            ticks = await asyncio.gather(one.services.flow.arenas.tick_all(),
                                         two.services.flow.arenas.tick_all())
            for h, notices in zip((one, two), ticks, strict=True):
                h.services.delivery.run(notices)
            await settle()
            return [n for notices in ticks for n in notices]

        store = one.services.store
        for user in users:
            user.start_bot()
        await settle()
        ann.send(group, f"/arena@{BOT} 10m tours=2 deal=3/3 timer=off")
        await settle()
        post = arena_post(fake, group)
        for user in users:
            user.press(post, data=arena_button(post, "Join")["callback_data"])
            await settle()
        arena = await store.latest_arena(group.id)
        assert arena is not None
        assert len(await store.arena_entries(arena.arena_id)) == 4
        ann.press(post, data=arena_button(post, "Start")["callback_data"])
        await settle()
        for _ in range(3):
            await both_tick()
        games = await store.arena_games(arena.arena_id)
        assert len(games) == 2, games
        seated = [p for g in games for p in (g.first, g.second)]
        assert sorted(seated) == sorted(u.id for u in users), "each in one game, once"
        # Both games end by resignations (one through each worker); both workers then tick
        # at the same moment and both pair the four who wait: the store lets one seat each
        # person, so every result is counted once and nobody plays two games.
        for game in games:
            loser = next(u for u in users if u.id == game.second)
            loser.send(loser.chat, "/resign")
            await settle()
        clock.advance(5)
        # The race, made certain: both workers take the results, read the same four waiting
        # players and pair them alike, then both seat every duel at the same moment. The
        # store seats each person once: two games start, not four.
        fresh = await store.get_arena(arena.arena_id)
        assert fresh is not None
        for h in (one, two):
            await h.services.flow.arenas.collect(fresh)
        players = arena_players(await store.arena_entries(arena.arena_id),
                                await store.arena_games(arena.arena_id))
        duels = pair(ArenaState(tuple(players), now=clock()), seed=1)
        assert len(duels) == 2
        seated = await asyncio.gather(*(h.services.flow.arenas.seat(fresh, d.first, d.second)
                                        for d in duels for h in (one, two)))
        assert len([notices for notices in seated if notices]) == 2
        for h, notices in zip((one, two) * 2, seated, strict=True):
            h.services.delivery.run(notices)
        await settle()
        games = await store.arena_games(arena.arena_id)
        assert [g.result for g in games[:2]] == ["first", "first"], games
        running = [g for g in games if g.result is None]
        busy = [p for g in running for p in (g.first, g.second)]
        assert len(running) == 2 and sorted(busy) == sorted(u.id for u in users), games
        for _ in range(3):
            await both_tick()
        assert len(await store.arena_games(arena.arena_id)) == 4
        # The end: both workers tick past it; one podium, the arena over.
        clock.advance(11 * 60)
        ended = await both_tick() + await both_tick()
        assert (await store.get_arena(arena.arena_id)).status is ArenaStatus.FINISHED  # type: ignore[union-attr]
        assert len([n for n in ended if isinstance(n, Send) and "podium" in n.text]) == 1
        assert len([m for m in fake.sent(group) if "The podium" in (m.caption or "")]) == 1
        assert not [r for r in caplog.records if r.name.startswith("chat.flow.arenas")
                    and r.levelname == "ERROR"], caplog.text
