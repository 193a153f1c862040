"""Board geometry: a flat grid with the opening card in the middle (RULES.md §2–3).

The grid is ``GRID`` cells wide; cell index ``(y + OFFSET) * GRID + (x + OFFSET)``. With at
most 36 cards no card gets further than 35 cells from the opening card, so every window of
four cells through a card, and every neighbour, stays inside the grid: no bounds checks.
A board cell holds ``0`` (empty) or ``card + 1``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

_T = TypeVar("_T")

GRID = 80
OFFSET = 40
ORIGIN = OFFSET * GRID + OFFSET
#: Furthest |x| or |y| a card can ever be placed at (36 cards in a line).
REACH = 36

#: Steps along the four line directions: horizontal, vertical, diagonal, anti-diagonal.
LINE_STEPS: tuple[int, int, int, int] = (1, GRID, GRID + 1, GRID - 1)
#: Steps to the four orthogonal neighbours.
NEIGHBOUR_STEPS: tuple[int, int, int, int] = (1, -1, GRID, -GRID)


class _PerCell(dict[int, _T]):
    """A table by cell index, each entry built on first use: only the few hundred cells
    near the cards are ever asked for."""

    __slots__ = ("_build",)

    def __init__(self, build: Callable[[int], _T]) -> None:
        super().__init__()
        self._build = build

    def __missing__(self, cell: int) -> _T:
        value = self[cell] = self._build(cell)
        return value


#: Per cell, per line direction (``LINE_STEPS`` order), the cells three, two and one steps
#: before it and one, two and three after it: every window through the cell. The hot loops
#: read the board through these instead of computing ``cell ± k * step``, which makes a new
#: int object each time (cell indices are past the small-int cache).
LINE_CELLS: _PerCell[tuple[tuple[int, int, int, int, int, int], ...]] = _PerCell(
    lambda c: tuple((c - 3 * s, c - 2 * s, c - s, c + s, c + 2 * s, c + 3 * s) for s in LINE_STEPS)
)
#: Per cell, its orthogonal neighbours in ``NEIGHBOUR_STEPS`` order (built likewise).
NEIGHBOURS: _PerCell[tuple[int, ...]] = _PerCell(
    lambda c: tuple(c + s for s in NEIGHBOUR_STEPS)
)


def cell_index(x: int, y: int) -> int:
    return (y + OFFSET) * GRID + (x + OFFSET)


def cell_xy(index: int) -> tuple[int, int]:
    y, x = divmod(index, GRID)
    return x - OFFSET, y - OFFSET


def in_reach(x: int, y: int) -> bool:
    return -REACH <= x <= REACH and -REACH <= y <= REACH

