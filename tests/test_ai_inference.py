"""Reading hands from moves (krendzu/ai/inference.py): the weighted draw, the evidence of
missed points, built threats and the exchange, and that it reads the observation only."""

from __future__ import annotations

import itertools
import random
from collections import Counter

from krendzu import Table, Tour, parse_card
from krendzu.ai.calibrate import calibrate, parse_model
from krendzu.ai.inference import (
    FLOOR,
    KEPT_WEAK,
    RANK_CURVE,
    Belief,
    Model,
    RankCheck,
    draw_weighted,
    infer,
)
from krendzu.ai.search import best_turn
from krendzu.ai.threats import mask_of
from tests.helpers import make_tour, play
from tests.test_ai_players import swap_hidden


def idx(text: str) -> int:
    return parse_card(text).index


def completers_of_diamond_line(view_pool: list[int]) -> set[int]:
    """Cards completing 6♦ 7♦ 8♦ on (4, 0): any diamond or any 9."""
    return {c for c in view_pool if c // 9 == idx("6D") // 9 or c % 9 == idx("9S") % 9}


def line_tour(attacker: str) -> Tour:
    """Seat 0 attacks with ``attacker``; seat 1 opens with the queen of clubs and passes
    while seat 0 lays 6♦ 7♦ 8♦ in a row: a threat at (4, 0)."""
    tour = make_tour(Table.DUEL, 0, {0: attacker, 1: "QC 6S 7H AC JC 10S KC QH"})
    play(tour, "QC@0,0", "6D@1,0", "pass", "7D@2,0", "pass", "8D@3,0")
    return tour


def test_draw_weighted_follows_the_product_of_weights() -> None:
    cards, weights = [3, 5, 8, 13], [1.0, 2.0, 3.0, 4.0]
    rng = random.Random(1)
    counts = Counter(tuple(draw_weighted(cards, weights, 2, rng)) for _ in range(40000))
    pairs = list(itertools.combinations(range(4), 2))
    total = sum(weights[i] * weights[j] for i, j in pairs)
    for i, j in pairs:
        expected = weights[i] * weights[j] / total
        assert abs(counts[(cards[i], cards[j])] / 40000 - expected) < 0.01
    assert draw_weighted(cards, weights, 4, rng) == cards
    assert draw_weighted(cards, weights, 0, rng) == []


def test_samples_are_consistent_deals() -> None:
    tour = line_tour("6D 7D 8D KS 7C QS")
    play(tour, "pass", "KS@0,1")
    view = tour.observation(1)
    belief = infer(view)
    rng = random.Random(3)
    for _ in range(50):
        hidden = belief.sample(rng)
        assert set(hidden) == {0}
        assert len(hidden[0]) == view.hand_sizes[0]
        assert set(hidden[0]) <= set(belief.pool)


def test_an_attacker_that_left_a_point_holds_no_completing_card() -> None:
    # The attacker holds no diamond and no 9, so it cannot score on (4, 0): it plays on.
    tour = line_tour("6D 7D 8D KS 7C QS")
    play(tour, "pass", "KS@0,1")
    view = tour.observation(1)
    belief = infer(view)
    completers = completers_of_diamond_line(belief.pool)
    weights = belief.weights[0]
    others = [weights[c] for c in belief.pool if c not in completers]
    assert completers and max(weights[c] for c in completers) < 3 * FLOOR * min(others)
    assert min(others) > 0.5
    rng = random.Random(5)
    mask = mask_of(sorted(completers))
    held = sum(bool(mask_of(belief.sample(rng)[0]) & mask) for _ in range(400)) / 400
    uniform = Belief.uniform(view)
    base = sum(bool(mask_of(uniform.sample(rng)[0]) & mask) for _ in range(400)) / 400
    assert held < base / 3


def test_a_threat_the_attacker_built_is_a_claim_on_its_hand() -> None:
    tour = line_tour("6D 7D 8D 9D KS 7C")
    view = tour.observation(1)  # the defender, right after 8♦ made the threat
    belief = infer(view)
    claims = [c for c in belief.claims if c.seat == 0]
    completers = mask_of(sorted(completers_of_diamond_line(belief.pool)))
    assert any(c.cards == completers and c.keep < 0.9 for c in claims)
    rng = random.Random(7)
    held = sum(bool(mask_of(belief.sample(rng)[0]) & completers) for _ in range(400)) / 400
    without_claims = infer(view, Model(claim_temperature=None))
    base = sum(bool(mask_of(without_claims.sample(rng)[0]) & completers)
               for _ in range(400)) / 400
    assert held > base


def test_the_last_move_is_read_by_rank_under_each_whole_hand() -> None:
    # 8♦ made the threat at (4, 0): with a diamond or a 9 left it was among the attacker's
    # best moves; without one, other moves of most hands score better.
    tour = line_tour("6D 7D 8D 9D KS 7C")
    view = tour.observation(1)
    belief = infer(view)
    [check] = belief.ranks
    assert (check.seat, check.card) == (0, idx("8D"))
    completers = completers_of_diamond_line(belief.pool)
    rng = random.Random(2)
    hands = [rng.sample(belief.pool, view.hand_sizes[0]) for _ in range(400)]
    live = [h for h in hands if set(h) & completers]
    dead = [h for h in hands if not set(h) & completers]
    # Every hand that completes the threat ranks the move among its best 4; every other
    # hand has 4 or more better moves, and the likelihoods follow the curve.
    assert live and dead
    assert max(check.better(h) for h in live) <= 3 <= 4 <= min(check.better(h) for h in dead)
    assert all(check.likelihood(h) == RANK_CURVE[check.better(h)] for h in live)
    mean_live = sum(map(check.likelihood, live)) / len(live)
    mean_dead = sum(map(check.likelihood, dead)) / len(dead)
    assert mean_live > 2.5 * mean_dead
    mask = mask_of(sorted(completers))
    held = sum(bool(mask_of(belief.sample(rng)[0]) & mask) for _ in range(400)) / 400
    without = infer(view, Model(rank_turns=0))
    same = belief.without_ranks()
    assert (same.pool, same.sizes, same.weights, same.claims, same.ranks) == (
        without.pool, without.sizes, without.weights, without.claims, without.ranks)
    assert not without.ranks
    base = sum(bool(mask_of(without.sample(rng)[0]) & mask) for _ in range(400)) / 400
    assert held > base


def test_a_rank_check_counts_the_better_moves_of_the_hand() -> None:
    # Card 1 went to cell 101: worth 3 if the hand also holds card 2 (its threat is then
    # its own), else 1; card 0 would have scored 2 on cell 100; card 9 would have scored.
    table = {
        0: [(2.0, 100, 2.0, ())],
        1: [(3.0, 101, 1.0, ((1 << 2, 2.0, 0.0),))],
        2: [(0.5, 102, 0.5, ())],
        3: [(0.5, 103, 0.5, ())],
    }
    check = RankCheck(0, 1 << 1, 1 << 9, 1, 101, table, curve=(1.0, 0.3), tail=0.05,
                      floor=0.01)
    assert check.better([2, 0]) == 0 and check.likelihood([2, 0]) == 1.0  # its own threat
    assert check.likelihood([3]) == 1.0  # nothing better in that hand
    assert check.better([0, 3]) == 1 and check.likelihood([0, 3]) == 0.3  # one better move
    assert check.better([2, 9]) == -1 and check.likelihood([2, 9]) == 0.01  # it could score
    # Two better moves (card 0 on cell 100, and card 3 where card 1 is worth only 0.5 less
    # than before): beyond the curve, the tail.
    low = RankCheck(0, 1 << 1, 1 << 9, 1, 101, {**table, 3: [(2.5, 103, 2.5, ())]},
                    curve=(1.0, 0.3), tail=0.05, floor=0.01)
    assert low.better([0, 3]) == 2 and low.likelihood([0, 3]) == 0.05
    assert low.better([0, 3], cap=1) == 1


def test_an_attacker_that_swapped_nothing_kept_no_weak_seed() -> None:
    tour = make_tour(Table.DUEL, 0, {0: "6D 7D 8D 9D KS 7C", 1: "QC 6S 7H AC JC 10S KC QH"},
                     exchange_limit=2)
    play(tour, "ann:0", "ann:0")
    view = tour.observation(1)
    belief = infer(view)
    weights = belief.weights[0]
    queens = [c for c in belief.pool if c % 9 == idx("QS") % 9]
    assert queens and all(abs(weights[q] - KEPT_WEAK) < 1e-9 for q in queens)
    assert max(weights[c] for c in belief.pool) == 1.0


def test_the_belief_reads_the_observation_only() -> None:
    rng = random.Random(11)
    tour = line_tour("6D 7D 8D 9D KS 7C")
    play(tour, "pass", "9D@4,0", "pass", "KS@0,1")
    for _ in range(5):
        twin = swap_hidden(tour, 1, rng)
        assert twin.observation(1) == tour.observation(1)
        a, b = infer(tour.observation(1)), infer(twin.observation(1))
        assert (a.pool, a.sizes, a.weights, a.claims) == (b.pool, b.sizes, b.weights, b.claims)
        assert [(r.seat, r.known, r.scoring, r.card, r.cell, r.table) for r in a.ranks] == [
            (r.seat, r.known, r.scoring, r.card, r.cell, r.table) for r in b.ranks]


def test_calibration_scores_models_against_the_real_hands() -> None:
    report = calibrate(2, "normal", "duel", ["12/5", "-/-"], draws=20, seed=1)
    assert report["decisions"] > 0
    rows = report["by_temperature"]
    assert set(rows) == {"12/5", "-/-", "uniform"} and report["best"] in rows
    for row in rows.values():
        assert -5.0 < row["card_loglik"] < 0.0 and 0.0 <= row["threat_brier"] <= 1.0
    assert parse_model("-/3/0.1") == Model(None, 3.0, 0.1)



def test_a_defender_pays_for_every_card_it_places() -> None:
    # Pass, one block, two blocks: equal playout means → the cheapest turn; a block must
    # save more than its card's share of the rationing cost to be played.
    block, double = [(3, 100)], [(3, 100), (4, 200)]
    cands = [block, [], double]
    assert best_turn(cands, [-0.5, -0.5, -0.5], prior=0.06, spend=0.1) == []
    assert best_turn(cands, [-0.5, -0.55, -0.5], prior=0.0, spend=0.1) == []
    assert best_turn(cands, [-0.4, -0.55, -0.5], prior=0.0, spend=0.1) == block
    assert best_turn(cands, [-0.5, -0.9, -0.25], prior=0.0, spend=0.1) == double
    # Without the cost (an attacker, or the hard-v1 baseline) the favourite keeps its
    # head start and the best mean wins.
    assert best_turn(cands, [-0.5, -0.5, -0.5], prior=0.06, spend=0.0) == block
