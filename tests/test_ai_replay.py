"""Replaying the attacker's last move (krendzu/ai/replay.py): when it applies, the
likelihood, and that it favours the deals that explain the move."""

from __future__ import annotations

import random

from krendzu import Table, parse_card
from krendzu.ai.heuristic import NORMAL, Heuristic
from krendzu.ai.inference import Belief, infer
from krendzu.ai.replay import (
    FLOOR,
    Replayed,
    before_last_turn,
    last_attack,
    likelihood,
    replay_values,
    replayed,
)
from krendzu.ai.threats import mask_of
from krendzu.board import cell_index
from tests.helpers import make_tour, play


def idx(text: str) -> int:
    return parse_card(text).index


def threat_tour(attacker: str):
    """Seat 0 attacks with ``attacker``; seat 1 opens with the queen of clubs and passes
    while seat 0 lays 6♦ 7♦ 8♦ in a row (a threat at (4, 0)), then 9♣ below the 8."""
    tour = make_tour(Table.DUEL, 0, {0: attacker, 1: "QC 6S 7H AC JC 10S KC QH"})
    play(tour, "QC@0,0", "6D@1,0", "pass", "7D@2,0", "pass", "8D@3,0")
    return tour


def test_likelihood_is_one_for_the_best_and_falls_with_the_regret() -> None:
    assert likelihood(1, [0.5, 0.8, 0.2], prior=0.06) == 1.0
    assert likelihood(0, [0.5, 0.5], prior=0.06) == 1.0  # the favourite's head start
    worse = likelihood(2, [0.5, 0.8, 0.6], prior=0.06)
    worst = likelihood(2, [0.5, 0.8, 0.3], prior=0.06)
    assert 1.0 > worse > worst >= FLOOR
    assert likelihood(-1, [], prior=0.06) == FLOOR  # not among the candidates at all
    assert likelihood(1, [0.0, 9.0, 0.0], prior=0.06) == 1.0
    assert likelihood(0, [0.0, 9.0], prior=0.06) == FLOOR


def test_last_attack_reads_only_another_attackers_card() -> None:
    tour = threat_tour("6D 7D 8D KS 7C QS")
    view = tour.observation(1)
    assert last_attack(view) == (0, idx("8D"), cell_index(3, 0))
    play(tour, "pass")
    assert last_attack(tour.observation(0)) is None  # the viewer's opponent passed
    opening = make_tour(Table.DUEL, 0, {0: "6D 7D", 1: "QC 6S 7H"})
    play(opening, "QC@0,0", "6D@1,0")
    assert last_attack(opening.observation(1)) == (0, idx("6D"), cell_index(1, 0))
    fresh = make_tour(Table.DUEL, 0, {0: "6D 7D", 1: "QC 6S 7H"})
    play(fresh, "QC@0,0")
    assert last_attack(fresh.observation(0)) is None  # the opening card


def test_before_last_turn_is_the_board_the_attacker_saw() -> None:
    tour = threat_tour("6D 7D 8D KS 7C QS")
    view = tour.observation(1)
    pre = before_last_turn(view, {0: [idx("KS"), idx("7C"), idx("QS")]})
    assert pre.current_player == 0
    assert len(pre.placed) == len(tour.placed) - 1
    assert sorted(pre.hands[0]) == sorted(idx(c) for c in ["8D", "KS", "7C", "QS"])


def test_the_move_made_is_the_best_replayed_under_a_hand_that_explains_it() -> None:
    # The attacker lays 8♦ to make 6♦ 7♦ 8♦ _; holding the 9♦ it was best (it scores next
    # turn unless blocked); holding no diamond and no 9, that threat is dead.
    tour = threat_tour("6D 7D 8D 9D KS 7C")
    view = tour.observation(1)
    heur = Heuristic(NORMAL)
    move = [(idx("8D"), cell_index(3, 0))]
    live = before_last_turn(view, {0: [idx("9D"), idx("KS"), idx("7C")]})
    chosen, values = replay_values(heur, live, 0, move, 8, 24, random.Random(1))
    assert chosen >= 0
    assert likelihood(chosen, values, 0.06) == 1.0
    dead = before_last_turn(view, {0: [idx("JS"), idx("KS"), idx("7C")]})
    chosen_dead, values_dead = replay_values(heur, dead, 0, move, 8, 24, random.Random(1))
    assert likelihood(chosen_dead, values_dead, 0.06) < likelihood(chosen, values, 0.06)


def test_replayed_deals_favour_the_hands_that_explain_the_move() -> None:
    tour = threat_tour("6D 7D 8D 9D KS 7C")
    view = tour.observation(1)
    belief = infer(view)
    out = replayed(view, belief, Heuristic(NORMAL), random.Random(3), 0.06, hands=40,
                   playouts=8)
    assert isinstance(out, Replayed)
    assert len(out.deals) == 40
    line = mask_of([c for c in range(36) if c // 9 == idx("6D") // 9 or c % 9 == idx("9S") % 9])
    live = [w for d, w in zip(out.deals, out.weights, strict=True) if mask_of(d[0]) & line]
    dead = [w for d, w in zip(out.deals, out.weights, strict=True) if not mask_of(d[0]) & line]
    assert live and dead
    assert sum(live) / len(live) > sum(dead) / len(dead)
    rng = random.Random(5)
    drawn = [out.sample(rng) for _ in range(400)]
    share_live = sum(1 for d in drawn if mask_of(d[0]) & line) / 400
    share_before = len(live) / 40
    assert share_live > share_before


def test_replayed_is_none_after_a_point_or_without_an_attack() -> None:
    tour = make_tour(Table.DUEL, 0, {0: "6D 7D 8D 9D KS", 1: "QC 6S 7H AC JC 10S KC"})
    play(tour, "QC@0,0", "6D@1,0", "pass", "7D@2,0", "pass", "8D@3,0", "pass", "9D@4,0")
    view = tour.observation(1)
    assert view.points == 1
    heur = Heuristic(NORMAL)
    assert replayed(view, infer(view), heur, random.Random(1), 0.06) is None
    assert replayed(view, infer(view), heur, random.Random(1), 0.06, hands=0) is None
    assert replayed(tour.observation(0), Belief.uniform(tour.observation(0)), heur,
                    random.Random(1), 0.06) is None
