"""A tour's rules: placement, scoring, own goals, turn structure, illegal moves (RULES.md §2–4)."""

from __future__ import annotations

import random

import pytest

from krendzu import (
    CHANCE,
    TERMINAL,
    DealSizes,
    EndTurn,
    IllegalMove,
    Pass,
    Place,
    SettingsError,
    Table,
    parse_card,
    tour_roles,
)
from krendzu.board import (
    LINE_CELLS,
    LINE_STEPS,
    NEIGHBOUR_STEPS,
    NEIGHBOURS,
    REACH,
    cell_index,
)
from krendzu.tour import OVER, PLAY, Tour, _shuffled_deck
from tests.helpers import make_tour, play, seats_in_order

# Duel with dealer 0: seat 0 attacks, seat 1 defends and opens.
ATT, DEF = 0, 1


def duel(attacker: str, defender: str):
    return make_tour(Table.DUEL, 0, {ATT: attacker, DEF: defender})


def test_ten_of_diamonds_in_the_gap_scores_two() -> None:
    """6♦ 8♦ _ Q♦ J♦ in a row; 10♦ in the gap completes two suit lines (RULES.md §3)."""
    tour = duel("8D 9C JD TD", "6D 7S KS QD 6S 7H")
    play(tour, "6D@0,0", "8D@1,0", "7S@1,1", "end", "9C@2,1", "KS@3,1", "QD@3,0",
         "JD@4,0", "pass")
    assert tour.points == 0
    assert tour.place(parse_card("TD").index, _cell(2, 0)) == 2
    assert tour.points == 2
    cells = sorted(c.cells for c in tour.combos)
    assert cells == [((0, 0), (1, 0), (2, 0), (3, 0)), ((1, 0), (2, 0), (3, 0), (4, 0))]
    assert all(not c.own_goal for c in tour.combos)
    assert {c.move for c in tour.combos} == {7}  # turn index: the eighth turn


def _cell(x: int, y: int) -> int:
    from krendzu.board import cell_index

    return cell_index(x, y)


def test_fork_game_from_the_sources() -> None:
    """Q♣, K♥, 9♦, 6♣, 6♥, 8♦: the attacker's 8♦ makes a double threat, no points yet."""
    tour = duel("KH 6C 8D 7D 6D 7C", "QC 9D 6H AS AC TS")
    play(tour, "QC@0,0", "KH@1,0", "9D@2,0", "end", "6C@1,1", "6H@1,2", "end", "8D@2,1")
    assert tour.points == 0
    assert tour.card_at(2, 1) == parse_card("8D") and tour.card_at(3, 1) is None
    assert tour.card_at(99, 0) is None
    assert tour.current_player == DEF
    # The defender answers one threat only; the attacker completes the other.
    play(tour, "TS@3,1", "end")  # blocks the horizontal 6♣ 8♦ pair
    play(tour, "7D@2,2")  # vertical 9♦ 8♦ 7♦: open at (2,3)
    play(tour, "pass")
    play(tour, "6D@2,3")  # 9 8 7 6 of diamonds: a suit line and a progression, one point
    assert tour.points == 1
    assert tour.combos[-1].cells == ((2, 0), (2, 1), (2, 2), (2, 3))


def test_own_goal_scores_for_the_attacker() -> None:
    tour = duel("7S 8C KD", "6H 9D QS JS")
    play(tour, "6H@0,0", "7S@1,0", "pass", "8C@2,0")
    assert tour.points == 0
    play(tour, "9D@3,0")  # the defender completes 6 7 8 9 itself
    assert tour.points == 1
    assert tour.combos[0].own_goal is True
    assert tour.combos[0].player == DEF
    assert tour.points_by_player() == {ATT: 1, DEF: 0}


def test_points_from_first_card_count_before_the_second() -> None:
    tour = duel("7S 8C KD", "6H 9D QS JS")
    play(tour, "6H@0,0", "7S@1,0", "pass", "8C@2,0", "9D@3,0")
    assert tour.points == 1 and tour.step_in_turn == 1
    play(tour, "QS@4,0")
    assert tour.points == 1  # 7 8 9 Q is no line
    assert tour.current_player == ATT


def test_second_card_may_touch_only_the_first() -> None:
    tour = duel("7S 8C", "6H 9D QS")
    play(tour, "6H@0,0", "7S@1,0")
    with pytest.raises(IllegalMove, match="does not touch"):
        tour.apply(Place(parse_card("QS"), 3, 0))
    play(tour, "9D@2,0", "QS@3,0")  # legal only because 9♦ is there now
    assert tour.current_player == ATT


def test_a_line_is_never_scored_twice_and_suit_plus_progression_once() -> None:
    tour = duel("7S 8S 9S", "6S QH KH AH")
    play(tour, "6S@0,0", "7S@1,0", "pass", "8S@2,0", "pass", "9S@3,0")
    assert tour.points == 1  # 6 7 8 9 of spades: suit and progression, one point
    play(tour, "QH@3,1", "end")
    assert tour.points == 1


@pytest.mark.parametrize(
    ("steps", "bad", "reason"),
    [
        ([], "QC@1,0", "opening card goes at"),
        ([], "pass", "opening move"),
        ([], "end", "no turn to end"),
        ([], "KH@0,0", "do not hold"),
        (["QC@0,0"], "9D@1,0", "do not hold"),  # the defender's card, attacker to move
        (["QC@0,0"], "KH@0,0", "already taken"),
        (["QC@0,0"], "KH@1,1", "does not touch"),
        (["QC@0,0"], "KH@5,5", "does not touch"),
        (["QC@0,0"], "KH@99,0", "does not touch"),
        (["QC@0,0"], "pass", "cannot pass"),
        (["QC@0,0"], "end", "no turn to end"),
        (["QC@0,0", "KH@1,0"], "ann:1", "announcements are over"),
        (["QC@0,0", "KH@1,0"], "drop:9D", "not the time"),
        (["QC@0,0", "KH@1,0", "9D@2,0"], "pass", "placed a card this turn"),
    ],
)
def test_illegal_moves_raise_and_change_nothing(steps: list[str], bad: str, reason: str) -> None:
    tour = duel("KH 6C 8D", "QC 9D 6H 7S")
    play(tour, *steps)
    before = (tour.hand_sizes(), tour.board(), tour.current_player, tour.step_in_turn,
              len(tour.history))
    with pytest.raises(IllegalMove, match=reason):
        play(tour, bad)
    after = (tour.hand_sizes(), tour.board(), tour.current_player, tour.step_in_turn,
             len(tour.history))
    assert before == after


def test_defender_cannot_pass_once_attackers_are_out() -> None:
    tour = duel("KH", "QC 9D 6H 7S")
    play(tour, "QC@0,0", "KH@1,0")
    assert tour.current_player == DEF
    assert Pass() not in tour.legal_actions()
    with pytest.raises(IllegalMove, match="no attacker holds a card"):
        play(tour, "pass")
    play(tour, "9D@2,0")
    assert EndTurn() in tour.legal_actions()  # one card is enough
    play(tour, "end")
    assert tour.current_player == DEF  # only the defender has cards: it plays on
    play(tour, "6H@3,0", "7S@4,0")
    assert tour.phase == OVER and tour.current_player == TERMINAL


def test_a_defender_emptying_its_hand_ends_its_turn() -> None:
    tour = duel("KH 6C 7C", "QC 9D")
    play(tour, "QC@0,0", "KH@1,0", "9D@2,0")
    assert tour.current_player == ATT  # no "end" needed: the hand is empty
    play(tour, "6C@1,1", "7C@1,2")
    assert tour.is_over
    assert [len(t.cards) for t in tour.turns] == [1, 1, 1, 1, 1]


def test_legal_actions_match_apply() -> None:
    tour = duel("KH 6C 8D", "QC 9D 6H 7S")
    assert {str(a) for a in tour.legal_actions()} == {"QC@0,0", "9D@0,0", "6H@0,0", "7S@0,0"}
    play(tour, "QC@0,0")
    legal = tour.legal_actions()
    assert len(legal) == 3 * 4  # three cards, four neighbours
    assert all(isinstance(a, Place) for a in legal)
    play(tour, "KH@1,0")
    legal = {str(a) for a in tour.legal_actions()}
    assert "pass" in legal and "end" not in legal
    assert len(legal) == 1 + 3 * 6


def test_duel_order_and_attacker_exactly_one() -> None:
    tour = duel("KH 6C 8D", "QC 9D 6H 7S")
    seen = seats_in_order(tour, ["QC@0,0", "KH@1,0", "9D@2,0", "6H@3,0", "6C@1,1",
                                 "pass", "8D@1,-1"])
    assert seen == [DEF, ATT, DEF, DEF, ATT, DEF, ATT]
    assert tour.current_player == DEF
    assert [t.player for t in tour.turns] == [DEF, ATT, DEF, ATT, DEF, ATT]


def test_trio_lone_attacker_plays_twice_when_a_defender_is_out() -> None:
    # Dealer 0 is the lone attacker; seat 1 (after it) opens; order D1 A D2 A.
    tour = make_tour(Table.TRIO_LONE_ATTACKER, 0, {0: "6S 7S 8S 9S", 1: "QH", 2: "KH AH JH TH"})
    steps = ["QH@0,0", "6S@1,0", "KH@-1,0", "end", "7S@2,0", "8S@3,0", "AH@-2,0", "end",
             "9S@4,0", "JH@0,1", "end", "TH@0,-1"]
    seen = seats_in_order(tour, steps)
    assert seen == [1, 0, 2, 2, 0, 0, 2, 2, 0, 2, 2, 2]
    assert tour.is_over


def test_trio_lone_defender_order_and_both_attackers_score() -> None:
    # Dealer 1 is the lone defender and opens; A1 = seat 2, A2 = seat 0.
    tour = make_tour(Table.TRIO_LONE_DEFENDER, 1, {0: "8C 9C", 1: "6H QS KS JS", 2: "7D"})
    seen = seats_in_order(tour, ["6H@0,0", "7D@1,0", "pass", "8C@2,0", "pass", "pass",
                                 "9C@3,0"])
    # A1 is out after its first card; skipping it, the lone defender moves twice in a row
    # (the mirror of the lone attacker's double turn).
    assert seen == [1, 2, 1, 0, 1, 1, 0]
    assert tour.points == 1
    assert tour.points_by_player() == {0: 1, 1: 0, 2: 1}


def test_teams_order_and_second_defender_may_pass_at_once() -> None:
    # Dealer 0: order D1=1, A1=2, D2=3, A2=0; seats 0 and 2 attack.
    tour = make_tour(Table.TEAMS, 0, {0: "6S 7S", 1: "QH KH", 2: "8C 9C", 3: "JD TD"})
    assert tour.roles.attackers == (2, 0) and tour.roles.defenders == (1, 3)
    seen = seats_in_order(tour, ["QH@0,0", "8C@1,0", "pass", "6S@2,0", "KH@3,0", "9C@-1,0",
                                 "JD@4,0", "TD@5,0", "7S@0,1"])
    assert seen == [1, 2, 3, 0, 1, 2, 3, 3, 0]
    assert tour.is_over


def test_skipped_turn_is_not_recorded_as_a_pass() -> None:
    tour = make_tour(Table.TRIO_LONE_ATTACKER, 0, {0: "6S 7S 8S 9S", 1: "QH", 2: "KH AH JH TH"})
    play(tour, "QH@0,0", "6S@1,0", "KH@-1,0", "end", "7S@2,0", "8S@3,0")
    assert [t.player for t in tour.turns] == [1, 0, 2, 0, 0]
    assert all(t.cards for t in tour.turns)


def test_exchange_announce_discard_redeal() -> None:
    # Duel, dealer 0: the defender (seat 1) announces first.
    tour = make_tour(Table.DUEL, 0, {0: "6S 7S 8S", 1: "QH KH AH JH"}, exchange_limit=2,
                     stock="9D TD 6C")
    assert tour.phase == "announce" and tour.current_player == DEF
    assert {str(a) for a in tour.legal_actions()} == {"ann:0", "ann:1", "ann:2"}
    with pytest.raises(IllegalMove, match="0 to 2"):
        play(tour, "ann:3")
    play(tour, "ann:2")
    assert tour.current_player == ATT
    play(tour, "ann:1")
    assert tour.phase == "discard" and tour.current_player == DEF
    with pytest.raises(IllegalMove, match="do not hold"):
        play(tour, "drop:6S")
    play(tour, "drop:QH", "drop:KH")
    assert tour.current_player == ATT
    play(tour, "drop:6S")
    assert tour.current_player == CHANCE and tour.legal_actions() == []
    pool = {"9D", "TD", "6C", "QH", "KH", "6S"}
    import random

    redeal = tour.sample_redeal(random.Random(3))
    assert [len(g) for g in redeal.draws] == [2, 1]
    tour.apply(redeal)
    assert tour.phase == PLAY and tour.current_player == DEF
    assert tour.hand_sizes() == (3, 4)
    drawn = {c.code() for g in redeal.draws for c in g}
    assert drawn <= pool
    assert sorted(c.code() for c in tour.stock_cards()) == sorted(pool - drawn)


def test_redeal_must_come_from_the_pool() -> None:
    from krendzu import Redeal

    tour = make_tour(Table.DUEL, 0, {0: "6S 7S 8S", 1: "QH KH AH JH"}, exchange_limit=1,
                     stock="9D TD")
    play(tour, "ann:1", "ann:0", "drop:QH")
    with pytest.raises(IllegalMove, match="not in the redeal pool"):
        tour.apply(Redeal(((parse_card("6S"),), ())))
    with pytest.raises(IllegalMove, match="must draw 1"):
        tour.apply(Redeal(((), ())))
    tour.apply(Redeal(((parse_card("QH"),), ())))  # drawing back one's own discard is fine
    assert "QH" in [c.code() for c in tour.hand(DEF)]


def test_all_zero_announcements_skip_to_play() -> None:
    tour = make_tour(Table.TEAMS, 0, {0: "6S", 1: "QH", 2: "8C", 3: "JD"}, exchange_limit=3)
    seen = seats_in_order(tour, ["ann:0", "ann:0", "ann:0", "ann:0"])
    assert seen == [1, 2, 3, 0]
    assert tour.phase == PLAY and tour.current_player == 1


def test_announcement_limited_by_hand_size() -> None:
    tour = make_tour(Table.DUEL, 0, {0: "6S", 1: "QH KH"}, exchange_limit=5)
    assert {str(a) for a in tour.legal_actions()} == {"ann:0", "ann:1", "ann:2"}


def test_clone_is_independent() -> None:
    tour = duel("KH 6C 8D", "QC 9D 6H 7S")
    play(tour, "QC@0,0")
    copy = tour.clone()
    play(copy, "KH@1,0", "9D@2,0")
    assert len(tour.placed) == 1 and tour.hand_sizes() == (3, 3)
    assert len(copy.placed) == 3 and copy.hand_sizes() == (2, 2)
    assert tour.current_player == ATT and copy.current_player == DEF


def test_history_round_trips_through_action_text() -> None:
    from krendzu import parse_action

    tour = make_tour(Table.DUEL, 0, {0: "6S 7S 8S", 1: "QH KH AH JH"}, exchange_limit=1,
                     stock="9D")
    play(tour, "ann:1", "ann:0", "drop:QH")
    tour.apply(tour.sample_redeal(random.Random(1)))
    play(tour, "KH@0,0", "6S@1,0", "pass")
    texts = [str(a) for a in tour.history]
    assert [parse_action(t) for t in texts] == tour.history
    assert texts[:3] == ["ann:1", "ann:0", "drop:QH"]
    assert texts[3].startswith("redeal:")
    assert texts[4:] == ["KH@0,0", "6S@1,0", "pass"]


def test_deal_draws_exactly_like_random_shuffle() -> None:
    """Tour.deal inlines Random.shuffle's draws (CPython's algorithm): same deck, same rng
    state after, so seeded matches and records stay reproducible."""
    for seed in range(50):
        mine, ref = random.Random(seed), random.Random(seed)
        expected = list(range(36))
        ref.shuffle(expected)
        assert _shuffled_deck(mine) == expected and mine.getstate() == ref.getstate()
    rng = random.Random(5)
    tour = Tour.deal(Table.TEAMS, tour_roles(Table.TEAMS, 1), DealSizes(7, 8), rng)
    ref = random.Random(5)
    deck = list(range(36))
    ref.shuffle(deck)
    assert sorted(c for hand in tour.hands for c in hand) == sorted(deck[:30])
    assert tour.stock == deck[30:] and rng.getstate() == ref.getstate()
    with pytest.raises(SettingsError, match="at least one card"):
        Tour.deal(Table.DUEL, tour_roles(Table.DUEL, 0), DealSizes(0, 5), rng)


class _PlainSubclass(random.Random):
    """Draws like Random but is not one: random play takes its generic path."""


def test_random_play_draws_like_randrange_whatever_the_rng_class() -> None:
    roles = tour_roles(Table.DUEL, 1)
    for seed in range(20):
        fast, generic = random.Random(seed), _PlainSubclass(seed)
        a = Tour.deal(Table.DUEL, roles, DealSizes(12, 14), fast)
        b = Tour.deal(Table.DUEL, roles, DealSizes(12, 14), generic)
        assert a.play_random(fast) == b.play_random(generic)
        assert a.history == b.history and fast.getstate() == generic.getstate()


def test_board_cell_tables_match_the_steps() -> None:
    """LINE_CELLS / NEIGHBOURS hold exactly cell ± k * step for every cell within reach."""
    for y in range(-REACH, REACH + 1):
        for x in range(-REACH, REACH + 1):
            c = cell_index(x, y)
            assert NEIGHBOURS[c] == tuple(c + s for s in NEIGHBOUR_STEPS)
            assert LINE_CELLS[c] == tuple(
                tuple(c + k * s for k in (-3, -2, -1, 1, 2, 3)) for s in LINE_STEPS
            )
