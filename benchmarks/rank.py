"""How a search player's move ranks under the hand it really held: the hard level's rank curve.

Plays the arena's seeded deals (the first tour of each duplicate pair: ATTACKER attacking,
DEFENDER defending, the same decisions as ``python -m krendzu.arena``). At every defence
that follows an attacker's non-scoring card it takes the rank check the defender's belief
reads that card with (:class:`krendzu.ai.inference.RankCheck`) and counts how many moves
score better than the chosen one:

* ``truth``: under the attacker's real hand, the share of moves with each count (``-1``:
  the hand could have scored). This is the likelihood curve of the rank check: the chance
  that the attacker plays the move that has ``b`` better ones in its hand;
* ``drawn``: the same under DRAWS hands drawn from the belief without the rank check (what
  the rank check has to tell apart);
* ``curve``: ``truth`` relative to ``b = 0``, made non-increasing (neighbours that rise are
  pooled), up to the first count the attacker never chose; next to it the shipped
  :data:`krendzu.ai.inference.RANK_CURVE`.

Prints one JSON object.

    python benchmarks/rank.py [--attacker oracle] [--defender hard] [--deals 40]
        [--iterations 24] [--draws 50] [--seed 7] [--table duel]
"""

from __future__ import annotations

import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from krendzu.ai.inference import RANK_CURVE, RANK_FLOOR, RANK_TAIL, infer
from krendzu.ai.players import warm_up
from krendzu.arena import (
    ArenaOptions,
    defence_after_attack,
    parse_observing_probe,
    play_first_tours,
    probe_options,
    probe_parser,
    probe_report,
)
from krendzu.tour import Tour

#: Counts at or above this are pooled (the shipped curve is shorter).
CAP = 12


class RankProbe:
    """The arena's ``watch`` hook: at each defence after an attacker's non-scoring card,
    the count of better moves under the real hand and under drawn hands."""

    def __init__(self, draws: int) -> None:
        self.draws = draws
        self.truth: Counter[int] = Counter()
        self.drawn: Counter[int] = Counter()

    def watch(self, tour: Tour, seat: int) -> None:
        view = defence_after_attack(tour, seat)
        if view is None:
            return
        belief = infer(view)
        checks = [c for c in belief.ranks if c.seat == view.turns[-1].player]
        if not checks:
            return  # it scored, or it played its last card
        check = checks[-1]
        self.truth[check.better(tour.hands[check.seat], CAP)] += 1
        prior = belief.without_ranks()
        rng = random.Random(f"rank/{len(tour.placed)}/{seat}")
        for _ in range(self.draws):
            self.drawn[check.better(prior.sample(rng)[check.seat], CAP)] += 1


def shares(counts: Counter[int]) -> dict[str, float]:
    total = sum(counts.values())
    return {str(b): round(counts[b] / total, 4) for b in range(-1, CAP + 1)} if total else {}


def fitted_curve(counts: Counter[int]) -> list[float]:
    """The truth shares relative to ``b = 0``, non-increasing (pool adjacent violators),
    up to the first count never chosen."""
    blocks: list[list[float]] = []  # [sum, size] per pooled block
    for b in range(CAP):
        if not counts[b]:
            break
        blocks.append([float(counts[b]), 1.0])
        while len(blocks) > 1 and blocks[-1][0] / blocks[-1][1] > blocks[-2][0] / blocks[-2][1]:
            total, size = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += size
    out = [total / size for total, size in blocks for _ in range(int(size))]
    return [round(v / out[0], 3) for v in out] if out else []


def measure(opts: ArenaOptions, draws: int) -> dict[str, object]:
    warm_up()
    probe = RankProbe(draws)
    for _ in play_first_tours(opts, probe.watch):
        pass
    return {
        **probe_report(opts),
        "moves": sum(probe.truth.values()),
        "truth": shares(probe.truth),
        "drawn": shares(probe.drawn),
        "curve": fitted_curve(probe.truth),
        "shipped": {"curve": list(RANK_CURVE), "tail": RANK_TAIL, "could_score": RANK_FLOOR},
    }


def main(argv: list[str] | None = None) -> int:
    parser = probe_parser(__doc__, deals=40)
    parser.add_argument("--draws", type=int, default=50)
    args = parse_observing_probe(parser, argv)
    print(json.dumps(measure(probe_options(args), args.draws)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
