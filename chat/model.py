"""Plain data of the chat layer: the computer levels, keyboards, and a typed move as the
engine's steps, read on the labels of the tour's board (:func:`tour_frame`). (Button data is
written and read by :mod:`chat.flow.views.codec`; a lobby's state and ``/new``'s words are
:mod:`chat.lobby_model`.)

Nothing here imports ``telegram``: buttons are :class:`Button` rows that delivery turns into
inline keyboards, and every parser raises :class:`InputError` (a ``ValueError``) whose
``key`` and ``values`` name a translatable message.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from krendzu import (
    Action,
    Card,
    EndTurn,
    IllegalMove,
    Match,
    Pass,
    Place,
    parse_card,
)
from krendzu.board import cell_xy
from krendzu.coords import CoordinateError, LabelFrame, frame_for
from krendzu.tour import PLAY

#: Computer levels offered to players, weakest first, and their storage codes.
LEVELS: tuple[str, ...] = ("easy", "normal", "hard")
LEVEL_CODES: dict[str, int] = {"random": 0, "easy": 1, "normal": 2, "hard": 3}
LEVEL_NAMES: dict[int, str] = {code: name for name, code in LEVEL_CODES.items()}
DEFAULT_LEVEL = "normal"
#: Telegram: callback data is at most 64 bytes, a keyboard at most 100 buttons, 8 a row.
MAX_CALLBACK_BYTES = 64
MAX_BUTTONS = 100
MAX_ROW = 8
#: Longest message text we read; anything longer is refused before parsing.
MAX_INPUT = 300


class InputError(ValueError):
    """Bad input from a player; ``key`` is an English message to translate with ``values``."""

    def __init__(self, key: str, /, **values: Any) -> None:
        super().__init__(key.format(**values) if values else key)
        self.key = key
        self.values = values


# Keyboards ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Button:
    label: str
    data: str | None = None
    url: str | None = None
    #: A ``web_app`` button's page URL (the Mini App; Telegram allows it in private chats only).
    web_app: str | None = None


Keyboard = list[list[Button]]


def rows_of(buttons: list[Button], width: int) -> Keyboard:
    width = max(1, min(width, MAX_ROW))
    return [buttons[i : i + width] for i in range(0, len(buttons), width)]


def ascii_number(text: str) -> bool:
    """Whether ``text`` is a whole number written in ASCII digits. ``str.isdigit`` alone is
    also true for ``²`` (which ``int`` refuses with a ValueError) and ``٣`` (which ``int``
    reads as 3): every number a person types is checked with this instead."""
    return text.isascii() and text.isdigit()


@dataclass(frozen=True, slots=True)
class Placement:
    card: Card
    x: int
    y: int


def parse_placements(words: list[str], frame: LabelFrame) -> list[Placement]:
    """``QC M12 [9D L12]`` (also ``QC@M12``, ``Q♣ m 12``) → one or two placements."""
    tokens = _tokens(words)
    if not tokens:
        raise InputError("Write a card and a cell, e.g. /play QC M12.")
    out: list[Placement] = []
    i = 0
    while i < len(tokens):
        card_text = tokens[i]
        try:
            card = parse_card(card_text)
        except ValueError as exc:
            raise InputError("“{text}” is not a card. Cards look like QC, 10D, Q♣ or Дт.",
                             text=card_text[:12]) from exc
        cell_words = tokens[i + 1 : i + 3]
        if not cell_words:
            raise InputError("Where should {card} go? Add a cell, e.g. {card} M12.",
                             card=card.pretty())
        # A cell is one token (M12, 12M) or two (M 12).
        for used in (1, 2):
            text = " ".join(cell_words[:used])
            try:
                x, y = frame.parse(text)
            except CoordinateError:
                continue
            out.append(Placement(card, x, y))
            i += 1 + used
            break
        else:
            raise InputError("“{text}” is not a cell: a column letter and a row number, e.g. "
                             "M12.", text=cell_words[0][:12])
    if len(out) > 2:
        raise InputError("At most two cards in one turn.")
    return out


def _tokens(words: list[str]) -> list[str]:
    out: list[str] = []
    for word in words:
        out.extend(t for t in re.split(r"[\s@,;]+|(?:->|→)", word) if t)
    return out


def looks_like_move(text: str) -> bool:
    """Plain text in a private chat that is meant as a move (``QC M12``, ``pass``)."""
    words = text.strip().split()
    return 2 <= len(words) <= 6 and len(text) <= 60


#: Words that pass, or end a defender's turn after one card, typed alone in the private chat
#: (any case) or after ``/play``.
PASS_WORDS = frozenset({"pass", "пас", "/pass"})
END_WORDS = frozenset({"end", "конец", "готово", "хватит"})


def tour_frame(game: Match) -> LabelFrame:
    """The labels of the tour's board now. From the placed cells themselves: a move asks
    for it several times, and the public observation built for it each time copied the
    whole tour (a tenth of the announcement's CPU in ``benchmarks/bot.py``)."""
    return frame_for(cell_xy(cell) for _, cell in game.tour.placed)


def words_to_steps(game: Match, seat: int | None, words: Sequence[str]) -> list[Action]:
    """A typed move (``QC M12``, ``9D L12 QS M14``, ``pass``, ``end``) as the steps of
    ``seat``'s turn: a defender's one-card move also ends the turn. :class:`InputError` for
    words that are not a move."""
    lowered = [w.lower() for w in words]
    if lowered in (["pass"], ["пас"]):
        return [Pass()]
    if len(lowered) == 1 and lowered[0] in END_WORDS:
        return [EndTurn()]
    placements = parse_placements(list(words), tour_frame(game))
    defender = (seat is not None and game.current_player == seat
                and game.tour.phase == PLAY
                and seat not in game.tour.roles.attackers
                and bool(game.tour.placed) and game.tour.step_in_turn == 0)
    return placements_to_steps(placements, defender)


def placements_to_steps(placements: Sequence[Placement], defender_turn: bool) -> list[Action]:
    steps: list[Action] = [Place(p.card, p.x, p.y) for p in placements]
    if defender_turn and len(steps) == 1:
        steps.append(EndTurn())
    return steps


def without_needless_end(game: Match, steps: Sequence[Action]) -> list[Action]:
    """Drop an ``EndTurn`` that a one-card ``/play`` adds when the card already ended the turn
    (the defender's last card, or the tour's end)."""
    if not steps or not isinstance(steps[-1], EndTurn) or len(steps) < 2:
        return list(steps)
    trial = game.clone()
    seat = trial.current_player
    try:
        for step in steps[:-1]:
            trial.apply(step)
    except IllegalMove:
        return list(steps)  # the check that follows explains what is wrong
    if turn_is_over(trial, seat):
        return list(steps[:-1])
    return list(steps)


def turn_is_over(trial: Match, seat: int) -> bool:
    """After a defender's first card: whether that card already ended the seat's turn (its
    last card, or the tour's end), so an ``EndTurn`` added by a one-card ``/play`` is not
    needed."""
    return trial.is_over or trial.current_player != seat or trial.tour.step_in_turn != 1
