"""Coordinates players type and pictures show (ARCHITECTURE.md, "Coordinates players type").

Columns are Latin letters, rows are numbers; the opening card of every tour, engine cell
(0, 0), is at ``M13``::

    column index = x + 12 + col_shift      (0 = A, 25 = Z, 26 = AA, ...)
    row number   = y + 13 + row_shift      (1, 2, ..., 26, 27, ...)

Both shifts start at 0. When a tour needs a cell left of column A or above row 1 (a placed
card or an empty neighbour of one, i.e. a cell a card may go to), the shift grows just
enough to fit and stays for the rest of the tour. :func:`frame_for` computes the frame from
the tour's placements, so it is reproducible from the history alone. Cells right of Z or
below 26 are spelled ``AA``, ``AB``, ... (bijective base 26) and ``27``, ``28``, ..., so
every reachable cell has a label.

Input is forgiving: case does not matter, ``M13``, ``m 13``, ``13M`` and ``13 m`` are the
same cell, and the Cyrillic look-alike letters А В С Е Н К М О Р Т Х (either case) read as
their Latin twins. Standard library only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

#: Column index of the opening card (M) and its row number (13), before any shift.
ORIGIN_COLUMN = 12
ORIGIN_ROW = 13

#: Cyrillic letters that look like Latin ones, upper and lower case, read as the Latin twin.
CYRILLIC_TWINS: dict[str, str] = {
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "К": "K",
    "М": "M", "О": "O", "Р": "P", "Т": "T", "Х": "X",
    "а": "a", "в": "b", "с": "c", "е": "e", "н": "h", "к": "k",
    "м": "m", "о": "o", "р": "p", "т": "t", "х": "x",
}  # fmt: skip
_TWINS = str.maketrans(CYRILLIC_TWINS)
_SEPARATORS = re.compile(r"[\s\-_.,:;/]+")
_LETTERS_FIRST = re.compile(r"([A-Z]{1,3})([0-9]{1,4})")
_DIGITS_FIRST = re.compile(r"([0-9]{1,4})([A-Z]{1,3})")

EXAMPLE = "M13"


class CoordinateError(ValueError):
    """Text that is not a cell label. ``code`` says why (for translated messages)."""

    def __init__(self, message: str, *, text: str = "", code: str = "format") -> None:
        super().__init__(message)
        self.text = text
        self.code = code


def column_name(index: int) -> str:
    """0 → ``A``, 25 → ``Z``, 26 → ``AA``, 27 → ``AB`` (bijective base 26)."""
    if index < 0:
        raise ValueError(f"column index must be 0 or more, not {index}")
    n = index + 1
    out = []
    while n:
        n, rem = divmod(n - 1, 26)
        out.append(chr(ord("A") + rem))
    return "".join(reversed(out))


def column_index(name: str) -> int:
    """Inverse of :func:`column_name`: ``A`` → 0, ``AA`` → 26 (upper-case Latin letters)."""
    n = 0
    for ch in name:
        n = n * 26 + (ord(ch) - ord("A") + 1)
    return n - 1


@dataclass(frozen=True, slots=True)
class LabelFrame:
    """How engine cells map to labels for one tour: shifts are 0 unless the tour needed more."""

    col_shift: int = 0
    row_shift: int = 0

    def column_index(self, x: int) -> int:
        return x + ORIGIN_COLUMN + self.col_shift

    def column_label(self, x: int) -> str:
        index = self.column_index(x)
        if index < 0:
            raise ValueError(f"column x={x} is left of A in this frame; fit it first")
        return column_name(index)

    def row_label(self, y: int) -> str:
        number = y + ORIGIN_ROW + self.row_shift
        if number < 1:
            raise ValueError(f"row y={y} is above row 1 in this frame; fit it first")
        return str(number)

    def label(self, x: int, y: int) -> str:
        """Engine cell → label, e.g. (0, 0) → ``M13`` in an unshifted frame."""
        return self.column_label(x) + self.row_label(y)

    def fits(self, x: int, y: int) -> bool:
        return self.column_index(x) >= 0 and y + ORIGIN_ROW + self.row_shift >= 1

    def fit(self, x: int, y: int) -> LabelFrame:
        """The frame grown just enough for (x, y) to have a label (self if it has one)."""
        col = max(self.col_shift, -(x + ORIGIN_COLUMN))
        row = max(self.row_shift, 1 - (y + ORIGIN_ROW))
        if (col, row) == (self.col_shift, self.row_shift):
            return self
        return LabelFrame(col, row)

    @property
    def shifted(self) -> bool:
        """True once the tour has needed a shift (players should be told)."""
        return bool(self.col_shift or self.row_shift)

    def parse(self, text: str) -> tuple[int, int]:
        """Label text → engine cell (x, y); raise :class:`CoordinateError` for bad input."""
        letters, number = split_label(text)
        x = column_index(letters) - ORIGIN_COLUMN - self.col_shift
        y = number - ORIGIN_ROW - self.row_shift
        return x, y


def _xy(item: Any) -> tuple[int, int]:
    if len(item) == 3:
        return int(item[1]), int(item[2])
    return int(item[0]), int(item[1])


def frame_for(placements: Iterable[Any], start: LabelFrame | None = None) -> LabelFrame:
    """The label frame of a tour after these placements, in play order.

    ``placements`` holds ``(x, y)`` or ``(card, x, y)`` items. Every placed card and its four
    neighbours (an empty neighbour is a cell a card may go to) must have a label; the
    shifts only ever grow, so the frame is the same whenever it is recomputed.
    """
    frame = start or LabelFrame()
    for item in placements:
        x, y = _xy(item)
        frame = frame.fit(x - 1, y - 1)
    return frame


def frame_history(placements: Iterable[Any]) -> list[LabelFrame]:
    """The frame after each placement (``len(placements)`` items); a change = a shift."""
    out = []
    frame = LabelFrame()
    for item in placements:
        x, y = _xy(item)
        frame = frame.fit(x - 1, y - 1)
        out.append(frame)
    return out


def normalise(text: str) -> str:
    """Fold the forgiving spellings to ``LETTERS`` + ``DIGITS`` or ``DIGITS`` + ``LETTERS``."""
    text = unicodedata.normalize("NFKC", text).translate(_TWINS)
    return _SEPARATORS.sub("", text).upper()


def split_label(text: str) -> tuple[str, int]:
    """``"m 13"`` → ``("M", 13)``; raise :class:`CoordinateError` with a polite message."""
    if not isinstance(text, str):
        raise CoordinateError(
            f"A cell is written as text like {EXAMPLE}.", text=str(text), code="type"
        )
    raw = normalise(text)
    if not raw:
        raise CoordinateError(
            f"Please name a cell: a column letter and a row number, e.g. {EXAMPLE}.",
            text=text,
            code="empty",
        )
    match = _LETTERS_FIRST.fullmatch(raw)
    if match:
        letters, digits = match.group(1), match.group(2)
    else:
        match = _DIGITS_FIRST.fullmatch(raw)
        if not match:
            shown = text.strip()[:20]
            if not any(ch.isdigit() for ch in raw):
                hint = "a row number is missing"
            elif not any("A" <= ch <= "Z" for ch in raw):
                hint = "a column letter is missing"
            else:
                hint = "write the column letters and the row number"
            raise CoordinateError(
                f"Sorry, {shown!r} is not a cell: {hint}, e.g. {EXAMPLE} or 13M.",
                text=text,
                code="format",
            )
        digits, letters = match.group(1), match.group(2)
    number = int(digits)
    if number < 1:
        raise CoordinateError(
            f"Sorry, rows are numbered from 1, so {text.strip()[:20]!r} is not a cell.",
            text=text,
            code="row",
        )
    return letters, number
