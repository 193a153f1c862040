"""The hard level's rollouts: the fair defence and the wary one that reads the attackers."""

from __future__ import annotations

import random

from krendzu import Table, Tour, parse_card
from krendzu.ai.search import rollout
from krendzu.ai.threats import mask_of, threat_map
from krendzu.board import cell_index
from tests.helpers import make_tour, play

DEFENDER_HAND = "QC 6S 7H AC JC 10S KC QH"
GAP = cell_index(4, 0)  # right of 6D 7D 8D: any diamond or any nine completes it


def line_tour(attacker_hand: str) -> Tour:
    """The attacker (seat 0) has laid 6D 7D 8D in a row; the defender is to move."""
    tour = make_tour(Table.DUEL, 0, {0: attacker_hand, 1: DEFENDER_HAND})
    play(tour, "QC@0,0", "6D@1,0", "pass", "7D@2,0", "pass", "8D@3,0")
    assert tour.current_player == 1
    return tour


def defender_blocks_first(tour: Tour, *, wary: bool, seeds: range) -> list[bool]:
    """Per rollout seed: whether the rollout defender's next step blocks the gap."""
    defender_cards = {parse_card(c).index for c in DEFENDER_HAND.split()}
    out = []
    for seed in seeds:
        t = tour.clone()
        before = len(t.placed)
        rollout(t, threat_map(t.cells, t.placed), random.Random(seed), wary)
        card, cell = t.placed[before]
        out.append(card in defender_cards and cell == GAP)
    return out


def test_wary_defence_lets_a_dead_threat_be_that_a_fair_one_blocks() -> None:
    tour = line_tour("6D 7D 8D AH KS 7C")  # none of the completing cards
    threats = threat_map(tour.cells, tour.placed)
    assert threats[GAP] and not threats[GAP] & mask_of(tour.hands[0])
    # Nine of the 24 cards the defender cannot see complete it: by counting, it is live.
    assert all(defender_blocks_first(tour, wary=False, seeds=range(10)))
    assert not any(defender_blocks_first(tour, wary=True, seeds=range(10)))


def test_wary_defence_blocks_a_live_threat() -> None:
    tour = line_tour("6D 7D 8D 9D KS 7C")  # 9D completes it
    assert all(defender_blocks_first(tour, wary=True, seeds=range(10)))


def test_an_unblocked_live_threat_is_scored_in_the_rollout() -> None:
    tour = line_tour("6D 7D 8D 9D KS 7C")
    play(tour, "pass")
    t = tour.clone()
    rollout(t, threat_map(t.cells, t.placed), random.Random(1), True)
    assert t.placed[4] == (parse_card("9D").index, GAP)
    assert t.points >= 1


def test_only_the_hard_level_fears_a_wary_defence() -> None:
    from krendzu.ai import make_player
    from krendzu.ai.search import WARY_SHARE

    assert 0.0 < WARY_SHARE <= 1.0
    assert make_player("hard").search.wary == WARY_SHARE  # type: ignore[attr-defined]
    # The yardsticks keep the searches every earlier figure was measured with.
    assert make_player("hard-v1").search.wary == 0.0  # type: ignore[attr-defined]
    assert make_player("oracle").search.wary == 0.0  # type: ignore[attr-defined]
