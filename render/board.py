"""The board picture: header, coordinate labels on every edge, cards, hints, highlights, lines.

Pure functions: a view (:class:`~krendzu.MatchView` or :class:`~krendzu.TourView`) and
keyword options in, a Pillow image (or encoded bytes) out. Only public facts are drawn —
placed cards, hand sizes, roles, scores — never a hand, whoever's observation is passed.

Geometry is computed first as a :class:`BoardLayout` (:func:`board_layout`), which tests and
the chat layer can use to find a cell, a label or the header in the picture.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from PIL import Image, ImageDraw

from krendzu.cards import Card
from krendzu.coords import LabelFrame, frame_for
from krendzu.match import MatchView
from krendzu.outcome import Outcome
from krendzu.tables import Table
from krendzu.tour import Combination, TourView
from render.faces import (
    CARD_INSET,
    DEFAULT_THEME,
    Theme,
    card_halo,
    card_tile,
    empty_row,
    empty_tile,
    line_mask,
)
from render.ghost import ghost_tile, labelled_tile
from render.texts import texts_for, together
from render.typeface import fit_width, font, seat_name, stamp_text, text_width

#: Telegram photo limits: width + height at most 10,000 pixels, aspect ratio at most 20.
MAX_SUM = 10_000
MAX_RATIO = 20
#: Telegram shows photos at about this many pixels on the long side.
PHOTO_SIDE = 1280
#: A phone shows a chat photo about this many pixels wide; the header's font stays at least
#: ``PHONE_TEXT`` pixels there (capital letters about 9 pixels high).
PHONE_WIDTH = 390
PHONE_TEXT = 13

DEFAULT_CELL = 72
MIN_COLUMNS = 9
MIN_ROWS = 7
VIEWPORT_CELLS = (11, 11)

Cell = tuple[int, int]
Box = tuple[int, int, int, int]
#: Cards a computer player suggests, in order: (card, x, y) on engine cells.
Suggestion = Sequence[tuple[Card, int, int]]


# The position, whatever view it came from ----------------------------------------------


@dataclass(frozen=True)
class Position:
    """What a board picture shows, taken from a view (public facts only)."""

    tour: TourView
    players: tuple[str, ...]
    tour_index: int | None = None
    tour_count: int | None = None
    totals: tuple[int, ...] | None = None
    match_over: bool = False
    #: Who won, resignations included (the chat layer knows them); else by the totals.
    outcome: Outcome | None = None

    @classmethod
    def of(cls, view: MatchView | TourView | Position,
           players: Sequence[str] | None = None) -> Position:
        if isinstance(view, Position):
            return view
        if isinstance(view, MatchView):
            return cls(
                tour=view.tour,
                players=tuple(players or view.players),
                tour_index=view.tour_index,
                tour_count=view.settings.tour_count,
                totals=view.totals,
                match_over=view.match_over,
            )
        if isinstance(view, TourView):
            n = view.table.players
            names = tuple(players) if players else tuple(f"\x00{i + 1}" for i in range(n))
            return cls(tour=view, players=names)
        raise TypeError(f"expected a MatchView or TourView, not {type(view).__name__}")

    @property
    def placements(self) -> tuple[tuple[Card, int, int], ...]:
        return self.tour.placements

    def last_move(self) -> tuple[int | None, tuple[tuple[Card, int, int], ...]]:
        """(player, cards) of the most recent turn; cards is () for a pass; player None if
        nothing happened yet."""
        tour = self.tour
        if tour.pending:
            return tour.current_player, tour.pending
        if tour.turns:
            turn = tour.turns[-1]
            return turn.player, turn.cards
        return None, ()

    def last_move_index(self) -> int:
        return len(self.tour.turns) - (0 if self.tour.pending else 1)


def legal_cells(placements: Iterable[tuple[Any, int, int]]) -> set[Cell]:
    """Empty cells where a card may go: empty orthogonal neighbours, or (0, 0) if empty."""
    taken = {(x, y) for _, x, y in placements}
    if not taken:
        return {(0, 0)}
    out = set()
    for x, y in taken:
        for cell in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if cell not in taken:
                out.add(cell)
    return out


def occupied_area(placements: Sequence[tuple[Any, int, int]]) -> tuple[int, int, int, int]:
    """Inclusive (x0, y0, x1, y1) of every card and every empty neighbour."""
    cells = [(x, y) for _, x, y in placements] or [(0, 0)]
    xs = [x for x, _ in cells]
    ys = [y for _, y in cells]
    return min(xs) - 1, min(ys) - 1, max(xs) + 1, max(ys) + 1


def _grow(lo: int, hi: int, want: int) -> tuple[int, int]:
    have = hi - lo + 1
    if have >= want:
        return lo, hi
    extra = want - have
    return lo - extra // 2, hi + extra - extra // 2


def _clamp_window(lo: int, hi: int, centre: float, size: int) -> tuple[int, int]:
    if hi - lo + 1 <= size:
        return lo, hi
    start = round(centre - (size - 1) / 2)
    start = max(lo, min(start, hi - size + 1))
    return start, start + size - 1


# Layout -------------------------------------------------------------------------------


@dataclass(frozen=True)
class HeaderLine:
    segments: tuple[tuple[str, str], ...]  # (text, style) with style title/normal/accent


@dataclass(frozen=True)
class BoardLayout:
    """Where everything is in a board picture (pixels; boxes are (left, top, right, bottom))."""

    cell: int
    area: tuple[int, int, int, int]  # inclusive engine cells shown: x0, y0, x1, y1
    frame: LabelFrame
    width: int
    height: int
    header_height: int
    band: int
    board_left: int
    board_top: int
    header_lines: tuple[HeaderLine, ...] = field(default=())
    line_height: int = 0
    font_size: int = 0

    @property
    def columns(self) -> range:
        return range(self.area[0], self.area[2] + 1)

    @property
    def rows(self) -> range:
        return range(self.area[1], self.area[3] + 1)

    def shows(self, x: int, y: int) -> bool:
        x0, y0, x1, y1 = self.area
        return x0 <= x <= x1 and y0 <= y <= y1

    def cell_box(self, x: int, y: int) -> Box:
        left = self.board_left + (x - self.area[0]) * self.cell
        top = self.board_top + (y - self.area[1]) * self.cell
        return left, top, left + self.cell, top + self.cell

    def cell_center(self, x: int, y: int) -> tuple[float, float]:
        left, top, _, _ = self.cell_box(x, y)
        return left + self.cell / 2, top + self.cell / 2

    @property
    def board_box(self) -> Box:
        x0, y0, x1, y1 = self.area
        return (self.board_left, self.board_top,
                self.board_left + (x1 - x0 + 1) * self.cell,
                self.board_top + (y1 - y0 + 1) * self.cell)

    @property
    def header_box(self) -> Box:
        return 0, 0, self.width, self.header_height

    def column_label_boxes(self, x: int) -> tuple[Box, Box]:
        """Top and bottom label boxes of column ``x``."""
        left, _, right, _ = self.cell_box(x, self.area[1])
        _, top, _, bottom = self.board_box
        return (left, top - self.band, right, top), (left, bottom, right, bottom + self.band)

    def row_label_boxes(self, y: int) -> tuple[Box, Box]:
        """Left and right label boxes of row ``y``."""
        _, top, _, bottom = self.cell_box(self.area[0], y)
        left, _, right, _ = self.board_box
        return (left - self.band, top, left, bottom), (right, top, right + self.band, bottom)

    def labels(self) -> list[tuple[str, Box]]:
        """Every coordinate label drawn, with its box (each column and row twice)."""
        out: list[tuple[str, Box]] = []
        for x in self.columns:
            text = self.frame.column_label(x)
            out.extend((text, box) for box in self.column_label_boxes(x))
        for y in self.rows:
            text = self.frame.row_label(y)
            out.extend((text, box) for box in self.row_label_boxes(y))
        return out


def _names(position: Position, texts: Mapping[str, str]) -> list[str]:
    """Seat names as drawn; a computer's ``🤖 Level`` keeps its robot (drawn, not a glyph)."""
    out = []
    for seat, name in enumerate(position.players):
        fallback = texts["player"].format(n=seat + 1)
        out.append(fallback if name.startswith("\x00") else seat_name(name, fallback))
    return out


def _score_text(position: Position, names: list[str], texts: Mapping[str, str]) -> str | None:
    totals = position.totals
    if totals is None:
        tour = position.tour
        totals = tuple(tour.points if s in tour.roles.attackers else 0
                       for s in range(len(names)))
    table = position.tour.table
    if table is Table.DUEL:
        return f"{names[0]} {totals[0]} : {names[1]} {totals[1]}"
    if table is Table.TEAMS:
        a = texts["team"].format(a=names[0], b=names[2])
        b = texts["team"].format(a=names[1], b=names[3])
        return f"{a} {totals[0]} : {b} {totals[1]}"
    return ", ".join(f"{n} {t}" for n, t in zip(names, totals, strict=True))


def header_segments(position: Position, frame: LabelFrame,
                    texts: Mapping[str, str]) -> list[tuple[str, str]]:
    """The header as (text, style) items, in reading order."""
    tour = position.tour
    names = _names(position, texts)
    roles = tour.roles
    items: list[tuple[str, str]] = []
    if position.tour_index is not None and position.tour_count:
        items.append((texts["tour"].format(n=position.tour_index + 1,
                                           total=position.tour_count), "title"))
    items.append((texts["attack"].format(names=", ".join(names[s] for s in roles.attackers)),
                  "normal"))
    items.append((texts["defence"].format(names=", ".join(names[s] for s in roles.defenders)),
                  "normal"))
    score = _score_text(position, names, texts)
    if score:
        items.append((texts["score"].format(score=score), "title"))
    left = ", ".join(f"{names[s]} {n}" for s, n in enumerate(tour.hand_sizes))
    items.append((texts["cards_left"].format(items=left), "normal"))
    player, cards = position.last_move()
    if player is not None:
        if cards:
            spelled = " + ".join(f"{c.pretty()} {frame.label(x, y)}" for c, x, y in cards)
            items.append((texts["last_move"].format(name=names[player], cards=spelled), "dim"))
        else:
            items.append((texts["passed"].format(name=names[player]), "dim"))
    if position.match_over:
        # The engine's outcome, as the chat's summary names it.
        outcome = position.outcome or Outcome.of_totals(
            tour.table, position.totals or (0,) * len(names))
        if outcome.draw:
            result = texts["draw"]
        elif outcome.winners:
            result = texts["winner"].format(
                names=together(texts, [names[s] for s in outcome.winners]))
        else:
            result = texts["nobody_won"]
        items.append((f"{texts['match_over']}: {result}", "accent"))
    elif tour.is_over:
        items.append((texts["tour_over"], "accent"))
    elif tour.current_player >= 0:
        key = "to_move" if tour.phase == "play" else "exchange"
        items.append((texts[key].format(name=names[tour.current_player]), "accent"))
    return items


def _fonts(cell: int, width: int) -> tuple[int, int]:
    """The header's font size and line height: in proportion to the cells, yet never below
    :data:`PHONE_TEXT` pixels once a phone scales the picture (up to a photo's long side)
    down to :data:`PHONE_WIDTH` — else a wide board would shrink its header out of reach."""
    phone = math.ceil(PHONE_TEXT * min(width, PHOTO_SIDE) / PHONE_WIDTH)
    size = max(12, round(cell * 0.36), phone)
    return size, round(size * 1.42)


def _pieces(text: str, face: Any, width: float) -> list[str]:
    """``text`` cut at spaces (after a comma where one is near) into pieces at most
    ``width`` wide, so a long item goes on over the next line instead of losing its end."""
    if text_width(face, text) <= width:
        return [text]
    pieces: list[str] = []
    words: list[str] = []
    for word in text.split(" "):
        if words and text_width(face, " ".join([*words, word])) > width:
            cut = max((i + 1 for i, w in enumerate(words[:-1]) if w.endswith(",")), default=0)
            if not cut or text_width(face, " ".join(words[:cut])) < width / 2:
                cut = len(words)
            pieces.append(" ".join(words[:cut]))
            words = words[cut:]
        words.append(word)
    pieces.append(" ".join(words))
    return [fit_width(piece, face, width) for piece in pieces]


def _wrap(items: list[tuple[str, str]], width: float, size: int) -> list[HeaderLine]:
    sep = "  ·  "
    regular = font(size)
    lines: list[list[tuple[str, str]]] = [[]]
    used = 0.0
    for text, style in items:
        face = font(size, bold=style in ("title", "accent"))
        for i, piece in enumerate(_pieces(text, face, width)):
            w = text_width(face, piece)
            gap = text_width(regular, sep) if lines[-1] else 0.0
            if lines[-1] and (i or used + gap + w > width):
                lines.append([])
                used, gap = 0.0, 0.0
            if lines[-1]:
                lines[-1].append((sep, "sep"))
            lines[-1].append((piece, style))
            used += gap + w
    return [HeaderLine(tuple(line)) for line in lines if line]


def _area(position: Position, viewport: Any, viewport_cells: tuple[int, int],
          area: tuple[int, int, int, int] | None,
          suggestion: Suggestion = ()) -> tuple[int, int, int, int]:
    shown = _bare_area(position, viewport, viewport_cells, area, suggestion)
    if not suggestion:
        return shown
    # Suggested cells are always in the picture (a second card may lie past the margin).
    x0, y0, x1, y1 = shown
    xs = [x for _, x, _ in suggestion]
    ys = [y for _, _, y in suggestion]
    return min(x0, *xs), min(y0, *ys), max(x1, *xs), max(y1, *ys)


def _bare_area(position: Position, viewport: Any, viewport_cells: tuple[int, int],
               area: tuple[int, int, int, int] | None,
               suggestion: Suggestion) -> tuple[int, int, int, int]:
    if area is not None:
        return area
    x0, y0, x1, y1 = occupied_area(position.placements)
    x0, x1 = _grow(x0, x1, MIN_COLUMNS)
    y0, y1 = _grow(y0, y1, MIN_ROWS)
    if viewport is None or viewport == "full":
        return x0, y0, x1, y1
    if viewport == "last-move":
        _, cards = position.last_move()
        focus = [(x, y) for _, x, y in suggestion] or [(x, y) for _, x, y in cards] or [
            (x, y) for _, x, y in position.placements[-1:]] or [(0, 0)]
        cx = sum(x for x, _ in focus) / len(focus)
        cy = sum(y for _, y in focus) / len(focus)
        cols, rows = viewport_cells
        x0, x1 = _clamp_window(x0, x1, cx, cols)
        y0, y1 = _clamp_window(y0, y1, cy, rows)
        return x0, y0, x1, y1
    vx0, vy0, vx1, vy1 = viewport
    return min(vx0, vx1), min(vy0, vy1), max(vx0, vx1), max(vy0, vy1)


def board_layout(
    view: MatchView | TourView | Position,
    *,
    cell: int = DEFAULT_CELL,
    viewport: Any = None,
    viewport_cells: tuple[int, int] = VIEWPORT_CELLS,
    area: tuple[int, int, int, int] | None = None,
    max_side: int | None = None,
    header: bool = True,
    texts: Mapping[str, str] | None = None,
    players: Sequence[str] | None = None,
    frame: LabelFrame | None = None,
    suggestion: Suggestion = (),
) -> BoardLayout:
    """Where things go in :func:`board_image` with the same options (see there)."""
    position = Position.of(view, players)
    words = texts_for(texts)
    frame = frame or frame_for(position.placements)
    x0, y0, x1, y1 = _area(position, viewport, viewport_cells, area, suggestion)
    for x, y in ((x0, y0), (x1, y1)):
        frame = frame.fit(x, y)  # an explicit area may reach past the tour's frame
    cols, rows = x1 - x0 + 1, y1 - y0 + 1
    while True:
        layout = _layout_for(position, frame, (x0, y0, x1, y1), cell, header, words)
        w, h = layout.width, layout.height
        too_big = w + h > MAX_SUM or (max_side is not None and max(w, h) > max_side)
        if too_big and cell > 12:
            cell -= 2
            continue
        if max(w, h) > MAX_RATIO * min(w, h):  # pad the short side
            if w > h:
                y0, y1 = _grow(y0, y1, rows + 1)
                rows += 1
            else:
                x0, x1 = _grow(x0, x1, cols + 1)
                cols += 1
            continue
        return layout


def _layout_for(position: Position, frame: LabelFrame, area: tuple[int, int, int, int],
                cell: int, header: bool, words: Mapping[str, str]) -> BoardLayout:
    x0, y0, x1, y1 = area
    band = max(14, round(cell * 0.5))
    width = (x1 - x0 + 1) * cell + 2 * band
    size, line_height = _fonts(cell, width)
    lines: tuple[HeaderLine, ...] = ()
    header_height = 0
    if header:
        pad = round(size * 0.7)
        lines = tuple(_wrap(header_segments(position, frame, words), width - 2 * pad, size))
        header_height = len(lines) * line_height + 2 * pad - round(line_height - size * 1.15)
    height = header_height + (y1 - y0 + 1) * cell + 2 * band
    return BoardLayout(
        cell=cell, area=area, frame=frame, width=width, height=height,
        header_height=header_height, band=band, board_left=band,
        board_top=header_height + band, header_lines=lines, line_height=line_height,
        font_size=size,
    )


# Drawing ------------------------------------------------------------------------------


def highlighted_cells(position: Position) -> set[Cell]:
    """The cells of the last move (both cards of a defender's double)."""
    _, cards = position.last_move()
    return {(x, y) for _, x, y in cards}


def fresh_combos(position: Position) -> list[Combination]:
    """Combinations scored by the last move."""
    _, cards = position.last_move()
    if not cards:
        return []
    last = position.last_move_index()
    return [c for c in position.tour.combos if c.move == last]


def board_image(
    view: MatchView | TourView | Position,
    *,
    cell: int = DEFAULT_CELL,
    viewport: Any = None,
    viewport_cells: tuple[int, int] = VIEWPORT_CELLS,
    area: tuple[int, int, int, int] | None = None,
    max_side: int | None = None,
    hint_cells: bool = True,
    highlight_last: bool = True,
    combos: bool = True,
    flash: bool = True,
    header: bool = True,
    texts: Mapping[str, str] | None = None,
    players: Sequence[str] | None = None,
    frame: LabelFrame | None = None,
    theme: Theme = DEFAULT_THEME,
    suggestion: Suggestion = (),
    cell_labels: bool = False,
) -> Image.Image:
    """Draw the board of ``view`` (a public or private observation) as an RGB image.

    ``cell``: pixels per board cell. ``viewport``: ``None`` for the occupied area plus a
    margin, ``"last-move"`` for a window of ``viewport_cells`` (columns, rows) around the
    last move, or an (x0, y0, x1, y1) rectangle of engine cells; labels always use the whole
    tour's frame. ``area`` forces the exact cells (replays keep one area for every frame).
    ``max_side`` shrinks cells until the picture fits. The picture always respects Telegram's
    limits (width + height ≤ 10,000, aspect ratio ≤ 20). ``hint_cells`` marks the empty cells
    where a card may go; ``highlight_last`` rings the last move; ``combos`` draws a line
    through every combination scored (dashed for own goals), ``flash`` making those of the
    last move stand out. ``texts`` gives the header's words in the reader's language
    (English without it, see :mod:`render.texts`); ``players`` names the seats of a bare
    :class:`TourView`.

    Hints (for ``/hint`` and the private move panel): ``suggestion`` lists cards suggested
    for empty cells, ``(card, x, y)`` in order (a defender may get two); each is drawn as a
    faded "ghost" of the card in a dashed cyan ring, numbered 1, 2 when there are two, and
    the shown area always grows to include them. ``cell_labels`` writes each empty cell where
    a card may go with its coordinate (``L12``), and a ghost's cell on a small pill.
    """
    position = Position.of(view, players)
    layout = board_layout(
        position, cell=cell, viewport=viewport, viewport_cells=viewport_cells, area=area,
        max_side=max_side, header=header, texts=texts, frame=frame,
        suggestion=suggestion,
    )
    return draw_board(position, layout, hint_cells=hint_cells, highlight_last=highlight_last,
                      combos=combos, flash=flash, theme=theme, suggestion=suggestion,
                      cell_labels=cell_labels)


def draw_board(position: Position, layout: BoardLayout, *, hint_cells: bool = True,
               highlight_last: bool = True, combos: bool = True, flash: bool = True,
               theme: Theme = DEFAULT_THEME, suggestion: Suggestion = (),
               cell_labels: bool = False) -> Image.Image:
    """Draw ``position`` into a picture with geometry ``layout``."""
    img = Image.new("RGB", (layout.width, layout.height), theme.band)
    cell = layout.cell
    x0, _, x1, _ = layout.area
    cols = x1 - x0 + 1
    strip = empty_row(cell, cols, theme)
    for y in layout.rows:
        img.paste(strip, layout.cell_box(x0, y)[:2])
    tour = position.tour
    if hint_cells and tour.phase == "play":
        hint = empty_tile(cell, True, theme)
        for x, y in legal_cells(tour.placements):
            if layout.shows(x, y):
                img.paste(hint, layout.cell_box(x, y)[:2])
    lit = highlighted_cells(position) if highlight_last else set()
    for card, x, y in tour.placements:
        if layout.shows(x, y):
            img.paste(card_tile(card, cell, (x, y) in lit, theme), layout.cell_box(x, y)[:2])
    if combos and tour.combos:
        fresh = {id(c) for c in fresh_combos(position)} if flash else set()
        lanes = combo_lanes(tour.combos)
        for i in sorted(range(len(tour.combos)), key=lambda i: id(tour.combos[i]) in fresh):
            combo = tour.combos[i]
            _draw_line(img, layout, combo, id(combo) in fresh, theme, lanes[i])
        # Lift ranks and suits, each with a narrow halo, above the lines: a line passes
        # behind the glyphs and never crosses them.
        board = tour.board
        for x, y in {cell for combo in tour.combos for cell in combo.cells}:
            if layout.shows(x, y):
                card, lit_here = board[(x, y)], (x, y) in lit
                box = layout.cell_box(x, y)
                img.paste(card_tile(card, cell, lit_here, theme), box,
                          card_halo(card, cell, lit_here, theme))
    if cell_labels or suggestion:
        _draw_hints(img, layout, position, suggestion, cell_labels, theme)
    _draw_edges(img, layout, position, theme)
    _draw_labels(img, layout, theme)
    if layout.header_height:
        _draw_header(img, layout, theme)
    return img


def _draw_hints(img: Image.Image, layout: BoardLayout, position: Position,
                suggestion: Suggestion, cell_labels: bool, theme: Theme) -> None:
    """Coordinates in the empty legal cells, then the suggested cards on top."""
    tour = position.tour
    cell = layout.cell
    legal = legal_cells(tour.placements) if tour.phase == "play" else set()
    ghosts = {(x, y) for _, x, y in suggestion}
    if cell_labels:
        for x, y in sorted(legal - ghosts):
            if layout.shows(x, y):
                img.paste(labelled_tile(layout.frame.label(x, y), cell, theme),
                          layout.cell_box(x, y)[:2])
    numbered = len(suggestion) > 1
    for i, (card, x, y) in enumerate(suggestion):
        label = layout.frame.label(x, y) if cell_labels else ""
        img.paste(ghost_tile(card, cell, i + 1 if numbered else 0, label, theme),
                  layout.cell_box(x, y)[:2])


#: Where a line along a row runs: on the cards' bottom edge, under the suits (a fraction of
#: the cell from its centre); a second one on the top edge.
EDGE_LANE = 0.5 - CARD_INSET
#: Where a line down a column runs: along the cards' left margin, beside the rank and the
#: suit; a second one along the right margin.
SIDE_LANE = 0.31


def combo_lanes(combos: Sequence[Combination]) -> list[float]:
    """A sideways offset (in cells) per combination, so that a line does not cross the
    ranks and suits and overlapping lines on one row, column or diagonal run side by side.

    A line along a row underlines its cards (on their bottom edge, a second one on the top
    edge); one down a column runs along their left margin (a second one along the right);
    a diagonal, and any third line on a row or column, goes through the middle, passing
    behind the glyphs (:func:`~render.faces.card_halo`)."""
    groups: dict[tuple[int, int, int], list[tuple[int, int, int]]] = {}
    for i, combo in enumerate(combos):
        (ax, ay), (bx, by) = combo.cells[0], combo.cells[1]
        dx, dy = bx - ax, by - ay
        key = (dx, dy, ax * dy - ay * dx)  # direction and which parallel line
        along = ax * dx + ay * dy
        groups.setdefault(key, []).append((along, along + 3 * (dx * dx + dy * dy), i))
    out = [0.0] * len(combos)
    for (dx, dy, _), items in groups.items():
        lane_ends: list[int] = []
        lane_of: dict[int, int] = {}
        for start, end, i in sorted(items):
            for lane, last in enumerate(lane_ends):
                if last < start:
                    lane_ends[lane] = end
                    lane_of[i] = lane
                    break
            else:
                lane_of[i] = len(lane_ends)
                lane_ends.append(end)
        count = len(lane_ends)
        # _draw_line moves a line by (-dy, dx) × offset: down a row is +dx, right is -dy.
        edge, sign = (EDGE_LANE, dx) if dy == 0 else (-SIDE_LANE, -dy) if dx == 0 else (0, 0)
        for i, lane in lane_of.items():
            if edge and lane < 2:
                out[i] = sign * (edge if lane == 0 else -edge)
            else:
                rest, middle = (lane - 2, count - 2) if edge else (lane, count)
                out[i] = (rest - (middle - 1) / 2) * 0.14
    return out


def _draw_line(img: Image.Image, layout: BoardLayout, combo: Combination, fresh: bool,
               theme: Theme, lane: float = 0.0) -> None:
    (ax, ay), (bx, by) = combo.cells[0], combo.cells[1]
    dx, dy = bx - ax, by - ay
    mask = line_mask(dx, dy, layout.cell, combo.own_goal, fresh)
    cx, cy = layout.cell_center(ax, ay)
    norm = (dx * dx + dy * dy) ** 0.5
    cx += -dy / norm * lane * layout.cell
    cy += dx / norm * lane * layout.cell
    at = (round(cx) + mask.offset[0], round(cy) + mask.offset[1])
    colour = theme.own_goal if combo.own_goal else theme.combo
    outline = theme.accent if fresh else theme.combo_outline
    img.paste(outline, (*at, at[0] + mask.outline.width, at[1] + mask.outline.height),
              mask.outline)
    img.paste(colour, (*at, at[0] + mask.core.width, at[1] + mask.core.height), mask.core)


def _draw_edges(img: Image.Image, layout: BoardLayout, position: Position,
                theme: Theme) -> None:
    """A dashed gold edge where cards lie beyond the picture (a viewport)."""
    cells = [(x, y) for _, x, y in position.placements]
    if not cells:
        return
    x0, y0, x1, y1 = layout.area
    left, top, right, bottom = layout.board_box
    draw = ImageDraw.Draw(img)
    width = max(2, layout.cell // 18)
    dash = layout.cell // 3
    sides = []
    if any(x < x0 for x, _ in cells):
        sides.append(((left - width, top), (left - width, bottom)))
    if any(x > x1 for x, _ in cells):
        sides.append(((right, top), (right, bottom)))
    if any(y < y0 for _, y in cells):
        sides.append(((left, top - width), (right, top - width)))
    if any(y > y1 for _, y in cells):
        sides.append(((left, bottom), (right, bottom)))
    for (ax, ay), (bx, by) in sides:
        length = max(bx - ax, by - ay)
        for s in range(0, length, 2 * dash):
            e = min(length, s + dash)
            if ax == bx:
                draw.rectangle([ax, ay + s, ax + width - 1, ay + e], fill=theme.more)
            else:
                draw.rectangle([ax + s, ay, ax + e, ay + width - 1], fill=theme.more)


def _draw_labels(img: Image.Image, layout: BoardLayout, theme: Theme) -> None:
    size = max(9, round(layout.band * 0.62))
    face = font(size, bold=True)
    for text, (left, top, right, bottom) in layout.labels():
        label_face = face
        width = text_width(face, text)
        if width > right - left - 2:
            label_face = font(max(7, round(size * (right - left - 2) / width)), bold=True)
        stamp_text(img, ((left + right) / 2, (top + bottom) / 2), text, face=label_face,
                   fill=theme.band_text, anchor="mm")


def _draw_header(img: Image.Image, layout: BoardLayout, theme: Theme) -> None:
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 0, layout.width, layout.header_height - 1], fill=theme.header)
    draw.rectangle([0, layout.header_height - max(2, layout.cell // 24),
                    layout.width, layout.header_height - 1], fill=theme.accent)
    size = layout.font_size
    pad = round(size * 0.7)
    y = pad + size * 0.95
    colours = {"title": theme.header_text, "normal": theme.header_text, "sep": theme.header_dim,
               "dim": theme.header_dim, "accent": theme.accent}
    for line in layout.header_lines:
        x = float(pad)
        for text, style in line.segments:
            face = font(size, bold=style in ("title", "accent"))
            stamp_text(img, (x, y), text, face=face, fill=colours[style], anchor="ls")
            x += text_width(face, text)
        y += layout.line_height


# Encoding -----------------------------------------------------------------------------


@lru_cache(maxsize=8)
def palette_for(theme: Theme = DEFAULT_THEME) -> Image.Image:
    """A 256-colour palette covering everything the pictures draw in ``theme`` (cached).

    Built once from a sample of every tile, line and text colour, so encoding a board as an
    indexed PNG costs a fast palette lookup instead of per-row adaptive filtering of RGB.
    """
    cell = 72
    sample = Image.new("RGB", (cell * 18, cell * 6), theme.band)
    for i, card in enumerate(Card._all):
        for lit in (False, True):
            col, row = divmod(i, 6)
            sample.paste(card_tile(card, cell, lit, theme), ((col + 6 * lit) * cell, row * cell))
    sample.paste(empty_tile(cell, True, theme), (12 * cell, 0))
    sample.paste(empty_tile(cell, False, theme), (13 * cell, 0))
    draw = ImageDraw.Draw(sample)
    face = font(24, bold=True)
    for k, (bg, fg) in enumerate(((theme.header, theme.header_text), (theme.header, theme.accent),
                                  (theme.header, theme.header_dim), (theme.band, theme.band_text),
                                  (theme.header, theme.header_dim))):
        top = cell * (1 + k // 2)
        left = 12 * cell + (k % 2) * 3 * cell
        draw.rectangle([left, top, left + 3 * cell, top + cell], fill=bg)
        draw.text((left + 4, top + cell // 2), "AWMgЖ10♣", font=face, fill=fg, anchor="lm")
    for k, (colour, fresh) in enumerate(((theme.combo, False), (theme.own_goal, False),
                                          (theme.combo, True), (theme.own_goal, True))):
        mask = line_mask(1, 1, cell, False, fresh)
        left, top = 12 * cell + (k % 2) * 3 * cell, 4 * cell + (k // 2) * cell
        base = sample.crop((left, top, left + mask.core.width, top + mask.core.height))
        base.paste(card_tile(Card._all[k * 9], cell, False, theme).resize(base.size))
        base.paste(theme.accent if fresh else theme.combo_outline, (0, 0), mask.outline)
        base.paste(colour, (0, 0), mask.core)
        sample.paste(base, (left, top))
    for k, name in enumerate(Theme.__dataclass_fields__):
        left = 15 * cell + (k % 6) * cell // 2
        top = 4 * cell + (k // 6) * cell // 2
        draw.rectangle([left, top, left + cell // 2, top + cell // 2], fill=getattr(theme, name))
    return sample.quantize(colors=256, method=Image.Quantize.MEDIANCUT)


def encode_png(img: Image.Image, *, indexed: bool = True, theme: Theme = DEFAULT_THEME,
               compress_level: int = 6) -> bytes:
    """PNG bytes. ``indexed`` (default) maps the picture onto the theme's cached 256-colour
    palette first: several times faster and smaller; ``indexed=False`` keeps every pixel."""
    out = io.BytesIO()
    if indexed and img.mode == "RGB":
        img = img.quantize(palette=palette_for(theme), dither=Image.Dither.NONE)
    img.save(out, "PNG", compress_level=compress_level)
    return out.getvalue()


def encode_jpeg(img: Image.Image, *, quality: int = 88) -> bytes:
    """JPEG with 4:2:0 chroma subsampling: 40 % faster than 4:4:4 and still sharp on the
    flat colours of a board (Telegram re-encodes photos the same way anyway)."""
    out = io.BytesIO()
    img.save(out, "JPEG", quality=quality, subsampling=2, optimize=False)
    return out.getvalue()


def board_png(view: MatchView | TourView, *, indexed: bool = True, **options: Any) -> bytes:
    """:func:`board_image` as PNG bytes (for a document: full size; see :func:`encode_png`)."""
    theme = options.get("theme", DEFAULT_THEME)
    img = board_image(view, **options)
    if indexed and (options.get("suggestion") or options.get("cell_labels")):
        # The theme's palette has no hint colours: a palette of this picture's own (fast).
        img = img.quantize(256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE)
    return encode_png(img, indexed=indexed, theme=theme)


def board_jpeg(view: MatchView | TourView | Position, *, quality: int = 88,
               **options: Any) -> bytes:
    """:func:`board_image` as JPEG bytes (for a photo: Telegram re-encodes photos anyway)."""
    return encode_jpeg(board_image(view, **options), quality=quality)


_LAYOUT_OPTIONS = frozenset(
    ("viewport", "viewport_cells", "area", "max_side", "header", "texts", "players",
     "frame", "suggestion"))


def photo_options(view: MatchView | TourView | Position, *, cell: int = DEFAULT_CELL,
                  min_cell: int = 44, side: int = PHOTO_SIDE,
                  **options: Any) -> dict[str, Any]:
    """Options that make a board readable as a chat photo (long side ≤ ``side``).

    The whole board if it fits with cells of at least ``min_cell`` pixels, else a viewport
    around the last move as large as fits.
    """
    return _fit_photo(view, cell=cell, min_cell=min_cell, side=side, **options)[0]


def _fit_photo(view: MatchView | TourView | Position, *, cell: int = DEFAULT_CELL,
               min_cell: int = 44, side: int = PHOTO_SIDE,
               **options: Any) -> tuple[dict[str, Any], BoardLayout | None]:
    """:func:`photo_options`, with the layout found for them (None for a viewport, whose
    layout is not computed here)."""
    position = Position.of(view, options.get("players"))
    # Only the options that change the geometry (drawing options such as ``hint_cells``,
    # ``suggestion`` or ``cell_labels`` pass through to the result untouched).
    geometry = {k: v for k, v in options.items() if k in _LAYOUT_OPTIONS}
    for size in range(cell, min_cell - 1, -4):
        layout = board_layout(position, cell=size, **geometry)
        if max(layout.width, layout.height) <= side:
            return {**options, "cell": size}, layout
    return {**options, "cell": cell, "viewport": "last-move",
            "viewport_cells": VIEWPORT_CELLS, "max_side": side}, None


#: :func:`draw_board`'s options (the others of :func:`board_image` set the layout).
_DRAWING_OPTIONS = frozenset(
    ("hint_cells", "highlight_last", "combos", "flash", "theme", "suggestion", "cell_labels"))


def _photo_image(view: MatchView | TourView | Position,
                 options: Mapping[str, Any]) -> tuple[Image.Image, Position, BoardLayout]:
    """:func:`board_image` with :func:`photo_options`, the layout computed once (a layout
    wraps the header's words: computing it again for the drawing was a tenth of a board's
    drawing without its encoding)."""
    fitted, layout = _fit_photo(view, **options)
    unknown = set(fitted) - _LAYOUT_OPTIONS - _DRAWING_OPTIONS - {"cell"}
    if unknown:
        raise TypeError(f"board_photo() got unexpected keyword arguments {sorted(unknown)}")
    position = Position.of(view, fitted.get("players"))
    if layout is None:
        layout = board_layout(position, cell=fitted["cell"], **{
            k: v for k, v in fitted.items() if k in _LAYOUT_OPTIONS})
    drawing = {k: v for k, v in fitted.items() if k in _DRAWING_OPTIONS}
    return draw_board(position, layout, **drawing), position, layout


def board_photo(view: MatchView | TourView | Position, *, quality: int = 88,
                **options: Any) -> bytes:
    """A JPEG for a chat post: the whole board, or the area around the last move if the
    whole board would be too small to read at Telegram's ~1280 px."""
    return encode_jpeg(_photo_image(view, options)[0], quality=quality)


def board_photos(view: MatchView | TourView | Position, *, quality: int = 88,
                 **options: Any) -> tuple[bytes, bytes]:
    """``board_photo(view, **options)`` and ``board_photo(view, cell_labels=True,
    **options)`` (a group's board post and a player's panel of the same position), drawn
    once: the second is the first with the free cells' coordinates pasted over their hint
    tiles. Nothing drawn after the hints reaches a cell (the dashed edges, the labels and
    the header lie outside the board), so both are the pictures drawn apart, byte for byte.
    Where no free cell is shown (the exchange, a tour or match over), the two are the same
    picture and the same bytes, encoded once. Not for a suggestion (its ghosts change the
    shown area and go under the labels)."""
    if options.get("suggestion") or "cell_labels" in options:
        raise ValueError("board_photos draws a board without a suggestion, with and without "
                         "its cell labels")
    img, position, layout = _photo_image(view, options)
    plain = encode_jpeg(img, quality=quality)
    tour = position.tour
    free = [(x, y) for x, y in legal_cells(tour.placements) if layout.shows(x, y)]
    if tour.phase != "play" or not free:
        return plain, plain
    _draw_hints(img, layout, position, (), True, options.get("theme", DEFAULT_THEME))
    return plain, encode_jpeg(img, quality=quality)


def board_document(view: MatchView | TourView, **options: Any) -> bytes:
    """A full-size PNG of the whole board, to send as a document."""
    return board_png(view, **options)
