"""Threat analysis: completion masks, chances, threat maps, on the rules' examples."""

from __future__ import annotations

import random

from krendzu import DealSizes, Table, Tour, is_combination, parse_card, tour_roles
from krendzu.ai.threats import (
    FULL,
    cell_threat,
    chance,
    gap_mask,
    live_threats,
    mask_of,
    pair_potential,
    points_at,
    threat_map,
    update_threats,
)
from krendzu.board import cell_index
from krendzu.cards import Card
from tests.helpers import make_tour, play


def idx(text: str) -> int:
    return parse_card(text).index


def test_gap_mask_matches_is_combination() -> None:
    rng = random.Random(3)
    for _ in range(300):
        cards = rng.sample(range(36), 3)
        pos = rng.randrange(4)
        mask = gap_mask(cards[0] + 1, cards[1] + 1, cards[2] + 1, pos)
        for x in range(36):
            if x in cards:
                continue
            line = list(cards)
            line.insert(pos, x)
            expect = is_combination([Card(c) for c in line])
            assert bool(mask >> x & 1) == expect, (line, pos)


def test_chance_formula() -> None:
    assert chance(0, 20, 5) == 0.0
    assert chance(3, 20, 0) == 0.0
    assert chance(20, 20, 1) == 1.0
    # 1 - C(18, 5) / C(20, 5)
    assert abs(chance(2, 20, 5) - (1 - 8568 / 15504)) < 1e-12


def test_queen_and_pip_pair_is_harmless_one_way() -> None:
    # Q then 6 in a row: only "Q 6 9 J" (3, 6, 9, 12) continues it, to the right only.
    q, six = idx("QC") + 1, idx("6H") + 1
    left = pair_potential((0, 0, q, six))
    right = pair_potential((q, six, 0, 0))
    assert left == 0
    assert right > 0
    # A suited or figure pair extends both ways.
    qj = pair_potential((0, q, idx("JH") + 1, 0))
    assert qj > 0


def test_hole_with_two_lines_scores_two() -> None:
    # 6♦ 8♦ _ Q♦ J♦ in a row: 10♦ in the gap completes two suit lines (RULES.md §3).
    tour = make_tour(Table.DUEL, 0, {0: "TD 7S 7C", 1: "6D 8D QD JD 6S"})
    cells = tour.cells
    for card, x in (("6D", -2), ("8D", -1), ("QD", 1), ("JD", 2)):
        cells[cell_index(x, 0)] = idx(card) + 1
    gap = cell_index(0, 0)
    assert points_at(cells, gap, idx("TD")) == 2
    assert cell_threat(cells, gap) >> idx("TD") & 1


def fork_tour():
    # The rules source's fork game (duel: seat 1 defends and opens, seat 0 attacks).
    tour = make_tour(
        Table.DUEL, 0, {0: "KH 6C 8D 7D 9S AS", 1: "QC 9D 6H 7H 8S TS JS"}
    )
    play(tour, "QC@0,0", "KH@1,0", "9D@2,0", "end", "6C@1,1", "6H@1,2", "end", "8D@2,1")
    return tour


def test_fork_position_has_two_open_pairs_and_threat_map_updates() -> None:
    tour = fork_tour()
    threats = threat_map(tour.cells, tour.placed)
    # No three-card window with a gap yet: the fork is made of pairs.
    assert all(
        cell_threat(tour.cells, g) == m for g, m in threats.items()
    )
    # The attacker adds 7♦ below 8♦: the vertical 9♦ 8♦ 7♦ is open at both ends.
    tour.apply(tour.legal_actions()[0])  # defender passes
    cell = cell_index(2, 2)
    tour.place(idx("7D"), cell)
    update_threats(threats, tour.cells, cell)
    assert threats == threat_map(tour.cells, tour.placed)
    top, bottom = cell_index(2, -1), cell_index(2, 3)
    assert threats[top] >> idx("TD") & 1
    assert threats[bottom] >> idx("6D") & 1
    unseen = FULL & ~mask_of(tour.hands[1]) & ~mask_of([c for c, _ in tour.placed])
    live = live_threats(threats, tour.fpos, unseen, len(tour.hands[0]))
    assert {cell for _, cell, _ in live} >= {top, bottom}


def test_update_threats_keeps_threat_map_current_in_random_play() -> None:
    rng = random.Random(11)
    roles = tour_roles(Table.DUEL, 0)
    for _ in range(25):
        tour = Tour.deal(Table.DUEL, roles, DealSizes(12, 14), rng)
        threats: dict[int, int] = {}
        while not tour.is_over:
            before = len(tour.placed)
            tour.random_step(rng)
            if len(tour.placed) > before:
                update_threats(threats, tour.cells, tour.placed[-1][1])
                assert threats == threat_map(tour.cells, tour.placed)


def test_threat_map_answers_a_repeated_board_with_a_fresh_copy() -> None:
    tour = fork_tour()
    first = threat_map(tour.cells, tour.placed)
    items = list(first.items())
    first.clear()  # a caller's changes stay its own
    assert list(threat_map(tour.cells, tour.placed).items()) == items
    tour.apply(tour.legal_actions()[0])  # defender passes
    cell = cell_index(2, 2)
    tour.place(idx("7D"), cell)  # a new board gets a new map
    threats = dict(items)
    update_threats(threats, tour.cells, cell)
    assert threat_map(tour.cells, tour.placed) == threats != dict(items)
