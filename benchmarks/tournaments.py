"""Tournaments' pure logic: the pool, the arena and the Swiss league against issue 40's targets.

Prints one JSON object: milliseconds (medians over the repeats) to match 1,000 waiting people
in the "Play now" pool (target ≤ 50 ms), to compute the standings of an arena of 200 players
with 30 games each (target ≤ 20 ms), to pair 500 waiting arena players, and the slowest of
nine rounds of a Swiss league of 200. Everything is seeded; the machine is shared.

    python benchmarks/tournaments.py [--repeats 9] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tournaments import Outcome
from tournaments.arena import ArenaGame, ArenaPlayer, ArenaState, pair, standings
from tournaments.pool import PoolEntry, PoolSettings, TableKind, match_pool
from tournaments.swiss import SwissGame, SwissPlayer, SwissRound, SwissState, pair_round

LEVELS = {"easy": 1200, "normal": 1500, "hard": 1800}


def median_ms(run: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def arena_players(count: int, games: int, rng: random.Random) -> tuple[ArenaPlayer, ...]:
    outcomes = list(Outcome)
    return tuple(
        ArenaPlayer(
            pid,
            rng.randint(1000, 2200),
            games=tuple(
                ArenaGame(rng.randrange(count), rng.randint(1000, 2200), rng.choice(outcomes))
                for _ in range(games)
            ),
        )
        for pid in range(count)
    )


def swiss_slowest_round_ms(players: int, rounds: int, rng: random.Random) -> float:
    league = tuple(SwissPlayer(pid, rng.randint(1000, 2200)) for pid in range(players))
    state = SwissState(league)
    slowest = 0.0
    for _ in range(rounds):
        started = time.perf_counter()
        pairing = pair_round(state)
        slowest = max(slowest, time.perf_counter() - started)
        games = tuple(SwissGame(a, b, rng.choice(list(Outcome))) for a, b in pairing.boards)
        state = SwissState(league, (*state.rounds, SwissRound(games, pairing.bye)))
    return slowest * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    pool = [
        PoolEntry(pid, rng.randint(800, 2600), rng.choice(list(TableKind)), rng.uniform(0, 60),
                  frozenset(rng.sample(range(1000), k=2)))
        for pid in range(1000)
    ]
    settings = PoolSettings(levels=LEVELS)
    table = arena_players(200, 30, rng)
    waiting = arena_players(500, 20, rng)
    print(
        json.dumps(
            {
                "benchmark": "tournaments",
                "python": platform.python_version(),
                "repeats": args.repeats,
                "pool_1000_ms": round(median_ms(lambda: match_pool(pool, 60.0, settings),
                                                args.repeats), 2),
                "arena_standings_200_ms": round(median_ms(lambda: standings(table),
                                                          args.repeats), 2),
                "arena_pair_500_ms": round(median_ms(lambda: pair(ArenaState(waiting), 1),
                                                     args.repeats), 2),
                "swiss_200_slowest_of_9_rounds_ms": round(swiss_slowest_round_ms(200, 9, rng), 2),
                "target_pool_1000_ms": 50,
                "target_arena_standings_200_ms": 20,
            }
        )
    )


if __name__ == "__main__":
    main()
