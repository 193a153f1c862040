"""Pictures for the rules: card values, combinations, and boards that show scoring and cells.

Pure functions, words from :mod:`render.texts` (English; ``texts={...}`` gives a language's
words, as the chat layer does from its catalog), PNG bytes out::

    rules_picture()                  # the values table and combinations drawn with real faces
    rules_board_example()            # a finished tour: a scored line and an own goal
    rules_coordinates_example()      # the cells a card may go to, labelled, and a /hint ghost

Every combination shown is data (:data:`EXAMPLES`) checked by the tests with
:func:`krendzu.is_combination`; the boards are real engine positions (:func:`example_tour`).
``python -m render.illustrations OUT_DIR`` writes them in English; ``python -m chat.painter
OUT_DIR`` in every language of the catalog (the pictures in ``docs/img``).
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from krendzu.cards import RANK_VALUES, SUIT_SYMBOLS, Card, parse_card
from krendzu.coords import frame_for
from krendzu.tables import Table, tour_roles
from krendzu.tour import Tour, TourView
from render.board import board_image
from render.faces import DEFAULT_THEME, Theme, card_tile, line_mask, suit_colour
from render.texts import texts_for
from render.typeface import font

RGB = tuple[int, int, int]

#: Colours beyond the theme: a valid example's tick and an invalid one's cross.
GOOD: RGB = (126, 226, 148)
BAD: RGB = (255, 112, 112)


@dataclass(frozen=True)
class Example:
    """Four cards in a line. ``values``: the value each card takes (None: a suit line);
    ``valid``: whether it is a combination (the tests check both with the engine)."""

    key: str
    cards: tuple[str, str, str, str]
    values: tuple[int, int, int, int] | None
    valid: bool

    @property
    def parsed(self) -> tuple[Card, ...]:
        return tuple(parse_card(c) for c in self.cards)


#: The combinations the rules picture shows, in reading order (three per row).
EXAMPLES: tuple[Example, ...] = (
    Example("suit", ("6H", "TH", "KH", "8H"), None, True),
    Example("run", ("6S", "7D", "8C", "9H"), (6, 7, 8, 9), True),
    Example("faces", ("JC", "9D", "6S", "QH"), (12, 9, 6, 3), True),
    Example("aces", ("AS", "AD", "9C", "QH"), (1, 5, 9, 13), True),
    Example("ace_low", ("AC", "6H", "7S", "8D"), (5, 6, 7, 8), True),
    Example("high", ("KS", "QD", "JC", "AH"), (14, 13, 12, 11), True),
    Example("both", ("6H", "7H", "8H", "9H"), (6, 7, 8, 9), True),
    Example("same_rank", ("7S", "7C", "7D", "7H"), (7, 7, 7, 7), False),
    Example("broken", ("6C", "7H", "9S", "TD"), (6, 7, 9, 10), False),
)

#: One card of each rank for the values table.
VALUE_CARDS: tuple[str, ...] = ("6S", "7H", "8C", "9D", "TS", "JH", "QC", "KD", "AS")

WIDTH = 1200
PAD = 36


# Text helpers -------------------------------------------------------------------------


def wrap(text: str, face: ImageFont.FreeTypeFont, width: float) -> list[str]:
    """Greedy word wrap of ``text`` to lines at most ``width`` pixels wide (only at plain
    spaces: a no-break space keeps its words together)."""
    lines: list[str] = []
    line = ""
    for word in (w for w in text.split(" ") if w):
        trial = f"{line} {word}" if line else word
        if line and face.getlength(trial) > width:
            lines.append(line)
            line = word
        else:
            line = trial
    if line:
        lines.append(line)
    return lines


def _paragraph(draw: ImageDraw.ImageDraw, xy: tuple[float, float], text: str,
               face: ImageFont.FreeTypeFont, width: float, fill: RGB,
               spacing: float = 1.3) -> float:
    """Draw wrapped ``text`` from its top-left ``xy``; return the y below it."""
    x, y = xy
    step = face.size * spacing
    for line in wrap(text, face, width):
        draw.text((x, y + face.size * 0.95), line, font=face, fill=fill, anchor="ls")
        y += step
    return y


def _paragraph_height(text: str, face: ImageFont.FreeTypeFont, width: float,
                      spacing: float = 1.3) -> float:
    return len(wrap(text, face, width)) * face.size * spacing


def _encode(img: Image.Image) -> bytes:
    """PNG with a palette of the picture's own (small, and true to every colour)."""
    out = io.BytesIO()
    img.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(
        out, "PNG", optimize=True)
    return out.getvalue()


def _step_text(step: int) -> str:
    return f"+{step}" if step > 0 else ("0" if step == 0 else f"−{-step}")


# The rules picture ----------------------------------------------------------------------


def rules_image(*, texts: Mapping[str, str] | None = None,
                theme: Theme = DEFAULT_THEME) -> Image.Image:
    """The card values and :data:`EXAMPLES` of combinations, as an RGB image."""
    words = texts_for(texts)
    title_face = font(34, bold=True)
    heading_face = font(26, bold=True)
    note_face = font(20)
    value_face = font(22, bold=True)
    inner = WIDTH - 2 * PAD

    # Geometry first, so the canvas is exactly as tall as it needs to be.
    title_h = 72
    value_cell, value_gap = 92, 18
    values_h = (16 + 36 + _paragraph_height(words["values_note"], note_face, inner) + 10
                + value_cell + 70)
    combos_head_h = 16 + 36 + _paragraph_height(words["combos_note"], note_face, inner) + 12
    cols, card = 3, 84
    panel_gap = 18
    panel_w = (inner - (cols - 1) * panel_gap) // cols
    note_small = font(18)
    panel_note_h = max(_paragraph_height(words[f"ex_{e.key}_note"], note_small, panel_w - 28)
                       for e in EXAMPLES)
    panel_h = round(14 + 30 + 8 + card + 34 + panel_note_h + 10)
    rows = -(-len(EXAMPLES) // cols)
    height = round(title_h + values_h + combos_head_h + rows * panel_h
                   + (rows - 1) * panel_gap + PAD)

    img = Image.new("RGB", (WIDTH, height), theme.band)
    draw = ImageDraw.Draw(img)
    # Title bar, as on the board pictures.
    draw.rectangle([0, 0, WIDTH, title_h - 1], fill=theme.header)
    draw.rectangle([0, title_h - 4, WIDTH, title_h - 1], fill=theme.accent)
    draw.text((PAD, title_h / 2 - 2), words["rules_title"], font=title_face,
              fill=theme.header_text, anchor="lm")

    # Values: one card of each rank with its values under it.
    y: float = title_h + 16
    draw.text((PAD, y + 28), words["values_heading"], font=heading_face, fill=theme.accent,
              anchor="ls")
    y = _paragraph(draw, (PAD, y + 38), words["values_note"], note_face, inner,
                   theme.header_dim) + 10
    row_w = len(VALUE_CARDS) * value_cell + (len(VALUE_CARDS) - 1) * value_gap
    left = (WIDTH - row_w) // 2
    strip = [left - 14, y - 8, left + row_w + 14, y + value_cell + 68]
    draw.rounded_rectangle(strip, 16, fill=theme.felt)
    for i, code in enumerate(VALUE_CARDS):
        c = parse_card(code)
        x = left + i * (value_cell + value_gap)
        img.paste(card_tile(c, value_cell, False, theme), (x, round(y)))
        values = [str(v) for v in RANK_VALUES[c.rank]]
        lines = [" / ".join(values)]
        if value_face.getlength(lines[0]) > value_cell:  # the ace: two lines
            half = len(values) // 2
            lines = [" / ".join(values[:half]) + " /", " / ".join(values[half:])]
        for k, line in enumerate(lines):
            draw.text((x + value_cell / 2, y + value_cell + 20 + 26 * k), line,
                      font=value_face, fill=theme.accent if c.rank >= 5 else theme.header_text,
                      anchor="mm")
    y = title_h + values_h

    # Combinations.
    draw.text((PAD, y + 28), words["combos_heading"], font=heading_face, fill=theme.accent,
              anchor="ls")
    y = _paragraph(draw, (PAD, y + 38), words["combos_note"], note_face, inner,
                   theme.header_dim) + 12
    y = title_h + values_h + combos_head_h
    for i, example in enumerate(EXAMPLES):
        r, col = divmod(i, cols)
        px = PAD + col * (panel_w + panel_gap)
        py = y + r * (panel_h + panel_gap)
        _draw_example(img, draw, example, (px, py, px + panel_w, py + panel_h), card, words,
                      theme)
    return img


def _draw_example(img: Image.Image, draw: ImageDraw.ImageDraw, example: Example,
                  box: tuple[float, float, float, float], card: int,
                  words: Mapping[str, str], theme: Theme) -> None:
    left, top, right, bottom = box
    colour = GOOD if example.valid else BAD
    draw.rounded_rectangle([left, top, right, bottom], 16, fill=theme.felt,
                           outline=colour if not example.valid else theme.slot_edge, width=2)
    mark = "✓" if example.valid else "✗"
    title = words[f"ex_{example.key}_title"]
    title_face = font(21, bold=True)
    room = right - left - 28 - title_face.getlength(mark + " ")
    while title_face.size > 14 and title_face.getlength(title) > room:
        title_face = font(title_face.size - 1, bold=True)
    draw.text((left + 14, top + 14 + 22), mark, font=title_face, fill=colour, anchor="ls")
    draw.text((left + 14 + title_face.getlength(mark + " "), top + 14 + 22),
              title, font=title_face, fill=theme.header_text,
              anchor="ls")
    cards = example.parsed
    row_w = 4 * card
    x0 = left + (right - left - row_w) / 2
    y0 = top + 14 + 30 + 8
    for k, c in enumerate(cards):
        img.paste(card_tile(c, card, False, theme), (round(x0 + k * card), round(y0)))
    # Values (or the suit) under each card, the steps between them.
    vy = y0 + card + 16
    value_face = font(22, bold=True)
    step_face = font(16, bold=True)
    if example.values is None:
        for k, c in enumerate(cards):
            draw.text((x0 + k * card + card / 2, vy), SUIT_SYMBOLS[c.suit], font=value_face,
                      fill=_light(suit_colour(c.suit, theme)), anchor="mm")
    else:
        values = example.values
        first = values[1] - values[0]
        for k, v in enumerate(values):
            draw.text((x0 + k * card + card / 2, vy), str(v), font=value_face,
                      fill=theme.accent, anchor="mm")
            if k:
                step = v - values[k - 1]
                broken = step == 0 or step != first
                draw.text((x0 + k * card, vy + 1), _step_text(step), font=step_face,
                          fill=BAD if broken else theme.header_dim, anchor="mm")
    _paragraph(draw, (left + 14, vy + 16), words[f"ex_{example.key}_note"], font(18),
               right - left - 28, theme.header_text)


def _light(colour: RGB) -> RGB:
    """A suit colour made readable on the dark felt (black suits become light grey)."""
    if sum(colour) < 200:
        return (226, 232, 228)
    return (255, 120, 120)


def rules_picture(*, texts: Mapping[str, str] | None = None,
                  theme: Theme = DEFAULT_THEME) -> bytes:
    """:func:`rules_image` as PNG bytes (under 1,280 px on the long side)."""
    return _encode(rules_image(texts=texts, theme=theme))


# Board examples -----------------------------------------------------------------------

#: The example tour: a duel, seat 0 attacks (and deals), seat 1 defends and opens.
EXAMPLE_HANDS = ("JH KD AS 9D", "QC 8S 7D TC 6D")
#: Its moves as action texts; the defender ends each one-card turn with "end".
EXAMPLE_MOVES: tuple[str, ...] = (
    "QC@0,0",           # the defender opens with a queen
    "JH@1,0",           # Q J: open both ways
    "8S@2,0", "end",    # blocked on the right
    "KD@-1,0",          # K Q J: open on the left
    "7D@-1,1", "end",   # the defender does not block...
    "AS@-2,0",          # ...A K Q J = 15 14 13 12: a goal
    "TC@0,1", "end",
    "9D@-1,2",          # the attacker's last card: K♦ 7♦ 9♦ in a column
    "6D@-1,3",          # the defender must play its last card: an own goal
)
#: After this many steps the coordinates example stops (the attacker is about to score).
COORDS_STEPS = 7
#: The engine cells both board examples show (x0, y0, x1, y1): columns J–P, rows 12–17.
EXAMPLE_AREA = (-3, -1, 3, 4)


def example_tour(steps: int | None = None) -> Tour:
    """The engine tour of the board examples, after ``steps`` of :data:`EXAMPLE_MOVES`
    (all by default)."""
    from krendzu.actions import parse_action

    hands = [[parse_card(c).index for c in h.split()] for h in EXAMPLE_HANDS]
    used = {c for h in hands for c in h}
    stock = [c for c in range(36) if c not in used]
    tour = Tour(Table.DUEL, tour_roles(Table.DUEL, 0), hands, stock)
    for step in EXAMPLE_MOVES[:steps]:
        tour.apply(parse_action(step))
    return tour


def _caption(board: Image.Image, items: Sequence[tuple[str, str]], theme: Theme,
             title: str | None = None) -> Image.Image:
    """``board`` with a caption under it: (icon, text) items (icons: see :func:`_icon`)."""
    width = board.width
    face = font(max(18, round(width / 34)))
    title_face = font(max(21, round(width / 28)), bold=True)
    pad = 22
    icon_w = 58
    text_w = width - 2 * pad - icon_w
    heights = [_paragraph_height(text, face, text_w) for _, text in items]
    title_h = title_face.size * 1.6 if title else 0
    height = round(pad + title_h + sum(heights) + 12 * (len(items) - 1) + pad)
    out = Image.new("RGB", (width, board.height + height), theme.header)
    out.paste(board, (0, 0))
    draw = ImageDraw.Draw(out)
    draw.rectangle([0, board.height, width, board.height + 3], fill=theme.accent)
    y: float = board.height + pad
    if title:
        draw.text((pad, y + title_face.size), title, font=title_face, fill=theme.accent,
                  anchor="ls")
        y += title_h
    for (icon, text), h in zip(items, heights, strict=True):
        _icon(out, icon, (pad, y + 2, pad + icon_w - 14, y + face.size * 1.3), theme)
        _paragraph(draw, (pad + icon_w, y), text, face, text_w, theme.header_text)
        y += h + 12
    return out


def _icon(img: Image.Image, kind: str, box: tuple[float, float, float, float],
          theme: Theme) -> None:
    """A legend icon: a combination line ("goal"), an own goal's ("own"), two touching
    cards ("touch"), a labelled free cell ("cells") or a hint ghost ("ghost")."""
    from render.ghost import ghost_tile, labelled_tile

    left, top, right, bottom = box
    cy = (top + bottom) / 2
    if kind in ("goal", "own"):
        mask = line_mask(1, 0, 40, kind == "own", False)
        strip = Image.new("RGB", (round(right - left), mask.core.height), theme.header)
        colour = theme.own_goal if kind == "own" else theme.combo
        at = (mask.offset[0] + 6, 0)
        strip.paste(theme.combo_outline, at, mask.outline)
        strip.paste(colour, at, mask.core)
        img.paste(strip, (round(left), round(cy - strip.height / 2)))
        return
    size = 40
    if kind == "touch":
        tiles = [card_tile(parse_card("QC"), size // 2 * 2 - 12, False, theme),
                 card_tile(parse_card("JH"), size // 2 * 2 - 12, False, theme)]
    elif kind == "cells":
        tiles = [labelled_tile("L12", size, theme)]
    else:
        tiles = [ghost_tile(parse_card("AS"), size, 0, "", theme)]
    width = sum(t.width for t in tiles)
    x = round((left + right) / 2 - width / 2)
    for tile in tiles:
        img.paste(tile, (x, round(cy - tile.height / 2)))
        x += tile.width


def _names(words: Mapping[str, str]) -> tuple[str, str]:
    return words["example_attacker"], words["example_defender"]


def _spell(cards: Sequence[Card]) -> str:
    return " ".join(c.pretty() for c in cards)


def board_example_image(*, texts: Mapping[str, str] | None = None,
                        theme: Theme = DEFAULT_THEME, cell: int = 84) -> Image.Image:
    """The finished example tour with a caption that explains both lines (RGB)."""
    words = texts_for(texts)
    attacker, defender = _names(words)
    tour = example_tour()
    view = TourView.of(tour, None)
    board = board_image(view, cell=cell, players=[attacker, defender], texts=texts,
                        theme=theme, flash=False, area=EXAMPLE_AREA)
    frame = frame_for(view.placements)
    cards = view.board
    goal, own = (next(c for c in view.combos if c.own_goal is flag) for flag in (False, True))
    goal_card, gx, gy = view.turns[goal.move].cards[-1]
    own_card, ox, oy = view.turns[own.move].cards[-1]
    goal_cards = [cards[cell_] for cell_ in goal.cells]
    goal_values = _progression_values(goal_cards)
    items = [
        ("goal", words["board_goal"].format(
            attacker=attacker, card=goal_card.pretty(), cell=frame.label(gx, gy),
            cards=_spell(goal_cards), values=", ".join(map(str, goal_values)))),
        ("own", words["board_own_goal"].format(
            attacker=attacker, defender=defender, card=own_card.pretty(),
            cell=frame.label(ox, oy), cards=_spell([cards[c] for c in own.cells]))),
        ("touch", words["board_touch"]),
    ]
    return _caption(board, items, theme, words["board_example_title"])


def _progression_values(cards: Sequence[Card]) -> tuple[int, ...]:
    """Values making ``cards`` a progression (the highest such reading, read as placed)."""
    import itertools

    best: tuple[int, ...] = ()
    for values in itertools.product(*(RANK_VALUES[c.rank] for c in cards)):
        steps = {b - a for a, b in itertools.pairwise(values)}
        if len(steps) == 1 and 0 not in steps and values > best:
            best = values
    return best


def rules_board_example(*, texts: Mapping[str, str] | None = None,
                        theme: Theme = DEFAULT_THEME) -> bytes:
    """:func:`board_example_image` as PNG bytes."""
    return _encode(board_example_image(texts=texts, theme=theme))


def coordinates_example_image(*, texts: Mapping[str, str] | None = None,
                              theme: Theme = DEFAULT_THEME, cell: int = 84) -> Image.Image:
    """The example tour before the attacker's goal: free cells labelled, the goal suggested
    as a /hint ghost (RGB)."""
    words = texts_for(texts)
    attacker, defender = _names(words)
    tour = example_tour(COORDS_STEPS)
    whole = example_tour()
    card, x, y = whole.observation(None).turns[len(tour.turns_raw)].cards[0]
    view = TourView.of(tour, None)
    board = board_image(view, cell=cell, players=[attacker, defender], texts=texts,
                        theme=theme, suggestion=[(card, x, y)], cell_labels=True,
                        area=EXAMPLE_AREA)
    frame = frame_for(view.placements)
    example = f"/play {card.code()} {frame.label(x, y)}"
    items = [("cells", words["coords_labels"].format(example=example)),
             ("ghost", words["coords_ghost"])]
    return _caption(board, items, theme, words["coords_title"])


def rules_coordinates_example(*, texts: Mapping[str, str] | None = None,
                              theme: Theme = DEFAULT_THEME) -> bytes:
    """:func:`coordinates_example_image` as PNG bytes."""
    return _encode(coordinates_example_image(texts=texts, theme=theme))


# Command line -------------------------------------------------------------------------

PICTURES = {
    "rules": rules_picture,
    "board-example": rules_board_example,
    "coordinates": rules_coordinates_example,
}


def write_all(out_dir: Path,
              languages: Mapping[str, Mapping[str, str] | None] | None = None) -> list[Path]:
    """Write every picture in every language as ``NAME-LANG.png`` into ``out_dir``;
    ``languages`` maps a language to its words (default: English only)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, draw in PICTURES.items():
        for lang, texts in (languages or {"en": None}).items():
            path = out_dir / f"{name}-{lang}.png"
            path.write_bytes(draw(texts=texts))
            paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m render.illustrations",
        description="Write the rules pictures in English (PNG); `python -m chat.painter` "
                    "writes them in every language of the bot's catalog.")
    parser.add_argument("out", nargs="?", default="docs/img", help="directory to write into")
    args = parser.parse_args(argv)
    for path in write_all(Path(args.out)):
        print(f"{path}  {path.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
