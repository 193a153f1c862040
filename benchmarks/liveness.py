"""How well a defender's beliefs tell live threats from dead ones, threat by threat.

Plays the arena's seeded deals (the first tour of each duplicate pair: ATTACKER attacking,
DEFENDER defending, the same decisions as ``python -m krendzu.arena``). At every defence
that follows an attacker's card, while the attackers still hold cards, it takes every
playable threat (three cards and a gap) and compares its truth with three estimates:

* ``live``: whether the attackers really hold a card completing it;
* ``counting``: the chance they do, counting the cards the defender cannot see;
* ``belief``: the share of DRAWS deals of the hard level's belief
  (:func:`krendzu.ai.inference.infer`) in which they do;
* ``no_rank``: the same without reading the attacker's last move by rank (what the rank
  check adds, on the same threats).

Threats are grouped by their history: *fresh* ones were made or changed by the attacker's
last card (by how many unseen cards complete them); *old* ones were on the board before
it, either playable then (the attacker let them be: it scored elsewhere or could not) or
made playable by that card. Per group it prints the number of threats, the share that is
live, the mean of each estimate, each estimate's Brier score (calibration and discrimination
together) and its AUC (discrimination alone: the chance that a live threat gets the higher
estimate than a dead one), as one JSON object.

    python benchmarks/liveness.py [--attacker oracle] [--defender hard] [--deals 50]
        [--iterations 24] [--draws 200] [--seed 7] [--table duel]
"""

from __future__ import annotations

import bisect
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from krendzu.ai.inference import Belief, infer
from krendzu.ai.players import warm_up
from krendzu.ai.threats import FULL, chance, mask_of, threat_map
from krendzu.arena import (
    ArenaOptions,
    defence_after_attack,
    parse_observing_probe,
    play_first_tours,
    probe_options,
    probe_parser,
    probe_report,
)
from krendzu.board import NEIGHBOUR_STEPS
from krendzu.tour import Tour

#: One threat: (live, counting chance, belief chance, belief chance without the rank check).
Sample = tuple[bool, float, float, float]
#: The estimates after the truth in a :data:`Sample`, by name.
ESTIMATES = {"counting": 1, "belief": 2, "no_rank": 3}


def threat_group(fresh: bool, completers: int, was_playable: bool, scored: bool) -> str:
    """The name of a threat's group (see the module docstring)."""
    if fresh:
        return f"fresh, {min(completers, 4)}{'+' if completers >= 4 else ''} completing"
    if not was_playable:
        return "old, made playable by the last card"
    return "old, let be while the attacker scored" if scored else "old, let be"


class LivenessProbe:
    """The arena's ``watch`` hook: at each defence after an attacker's card, every
    playable threat with its truth and both estimates."""

    def __init__(self, draws: int) -> None:
        self.draws = draws
        self.groups: dict[str, list[Sample]] = {}

    def watch(self, tour: Tour, seat: int) -> None:
        view = defence_after_attack(tour, seat)
        if view is None:
            return
        card, cell = tour.placed[-1]
        now = threat_map(tour.cells, tour.placed)
        cells = bytearray(tour.cells)
        cells[cell] = 0
        before = threat_map(cells, tour.placed[:-1])
        playable = [(g, m) for g, m in now.items() if g in tour.fpos]
        if not playable:
            return
        attackers = list(tour.roles.attackers)
        truth = mask_of([c for s in attackers for c in tour.hands[s]])
        unseen = FULL & ~mask_of(tour.hands[seat]) & ~mask_of([c for c, _ in tour.placed])
        u = unseen.bit_count()
        k = sum(len(tour.hands[s]) for s in attackers)
        belief = infer(view)
        held = self._held(belief, attackers, f"liveness/{len(tour.placed)}/{seat}")
        held_no_rank = self._held(belief.without_ranks(), attackers,
                                  f"liveness/{len(tour.placed)}/{seat}")
        scored = bool(before.get(cell, 0) >> card & 1)
        for g, m in playable:
            t = (m & unseen).bit_count()
            group = threat_group(before.get(g) != m, t, any(cells[g + d] for d in NEIGHBOUR_STEPS),
                                 scored)
            share = sum(1 for h in held if h & m) / self.draws
            share_no_rank = sum(1 for h in held_no_rank if h & m) / self.draws
            self.groups.setdefault(group, []).append(
                (bool(m & truth), chance(t, u, k), share, share_no_rank))

    def _held(self, belief: Belief, attackers: list[int], seed: str) -> list[int]:
        """The attackers' cards (a mask) in each of DRAWS deals of ``belief``."""
        rng = random.Random(seed)
        return [mask_of([c for s in attackers for c in belief.sample(rng)[s]])
                for _ in range(self.draws)]


def auc(samples: list[Sample], estimate: int) -> float | None:
    """The chance that a live threat gets a higher estimate than a dead one (ties count
    half): how well the estimate tells threats apart, whatever its calibration. ``None``
    when the group has no live or no dead threat."""
    live = sorted(s[estimate] for s in samples if s[0])
    dead = sorted(s[estimate] for s in samples if not s[0])
    if not live or not dead:
        return None
    below = sum(bisect.bisect_left(dead, x) + bisect.bisect_right(dead, x) for x in live)
    return round(below / (2 * len(live) * len(dead)), 3)


def summary(samples: list[Sample]) -> dict[str, float | int | None]:
    out: dict[str, float | int | None] = {
        "threats": len(samples),
        "live": round(statistics.fmean(float(s[0]) for s in samples), 3),
    }
    for name, i in ESTIMATES.items():
        out[name] = round(statistics.fmean(s[i] for s in samples), 3)
    for name, i in ESTIMATES.items():
        out[f"brier_{name}"] = round(statistics.fmean((s[i] - s[0]) ** 2 for s in samples), 4)
    for name, i in ESTIMATES.items():
        out[f"auc_{name}"] = auc(samples, i)
    return out


def measure(opts: ArenaOptions, draws: int) -> dict[str, object]:
    warm_up()
    probe = LivenessProbe(draws)
    for _ in play_first_tours(opts, probe.watch):
        pass
    every = [s for samples in probe.groups.values() for s in samples]
    fresh = [s for g, samples in probe.groups.items() if g.startswith("fresh") for s in samples]
    old = [s for g, samples in probe.groups.items() if g.startswith("old") for s in samples]
    return {
        **probe_report(opts),
        "draws": draws,
        "all": summary(every) if every else {},
        "fresh": summary(fresh) if fresh else {},
        "old": summary(old) if old else {},
        "groups": {g: summary(s) for g, s in sorted(probe.groups.items())},
    }


def main(argv: list[str] | None = None) -> int:
    parser = probe_parser(__doc__, deals=50)
    parser.add_argument("--draws", type=int, default=200)
    args = parse_observing_probe(parser, argv)
    print(json.dumps(measure(probe_options(args), args.draws)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
