"""The notes' greedy baseline (a yardstick for the arena, not a product level).

Attacker: take points now, else maximise the cells its own hand could complete.
Defender: never an own goal; block the most likely threat if its chance is at least 0.25,
a second one if at least 0.35 and cards allow; else pass.
"""

from __future__ import annotations

import random

from krendzu.ai.heuristic import Heuristic, Knowledge, Turn
from krendzu.ai.threats import cell_threat, threat_map
from krendzu.tour import Tour


def greedy_turn(tour: Tour, seat: int, rng: random.Random) -> Turn:
    know = Knowledge(tour, seat)
    threats = threat_map(tour.cells, tour.placed)
    hand = tour.hands[seat]
    cells = tour.cells
    if tour.is_attacker[seat]:
        best: tuple[float, int, int] | None = None
        for c in tour.placement_cells():
            here = threats.get(c, 0)
            for x in hand:
                if here >> x & 1:
                    value = 1000.0 + rng.random()
                else:
                    rest = know.hand & ~(1 << x)
                    cells[c] = x + 1
                    value = rng.random()
                    for d in (1, -1, 80, -80, 81, -81, 79, -79):
                        for r in (1, 2, 3):
                            g = c + d * r
                            if not cells[g] and cell_threat(cells, g) & rest:
                                value += 1.0
                    cells[c] = 0
                if best is None or value > best[0]:
                    best = (value, x, c)
        assert best is not None
        return [(best[1], best[2])]
    heur = Heuristic()
    if not tour.placed or not tour.attackers_have_cards():
        return [heur._quiet_place(tour, seat, threats)]
    live = heur._live(tour, know, threats, None)
    ranked = sorted(live.items(), key=lambda t: (-t[1], t[0]))
    if tour.step_in_turn == 1:
        ranked = [r for r in ranked if r[1] >= 0.35]
        ranked = ranked[:1]
    plan: Turn = []
    used: set[int] = set()
    for i, (g, p) in enumerate(ranked[:2]):
        if p < (0.25 if i == 0 else 0.35) or (i == 1 and len(hand) < 2):
            break
        m = threats[g]
        card = next((y for y in hand if not m >> y & 1 and y not in used), None)
        if card is None:
            break
        used.add(card)
        plan.append((card, g))
    return plan
