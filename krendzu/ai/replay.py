"""Reading an attacker's last move by replaying its search under each drawn hand.

The opponent model of :mod:`krendzu.ai.inference` scores moves statically: it knows which
threats a hand could complete, not which of them the defender would leave alone. A search
attacker (the hard level, the oracle) chooses by playouts: it prefers the threat it can
complete *and* that the defence will judge unlikely, so its choice says more about its
hand than any static score. So a hard defender draws a few deals from its belief, replays
the attacker's decision under each (the normal scoring's best few moves for that hand,
each finished by a few paired playouts, as the oracle does) and keeps each deal with the
likelihood that the attacker, holding that hand, would have chosen the move it made:
``exp(−beta · regret)``, the regret being how far the move's playout value falls below the
best candidate's (a small floor if the move is not among the candidates at all). The
deals are then drawn from that weighted set (sampling importance resampling).

Measured on the oracle's attacks (``python benchmarks/replay.py``): under the hand it
really held, its move is the replayed best 73 % of the time (mean regret 0.05 points);
under hands drawn from the belief, 49 % (0.19).

Everything is a function of the observation and the rng: the hard level stays an
observation-only player.
"""

from __future__ import annotations

import bisect
import math
import random
import time

from krendzu.ai.heuristic import Heuristic, Turn
from krendzu.ai.inference import Belief
from krendzu.ai.state import opening_tour, replay
from krendzu.ai.threats import threat_map
from krendzu.tour import OVER, Tour, TourView

#: Deals replayed per defence (fewer when a time budget runs short), playouts per
#: candidate, the candidates (the oracle's and the hard level's width at 24 iterations),
#: the likelihood's sharpness per point of regret, and its floor.
HANDS = 24
PLAYOUTS = 8
WIDTH = 8
BETA = 6.0
FLOOR = 0.02


class Replayed:
    """Deals with weights: :meth:`sample` draws one in proportion to its weight."""

    def __init__(self, deals: list[dict[int, list[int]]], weights: list[float]) -> None:
        self.deals = deals
        self.weights = weights
        self.cumulative: list[float] = []
        total = 0.0
        for w in weights:
            total += w
            self.cumulative.append(total)

    def sample(self, rng: random.Random) -> dict[int, list[int]]:
        i = bisect.bisect_right(self.cumulative, rng.random() * self.cumulative[-1])
        return self.deals[min(i, len(self.deals) - 1)]


def last_attack(view: TourView) -> tuple[int, int, int] | None:
    """``(seat, card, cell)`` of the view's last turn if another attacker placed one card
    there (not the opening); else ``None``."""
    if len(view.turns) < 2:
        return None
    turn = view.turns[-1]
    if turn.player == view.viewer or turn.player not in view.roles.attackers:
        return None
    if len(turn.cards) != 1 or view.pending:
        return None
    from krendzu.board import cell_index

    card, x, y = turn.cards[0]
    return turn.player, card.index, cell_index(x, y)


def before_last_turn(view: TourView, hidden: dict[int, list[int]]) -> Tour:
    """The tour just before the view's last turn, the other hands being ``hidden``."""
    tour = opening_tour(view, hidden)
    last = len(view.turns) - 1
    pre: Tour | None = None
    for i, _ in enumerate(replay(view, tour)):
        if i == last:
            pre = tour.clone()
            break
    assert pre is not None
    return pre


def replay_values(heur: Heuristic, pre: Tour, seat: int, move: Turn, width: int,
                  playouts: int, rng: random.Random) -> tuple[int, list[float]]:
    """``move``'s index among the attacker's candidates in ``pre`` (−1 if not among them)
    and every candidate's mean points over ``playouts`` paired playouts."""
    from krendzu.ai.search import _place, candidate_turns, rollout

    cands = candidate_turns(heur, pre, seat, width, exact=True)
    if move not in cands:
        return -1, []
    chosen = cands.index(move)
    totals = [0.0] * len(cands)
    threats0 = threat_map(pre.cells, pre.placed)
    base = pre.points
    for _ in range(playouts):
        seed = rng.getrandbits(32)
        for i, turn in enumerate(cands):
            t = pre.clone()
            threats = dict(threats0)
            for card, cell in turn:
                _place(t, threats, card, cell)
            if t.phase != OVER:
                rollout(t, threats, random.Random(seed))
            totals[i] += t.points - base
    return chosen, [total / playouts for total in totals]


def likelihood(chosen: int, values: list[float], prior: float, beta: float = BETA,
               floor: float = FLOOR) -> float:
    """How likely a search attacker with these candidate values chose candidate
    ``chosen`` (its favourite, the first, has the head start ``prior``)."""
    if chosen < 0:
        return floor
    scored = [v + (prior if i == 0 else 0.0) for i, v in enumerate(values)]
    return max(floor, math.exp(-beta * (max(scored) - scored[chosen])))


def replayed(view: TourView, belief: Belief, heur: Heuristic, rng: random.Random,
             prior: float, deadline: float | None = None, hands: int = HANDS,
             playouts: int = PLAYOUTS, width: int = WIDTH) -> Replayed | None:
    """``hands`` deals of ``belief`` weighted by how well they explain the last attacker's
    non-scoring card (fewer if ``deadline``, a ``perf_counter`` time, comes first);
    ``None`` if the last turn was no such card."""
    attack = last_attack(view) if hands > 0 else None
    if attack is None:
        return None
    seat, card, cell = attack
    move = [(card, cell)]
    deals: list[dict[int, list[int]]] = []
    weights: list[float] = []
    for n in range(hands):
        if deadline is not None and n >= 2 and time.perf_counter() >= deadline:
            break
        hidden = belief.sample(rng)
        pre = before_last_turn(view, hidden)
        if n == 0:
            probe = pre.clone()
            probe.place(card, cell)
            if probe.points != pre.points:
                return None  # it scored: the point, not the hand, explains the move
        chosen, values = replay_values(heur, pre, seat, move, width, playouts, rng)
        deals.append(hidden)
        weights.append(likelihood(chosen, values, prior))
    return Replayed(deals, weights)
