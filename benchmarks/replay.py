"""Does replaying the attacker's search under a drawn hand tell live threats from dead ones?

Plays the arena's seeded deals (first tour of each pair: ATTACKER attacking, DEFENDER
defending). At every defence after an attacker's non-scoring card it draws DRAWS deals
from the defender's belief and, for each of them and for the true deal, replays the
attacker's decision as the oracle makes it: the normal scoring's best 8 candidates under
that hand (exact knowledge), each finished by PLAYOUTS paired playouts. It records the
chosen move's regret under each hand, and every fresh playable threat's truth, so that
likelihoods can be fitted afterwards (``--dump FILE``: one JSON line per defence).
"""

from __future__ import annotations

import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from krendzu.ai.heuristic import NORMAL, Heuristic
from krendzu.ai.inference import infer
from krendzu.ai.players import warm_up
from krendzu.ai.replay import before_last_turn, replay_values
from krendzu.ai.threats import mask_of, threat_map
from krendzu.arena import (
    defence_after_attack,
    parse_observing_probe,
    play_first_tours,
    probe_options,
    probe_parser,
)
from krendzu.tour import Tour


class ReplayProbe:
    def __init__(self, draws: int, playouts: int, dump) -> None:
        self.draws = draws
        self.playouts = playouts
        self.heur = Heuristic(NORMAL)
        self.dump = dump
        self.defences = 0
        self.seconds = 0.0

    def watch(self, tour: Tour, seat: int) -> None:
        view = defence_after_attack(tour, seat)
        if view is None:
            return
        card, cell = tour.placed[-1]
        cells = bytearray(tour.cells)
        cells[cell] = 0
        before = threat_map(cells, tour.placed[:-1])
        if before.get(cell, 0) >> card & 1:
            return  # it scored
        now = threat_map(tour.cells, tour.placed)
        fresh = [m for g, m in now.items() if g in tour.fpos and before.get(g) != m]
        if not fresh:
            return
        attacker = view.turns[-1].player
        attackers = list(tour.roles.attackers)
        truth = {s: list(tour.hands[s]) for s in range(len(tour.hands)) if s != seat}
        start = time.perf_counter()
        rng = random.Random(f"replay/{len(tour.placed)}/{seat}")
        belief = infer(view)
        rows = []
        for hidden in [truth] + [belief.sample(rng) for _ in range(self.draws)]:
            pre = before_last_turn(view, hidden)
            chosen, values = replay_values(self.heur, pre, attacker, [(card, cell)], 8,
                                           self.playouts, rng)
            held = mask_of([c for s in attackers for c in hidden[s]])
            rows.append({"held": held, "chosen": chosen, "values": values})
        self.seconds += time.perf_counter() - start
        self.defences += 1
        truth_mask = mask_of([c for s in attackers for c in tour.hands[s]])
        self.dump.write(json.dumps({
            "threats": [[m, bool(m & truth_mask)] for m in fresh],
            "rows": rows}) + "\n")
        self.dump.flush()


def main(argv: list[str] | None = None) -> int:
    parser = probe_parser(__doc__, deals=20)
    parser.add_argument("--draws", type=int, default=40)
    parser.add_argument("--playouts", type=int, default=8)
    parser.add_argument("--dump", required=True)
    args = parse_observing_probe(parser, argv)
    warm_up()
    with open(args.dump, "w") as dump:
        probe = ReplayProbe(args.draws, args.playouts, dump)
        for _ in play_first_tours(probe_options(args), probe.watch):
            pass
    print(json.dumps({"defences": probe.defences,
                      "ms_per_defence": 1000 * probe.seconds / max(1, probe.defences)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
