"""Combinations (RULES.md §3) and the traps listed in the shared notes."""

from __future__ import annotations

import itertools
import random

import pytest

from krendzu import DECK, CardError, is_combination
from krendzu.combos import PROGRESSION_RANKS, window_table

# Independent reference: values per rank letter, written out here, not taken from the engine.
VALUES = {"6": [6], "7": [7], "8": [8], "9": [9], "T": [10],
          "J": [2, 12], "Q": [3, 13], "K": [4, 14], "A": [1, 5, 11, 15]}


def slow_is_combination(codes: list[str]) -> bool:
    """Try every value choice; one suit also counts."""
    if len({c[-1] for c in codes}) == 1:
        return True
    for values in itertools.product(*(VALUES[c[0]] for c in codes)):
        diffs = {b - a for a, b in itertools.pairwise(values)}
        if len(diffs) == 1 and 0 not in diffs:
            return True
    return False


def mixed(*ranks: str) -> list[str]:
    """Cards of the given ranks in suits that never make a suit line."""
    suits = "SCDH"
    return [r + suits[i % 4] for i, r in enumerate(ranks)]


@pytest.mark.parametrize(
    ("ranks", "expected"),
    [
        ("A678", True),  # 5 6 7 8
        ("J96Q", True),  # 12 9 6 3
        ("AA9Q", True),  # 1 5 9 13
        ("9TJQ", False),  # J would need to be 11
        ("9TAJ", True),  # 9 10 11 12
        ("A79A", True),  # 5 7 9 11
        ("AJQK", True),  # 1 2 3 4
        ("JQKA", True),  # 12 13 14 15 or 2 3 4 5
        ("KQJA", True),  # 14 13 12 11 / 4 3 2 1
        ("6789", True),
        ("9876", True),
        ("6666", False),
        ("QQQQ", False),
        ("AAAA", False),  # 1 5 11 15 has unequal steps
        ("Q69J", True),  # 3 6 9 12
        ("6Q9J", False),
    ],
)
def test_source_examples_and_traps(ranks: str, expected: bool) -> None:
    codes = mixed(*ranks)
    assert is_combination(codes) is expected
    assert slow_is_combination(codes) is expected


def test_four_of_one_rank_never_a_progression() -> None:
    for rank in "6789TJQKA":
        assert not is_combination([rank + s for s in "SCDH"])


def test_one_suit_always() -> None:
    assert is_combination(["6D", "8D", "TD", "QD"])
    assert is_combination(["8D", "TD", "QD", "JD"])
    assert is_combination(["AH", "6H", "KH", "9H"])


def test_accepts_card_objects_and_strings() -> None:
    cards = [DECK[0], "7S", "8C", "9D"]
    assert is_combination(cards)


def test_wrong_length_is_an_error() -> None:
    with pytest.raises(CardError):
        is_combination(["6S", "7S", "8S"])


def test_progression_count_matches_notes() -> None:
    assert len(PROGRESSION_RANKS) == 56
    assert len({min(p, p[::-1]) for p in PROGRESSION_RANKS}) == 28


def test_all_rank_tuples_agree_with_slow_reference() -> None:
    letters = "6789TJQKA"
    for ranks in itertools.product(range(9), repeat=4):
        codes = mixed(*(letters[r] for r in ranks))
        assert is_combination(codes) == slow_is_combination(codes), codes


def test_window_table_agrees_on_random_windows() -> None:
    table = window_table()
    rng = random.Random(5)
    hits = 0
    for _ in range(20000):
        cards = rng.sample(DECK, 4)
        a, b, c, d = (card.index + 1 for card in cards)
        fast = table[((a * 37 + b) * 37 + c) * 37 + d] == 1
        slow = slow_is_combination([card.code() for card in cards])
        assert fast == slow
        hits += fast
    assert 0.01 < hits / 20000 < 0.03  # about 1.8% (notes)
    # A window with an empty cell (code 0) is never a combination.
    assert not any(table[i] for i in range(0, 37**3))
