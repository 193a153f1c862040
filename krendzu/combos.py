"""Which four cards in a line make a combination (RULES.md §3).

Two precomputed tables make scoring a lookup:

* ``PROGRESSION_RANKS``: the ordered rank 4-tuples whose values can be chosen to form an
  arithmetic progression with a non-zero difference (56 of them).
* ``window_table()``: a ``bytearray`` over ``37**4`` entries indexed by four board codes
  (0 = empty cell, ``card + 1`` otherwise); an entry is 1 when the four cards form a
  combination. Built once, lazily (about 0.1 s), and shared.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from functools import cache

from krendzu.cards import DECK_SIZE, RANK_VALUES, Card, parse_card
from krendzu.errors import CardError

CODES = DECK_SIZE + 1  # board code space: 0 empty, 1..36 a card


def _rank_tuple_is_progression(ranks: tuple[int, int, int, int]) -> bool:
    for values in itertools.product(*(RANK_VALUES[r] for r in ranks)):
        step = values[1] - values[0]
        if step and values[2] - values[1] == step and values[3] - values[2] == step:
            return True
    return False


PROGRESSION_RANKS: frozenset[tuple[int, int, int, int]] = frozenset(
    ranks
    for ranks in itertools.product(range(9), range(9), range(9), range(9))
    if _rank_tuple_is_progression(ranks)
)


def _is_combo_indices(a: int, b: int, c: int, d: int) -> bool:
    if a // 9 == b // 9 == c // 9 == d // 9:
        return True
    return (a % 9, b % 9, c % 9, d % 9) in PROGRESSION_RANKS


@cache
def window_table() -> bytearray:
    """The 37**4 lookup of "these four board codes form a combination"."""
    table = bytearray(CODES**4)
    prog_rank_rows: dict[tuple[int, int, int], bytes] = {}
    for r0, r1, r2 in itertools.product(range(9), repeat=3):
        row = bytearray(9)
        for r3 in range(9):
            if (r0, r1, r2, r3) in PROGRESSION_RANKS:
                row[r3] = 1
        prog_rank_rows[(r0, r1, r2)] = bytes(row)
    for a in range(1, CODES):
        ca = a - 1
        for b in range(1, CODES):
            cb = b - 1
            for c in range(1, CODES):
                cc = c - 1
                rank_row = prog_rank_rows[(ca % 9, cb % 9, cc % 9)]
                row = bytearray(rank_row * 4)
                suit = ca // 9
                if cb // 9 == suit and cc // 9 == suit:
                    row[suit * 9 : suit * 9 + 9] = b"\x01" * 9
                base = ((a * CODES + b) * CODES + c) * CODES + 1
                table[base : base + DECK_SIZE] = row
    return table


def is_combination(cards: Iterable[Card | str]) -> bool:
    """Four cards in line order (objects or notation strings) → do they score?

    One suit, or values forming a non-zero arithmetic progression (either direction).
    """
    parsed = [parse_card(c) for c in cards]
    if len(parsed) != 4:
        raise CardError(f"a combination is exactly four cards, not {len(parsed)}")
    a, b, c, d = (card.index for card in parsed)
    return _is_combo_indices(a, b, c, d)


def is_progression(cards: Iterable[Card | str]) -> bool:
    """Four cards whose values can form a non-zero arithmetic progression in this order."""
    parsed = [parse_card(c) for c in cards]
    if len(parsed) != 4:
        raise CardError(f"a progression is exactly four cards, not {len(parsed)}")
    return tuple(card.rank for card in parsed) in PROGRESSION_RANKS
