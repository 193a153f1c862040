"""Pictures read at a glance (issue 27, item 12): combination lines never cross a rank or a
suit, the hand picture does not repeat each card's name under it, computer seats carry the
same robot as in the texts, and a wide board's header stays readable on a phone."""

from __future__ import annotations

import io
import random
from functools import cache

import pytest
from PIL import Image, ImageChops, ImageDraw, ImageFilter

from krendzu import Card, Match, Settings, Table
from render import (
    board_image,
    board_layout,
    card_tile,
    hand_image,
    photo_options,
    position,
    replay_frames,
    replay_gif,
)
from render.board import PHONE_WIDTH, Position, combo_lanes, fresh_combos
from render.faces import DEFAULT_THEME, card_ink
from render.records import tour_steps
from render.sheet import line_match, play_out, scenario_matches
from render.typeface import ELLIPSIS, ROBOT_MARK, font, robot_face, stamp_text


@cache
def scored_views() -> dict[str, object]:
    """Boards full of combinations: lines along rows, down columns (three on one column;
    four solid ones) and both diagonals, own goals among them; and a board just after a
    column scored."""
    views: dict[str, object] = {"combos": position(scenario_matches()["combos"])}
    match = Match(["ann", "bob"], Settings(table=Table.DUEL, preset="long"), seed=0)
    play_out(match, random.Random(0), scoring=0.9, passes=False)
    views["columns"] = position(match)
    solid = Match(["ann", "bob"], Settings(table=Table.DUEL, preset="long"), seed=30)
    views["solid"] = position(play_out(solid, random.Random(30), scoring=0.9, passes=False))
    for view in tour_steps(match, tour=0):
        if any(c.cells[0][0] == c.cells[1][0] for c in fresh_combos(_pos(view))):
            views["fresh-column"] = view
            break
    return views


def _pos(view) -> Position:
    return Position.of(view)


def directions(view) -> set[tuple[int, int]]:
    """Each combination's direction, either way along it counted as one."""
    out = set()
    for c in view.tour.combos:
        dx, dy = c.cells[1][0] - c.cells[0][0], c.cells[1][1] - c.cells[0][1]
        out.add((dx, dy) if (dy, dx) > (0, 0) else (-dx, -dy))
    return out


def test_the_scenarios_have_lines_in_every_direction():
    views = scored_views()
    seen = directions(views["combos"]) | directions(views["columns"])
    assert {(1, 0), (0, 1), (1, 1), (-1, 1)} <= seen
    assert any(c.own_goal for c in views["columns"].tour.combos)
    assert "fresh-column" in views


def glyph_mask(card, cell: int, lit: bool) -> Image.Image:
    """The rank and suit of a card's tile and one pixel around them."""
    ink = card_ink(card, cell, lit).point(lambda v: 255 if v > 24 else 0)
    return ink.filter(ImageFilter.MaxFilter(3))


@pytest.mark.parametrize("name", ["combos", "columns", "solid", "fresh-column"])
@pytest.mark.parametrize("cell", [44, 72])
def test_no_line_crosses_a_rank_or_a_suit(name, cell):
    view = scored_views()[name]
    layout = board_layout(view, cell=cell)
    lined = board_image(view, cell=cell)
    plain = board_image(view, cell=cell, combos=False)
    lit = {(x, y) for _, x, y in _pos(view).last_move()[1]}
    crossed = 0
    for card, x, y in view.tour.placements:
        box = layout.cell_box(x, y)
        diff = ImageChops.difference(lined.crop(box), plain.crop(box)).convert("L")
        diff = diff.point(lambda v: 255 if v > 8 else 0)
        crossed += diff.getbbox() is not None  # a line passes over this card
        over_glyphs = ImageChops.multiply(diff, glyph_mask(card, cell, (x, y) in lit))
        assert over_glyphs.getbbox() is None, (name, card, x, y)
    assert crossed >= 4  # the lines are there, over the cards they join


def _hits(view, cell: int = 72) -> list[tuple[object, float]]:
    """For each combination: how much of its path (from the first card's centre to the
    last's, at its lane) shows its colour over the line-free picture."""
    layout = board_layout(view, cell=cell)
    img = board_image(view, cell=cell, flash=False)
    plain = board_image(view, cell=cell, combos=False)
    out = []
    for combo, lane in zip(view.tour.combos, combo_lanes(view.tour.combos), strict=True):
        (ax, ay), (bx, by) = combo.cells[0], combo.cells[3]
        sx, sy = layout.cell_center(ax, ay)
        ex, ey = layout.cell_center(bx, by)
        n = ((ex - sx) ** 2 + (ey - sy) ** 2) ** 0.5
        ox, oy = -(ey - sy) / n * lane * cell, (ex - sx) / n * lane * cell
        want = DEFAULT_THEME.own_goal if combo.own_goal else DEFAULT_THEME.combo
        hits = 0
        for i in range(121):
            at = (round(sx + (ex - sx) * i / 120 + ox), round(sy + (ey - sy) * i / 120 + oy))
            p, q = img.getpixel(at), plain.getpixel(at)
            hits += p != q and sum(abs(a - b) for a, b in zip(p, want, strict=True)) < 220
        out.append((combo, hits / 121))
    return out


@pytest.mark.parametrize("name", ["combos", "solid"])
def test_lines_on_rows_and_columns_run_unbroken_beside_the_glyphs(name):
    """A solid line along a row or down a column stays whole (it runs on the cards' edge or
    margin, not behind the glyphs, so it never looks dashed like an own goal)."""
    view = scored_views()[name]
    lanes = combo_lanes(view.tour.combos)
    checked = 0
    for (combo, shown), lane in zip(_hits(view), lanes, strict=True):
        straight = combo.cells[0][0] == combo.cells[1][0] or combo.cells[0][1] == combo.cells[1][1]
        if straight and not combo.own_goal and abs(lane) > 0.3:
            assert shown > 0.9, (combo, shown)
            checked += 1
    assert checked


def test_hand_picture_has_no_name_row_under_the_cards():
    cards = ["KH", "6S", "QC", "10D"]
    cell, pad = 80, round(80 * 0.2)
    img = hand_image(cards, cell=cell, title=False)
    # Just the cards and the margin around them: no row of text under each card.
    assert img.size == (4 * cell + 2 * pad, cell + 2 * pad)
    below = img.crop((0, pad + cell, img.width, img.height))
    assert below.getcolors() == [(below.width * below.height, DEFAULT_THEME.felt)]
    for i, card in enumerate(sorted(Card.parse(c) for c in cards)):
        region = img.crop((pad + i * cell, pad, pad + (i + 1) * cell, pad + cell))
        assert region.tobytes() == card_tile(card, cell).tobytes()
    # Two rows of cards sit a card apart, and a caller's own labels are still drawn.
    assert hand_image(cards * 2, cell=cell, per_row=4, title=False).height == 2 * cell + 2 * pad
    assert hand_image(cards, ["1", "2", "3", "4"], cell=cell, title=False).height > img.height


@cache
def teams_view():
    match = Match(["a", "b", "c", "d"], Settings(table=Table.TEAMS), seed=4)
    play_out(match, random.Random(4), placements=10)
    return match.observation(None)


def header_text(layout) -> str:
    return " ".join(t for line in layout.header_lines for t, _ in line.segments)


def test_computer_seats_are_named_with_the_robot_mark():
    names = ("Анна", "🤖 Normal (2)", "Boris", "🤖 Hard")
    text = header_text(board_layout(teams_view(), players=names))
    assert f"{ROBOT_MARK}\u00a0Normal (2)" in text and f"{ROBOT_MARK}\u00a0Hard" in text
    assert "Анна" in text and ROBOT_MARK + "\u00a0Анна" not in text
    robot = board_image(teams_view(), players=names)
    bare = board_image(teams_view(), players=("Анна", "Normal (2)", "Boris", "Hard"))
    gear = board_image(teams_view(), players=("Анна", "⚙ Normal (2)", "Boris", "⚙ Hard"))
    layout = board_layout(teams_view(), players=names)
    header = (0, 0, layout.width, layout.header_height)
    assert ImageChops.difference(robot.crop(header), bare.crop(header)).getbbox()
    assert ImageChops.difference(robot.crop(header), gear.crop(header)).getbbox()
    # Only the names changed: the board under the header is the same.
    robot_board = robot.crop(layout.board_box)
    bare_board = bare.crop(board_layout(teams_view(), players=("Анна", "Normal (2)", "Boris",
                                                              "Hard")).board_box)
    assert ImageChops.difference(robot_board, bare_board).getbbox() is None


def test_the_robot_mark_is_drawn_as_a_robot_face():
    face = font(40)
    img = Image.new("L", (300, 80), 0)
    stamp_text(img, (10, 60), f"{ROBOT_MARK}\u00a0Hard", face=face, fill=255, anchor="ls")
    icon = robot_face(40)
    # The face stands where a glyph would, up to the cap height, its eyes cut out.
    box = img.getbbox()
    assert box is not None and box[0] <= 16
    mark = img.crop((box[0], 60 + round(40 * 0.1) - icon.height, box[0] + icon.width,
                     60 + round(40 * 0.1)))
    assert ImageChops.difference(mark, icon).getextrema()[1] < 40
    # Then the name, where it would stand after a glyph as wide as the mark.
    advance = round(40 * 1.08)
    text = Image.new("L", (300, 80), 0)
    ImageDraw.Draw(text).text((10 + advance, 60), "\u00a0Hard", font=face, fill=255,
                              anchor="ls")
    rest = (10 + advance, 0, 300, 80)
    assert ImageChops.difference(img.crop(rest), text.crop(rest)).getextrema()[1] < 40


@pytest.mark.parametrize("board", ["line-13", "line-36", "sprawl-30", "teams", "combos"])
@pytest.mark.parametrize("ru", [False, True])
def test_a_wide_board_keeps_its_header_readable_at_phone_width(board, ru):
    """A phone shows a chat photo about 390 px wide: the header's capitals stay ≥ 9 px."""
    views = {"line-13": lambda: position(line_match(13)),
             "line-36": lambda: position(line_match(36)),
             "sprawl-30": lambda: position(scenario_matches()["sprawl-30"]),
             "teams": teams_view, "combos": lambda: scored_views()["combos"]}
    view = views[board]()
    texts = {"cards_left": "Карт на руках: {items}", "attack": "Атака: {names}"} if ru else None
    options = photo_options(view, players=("Александра Н.", "🤖 Normal", "Борис",
                                           "🤖 Hard")[: len(view.players)], texts=texts)
    layout = board_layout(view, **{k: v for k, v in options.items() if k != "cell"},
                          cell=options["cell"])
    scale = min(1.0, PHONE_WIDTH / layout.width)
    _, top, _, bottom = font(layout.font_size, bold=True).getbbox("H", anchor="ls")
    assert (bottom - top) * scale >= 9, (layout.width, layout.font_size)
    # Long items go on over the next line instead of losing their ends.
    assert ELLIPSIS not in header_text(layout)
    picture = board_image(view, **options)
    assert picture.size == (layout.width, layout.height)


def test_replay_frames_share_one_size_and_the_board_stays_put():
    """A header that wraps to one line more on some move must not make that frame taller
    than the GIF's canvas (the first frame's size), which would cut off its bottom rows."""
    match = scenario_matches()["teams-4"]
    frames, _ = replay_frames(match, tour=0)
    layouts = [board_layout(view, cell=48, area=None) for view in tour_steps(match, tour=0)]
    assert len({layout.header_height for layout in layouts}) > 1  # the case in question
    assert len({frame.size for frame in frames}) == 1
    # The board sits at the same place in every frame: the last rows of the first and the
    # last frame (the bottom labels) are the same pixels.
    first, last = frames[0], frames[-1]
    strip = (0, first.height - 20, first.width, first.height)
    assert ImageChops.difference(first.crop(strip), last.crop(strip)).getbbox() is None
    gif = Image.open(io.BytesIO(replay_gif(match, tour=0)))
    assert gif.size == frames[0].size
