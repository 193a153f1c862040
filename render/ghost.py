"""Tiles for hints on the board: a suggested card ("ghost") and a labelled empty cell.

A ghost is the card's face faded into the felt, inside a bold dashed ring of its own colour
(no other mark on the board uses it), with a numbered badge in the corner when a defender is
suggested two cards. A labelled cell is the "card may go here" tile with the cell's
coordinate (``L12``) written in it, so a player choosing a cell from buttons can read the
labels off the picture. Like every tile, each is exactly one cell large and cached.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

from PIL import Image, ImageDraw

from krendzu.cards import Card
from render.faces import (
    CARD_RADIUS,
    DEFAULT_THEME,
    RING,
    SS,
    Theme,
    card_box,
    card_tile,
    empty_tile,
)
from render.typeface import font

RGB = tuple[int, int, int]

#: The colour of suggestions (bright cyan: not gold, blue or magenta, which mean the last
#: move, a combination and an own goal) and the dark ink drawn on it.
GHOST: RGB = (40, 224, 255)
GHOST_INK: RGB = (8, 36, 48)
#: How much of the card face shows through (the rest is the empty cell beneath).
GHOST_OPACITY = 0.72


def _rounded_path(x0: float, y0: float, x1: float, y1: float, r: float,
                  steps: int = 10) -> list[tuple[float, float]]:
    """Points around a rounded rectangle, clockwise from the top edge (closed)."""
    pts: list[tuple[float, float]] = []
    corners = ((x1 - r, y0 + r, -90), (x1 - r, y1 - r, 0), (x0 + r, y1 - r, 90),
               (x0 + r, y0 + r, 180))
    for cx, cy, start in corners:
        for i in range(steps + 1):
            a = math.radians(start + 90 * i / steps)
            pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    pts.append(pts[0])
    return pts


def _dashes(path: list[tuple[float, float]], count: int,
            duty: float = 0.58) -> list[list[tuple[float, float]]]:
    """Split a closed path into ``count`` evenly spaced dashes (``duty`` = drawn share)."""
    lengths = [math.dist(a, b) for a, b in itertools.pairwise(path)]
    total = sum(lengths)
    period = total / count
    out: list[list[tuple[float, float]]] = []

    def point_at(s: float) -> tuple[float, float]:
        s %= total
        for (a, b), seg in zip(itertools.pairwise(path), lengths, strict=True):
            if s <= seg and seg:
                t = s / seg
                return a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t
            s -= seg
        return path[-1]

    # Start half a gap before the top-left corner so the corners are drawn.
    for k in range(count):
        start = k * period - period * duty / 2
        pts = [point_at(start + period * duty * i / 12) for i in range(13)]
        out.append(pts)
    return out


@lru_cache(maxsize=128)
def ghost_tile(card: Card, cell: int, order: int = 0, label: str = "",
               theme: Theme = DEFAULT_THEME) -> Image.Image:
    """``card`` suggested for this cell: its face faded, in a dashed cyan ring; with
    ``order`` 1 or more, that number in a badge at the top left; with ``label``, the card
    drawn a little smaller and the cell's coordinate written under it. Cached; do not
    modify the result."""
    img = empty_tile(cell, False, theme).copy()
    if label:
        small = round(cell * 0.72)
        face = Image.blend(empty_tile(small, False, theme), card_tile(card, small, False, theme),
                           GHOST_OPACITY)
        img.paste(face, (round((cell - small) / 2), round(cell * 0.015)), _card_mask(small))
        size = round(label_size(cell) * 0.92)
        text_face = font(size, bold=True)
        room = cell * 0.72
        while text_face.getlength(label) > room and size > 7:
            size -= 1
            text_face = font(size, bold=True)
        ImageDraw.Draw(img).text((cell / 2, cell * 0.79), label, font=text_face, fill=GHOST,
                                 anchor="mm")
    else:
        img = Image.blend(img, card_tile(card, cell, False, theme), GHOST_OPACITY)
    big = cell * SS
    mask = Image.new("L", (big, big), 0)
    draw = ImageDraw.Draw(mask)
    x0, y0, x1, y1 = (v * SS for v in card_box(cell))
    ring = cell * RING * SS * 0.55
    width = max(2.0, cell * 0.075) * SS
    radius = cell * CARD_RADIUS * SS + ring
    path = _rounded_path(x0 - ring, y0 - ring, x1 + ring, y1 + ring, radius)
    for dash in _dashes(path, 8):
        draw.line(dash, fill=255, width=round(width), joint="curve")
        for cx, cy in (dash[0], dash[-1]):
            r = width / 2
            draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=255)
    mask = mask.resize((cell, cell), Image.Resampling.LANCZOS)
    # A dark halo under the dashes keeps them clear on the light card edge and on felt.
    halo = mask.resize((cell * 2, cell * 2)).resize((cell, cell), Image.Resampling.BOX)
    img.paste(GHOST_INK, (0, 0), halo.point(lambda v: min(255, v * 2) * 3 // 5))
    img.paste(GHOST, (0, 0), mask)
    if order:
        _badge(img, str(order), cell)
    return img


@lru_cache(maxsize=16)
def _card_mask(cell: int) -> Image.Image:
    """The card (and its edge) of a ``cell`` tile, as a smooth mask."""
    big = Image.new("L", (cell * SS, cell * SS), 0)
    x0, y0, x1, y1 = (v * SS for v in card_box(cell))
    ImageDraw.Draw(big).rounded_rectangle([x0, y0, x1, y1], cell * CARD_RADIUS * SS, fill=255)
    return big.resize((cell, cell), Image.Resampling.LANCZOS)


def _badge(img: Image.Image, text: str, cell: int) -> None:
    """A cyan disc with ``text`` in the top-left corner of the tile."""
    r = max(7.0, cell * 0.17)
    cx = cy = r + max(1.0, cell * 0.01)
    big = Image.new("L", (cell * SS, cell * SS), 0)
    d = ImageDraw.Draw(big)
    d.ellipse([(cx - r) * SS, (cy - r) * SS, (cx + r) * SS, (cy + r) * SS], fill=255)
    disc = big.resize((cell, cell), Image.Resampling.LANCZOS)
    edge = Image.new("L", (cell * SS, cell * SS), 0)
    e = max(1.0, cell * 0.02)
    ImageDraw.Draw(edge).ellipse([(cx - r - e) * SS, (cy - r - e) * SS, (cx + r + e) * SS,
                                  (cy + r + e) * SS], fill=255)
    img.paste(GHOST_INK, (0, 0), edge.resize((cell, cell), Image.Resampling.LANCZOS))
    img.paste(GHOST, (0, 0), disc)
    face = font(round(r * 1.45), bold=True)
    ImageDraw.Draw(img).text((cx, cy + r * 0.04), text, font=face, fill=GHOST_INK, anchor="mm")


def label_size(cell: int) -> int:
    """Font size of a label written in a cell."""
    return max(10, round(cell * 0.22))


@lru_cache(maxsize=1024)
def labelled_tile(label: str, cell: int, theme: Theme = DEFAULT_THEME) -> Image.Image:
    """The "a card may go here" tile with ``label`` written across its middle (cached)."""
    img = empty_tile(cell, True, theme).copy()
    draw = ImageDraw.Draw(img)
    x0, _, x1, _ = card_box(cell)
    room = x1 - x0 - max(2, cell // 12)
    size = label_size(cell)
    face = font(size, bold=True)
    while face.getlength(label) > room and size > 7:
        size -= 1
        face = font(size, bold=True)
    # Hide the hint dot behind the text, then write the label.
    c = cell / 2
    r = cell * 0.07
    draw.ellipse([c - r, c - r, c + r, c + r], fill=theme.slot)
    draw.text((c, c), label, font=face, fill=theme.header_text, anchor="mm")
    return img
