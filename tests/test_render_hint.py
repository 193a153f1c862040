"""Hints on the board: suggested cards as ghosts, coordinates written in the legal cells."""

from __future__ import annotations

import io
import random
from functools import cache

import pytest
from PIL import Image, ImageChops

from krendzu import Match, Place
from krendzu.cards import parse_card
from render import board_image, board_layout, board_photo, board_png, legal_cells, position
from render.board import photo_options
from render.ghost import GHOST, ghost_tile, labelled_tile
from render.sheet import line_match, play_out


@cache
def game() -> Match:
    """A duel in progress: 11 cards down, the attacker to move."""
    return play_out(Match(["ann", "bob"], seed=21), random.Random(2), placements=11,
                    passes=False)


def view():
    return game().observation(None)


def free_cells() -> list[tuple[int, int]]:
    return sorted(legal_cells(view().tour.placements))


def hand():
    match = game()
    return match.observation(match.current_player).tour.hand


def diff_box(a: Image.Image, b: Image.Image):
    return ImageChops.difference(a.convert("RGB"), b.convert("RGB")).getbbox()


def changed_cells(a: Image.Image, b: Image.Image, layout) -> set[tuple[int, int]]:
    """The shown cells whose pixels differ between ``a`` and ``b``; asserts that nothing
    outside the board's cells differs."""
    out = set()
    rest_a, rest_b = a.copy(), b.copy()
    for x in layout.columns:
        for y in layout.rows:
            box = layout.cell_box(x, y)
            if diff_box(a.crop(box), b.crop(box)):
                out.add((x, y))
            rest_a.paste((0, 0, 0), box)
            rest_b.paste((0, 0, 0), box)
    assert diff_box(rest_a, rest_b) is None, "pixels changed outside the board cells"
    return out


def test_defaults_are_unchanged():
    v = view()
    plain = board_image(v)
    same = board_image(v, suggestion=(), cell_labels=False)
    assert diff_box(plain, same) is None
    assert board_png(v) == board_png(v, suggestion=(), cell_labels=False)
    assert board_layout(v) == board_layout(v, suggestion=())


def test_a_suggested_card_is_drawn_only_in_its_cell():
    v = view()
    card, cell = hand()[0], free_cells()[0]
    suggestion = [(card, *cell)]
    layout = board_layout(v, suggestion=suggestion)
    assert layout == board_layout(v)  # a legal cell is already in the picture
    hinted = board_image(v, suggestion=suggestion)
    plain = board_image(v)
    assert changed_cells(hinted, plain, layout) == {cell}
    box = layout.cell_box(*cell)
    assert diff_box(hinted.crop(box), ghost_tile(card, layout.cell)) is None


def test_a_defenders_two_cards_are_numbered_in_order():
    v = view()
    a, b = hand()[:2]
    first = free_cells()[0]
    # The second card may touch only the first: the cell beyond it is not yet legal.
    second = next((first[0] + dx, first[1] + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
                  if (first[0] + dx, first[1] + dy) not in v.tour.board)
    suggestion = [(a, *first), (b, *second)]
    layout = board_layout(v, suggestion=suggestion)
    img = board_image(v, suggestion=suggestion)
    plain = board_image(v, area=layout.area)
    assert changed_cells(img, plain, layout) == {first, second}
    for order, (card, x, y) in enumerate(suggestion, start=1):
        tile = img.crop(layout.cell_box(x, y))
        assert diff_box(tile, ghost_tile(card, layout.cell, order)) is None
        assert diff_box(tile, ghost_tile(card, layout.cell, 3 - order)) is not None
        assert diff_box(tile, ghost_tile(card, layout.cell)) is not None
    # The ghost's own colour is there, and only in the suggested cells.
    cyan = [(x, y) for x in layout.columns for y in layout.rows
            if GHOST in {c for _, c in img.crop(layout.cell_box(x, y)).getcolors(1 << 16)}]
    assert set(cyan) == {first, second}


@pytest.mark.parametrize("viewport", ["last-move", (0, 0, 1, 1), "area"])
def test_the_shown_area_grows_to_include_suggested_cells(viewport):
    v = view()
    far = (9, -8)  # nowhere near the cards: still drawn
    near = free_cells()[-1]
    suggestion = [(hand()[0], *near), (hand()[1], *far)]
    options = {"area": (-1, -1, 1, 1)} if viewport == "area" else {
        "viewport": viewport, "viewport_cells": (3, 3)}
    without = board_layout(v, **options)
    assert not without.shows(*far)
    layout = board_layout(v, suggestion=suggestion, **options)
    for _, x, y in suggestion:
        assert layout.shows(x, y)
    if viewport != "last-move":  # a last-move window moves to the suggestion instead
        x0, y0, x1, y1 = without.area
        assert layout.area[0] <= x0 and layout.area[1] <= y0
        assert layout.area[2] >= x1 and layout.area[3] >= y1
    img = board_image(v, suggestion=suggestion, **options)
    assert img.size == (layout.width, layout.height)


def test_a_viewport_photo_centres_on_the_suggestion():
    match = line_match()  # 36 cards in one row: a chat photo shows a viewport
    v = position(match)
    last = min(x for _, x, _ in v.tour.placements)
    suggestion = [(parse_card("QC"), 1, 0)]  # the far end from the last move
    options = photo_options(v, suggestion=suggestion, cell_labels=True)
    assert options["viewport"] == "last-move"
    assert options["suggestion"] == suggestion and options["cell_labels"] is True
    layout = board_layout(v, **{k: options[k] for k in ("cell", "viewport", "viewport_cells",
                                                         "max_side", "suggestion")})
    assert layout.shows(1, 0) and not layout.shows(last, 0)
    photo = Image.open(io.BytesIO(board_photo(v, suggestion=suggestion, cell_labels=True)))
    assert photo.format == "JPEG" and max(photo.size) <= 1280


def test_photo_options_pass_drawing_options_through():
    v = view()
    # Drawing-only options used to reach board_layout and fail there.
    assert photo_options(v, hint_cells=False)["hint_cells"] is False
    assert board_photo(v, hint_cells=False, combos=False)[:2] == b"\xff\xd8"


def test_cell_labels_only_on_legal_cells():
    v = view()
    layout = board_layout(v)
    labelled = board_image(v, cell_labels=True)
    plain = board_image(v)
    legal = {c for c in legal_cells(v.tour.placements) if layout.shows(*c)}
    assert changed_cells(labelled, plain, layout) == legal
    for x, y in legal:
        tile = labelled.crop(layout.cell_box(x, y))
        assert diff_box(tile, labelled_tile(layout.frame.label(x, y), layout.cell)) is None
    # Labels follow the tour's frame and are told apart.
    a, b = sorted(legal)[:2]
    assert diff_box(labelled_tile(layout.frame.label(*a), layout.cell),
                    labelled_tile(layout.frame.label(*b), layout.cell)) is not None


def test_cell_labels_with_a_suggestion_label_the_ghost_too():
    v = view()
    card, cell = hand()[0], free_cells()[0]
    layout = board_layout(v)
    img = board_image(v, suggestion=[(card, *cell)], cell_labels=True)
    tile = img.crop(layout.cell_box(*cell))
    assert diff_box(tile, ghost_tile(card, layout.cell, 0, layout.frame.label(*cell))) is None
    assert diff_box(tile, ghost_tile(card, layout.cell)) is not None


def test_no_cell_labels_when_the_tour_is_over():
    v = position(line_match())
    assert v.tour.is_over
    assert diff_box(board_image(v, cell_labels=True), board_image(v)) is None


def test_labels_stay_legible_at_photo_sizes():
    for cell in (44, 56, 72):
        for label in ("M13", "AB27", "L9"):
            tile = labelled_tile(label, cell)
            assert tile.size == (cell, cell)
            bright = sum(1 for _, c in tile.getcolors(1 << 16) if sum(c) > 600)
            assert bright > 0  # light ink on the dark slot


def test_hinted_png_keeps_the_hint_colour():
    v = view()
    suggestion = [(hand()[0], *free_cells()[0])]
    data = board_png(v, suggestion=suggestion, cell_labels=True)
    img = Image.open(io.BytesIO(data)).convert("RGB")
    colours = {c for _, c in img.getcolors(1 << 16)}
    # The cyan survives the palette (the theme's fixed palette would turn it blue).
    assert any(max(abs(a - b) for a, b in zip(c, GHOST, strict=True)) < 24 for c in colours)
    assert len(data) < 300_000


def test_suggestion_from_a_computer_player_draws():
    from krendzu.ai import make_player

    match = game()
    seat = match.current_player
    actions = make_player("normal").decide(match.observation(seat), random.Random(0))
    places = [(a.card, a.x, a.y) for a in actions if isinstance(a, Place)]
    assert places
    img = board_image(match.observation(seat), suggestion=places, cell_labels=True)
    layout = board_layout(match.observation(seat), suggestion=places)
    assert img.size == (layout.width, layout.height)
    for _, x, y in places:
        assert layout.shows(x, y)
