"""Rebuild equals live: a match stored move by move and reloaded by a fresh connection is the
same match, for every table, with and without exchanges, finished or stopped midway (on a
SQLite file and on PostgreSQL, and in memory)."""

from __future__ import annotations

import asyncio
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from storage import MatchStatus, open_store
from tests.storage_helpers import TABLE_SETTINGS, add_users, play_and_store, seats_for, snapshot

SETTINGS_IDS = [f"{s.table.value}-x{s.exchange_limit}" for s in TABLE_SETTINGS]


@pytest.mark.parametrize("match_settings", TABLE_SETTINGS, ids=SETTINGS_IDS)
@pytest.mark.parametrize("seed", [1, 2])
async def test_rebuild_equals_live_after_a_reopen(
    store_target: str, match_settings, seed: int
) -> None:
    path = store_target
    rng = random.Random(seed)
    humans = [11, 12, 13, 14][: rng.randint(1, match_settings.table.players)]
    lives = {}
    async with await open_store(path) as store:
        await add_users(store, *humans)
        for chat in range(3):
            seats = seats_for(match_settings.table, humans)
            stored = await store.create_match(
                chat, match_settings, seats, seed=rng.getrandbits(63)
            )
            # One match to the end, the others stopped at a random point (to be resumed).
            limit = None if chat == 0 else rng.randint(0, 60)
            lives[stored.match_id] = await play_and_store(store, stored, rng, max_moves=limit)
    async with await open_store(path) as fresh:
        for match_id, live in lives.items():
            loaded = await fresh.load_match(match_id)
            assert snapshot(loaded.game) == snapshot(live)
            assert loaded.row.move_count == len(live.history)
            status = MatchStatus.FINISHED if live.is_over else MatchStatus.ACTIVE
            assert loaded.row.status is status
        resumable = {row.match_id for row in await fresh.active_matches()}
        assert resumable == {m for m, live in lives.items() if not live.is_over}
        # Resuming continues the very same match: further moves apply to both identically.
        for match_id in resumable:
            loaded = await fresh.load_match(match_id)
            live = lives[match_id]
            game = await play_and_store(fresh, loaded, random.Random(match_id), max_moves=10)
            for action in game.history[len(live.history) :]:
                live.apply(action)
            assert snapshot(game) == snapshot(live)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    index=st.integers(0, len(TABLE_SETTINGS) - 1),
    seed=st.integers(0, 2**63 - 1),
    play_seed=st.integers(0, 2**32),
    moves=st.integers(0, 400),
)
def test_rebuild_equals_live_in_memory(index: int, seed: int, play_seed: int, moves: int) -> None:
    match_settings = TABLE_SETTINGS[index]

    async def run() -> None:
        async with await open_store(":memory:") as store:
            await add_users(store, 1)
            stored = await store.create_match(
                5, match_settings, seats_for(match_settings.table, [1]), seed=seed
            )
            live = await play_and_store(store, stored, random.Random(play_seed), max_moves=moves)
            loaded = await store.load_match(stored.match_id)
            assert snapshot(loaded.game) == snapshot(live)

    asyncio.run(run())
