"""Cards, their values and their text notation (RULES.md §1).

A card is identified by an index 0..35 (``suit * 9 + rank``); :class:`Card` objects are
interned, so ``Card.parse("QC") is Card.parse("Дт")``. The engine works on indices
internally for speed and hands out :class:`Card` objects at its public surface.
"""

from __future__ import annotations

from typing import ClassVar

from krendzu.errors import CardError

RANKS: tuple[str, ...] = ("6", "7", "8", "9", "T", "J", "Q", "K", "A")
SUITS: tuple[str, ...] = ("S", "C", "D", "H")
SUIT_SYMBOLS: tuple[str, ...] = ("♠", "♣", "♦", "♥")
RANK_NAMES: tuple[str, ...] = ("6", "7", "8", "9", "10", "J", "Q", "K", "A")

#: Values each rank may take (the attacking side picks, per line).
RANK_VALUES: tuple[tuple[int, ...], ...] = (
    (6,),
    (7,),
    (8,),
    (9,),
    (10,),
    (2, 12),
    (3, 13),
    (4, 14),
    (1, 5, 11, 15),
)

DECK_SIZE = 36

# Latin input: ranks and suits (upper case; input is case-folded first).
_LATIN_RANKS = {"6": 0, "7": 1, "8": 2, "9": 3, "T": 4, "10": 4, "J": 5, "Q": 6, "K": 7, "A": 8}
_LATIN_SUITS = {"S": 0, "C": 1, "D": 2, "H": 3}
# Cyrillic input (upper case): В Д К Т = J Q K A; п т б ч (and к for крести) = ♠ ♣ ♦ ♥.
_CYR_RANKS = {"В": 5, "Д": 6, "К": 7, "Т": 8}
_CYR_SUITS = {"П": 0, "Т": 1, "К": 1, "Б": 2, "Ч": 3}
_SYMBOL_SUITS = {"♠": 0, "♣": 1, "♦": 2, "♥": 3, "♤": 0, "♧": 1, "♢": 2, "♡": 3}
_VARIATION_SELECTORS = str.maketrans("", "", "\ufe0e\ufe0f")


def _alphabet(text: str) -> str | None:
    """'latin', 'cyrillic' or None (digits and suit symbols belong to neither)."""
    if text.isascii():
        return "latin" if text.isalpha() else None
    if all("\u0400" <= ch <= "\u04ff" for ch in text):
        return "cyrillic"
    return None


class Card:
    """One of the 36 cards. Interned: compare with ``is`` or ``==``; hashable; ordered."""

    __slots__ = ("index", "rank", "suit")
    _all: ClassVar[tuple[Card, ...]]

    index: int
    rank: int
    suit: int

    def __new__(cls, index: int) -> Card:
        if isinstance(index, int) and 0 <= index < DECK_SIZE:
            return cls._all[index]
        raise CardError(f"card index must be 0..35, not {index!r}")

    @classmethod
    def _make(cls, index: int) -> Card:
        obj = object.__new__(cls)
        object.__setattr__(obj, "index", index)
        object.__setattr__(obj, "suit", index // 9)
        object.__setattr__(obj, "rank", index % 9)
        return obj

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Card is immutable")

    def __reduce__(self) -> tuple[type[Card], tuple[int]]:
        return (Card, (self.index,))

    @classmethod
    def from_rank_suit(cls, rank: int, suit: int) -> Card:
        return cls._all[suit * 9 + rank]

    @classmethod
    def parse(cls, text: str) -> Card:
        """Read ``QC``, ``10d``, ``Q♣``, ``Дт`` ... (RULES.md §1); raise CardError if not a card."""
        return parse_card(text)

    @property
    def values(self) -> tuple[int, ...]:
        return RANK_VALUES[self.rank]

    @property
    def is_red(self) -> bool:
        return self.suit >= 2

    @property
    def rank_name(self) -> str:
        return RANK_NAMES[self.rank]

    @property
    def suit_symbol(self) -> str:
        return SUIT_SYMBOLS[self.suit]

    def code(self) -> str:
        """The record notation: Latin rank and suit, ``T`` for ten (``QC``, ``TD``)."""
        return RANKS[self.rank] + SUITS[self.suit]

    def pretty(self) -> str:
        """For people: ``Q♣``, ``10♦``."""
        return RANK_NAMES[self.rank] + SUIT_SYMBOLS[self.suit]

    def __str__(self) -> str:
        return self.code()

    def __repr__(self) -> str:
        return f"Card.parse({self.code()!r})"

    def __lt__(self, other: Card) -> bool:
        """Sort by suit, then rank: how a player arranges a hand."""
        return self.index < other.index

    def __hash__(self) -> int:
        return self.index

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Card) and other.index == self.index


Card._all = tuple(Card._make(i) for i in range(DECK_SIZE))
DECK: tuple[Card, ...] = Card._all


def parse_card(text: str | Card) -> Card:
    """Parse one card in any accepted spelling; raise :class:`CardError` saying what is wrong.

    A :class:`Card` is returned as it is (``is_combination`` takes cards or strings)."""
    if isinstance(text, Card):
        return text
    if not isinstance(text, str):
        raise CardError(f"a card is written as text like 'QC', not {type(text).__name__}")
    raw = text.translate(_VARIATION_SELECTORS).strip().replace(" ", "")
    if not raw:
        raise CardError("empty card: write a rank and a suit, e.g. 'QC' or '10♦'")
    if len(raw) > 3:
        raise CardError(f"{text!r} is not a card: write a rank and a suit, e.g. 'QC' or '10♦'")
    upper = raw.upper()
    rank_text, suit_text = upper[:-1], upper[-1]
    if not rank_text:
        raise CardError(f"{text!r} is not a card: a rank and a suit are needed, e.g. 'QC'")
    rank_alpha = _alphabet(rank_text)
    suit_alpha = _alphabet(suit_text)
    if rank_alpha and suit_alpha and rank_alpha != suit_alpha:
        raise CardError(
            f"{text!r} mixes Latin and Cyrillic letters; write it all in one alphabet, "
            "e.g. 'QC' or 'Дт' (Cyrillic Т is the ace, Latin T the ten)"
        )
    if rank_alpha == "cyrillic":
        rank = _CYR_RANKS.get(rank_text)
    else:
        rank = _LATIN_RANKS.get(rank_text)
    if rank is None:
        raise CardError(
            f"unknown rank {raw[:-1]!r} in {text!r}: use 6 7 8 9 10 (or T) J Q K A, "
            "or В Д К Т in Russian"
        )
    suit: int | None
    if suit_text in _SYMBOL_SUITS:
        suit = _SYMBOL_SUITS[suit_text]
    elif suit_alpha == "cyrillic":
        suit = _CYR_SUITS.get(suit_text)
    else:
        suit = _LATIN_SUITS.get(suit_text)
    if suit is None:
        raise CardError(
            f"unknown suit {raw[-1]!r} in {text!r}: use S C D H or ♠ ♣ ♦ ♥, or п т б ч in Russian"
        )
    return Card._all[suit * 9 + rank]


def parse_cards(texts: str | list[str] | tuple[str, ...]) -> list[Card]:
    """Parse several cards: a list, or one string separated by spaces or commas."""
    if isinstance(texts, str):
        texts = [t for t in texts.replace(",", " ").split() if t]
    return [parse_card(t) for t in texts]
