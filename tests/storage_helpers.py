"""Shared helpers of the storage tests: random legal play and a few fixtures' building blocks."""

from __future__ import annotations

import random

from krendzu import Match, Settings, Table, export_record
from storage import SeatSpec, Store, StoredMatch

TABLE_SETTINGS = [
    Settings(table=Table.DUEL),
    Settings(table=Table.DUEL, exchange_limit=2),
    Settings(table=Table.TRIO_LONE_ATTACKER),
    Settings(table=Table.TRIO_LONE_ATTACKER, exchange_limit=2),
    Settings(table=Table.TRIO_LONE_DEFENDER),
    Settings(table=Table.TRIO_LONE_DEFENDER, exchange_limit=2),
    Settings(table=Table.TEAMS),
    Settings(table=Table.TEAMS, exchange_limit=2),
]


def seats_for(table: Table, humans: list[int]) -> list[SeatSpec]:
    """The given humans first, computer players (level 1..) in the remaining seats."""
    specs = [SeatSpec.human(u) for u in humans[: table.players]]
    specs += [SeatSpec.computer(1 + i) for i in range(table.players - len(specs))]
    return specs


async def add_users(store: Store, *user_ids: int) -> None:
    for uid in user_ids:
        await store.upsert_user(uid, f"player {uid}")


async def play_and_store(
    store: Store, stored: StoredMatch, rng: random.Random, max_moves: int | None = None
) -> Match:
    """Random legal moves, each applied live and appended; the final one closes the match."""
    game = stored.game
    n = 0
    while not game.is_over and (max_moves is None or n < max_moves):
        action = rng.choice(game.legal_actions())
        seq = len(game.history) + 1
        game.apply(action)
        await store.append_move(
            stored.match_id, seq, action, final=game if game.is_over else None
        )
        n += 1
    return game


def snapshot(game: Match) -> tuple[object, ...]:
    """Everything that must be equal between a live match and its rebuilt twin."""
    return (
        export_record(game),
        game.totals(),
        game.current_player,
        game.is_over,
        [str(a) for a in game.history],
        [[list(h) for h in t.hands] for t in game.tours],
        game.rng.getstate(),
        game.observation(None),
        None if game.is_over else game.observation(game.current_player),
    )
