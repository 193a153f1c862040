"""Card faces and board tiles, drawn by code once per size and cached.

Every tile is a square RGB image exactly one board cell large, already composited on the
felt, so the board is built by pasting tiles: a card, a card of the last move (gold ring),
an empty cell, or an empty cell where a card may go (a subtle hint). Suits are drawn as
shapes (not font glyphs) so they stay crisp and tell the suits apart without colour; red is
for ♦ ♥ and near-black for ♠ ♣. Shapes are drawn four times larger and scaled down, for
smooth edges.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from PIL import Image, ImageChops, ImageDraw, ImageFilter

from krendzu.cards import RANK_NAMES, Card
from render.typeface import font

RGB = tuple[int, int, int]
SS = 4  # supersampling factor for shapes


@dataclass(frozen=True, slots=True)
class Theme:
    """Colours of the pictures (hashable: tiles are cached per theme)."""

    felt: RGB = (27, 94, 62)
    slot: RGB = (33, 106, 71)
    slot_edge: RGB = (40, 118, 80)
    band: RGB = (17, 60, 40)
    band_text: RGB = (214, 232, 220)
    header: RGB = (12, 40, 27)
    header_text: RGB = (236, 244, 238)
    header_dim: RGB = (160, 196, 174)
    accent: RGB = (255, 196, 46)
    card: RGB = (252, 250, 244)
    card_edge: RGB = (196, 188, 170)
    shadow: RGB = (10, 44, 28)
    red: RGB = (208, 28, 42)
    black: RGB = (26, 26, 30)
    hint: RGB = (92, 160, 122)
    combo: RGB = (32, 120, 255)
    own_goal: RGB = (226, 60, 220)
    combo_outline: RGB = (255, 255, 255)
    more: RGB = (255, 196, 46)


DEFAULT_THEME = Theme()

# Tile geometry as fractions of the cell.
CARD_INSET = 0.085
CARD_RADIUS = 0.11
RING = 0.07


def card_box(cell: int) -> tuple[int, int, int, int]:
    """The card rectangle inside its cell tile (pixels, inclusive-exclusive)."""
    inset = max(2, round(cell * CARD_INSET))
    return inset, inset, cell - inset, cell - inset


# Suit shapes ----------------------------------------------------------------------------


def _heart_points(n: int = 72) -> list[tuple[float, float]]:
    pts = []
    for i in range(n):
        t = 2 * math.pi * i / n
        x = 16 * math.sin(t) ** 3
        y = -(13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t) - math.cos(4 * t))
        pts.append((x, y))
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    return [((x - x0) / (x1 - x0), (y - y0) / (y1 - y0)) for x, y in pts]


_HEART = _heart_points()


def draw_suit(draw: ImageDraw.ImageDraw, suit: int, box: tuple[float, ...], fill: RGB) -> None:
    """Draw suit ``suit`` (0 ♠, 1 ♣, 2 ♦, 3 ♥) filling ``box`` (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0

    def at(u: float, v: float) -> tuple[float, float]:
        return x0 + u * w, y0 + v * h

    if suit == 3:  # heart
        draw.polygon([at(0.02 + 0.96 * u, 0.04 + 0.92 * v) for u, v in _HEART], fill=fill)
    elif suit == 2:  # diamond, gently concave sides
        pts = []
        corners = [(0.5, 0.0), (0.9, 0.5), (0.5, 1.0), (0.1, 0.5)]
        for k in range(4):
            (ax, ay), (bx, by) = corners[k], corners[(k + 1) % 4]
            for i in range(12):
                s = i / 12
                mx, my = ax + (bx - ax) * s, ay + (by - ay) * s
                bend = 0.06 * math.sin(math.pi * s)
                pts.append(at(mx + (0.5 - mx) * bend * 2, my + (0.5 - my) * bend * 2))
        draw.polygon(pts, fill=fill)
    elif suit == 0:  # spade: an upside-down heart and a flared stem
        draw.polygon([at(0.02 + 0.96 * u, 0.0 + 0.80 * (1 - v)) for u, v in _HEART], fill=fill)
        draw.polygon([at(0.5, 0.55), at(0.70, 1.0), at(0.30, 1.0)], fill=fill)
    else:  # club: three balls and a flared stem
        r = 0.235
        for cx, cy in ((0.5, 0.25), (0.245, 0.60), (0.755, 0.60)):
            draw.ellipse([*at(cx - r, cy - r), *at(cx + r, cy + r)], fill=fill)
        draw.polygon([at(0.5, 0.42), at(0.43, 0.66), at(0.57, 0.66)], fill=fill)
        draw.polygon([at(0.5, 0.55), at(0.70, 1.0), at(0.30, 1.0)], fill=fill)


def suit_colour(suit: int, theme: Theme = DEFAULT_THEME) -> RGB:
    return theme.red if suit >= 2 else theme.black


# Tiles ----------------------------------------------------------------------------------


def _card_base(cell: int, highlight: bool, theme: Theme) -> Image.Image:
    """Felt, shadow, optional gold ring and the blank card, at ``cell`` size (RGB)."""
    big = cell * SS
    img = Image.new("RGB", (big, big), theme.felt)
    x0, y0, x1, y1 = (v * SS for v in card_box(cell))
    radius = cell * CARD_RADIUS * SS
    shadow = Image.new("L", (big, big), 0)
    sd = ImageDraw.Draw(shadow)
    off = max(1, cell // 28) * SS
    sd.rounded_rectangle([x0 + off // 2, y0 + off, x1 + off // 2, y1 + off], radius, fill=150)
    shadow = shadow.filter(ImageFilter.GaussianBlur(off))
    img.paste(theme.shadow, (0, 0), shadow)
    draw = ImageDraw.Draw(img)
    if highlight:
        ring = cell * RING * SS
        draw.rounded_rectangle(
            [x0 - ring, y0 - ring, x1 + ring, y1 + ring], radius + ring, fill=theme.accent
        )
    edge = max(1, cell // 40) * SS
    draw.rounded_rectangle([x0, y0, x1, y1], radius, fill=theme.card_edge)
    draw.rounded_rectangle([x0 + edge, y0 + edge, x1 - edge, y1 - edge], radius - edge,
                           fill=theme.card)
    return img


@lru_cache(maxsize=512)
def card_tile(card: Card | int, cell: int, highlight: bool = False,
              theme: Theme = DEFAULT_THEME) -> Image.Image:
    """The tile of ``card`` at ``cell`` pixels: rank on top, suit shape below (cached).

    Do not modify the returned image: it is shared.
    """
    card = Card(card) if isinstance(card, int) else card
    colour = suit_colour(card.suit, theme)
    big = _card_base(cell, highlight, theme)
    x0, y0, x1, _ = card_box(cell)
    w = x1 - x0
    # Suit shape in the lower part, drawn large.
    draw = ImageDraw.Draw(big)
    size = w * 0.39
    cx = (x0 + x1) / 2
    top = y0 + w * 0.53
    shape_w = size * (0.86 if card.suit == 2 else 1.0)
    draw_suit(
        draw,
        card.suit,
        ((cx - shape_w / 2) * SS, top * SS, (cx + shape_w / 2) * SS, (top + size) * SS),
        colour,
    )
    img = big.resize((cell, cell), Image.Resampling.LANCZOS)
    # Rank on top, drawn at final size for crisp hinting.
    rank = RANK_NAMES[card.rank]
    face = font(round(w * (0.46 if len(rank) == 1 else 0.42)), bold=True)
    left, ink_top, right, ink_bottom = face.getbbox(rank, anchor="ls")
    base_x = cx - (left + right) / 2
    base_y = y0 + w * 0.28 - (ink_top + ink_bottom) / 2
    ImageDraw.Draw(img).text((base_x, base_y), rank, font=face, fill=colour, anchor="ls")
    return img


@lru_cache(maxsize=512)
def card_ink(card: Card, cell: int, highlight: bool = False,
             theme: Theme = DEFAULT_THEME) -> Image.Image:
    """A mask of the rank and suit of ``card``'s tile (to lift them above a combination line)."""
    tile = card_tile(card, cell, highlight, theme)
    blank = _card_base(cell, highlight, theme).resize((cell, cell), Image.Resampling.LANCZOS)
    diff = ImageChops.difference(tile, blank).convert("L")
    return diff.point(lambda v: min(255, v * 3))


@lru_cache(maxsize=512)
def card_halo(card: Card, cell: int, highlight: bool = False,
              theme: Theme = DEFAULT_THEME) -> Image.Image:
    """The rank and suit of ``card``'s tile grown by a narrow halo: pasting the tile through
    it over a combination line keeps the glyphs whole and clear of the line, which passes
    behind them instead of across them."""
    ink = card_ink(card, cell, highlight, theme).point(lambda v: 255 if v > 24 else 0)
    reach = max(1, round(cell * 0.03))
    grown = ink.filter(ImageFilter.MaxFilter(2 * reach + 1))
    return grown.filter(ImageFilter.GaussianBlur(0.5)).point(lambda v: min(255, v * 2))


@lru_cache(maxsize=32)
def empty_tile(cell: int, hint: bool = False, theme: Theme = DEFAULT_THEME) -> Image.Image:
    """An empty cell; with ``hint``, one where a card may legally go (subtly marked)."""
    big = cell * SS
    img = Image.new("RGB", (big, big), theme.felt)
    draw = ImageDraw.Draw(img)
    x0, y0, x1, y1 = (v * SS for v in card_box(cell))
    radius = cell * CARD_RADIUS * SS
    draw.rounded_rectangle([x0, y0, x1, y1], radius, fill=theme.slot)
    if hint:
        width = max(1, cell // 30) * SS
        draw.rounded_rectangle([x0, y0, x1, y1], radius, outline=theme.hint, width=width)
        r = cell * 0.05 * SS
        c = big / 2
        draw.ellipse([c - r, c - r, c + r, c + r], fill=theme.hint)
    return img.resize((cell, cell), Image.Resampling.LANCZOS)


@lru_cache(maxsize=64)
def empty_row(cell: int, columns: int, theme: Theme = DEFAULT_THEME) -> Image.Image:
    """A strip of ``columns`` empty tiles (pasted once per board row)."""
    tile = empty_tile(cell, False, theme)
    strip = Image.new("RGB", (cell * columns, cell))
    for i in range(columns):
        strip.paste(tile, (i * cell, 0))
    return strip


# Combination lines --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineMask:
    """Masks of a combination line: ``outline`` and ``core``, placed at ``offset`` from the
    centre of the line's first cell."""

    outline: Image.Image
    core: Image.Image
    offset: tuple[int, int]


@lru_cache(maxsize=128)
def line_mask(dx: int, dy: int, cell: int, dashed: bool, fresh: bool) -> LineMask:
    """The mask of a line through four cells in direction (dx, dy), anti-aliased, cached."""
    ext = 0.34 * cell
    length = math.hypot(dx, dy)
    ux, uy = dx / length, dy / length
    ax, ay = -ux * ext, -uy * ext
    bx, by = 3 * dx * cell + ux * ext, 3 * dy * cell + uy * ext
    width = cell * (0.12 if fresh else 0.08)
    edge = max(1.5, cell * 0.022)
    pad = width + edge + 2
    left, top = min(ax, bx) - pad, min(ay, by) - pad
    w = math.ceil(max(ax, bx) - min(ax, bx) + 2 * pad)
    h = math.ceil(max(ay, by) - min(ay, by) + 2 * pad)
    masks = []
    for thickness in (width + 2 * edge, width):
        big = Image.new("L", (w * SS, h * SS), 0)
        draw = ImageDraw.Draw(big)
        p = ((ax - left) * SS, (ay - top) * SS)
        q = ((bx - left) * SS, (by - top) * SS)
        segments = [(p, q)]
        if dashed:
            total = math.hypot(q[0] - p[0], q[1] - p[1])
            dash = cell * 0.42 * SS
            segments = []
            s = 0.0
            while s < total:
                e = min(total, s + dash)
                segments.append(
                    (
                        (p[0] + (q[0] - p[0]) * s / total, p[1] + (q[1] - p[1]) * s / total),
                        (p[0] + (q[0] - p[0]) * e / total, p[1] + (q[1] - p[1]) * e / total),
                    )
                )
                s += dash * 1.6
        r = thickness * SS / 2
        for a, b in segments:
            draw.line([a, b], fill=255, width=round(thickness * SS))
            for cx, cy in (a, b):
                draw.ellipse([cx - r, cy - r, cx + r, cy + r], fill=255)
        masks.append(big.resize((w, h), Image.Resampling.LANCZOS))
    outline, core = masks
    alpha = 200 if fresh else 165
    core = core.point(lambda v: v * alpha // 255)
    outline = outline.point(lambda v: v * (230 if fresh else 130) // 255)
    return LineMask(outline, core, (round(left), round(top)))
