"""What the arena, the Swiss league and the pool share: a game's outcome and the typed error.

Kept apart so that each system imports only this, never another system: the arena does not
need the Swiss league to exist, and the pool knows neither.
"""

from __future__ import annotations

from enum import Enum


class Outcome(Enum):
    """A finished game seen from one side. The bot adjudicates; here results are plain data."""

    WIN = "win"
    DRAW = "draw"
    LOSS = "loss"

    @property
    def reverse(self) -> Outcome:
        """The same game seen from the other side: the opponent's outcome."""
        if self is Outcome.WIN:
            return Outcome.LOSS
        if self is Outcome.LOSS:
            return Outcome.WIN
        return Outcome.DRAW


class TournamentError(ValueError):
    """Input that cannot describe a tournament (a player twice, a game with oneself, ...).

    A ``ValueError``, like the engine's errors, so a caller catches bad input in one place.
    """
