"""Board pictures: structure, not exact pixels."""

from __future__ import annotations

import io
import random
from functools import cache

import pytest
from PIL import Image, ImageChops

from krendzu import DECK, Match, Settings, Table
from krendzu.board import cell_xy
from krendzu.coords import frame_for
from render import (
    MAX_RATIO,
    MAX_SUM,
    board_image,
    board_jpeg,
    board_layout,
    board_photo,
    board_png,
    card_tile,
    empty_tile,
    legal_cells,
    position,
)
from render.board import Position, combo_lanes, highlighted_cells
from render.faces import DEFAULT_THEME
from render.sheet import line_match, play_out, scenario_matches


@cache
def matches():
    return scenario_matches()


@cache
def view(name):
    return position(matches()[name])


def same(a: Image.Image, b: Image.Image) -> bool:
    return ImageChops.difference(a.convert("RGB"), b.convert("RGB")).getbbox() is None


def mean_diff(a: Image.Image, b: Image.Image) -> float:
    diff = ImageChops.difference(a.convert("RGB"), b.convert("RGB")).convert("L")
    return sum(i * n for i, n in enumerate(diff.histogram())) / (a.width * a.height)


def pixels(img: Image.Image) -> list:
    """Pixel values without Image.getdata (deprecated in Pillow 12)."""
    if img.mode == "L":
        return list(img.tobytes())
    data = img.convert("RGB").tobytes()
    return [tuple(data[i : i + 3]) for i in range(0, len(data), 3)]


def crop(img, box):
    return img.crop(box)


@pytest.mark.parametrize("name", ["one-card", "sprawl-30", "teams-4", "trio", "line-36"])
def test_each_cell_shows_exactly_its_card(name):
    v = view(name)
    layout = board_layout(v)
    img = board_image(v, combos=False)
    pos = Position.of(v)
    lit = highlighted_cells(pos)
    assert v.tour.placements
    for card, x, y in v.tour.placements:
        region = crop(img, layout.cell_box(x, y))
        assert same(region, card_tile(card, layout.cell, (x, y) in lit)), (card, x, y)
        for other in random.Random(x * 100 + y).sample(DECK, 6):
            if other != card:
                assert not same(region, card_tile(other, layout.cell, (x, y) in lit))


def test_cards_under_combination_lines_stay_recognisable():
    v = view("combos")
    assert len(v.tour.combos) >= 3
    layout = board_layout(v)
    img = board_image(v)
    lit = highlighted_cells(Position.of(v))
    board = v.tour.board
    for combo in v.tour.combos:
        for x, y in combo.cells:
            region = crop(img, layout.cell_box(x, y))
            scores = {c: mean_diff(region, card_tile(c, layout.cell, (x, y) in lit))
                      for c in DECK}
            assert min(scores, key=scores.get) == board[(x, y)]


def test_every_face_is_distinct_and_cached():
    tiles = [card_tile(c, 64) for c in DECK]
    assert card_tile(DECK[0], 64) is tiles[0]
    for i in range(len(tiles)):
        for j in range(i + 1, len(tiles)):
            assert not same(tiles[i], tiles[j])
    # Colour: red suits have red ink, black suits none.
    for card, tile in zip(DECK, tiles, strict=True):
        reds = sum(1 for r, g, b in pixels(tile) if r > 150 and g < 90 and b < 90)
        assert (reds > 20) == card.is_red, card


def test_suit_shapes_differ_without_colour():
    # Same rank, compared in grey: the four suits still differ clearly.
    greys = [card_tile(DECK[suit * 9 + 4], 64).convert("L") for suit in range(4)]
    for i in range(4):
        for j in range(i + 1, 4):
            diff = ImageChops.difference(greys[i], greys[j]).point(lambda v: 255 * (v > 60))
            assert sum(1 for v in pixels(diff) if v) > 60


def test_hints_are_the_legal_empty_cells():
    match = Match(["ann", "bob"], seed=3)
    play_out(match, random.Random(3), placements=9)
    v = match.observation(None)
    tour = match.tour
    engine_cells = {cell_xy(c) for c in tour.placement_cells()}
    assert legal_cells(v.tour.placements) == engine_cells
    layout = board_layout(v)
    img = board_image(v)
    hint, blank = empty_tile(layout.cell, True), empty_tile(layout.cell, False)
    taken = {(x, y) for _, x, y in v.tour.placements}
    for x in layout.columns:
        for y in layout.rows:
            if (x, y) in taken:
                continue
            region = crop(img, layout.cell_box(x, y))
            assert same(region, hint if (x, y) in engine_cells else blank), (x, y)
    assert legal_cells([]) == {(0, 0)}


def test_no_hints_when_asked_or_when_the_tour_is_over():
    v = view("sprawl-30")
    assert v.tour.is_over
    layout = board_layout(v)
    img = board_image(v)
    hint = empty_tile(layout.cell, True)
    for x, y in legal_cells(v.tour.placements):
        assert not same(crop(img, layout.cell_box(x, y)), hint)


def test_last_move_highlight_covers_a_defenders_double():
    rng = random.Random(8)
    for seed in range(40):
        match = Match(["ann", "bob"], seed=seed)
        tour = match.tour
        while not tour.is_over:
            play_out(match, rng, placements=1)
            if tour.turns and len(tour.turns[-1].cards) == 2 and not tour.pending:
                break
            if match.tour is not tour:
                break
        if tour.turns and len(tour.turns[-1].cards) == 2 and not tour.is_over:
            break
    else:  # pragma: no cover
        pytest.fail("the seeded search found no defender's double to highlight")
    v = match.observation(None)
    double = {(x, y) for _, x, y in v.tour.turns[-1].cards}
    assert highlighted_cells(Position.of(v)) == double
    layout = board_layout(v)
    img = board_image(v)
    for card, x, y in v.tour.placements:
        region = crop(img, layout.cell_box(x, y))
        lit = (x, y) in double
        assert same(region, card_tile(card, layout.cell, lit))
        if lit:  # the gold ring
            ring = region.getpixel((2, layout.cell // 2))
            assert ring == pytest.approx(DEFAULT_THEME.accent, abs=40)


def test_labels_on_every_edge_follow_the_tour_frame():
    v = view("line-36")
    layout = board_layout(v)
    frame = frame_for(v.tour.placements)
    assert frame.col_shift > 0  # the line grew left past A
    assert layout.frame == frame
    labels = layout.labels()
    columns = [t for t, _ in labels[: 2 * len(layout.columns)]]
    assert columns[::2] == [frame.column_label(x) for x in layout.columns]
    assert columns[::2] == columns[1::2]  # top and bottom
    assert "A" in columns and frame.label(0, 0) != "M13"
    img = board_image(v)
    band = DEFAULT_THEME.band
    for text, box in labels:
        found = pixels(img.crop(box))
        ink = sum(1 for p in found if abs(p[0] - band[0]) + abs(p[1] - band[1]) > 120)
        assert ink > 4, text
    # Right of Z: bijective spelling in a line growing right.
    right = position(line_match(direction=1))
    rl = board_layout(right)
    assert {"AA", "AB"} <= {t for t, _ in rl.labels()}


def test_combination_lines_drawn_and_own_goals_told_apart():
    v = view("combos")
    combos = v.tour.combos
    assert any(c.own_goal for c in combos) and any(not c.own_goal for c in combos)
    layout = board_layout(v)
    img = board_image(v, flash=False)
    plain = board_image(v, combos=False)
    lanes = combo_lanes(combos)
    theme = DEFAULT_THEME
    for combo, lane in zip(combos, lanes, strict=True):
        (ax, ay), (bx, by) = combo.cells[0], combo.cells[3]
        sx, sy = layout.cell_center(ax, ay)
        ex, ey = layout.cell_center(bx, by)
        n = ((ex - sx) ** 2 + (ey - sy) ** 2) ** 0.5
        ox, oy = -(ey - sy) / n * lane * layout.cell, (ex - sx) / n * lane * layout.cell
        want = theme.own_goal if combo.own_goal else theme.combo
        hits = 0
        steps = 120
        for i in range(steps + 1):
            t = i / steps
            at = (round(sx + (ex - sx) * t + ox), round(sy + (ey - sy) * t + oy))
            p, q = img.getpixel(at), plain.getpixel(at)
            if p != q and sum(abs(a - b) for a, b in zip(p, want, strict=True)) < 220:
                hits += 1
        # Solid lines cover most of the way, dashed own goals a good part of it.
        assert hits > steps * (0.2 if combo.own_goal else 0.4), (combo, hits)


def test_header_text_language_and_secrets():
    match = matches()["teams-4"]
    public = match.observation(None)
    seat = match.tour.current_player
    private = match.observation(seat)
    # A private observation draws exactly the public board: no hand leaks into it.
    assert same(board_image(private), board_image(public))
    layout = board_layout(public)
    text = " ".join(t for line in layout.header_lines for t, _ in line.segments)
    assert "Tour 2/2" in text or "Tour 1/2" in text
    assert "Attack" in text and "Defence" in text and "Cards left" in text
    assert "To move" in text
    from chat.i18n import Catalogs, picture_texts  # render knows English only

    ru = board_layout(public, texts=picture_texts(Catalogs().get("ru")))
    ru_text = " ".join(t for line in ru.header_lines for t, _ in line.segments)
    assert "Атака" in ru_text and "Защита" in ru_text and "Ход" in ru_text
    custom = board_layout(public, texts={"attack": "ATK {names}"})
    assert "ATK" in " ".join(t for line in custom.header_lines for t, _ in line.segments)


def test_header_survives_emoji_and_unknown_scripts():
    match = matches()["trio"]
    v = match.observation(None)
    text = " ".join(t for line in board_layout(v).header_lines for t, _ in line.segments)
    assert "😀" not in text and "李" not in text
    assert "Player 2" in text and "Player 3" in text


def test_limits_for_a_36_card_line():
    v = view("line-36")
    assert len(v.tour.placements) == 36
    img = board_image(v)
    w, h = img.size
    assert w + h <= MAX_SUM and max(w, h) <= MAX_RATIO * min(w, h)
    big = board_image(v, cell=200)
    assert big.width + big.height <= MAX_SUM
    assert max(big.size) <= MAX_RATIO * min(big.size)
    photo = Image.open(io.BytesIO(board_photo(v)))
    assert max(photo.size) <= 1280
    assert photo.format == "JPEG"


def test_viewport_keeps_whole_board_labels():
    v = view("line-36")
    full = board_layout(v)
    vp = board_layout(v, viewport="last-move", viewport_cells=(9, 7))
    assert len(vp.columns) == 9 and len(vp.rows) == 7
    assert vp.frame == full.frame
    last = v.tour.placements[-1]
    assert vp.shows(last[1], last[2])
    for x in vp.columns:
        assert vp.frame.column_label(x) == full.frame.column_label(x)
    assert board_image(v, viewport="last-move", viewport_cells=(9, 7)).size == (
        vp.width, vp.height)
    assert vp.width < full.width


def test_cropped_to_the_occupied_area():
    v = view("sprawl-30")
    layout = board_layout(v)
    xs = [x for _, x, _ in v.tour.placements]
    ys = [y for _, _, y in v.tour.placements]
    x0, y0, x1, y1 = layout.area
    assert x0 <= min(xs) - 1 and x1 >= max(xs) + 1
    assert y0 <= min(ys) - 1 and y1 >= max(ys) + 1
    assert x1 - x0 + 1 <= max(max(xs) - min(xs) + 3, 9)
    assert y1 - y0 + 1 <= max(max(ys) - min(ys) + 3, 7)


def test_encoders_and_size_budget():
    v = view("sprawl-30")
    png, jpeg = board_png(v), board_jpeg(v)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and jpeg[:2] == b"\xff\xd8"
    assert len(png) <= 300_000 and len(jpeg) <= 300_000
    assert Image.open(io.BytesIO(png)).size == board_image(v).size


def test_empty_board_and_tour_view():
    match = Match(["ann", "bob"], Settings(table=Table.DUEL), seed=1)
    v = match.observation(None)
    layout = board_layout(v)
    assert layout.shows(0, 0) and layout.frame.label(0, 0) == "M13"
    img = board_image(v.tour)  # a bare TourView works too (seats named "Player n")
    assert img.size[0] > 0
    text = " ".join(t for line in board_layout(v.tour).header_lines for t, _ in line.segments)
    assert "Player 1" in text
    region = crop(board_image(v), layout.cell_box(0, 0))
    assert same(region, empty_tile(layout.cell, True))
