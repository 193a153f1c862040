"""Why a step is illegal: typed subclasses of :class:`~krendzu.errors.IllegalMove`.

In the style of python-chess's ``IllegalMoveError`` / ``AmbiguousMoveError``: the engine
raises the subclass that names the rule broken, carrying the facts a caller needs to explain
it (the card, the cell, whose turn), so a user interface picks its reply by the type and
never re-inspects the position. The message (``str(exc)``) is unchanged English for logs,
records and the referee; every class is still an ``IllegalMove`` and a ``ValueError``::

    try:
        match.apply(Place(card, x, y), seat=seat)
    except CellTaken as exc:
        ...  # exc.cell, exc.card: the card already lying there
    except IllegalMove as exc:
        ...  # any other reason, str(exc) says which

This module imports only :mod:`krendzu.errors` and :mod:`krendzu.cards`, so every engine
module above them may raise these.
"""

from __future__ import annotations

from typing import Literal

from krendzu.cards import Card
from krendzu.errors import IllegalMove


class NotAnAction(IllegalMove):
    """Something that is no player's step: unreadable action text, an object that is no
    action, or the exchange redeal offered as a step (chance deals it, not a player)."""

    def __init__(self, message: str, *, given: object = None) -> None:
        super().__init__(message)
        self.given = given


class GameOver(IllegalMove):
    """The tour or the whole match is over: nothing more can be played in it."""


class NotYourTurn(IllegalMove):
    """``seat`` tried to act while ``to_move`` is to act (``TERMINAL``/``CHANCE`` values of
    :mod:`krendzu.tour` included). Raised by ``Match.apply(action, seat=...)``: the turn may
    have passed on within one command (an attacker's one card, the opening card)."""

    def __init__(self, seat: int, to_move: int) -> None:
        super().__init__(f"seat {seat} is not to move (seat {to_move} is)")
        self.seat = seat
        self.to_move = to_move


class WrongPhase(IllegalMove):
    """A step of the other part of the tour: a card during the exchange, an exchange step
    while cards are played, a redeal that is not due. ``phase`` is the tour's phase now
    (``"announce"``, ``"discard"``, ``"redeal"``, ``"play"``, ``"over"``; ``None`` before
    the first tour is dealt)."""

    def __init__(self, message: str, *, phase: str | None) -> None:
        super().__init__(message)
        self.phase = phase


class CardNotInHand(IllegalMove):
    """The player to move does not hold ``card`` (to place or to discard)."""

    def __init__(self, card: Card) -> None:
        super().__init__(f"you do not hold {card.pretty()}")
        self.card = card


class CellError(IllegalMove):
    """A card may not go to the cell ``(x, y)``; the subclasses say why."""

    def __init__(self, message: str, x: int, y: int) -> None:
        super().__init__(message)
        self.x = x
        self.y = y

    @property
    def cell(self) -> tuple[int, int]:
        return self.x, self.y


class WrongOpening(CellError):
    """The opening card of a tour goes to (0, 0), not to ``(x, y)``."""

    def __init__(self, x: int, y: int) -> None:
        super().__init__("the opening card goes at (0, 0)", x, y)


class CellTaken(CellError):
    """``card`` already lies on ``(x, y)``."""

    def __init__(self, x: int, y: int, card: Card) -> None:
        super().__init__(f"({x}, {y}) is already taken", x, y)
        self.card = card


class NotTouching(CellError):
    """``(x, y)`` shares no edge with a card on the board (``far``: it is even beyond the
    furthest cell any card can reach)."""

    def __init__(self, x: int, y: int, *, far: bool = False) -> None:
        message = f"({x}, {y}) does not touch any card on the board"
        if not far:
            message += " (a card must share an edge with one; corners do not count)"
        super().__init__(message, x, y)
        self.far = far


#: Why a pass is refused: in the middle of a defender's two-card turn, as the opening move,
#: by an attacker (who always places one card), or when no attacker holds a card any more.
PassRefusal = Literal["mid-turn", "opening", "attacker", "attackers-out"]

_PASS_MESSAGES: dict[str, str] = {
    "mid-turn": "you have placed a card this turn: place a second or end the turn",
    "opening": "the opening move is exactly one card; it cannot be a pass",
    "attacker": "an attacker must place exactly one card; it cannot pass",
    "attackers-out": "no attacker holds a card any more, so a defender cannot pass: "
                     "play one or two cards",
}


class CannotPass(IllegalMove):
    """Passing is not allowed now; ``reason`` says which rule forbids it."""

    def __init__(self, reason: PassRefusal) -> None:
        super().__init__(_PASS_MESSAGES[reason])
        self.reason: PassRefusal = reason


class NoTurnToEnd(IllegalMove):
    """``EndTurn`` without a defender's first card placed this turn."""

    def __init__(self) -> None:
        super().__init__("there is no turn to end: place a card (or pass)")


class WrongExchangeCount(IllegalMove):
    """An exchange announcement of ``count`` cards where 0 to ``most`` are allowed."""

    def __init__(self, count: object, most: int) -> None:
        super().__init__(f"you may exchange 0 to {most} cards, not {count}")
        self.count = count
        self.most = most


class BadRedeal(IllegalMove):
    """A redeal (chance's step) that does not fit the exchange: wrong groups or cards."""


__all__ = [
    "BadRedeal",
    "CannotPass",
    "CardNotInHand",
    "CellError",
    "CellTaken",
    "GameOver",
    "NoTurnToEnd",
    "NotAnAction",
    "NotTouching",
    "NotYourTurn",
    "PassRefusal",
    "WrongExchangeCount",
    "WrongOpening",
    "WrongPhase",
]
