"""Actions: one step of the game each, small, hashable, with a short text round-trip.

A *step* is one card placed, a pass, ending a defender's turn after its first card, an
exchange announcement or one secret discard. The exchange redeal is a *chance* action.
``str(action)`` and :func:`parse_action` round-trip; every player action's text is at most
40 bytes so it fits in Telegram button data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from krendzu.cards import Card, parse_card
from krendzu.illegal import NotAnAction


@dataclass(frozen=True, slots=True)
class Place:
    """Put ``card`` on cell (x, y); x grows to the right, y downward, opening card at (0, 0)."""

    card: Card
    x: int
    y: int

    def __str__(self) -> str:
        return f"{self.card.code()}@{self.x},{self.y}"


@dataclass(frozen=True, slots=True)
class Pass:
    """A defender's chosen pass (not a skipped turn)."""

    def __str__(self) -> str:
        return "pass"


@dataclass(frozen=True, slots=True)
class EndTurn:
    """A defender stops after its first card instead of placing a second."""

    def __str__(self) -> str:
        return "end"


@dataclass(frozen=True, slots=True)
class Announce:
    """Exchange: announce publicly how many cards this player will exchange."""

    count: int

    def __str__(self) -> str:
        return f"ann:{self.count}"


@dataclass(frozen=True, slots=True)
class Discard:
    """Exchange: secretly discard one card (a player discards as many as it announced)."""

    card: Card

    def __str__(self) -> str:
        return f"drop:{self.card.code()}"


@dataclass(frozen=True, slots=True)
class Redeal:
    """Chance: the replacement cards, per exchanging player in announcement order."""

    draws: tuple[tuple[Card, ...], ...]

    def __str__(self) -> str:
        return "redeal:" + "/".join(".".join(c.code() for c in d) for d in self.draws)


Action = Place | Pass | EndTurn | Announce | Discard | Redeal
PlayerAction = Place | Pass | EndTurn | Announce | Discard

_PLACE_RE = re.compile(r"^\s*(\S{2,3})\s*@\s*(-?\d{1,3})\s*,\s*(-?\d{1,3})\s*$")
_INT_RE = re.compile(r"^\d{1,3}$")


def parse_action(text: str) -> Action:
    """Inverse of ``str(action)``; raises :class:`~krendzu.illegal.NotAnAction` (an
    ``IllegalMove``) for anything else."""
    if not isinstance(text, str) or len(text) > 400:
        raise NotAnAction("not an action", given=text)
    stripped = text.strip()
    low = stripped.lower()
    if low == "pass":
        return Pass()
    if low == "end":
        return EndTurn()
    if low.startswith("ann:"):
        count = low[4:]
        if not _INT_RE.match(count):
            raise NotAnAction(f"bad announcement {text!r}: expected e.g. 'ann:2'", given=text)
        return Announce(int(count))
    if low.startswith("drop:"):
        return Discard(parse_card(stripped[5:]))
    if low.startswith("redeal:"):
        body = stripped[7:]
        groups = body.split("/") if body else []
        return Redeal(tuple(tuple(parse_card(c) for c in g.split(".") if c) for g in groups))
    match = _PLACE_RE.match(stripped)
    if match:
        return Place(parse_card(match.group(1)), int(match.group(2)), int(match.group(3)))
    raise NotAnAction(f"not an action: {text!r}", given=text)
