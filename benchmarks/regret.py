"""Where a defender loses to the oracle: the oracle's choice at every one of its decisions.

Plays the arena's seeded deals (the first tour of each duplicate pair: ATTACKER attacking,
DEFENDER defending, the same decisions as ``python -m krendzu.arena``). At every defence
after the opening, while the attackers still hold cards, it also asks the oracle what it
would play in the same position. When the two differ, both turns are scored by the same
PLAYOUTS light playouts with the real hands (the search's rollouts); the regret is how
many more points the defender's turn concedes. Decisions are grouped by what was on the
board (playable threats the attackers can / cannot complete) and how many cards each
placed.

Prints one JSON object. The playouts share the rollouts' blind spot (a spare card is
worth too little in them), so a part where the oracle places more cards than the
defender overstates what the defender loses there (docs/ai.md).

    python benchmarks/regret.py [--attacker oracle] [--defender hard] [--deals 40]
        [--iterations 24] [--playouts 200] [--seed 7] [--table duel]
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from krendzu.actions import Action, Place
from krendzu.ai import make_player
from krendzu.ai.players import OraclePlayer, Player, warm_up
from krendzu.ai.search import rollout
from krendzu.ai.threats import mask_of, threat_map
from krendzu.arena import (
    ArenaOptions,
    parse_observing_probe,
    play_first_tours,
    probe_options,
    probe_parser,
    probe_report,
)
from krendzu.tour import PLAY, Tour

Part = tuple[int, int, int, int]  # live threats, dead threats, defender cards, oracle cards


def threats_on_board(tour: Tour) -> tuple[int, int]:
    """Playable threats the attackers can complete (live) and cannot (dead), up to 2."""
    held = mask_of([c for s in tour.roles.attackers for c in tour.hands[s]])
    masks = [m for g, m in threat_map(tour.cells, tour.placed).items() if g in tour.fpos]
    live = sum(1 for m in masks if m & held)
    return min(live, 2), min(len(masks) - live, 2)


def conceded(tour: Tour, actions: list[Action], seeds: list[int]) -> float:
    """Mean points the attackers score from here on after ``actions``, by playouts."""
    total = 0
    for seed in seeds:
        t = tour.clone()
        for action in actions:
            t.apply(action)
        rollout(t, threat_map(t.cells, t.placed), random.Random(seed))
        total += t.points - tour.points
    return total / len(seeds)


def placed(actions: list[Action]) -> list[tuple[int, int, int]]:
    return sorted((a.card.index, a.x, a.y) for a in actions if isinstance(a, Place))


class RegretProbe:
    """The arena's ``watch`` hook: before each defence it works out the defender's turn
    (the arena's rng for that step, so the same decision) and the oracle's."""

    def __init__(self, defender: Player, oracle: OraclePlayer, playouts: int) -> None:
        self.defender = defender
        self.oracle = oracle
        self.playouts = playouts
        self.parts: dict[Part, list[float]] = {}
        self.tag = ""
        self.step = 0

    def start(self, tag: str) -> None:
        self.tag = tag
        self.step = 0

    def watch(self, tour: Tour, seat: int) -> None:
        step = self.step
        self.step += 1
        if tour.phase != PLAY or tour.is_attacker[seat] or not tour.placed:
            return  # the exchange, the opening card and the attackers' turns
        if not tour.attackers_have_cards():
            return
        mine = self.defender.decide(tour.observation(seat), random.Random(f"{self.tag}/{step}"))
        theirs = self.oracle.decide_full(tour, random.Random(f"{self.tag}/{step}/oracle"))
        mine_cards, their_cards = placed(mine), placed(theirs)
        regret = 0.0
        if mine_cards != their_cards:
            seeds_rng = random.Random(f"{self.tag}/{step}/playouts")
            seeds = [seeds_rng.getrandbits(32) for _ in range(self.playouts)]
            regret = conceded(tour, mine, seeds) - conceded(tour, theirs, seeds)
        live, dead = threats_on_board(tour)
        key = (live, dead, len(mine_cards), len(their_cards))
        self.parts.setdefault(key, []).append(regret)


def measure(opts: ArenaOptions, playouts: int) -> dict[str, object]:
    warm_up()
    oracle = make_player("oracle", iterations=opts.iterations)
    assert isinstance(oracle, OraclePlayer)
    probe = RegretProbe(make_player(opts.y, iterations=opts.iterations), oracle, playouts)
    points = sum(tour.points for tour in play_first_tours(opts, probe.watch, probe.start))
    deals = opts.deals
    parts = sorted(probe.parts.items(), key=lambda kv: -sum(kv[1]))
    return {
        **probe_report(opts),
        "playouts": playouts,
        "conceded_per_tour": round(points / deals, 4),
        "decisions": sum(len(r) for r in probe.parts.values()),
        "regret_per_tour": round(sum(sum(r) for r in probe.parts.values()) / deals, 4),
        "parts": [
            {"live": k[0], "dead": k[1], "defender_cards": k[2], "oracle_cards": k[3],
             "decisions": len(r), "regret_per_tour": round(sum(r) / deals, 4)}
            for k, r in parts
        ],
    }


def main(argv: list[str] | None = None) -> int:
    parser = probe_parser(__doc__, deals=40)
    parser.add_argument("--playouts", type=int, default=200)
    args = parse_observing_probe(parser, argv)
    print(json.dumps(measure(probe_options(args), args.playouts)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
