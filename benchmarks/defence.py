"""How a defender spends its cards: the arena's seeded deals, ATTACKER in the attacking
seats and DEFENDER in the defending ones (the first tour of each duplicate pair).

Prints one JSON object: points conceded per tour, the defender's turns by cards placed
(0 = pass), how many attacker cards were still to come when the defender ran out, and
the points conceded per tour after that. A defender that doubles too freely runs out
first and concedes the attacker's last cards unopposed (docs/ai.md, "Card economy").

    python benchmarks/defence.py [--attacker oracle] [--defender hard] [--deals 80]
        [--iterations 24] [--seed 7] [--table duel]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from krendzu.ai import OraclePlayer, Player, make_player, warm_up
from krendzu.arena import ArenaOptions, deal_tour
from krendzu.tour import CHANCE, OVER


def measure(attacker: str, defender: str, opts: ArenaOptions) -> dict[str, object]:
    warm_up()
    players: dict[str, Player] = {
        level: make_player(level, iterations=opts.iterations) for level in {attacker, defender}
    }
    turns = {0: 0, 1: 0, 2: 0}
    conceded = 0
    after_empty = 0
    to_come: list[int] = []
    for index in range(opts.deals):
        tour = deal_tour(opts, index)
        tag = f"{opts.seed}/{index}/x"  # the arena's tag: the same decisions
        chance_rng = random.Random(f"{tag}/chance")
        step = 0
        empty_at: int | None = None
        while tour.phase != OVER:
            seat = tour.current_player
            if seat == CHANCE:
                tour.redeal(tour.sample_redeal(chance_rng))
                continue
            player = players[attacker if tour.is_attacker[seat] else defender]
            rng = random.Random(f"{tag}/{step}")
            step += 1
            before = len(tour.placed)
            if isinstance(player, OraclePlayer):
                actions = player.decide_full(tour, rng)
            else:
                actions = player.decide(tour.observation(seat), rng)
            for action in actions:
                tour.apply(action)
            if tour.is_attacker[seat] or before == 0:
                continue  # the opening card is not a choice of how many
            turns[len(tour.placed) - before] += 1
            if empty_at is None and not any(
                tour.hands[s] for s in tour.roles.defenders
            ):
                empty_at = tour.points
                to_come.append(sum(len(tour.hands[s]) for s in tour.roles.attackers))
        conceded += tour.points
        if empty_at is not None:
            after_empty += tour.points - empty_at
    return {
        "attacker": attacker,
        "defender": defender,
        "table": opts.table,
        "deals": opts.deals,
        "iterations": opts.iterations,
        "conceded_per_tour": round(conceded / opts.deals, 4),
        "defender_turns_by_cards": turns,
        "attacker_cards_to_come_when_defence_empty": (
            round(statistics.fmean(to_come), 3) if to_come else None
        ),
        "conceded_after_defence_empty_per_tour": round(after_empty / opts.deals, 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attacker", default="oracle")
    parser.add_argument("--defender", default="hard")
    parser.add_argument("--deals", type=int, default=80)
    parser.add_argument("--iterations", type=int, default=24)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--table", default="duel")
    args = parser.parse_args(argv)
    opts = ArenaOptions(args.attacker, args.defender, deals=args.deals, seed=args.seed,
                        table=args.table, iterations=args.iterations)
    print(json.dumps(measure(args.attacker, args.defender, opts)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
