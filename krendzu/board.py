"""Board geometry: a flat grid with the opening card in the middle (RULES.md §2–3).

The grid is ``GRID`` cells wide; cell index ``(y + OFFSET) * GRID + (x + OFFSET)``. With at
most 36 cards no card gets further than 35 cells from the opening card, so every window of
four cells through a card, and every neighbour, stays inside the grid: no bounds checks.
A board cell holds ``0`` (empty) or ``card + 1``.
"""

from __future__ import annotations

GRID = 80
OFFSET = 40
ORIGIN = OFFSET * GRID + OFFSET
#: Furthest |x| or |y| a card can ever be placed at (36 cards in a line).
REACH = 36

#: Steps along the four line directions: horizontal, vertical, diagonal, anti-diagonal.
LINE_STEPS: tuple[int, int, int, int] = (1, GRID, GRID + 1, GRID - 1)
#: Per line direction, the steps to the cells one, two and three away (the cells of the
#: windows through a cell), precomputed for the hot loops.
LINES: tuple[tuple[int, int, int], ...] = tuple((s, 2 * s, 3 * s) for s in LINE_STEPS)
#: Steps to the four orthogonal neighbours.
NEIGHBOUR_STEPS: tuple[int, int, int, int] = (1, -1, GRID, -GRID)


def cell_index(x: int, y: int) -> int:
    return (y + OFFSET) * GRID + (x + OFFSET)


def cell_xy(index: int) -> tuple[int, int]:
    y, x = divmod(index, GRID)
    return x - OFFSET, y - OFFSET


def in_reach(x: int, y: int) -> bool:
    return -REACH <= x <= REACH and -REACH <= y <= REACH

