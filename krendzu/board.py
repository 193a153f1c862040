"""Board geometry: a flat grid with the opening card in the middle (RULES.md §2–3).

The grid is ``GRID`` cells wide; cell index ``(y + OFFSET) * GRID + (x + OFFSET)``. With at
most 36 cards no card gets further than 35 cells from the opening card, so every window of
four cells through a card, and every neighbour, stays inside the grid: no bounds checks.
A board cell holds ``0`` (empty) or ``card + 1``.
"""

from __future__ import annotations

from collections.abc import Iterator

GRID = 80
OFFSET = 40
ORIGIN = OFFSET * GRID + OFFSET
#: Furthest |x| or |y| a card can ever be placed at (36 cards in a line).
REACH = 36

#: Steps along the four line directions: horizontal, vertical, diagonal, anti-diagonal.
LINE_STEPS: tuple[int, int, int, int] = (1, GRID, GRID + 1, GRID - 1)
#: Steps to the four orthogonal neighbours.
NEIGHBOUR_STEPS: tuple[int, int, int, int] = (1, -1, GRID, -GRID)
#: Number of cells of the grid.
CELLS = GRID * GRID

#: One int object per cell index, twice over so that a shifted index wraps around the
#: grid instead of failing (at the borders, where no card ever is).
_CELL_INTS = list(range(CELLS)) * 2


def _shifted(offset: int) -> Iterator[int]:
    """For every cell in turn, the cell ``offset`` away."""
    return map(_CELL_INTS.__getitem__, range(offset, offset + CELLS))


def _lines(step: int) -> Iterator[tuple[int, ...]]:
    """For every cell in turn, the cells three, two and one steps before it and one, two
    and three after it along ``step``."""
    return zip(*(_shifted(k * step) for k in (-3, -2, -1, 1, 2, 3)), strict=True)


#: Per cell, per line direction (``LINE_STEPS`` order), the cells of :func:`_lines`: every
#: window through the cell. The hot loops read the board through these instead of computing
#: ``cell ± k * step``, which makes a new int object each time (cell indices are past the
#: small-int cache), and a tuple index is the cheapest lookup there is. About 3 MB, built
#: at import by C-level loops.
LINE_CELLS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    zip(*(_lines(s) for s in LINE_STEPS), strict=True)
)
#: Per cell, its orthogonal neighbours in ``NEIGHBOUR_STEPS`` order.
NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(
    zip(*(_shifted(s) for s in NEIGHBOUR_STEPS), strict=True)
)


def cell_index(x: int, y: int) -> int:
    return (y + OFFSET) * GRID + (x + OFFSET)


def cell_xy(index: int) -> tuple[int, int]:
    y, x = divmod(index, GRID)
    return x - OFFSET, y - OFFSET


def in_reach(x: int, y: int) -> bool:
    return -REACH <= x <= REACH and -REACH <= y <= REACH

