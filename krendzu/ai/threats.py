"""Threat analysis on the integer board (cells hold 0 or card + 1).

* A *window* is four cells in a line. A window with three cards and one empty cell (the
  *gap*) is a *threat*: the cards that would complete it form a 36-bit *completion mask*.
* A cell's threat mask is the OR over its (at most 16) windows; the number of unseen
  completing cards is ``popcount(mask & unseen)``.
* The chance that opponents holding ``k`` of ``u`` unseen cards have at least one of ``t``
  completing cards is ``1 - C(u - t, k) / C(u, k)`` (:func:`chance`).
* A *fork* is more live threats than the defender can block in one turn.

Everything here is a pure function of the board codes and is cached where it pays.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from math import comb

from krendzu.board import LINE_CELLS, LINE_STEPS, NEIGHBOUR_STEPS
from krendzu.combos import CODES, window_table

FULL = (1 << 36) - 1
_C = CODES
_C2 = _C * _C
_C3 = _C2 * _C
_TR = bytes.maketrans(b"\x00\x01", b"01")
_PAIRS: dict[int, int] = {}
#: Steps to the 8 cells around a cell: every gap of a threat window is one of them for
#: some card on the board.
AROUND: tuple[int, ...] = tuple(
    s for step in LINE_STEPS for s in (step, -step)
)


class _GapMasks(dict[int, int]):
    """Completion masks by ``((a * 37 + b) * 37 + c) * 4 + pos`` (see :func:`gap_mask`),
    computed on first use. Hot loops index it directly: a lookup, not a call."""

    def __missing__(self, key: int) -> int:
        abc, pos = divmod(key, 4)
        ab, c = divmod(abc, _C)
        a, b = divmod(ab, _C)
        if pos == 0:
            start, step = a * _C2 + b * _C + c, _C3
        elif pos == 1:
            start, step = a * _C3 + b * _C + c, _C2
        elif pos == 2:
            start, step = a * _C3 + b * _C2 + c, _C
        else:
            start, step = a * _C3 + b * _C2 + c * _C, 1
        row = bytes(window_table()[start + step : start + 37 * step : step])
        mask = int(row.translate(_TR)[::-1], 2)
        self[key] = mask
        return mask


#: The shared cache behind :func:`gap_mask`.
MASKS = _GapMasks()


def gap_mask(a: int, b: int, c: int, pos: int) -> int:
    """Cards completing a window whose three cards (board codes, in line order) are a, b, c
    and whose empty cell is at position ``pos`` (0..3)."""
    return MASKS[((a * _C + b) * _C + c) * 4 + pos]


def window_mask(codes: tuple[int, int, int, int] | list[int]) -> int:
    """Completion mask of a window given as four codes with exactly one 0."""
    pos = codes.index(0)
    filled = [c for c in codes if c]
    return gap_mask(filled[0], filled[1], filled[2], pos)


def pair_potential(codes: Sequence[int]) -> int:
    """How many ordered card pairs (from the rest of the deck) complete a window holding
    exactly two cards: a static measure of a pair's promise in that window."""
    key = ((codes[0] * _C + codes[1]) * _C + codes[2]) * _C + codes[3]
    value = _PAIRS.get(key)
    if value is None:
        empties = [i for i in range(4) if not codes[i]]
        used = 0
        for c in codes:
            if c:
                used |= 1 << (c - 1)
        first = empties[0]
        value = 0
        for y in range(36):
            if used >> y & 1:
                continue
            filled = list(codes)
            filled[first] = y + 1
            mask = window_mask(filled) & ~used & ~(1 << y)
            value += mask.bit_count()
        _PAIRS[key] = value
    return value


def cell_masks(cells: bytearray | bytes, e: int) -> list[int]:
    """Completion masks of the windows through the empty cell ``e`` whose other three cells
    hold cards (one entry per window; several may complete at once). Per direction the line
    is ``c3 c2 c1 [e] d1 d2 d3`` (codes; their cells ``pc3`` .. ``pd3``)."""
    out = []
    masks = MASKS
    for pc3, pc2, pc1, pd1, pd2, pd3 in LINE_CELLS[e]:
        c1 = cells[pc1]
        d1 = cells[pd1]
        if not c1 and not d1:
            continue
        c2 = cells[pc2]
        d2 = cells[pd2]
        if c1 and c2:
            c3 = cells[pc3]
            if c3:
                out.append(masks[((c3 * _C + c2) * _C + c1) * 4 + 3])
        if c1 and d1:
            if c2:
                out.append(masks[((c2 * _C + c1) * _C + d1) * 4 + 2])
            if d2:
                out.append(masks[((c1 * _C + d1) * _C + d2) * 4 + 1])
        if d1 and d2:
            d3 = cells[pd3]
            if d3:
                out.append(masks[((d1 * _C + d2) * _C + d3) * 4])
    return out


def cell_threat(cells: bytearray | bytes, e: int) -> int:
    """OR of :func:`cell_masks`: every card that would score on ``e``."""
    mask = 0
    for m in cell_masks(cells, e):
        mask |= m
    return mask


def points_at(cells: bytearray | bytes, e: int, card: int) -> int:
    """Points ``card`` would score if placed on the empty cell ``e``."""
    return sum(1 for m in cell_masks(cells, e) if m >> card & 1)


#: The last board :func:`threat_map` was asked about and its map: a search asks about the
#: same board once per iteration (only the hidden hands change), the heuristics again.
_last_map: tuple[bytes, list[tuple[int, int]], dict[int, int]] | None = None


def threat_map(cells: bytearray | bytes, placed: list[tuple[int, int]]) -> dict[int, int]:
    """Every empty cell that is the gap of a three-card window → its completion mask (a new
    dict; the same board as last time is answered from a copy of the last map)."""
    global _last_map
    last = _last_map
    if last is not None and last[1] == placed and last[0] == cells:
        return dict(last[2])
    out: dict[int, int] = {}
    seen: set[int] = set()
    for _, cell in placed:
        for s in AROUND:
            e = cell + s
            if e in seen or cells[e]:
                continue
            seen.add(e)
            mask = cell_threat(cells, e)
            if mask:
                out[e] = mask
    _last_map = (bytes(cells), list(placed), out)
    return dict(out)


def update_threats(threats: dict[int, int], cells: bytearray | bytes, cell: int) -> None:
    """Keep :func:`threat_map` current after a card was placed on ``cell``.

    Only the (at most 16) windows through ``cell`` change; a window that now holds three
    cards adds its mask to its gap's. Per direction the line is ``a3 a2 a1 [d] b1 b2 b3``
    (codes; their cells ``pa3`` .. ``pb3``); the windows are visited starting at ``d``, then
    one, two and three cells before it (a new gap joins ``threats`` in that order), and
    ``a3`` and ``b3`` are read only when their window can be a threat."""
    threats.pop(cell, None)
    d = cells[cell]
    dd = d * _C
    masks = MASKS
    get = threats.get
    for pa3, pa2, pa1, pb1, pb2, pb3 in LINE_CELLS[cell]:
        a1 = cells[pa1]
        b1 = cells[pb1]
        a2 = cells[pa2]
        b2 = cells[pb2]
        # d b1 b2 b3
        if b1 or b2:
            b3 = cells[pb3]
            if not b1:
                if b3:
                    m = masks[((dd + b2) * _C + b3) * 4 + 1]
                    if m:
                        threats[pb1] = get(pb1, 0) | m
            elif not b2:
                if b3:
                    m = masks[((dd + b1) * _C + b3) * 4 + 2]
                    if m:
                        threats[pb2] = get(pb2, 0) | m
            elif not b3:
                m = masks[((dd + b1) * _C + b2) * 4 + 3]
                if m:
                    threats[pb3] = get(pb3, 0) | m
        # a1 d b1 b2
        if not a1:
            if b1 and b2:
                m = masks[((dd + b1) * _C + b2) * 4]
                if m:
                    threats[pa1] = get(pa1, 0) | m
        elif not b1:
            if b2:
                m = masks[((a1 * _C + d) * _C + b2) * 4 + 2]
                if m:
                    threats[pb1] = get(pb1, 0) | m
        elif not b2:
            m = masks[((a1 * _C + d) * _C + b1) * 4 + 3]
            if m:
                threats[pb2] = get(pb2, 0) | m
        # a2 a1 d b1
        if not a2:
            if a1 and b1:
                m = masks[((a1 * _C + d) * _C + b1) * 4]
                if m:
                    threats[pa2] = get(pa2, 0) | m
        elif not a1:
            if b1:
                m = masks[((a2 * _C + d) * _C + b1) * 4 + 1]
                if m:
                    threats[pa1] = get(pa1, 0) | m
        elif not b1:
            m = masks[((a2 * _C + a1) * _C + d) * 4 + 3]
            if m:
                threats[pb1] = get(pb1, 0) | m
        # a3 a2 a1 d
        if a1 or a2:
            a3 = cells[pa3]
            if not a3:
                if a1 and a2:
                    m = masks[((a2 * _C + a1) * _C + d) * 4]
                    if m:
                        threats[pa3] = get(pa3, 0) | m
            elif not a2:
                m = masks[((a3 * _C + a1) * _C + d) * 4 + 1]
                if m:
                    threats[pa2] = get(pa2, 0) | m
            elif not a1:
                m = masks[((a3 * _C + a2) * _C + d) * 4 + 2]
                if m:
                    threats[pa1] = get(pa1, 0) | m


@lru_cache(maxsize=65536)
def chance(t: int, u: int, k: int) -> float:
    """P(someone holding ``k`` of ``u`` unseen cards holds at least one of ``t`` given ones)."""
    if t <= 0 or k <= 0 or u <= 0:
        return 0.0
    if k > u:
        k = u
    if u - t < k:
        return 1.0
    return 1.0 - comb(u - t, k) / comb(u, k)


def mask_of(cards: list[int] | tuple[int, ...]) -> int:
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def playable(fpos: dict[int, int], cell: int) -> bool:
    return cell in fpos


def touches_after(cells: bytearray | bytes, fpos: dict[int, int], cell: int) -> list[int]:
    """Empty neighbours of ``cell`` that would become playable by a card on ``cell``."""
    return [cell + s for s in NEIGHBOUR_STEPS if not cells[cell + s] and cell + s not in fpos]


def live_threats(
    threats: dict[int, int], fpos: dict[int, int], unseen: int, k: int
) -> list[tuple[float, int, int]]:
    """Playable threat cells as ``(chance, cell, mask)``, most dangerous first: the chance
    that opponents holding ``k`` of the ``unseen`` cards can complete there."""
    u = unseen.bit_count()
    out = []
    for cell, mask in threats.items():
        if cell in fpos:
            p = chance((mask & unseen).bit_count(), u, k)
            if p > 0.0:
                out.append((p, cell, mask))
    out.sort(reverse=True)
    return out


def is_fork(live: list[tuple[float, int, int]], blockable: int = 2, floor: float = 0.3) -> bool:
    """More threats at or above ``floor`` than the defender can block this turn."""
    return sum(1 for p, _, _ in live if p >= floor) > blockable
