"""What every module of the flow shares: who acts, how a computer decides, what a hint needs.

The bottom of :mod:`chat.flow`: it imports nothing of the flow, so any module may import it.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

from krendzu import Action, MatchView
from krendzu.coords import LabelFrame

#: What a hint needs, taken from the position under the lock: the seat's view, the board's
#: frame.
HintRequest = tuple[MatchView, LabelFrame]


class Decide(Protocol):
    """A computer's decision: (level, the seat's observation, a seed) → the actions of its
    turn. ``urgent``: a person is waiting for it (a hint, their timed-out turn, a computer
    move in a match they play), so it goes before computer-only work (:class:`Thinker`)."""

    def __call__(self, level: str, view: object, seed: int, *,
                 urgent: bool = False) -> Awaitable[list[Action]]: ...


@dataclass(frozen=True, slots=True)
class Actor:
    """Who did something: Telegram user id, display name and Telegram language code."""

    user_id: int
    name: str
    language_code: str | None = None
