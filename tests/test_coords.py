"""Coordinate labels: M13 at the opening card, forgiving input, shifts that stay."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krendzu import Card
from krendzu.coords import (
    CoordinateError,
    LabelFrame,
    column_index,
    column_name,
    frame_for,
    frame_history,
)

FRAME = LabelFrame()


def test_opening_card_is_m13():
    assert FRAME.label(0, 0) == "M13"
    assert FRAME.parse("M13") == (0, 0)
    assert FRAME.label(1, 0) == "N13"
    assert FRAME.label(0, 1) == "M14"
    assert FRAME.label(-12, -12) == "A1"
    assert FRAME.label(13, 13) == "Z26"


@pytest.mark.parametrize(
    "text",
    [
        "M13", "m13", "m 13", "M 13", "13M", "13m", "13 m", " 13  M ", "M-13", "m,13",
        "М13", "м13", "13 м", "м 13", "Ｍ１３",
    ],
)  # fmt: skip
def test_spelling_variants(text):
    assert FRAME.parse(text) == (0, 0)


@pytest.mark.parametrize(
    ("cyrillic", "latin"),
    [
        ("А", "A"), ("В", "B"), ("С", "C"), ("Е", "E"), ("Н", "H"), ("К", "K"),
        ("М", "M"), ("О", "O"), ("Р", "P"), ("Т", "T"), ("Х", "X"),
    ],
)  # fmt: skip
def test_cyrillic_look_alikes(cyrillic, latin):
    assert cyrillic != latin
    for letter in (cyrillic, cyrillic.lower()):
        assert FRAME.parse(letter + "7") == FRAME.parse(latin + "7")
        assert FRAME.parse("7 " + letter) == FRAME.parse(latin + "7")


@pytest.mark.parametrize(
    ("text", "code"),
    [("", "empty"), ("   ", "empty"), ("M", "format"), ("13", "format"), ("Я13", "format"),
     ("M0", "row"), ("M13X", "format"), ("hello", "format"), ("M1234567", "format")],
)
def test_bad_input_is_a_polite_typed_error(text, code):
    with pytest.raises(CoordinateError) as info:
        FRAME.parse(text)
    assert isinstance(info.value, ValueError)
    assert info.value.code == code
    message = str(info.value)
    assert message[0].isupper() and message.endswith(".")
    assert "M13" in message or "1" in message


def test_not_text_is_refused():
    with pytest.raises(CoordinateError):
        FRAME.parse(1313)  # type: ignore[arg-type]


def test_bijective_columns():
    assert [column_name(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == [
        "A", "B", "Z", "AA", "AB", "AZ", "BA", "ZZ", "AAA",
    ]  # fmt: skip
    for i in range(0, 2000, 7):
        assert column_index(column_name(i)) == i


def test_cells_right_of_z_and_below_26():
    assert FRAME.label(14, 0) == "AA13"
    assert FRAME.label(15, 14) == "AB27"
    assert FRAME.parse("aa13") == (14, 0)
    assert FRAME.parse("27ab") == (15, 14)


@given(
    x=st.integers(-36, 60),
    y=st.integers(-36, 60),
    col=st.integers(0, 30),
    row=st.integers(0, 30),
)
def test_round_trip(x, y, col, row):
    frame = LabelFrame(col, row).fit(x, y)
    label = frame.label(x, y)
    assert frame.parse(label) == (x, y)
    assert frame.parse(label.lower()) == (x, y)
    letters = label.rstrip("0123456789")
    assert frame.parse(label[len(letters):] + " " + letters.lower()) == (x, y)


def test_random_round_trip_through_cyrillic_twins():
    rng = random.Random(5)
    twins = {"A": "А", "B": "В", "C": "С", "E": "Е", "H": "Н", "K": "К", "M": "М"}
    for _ in range(500):
        x, y = rng.randint(-12, 13), rng.randint(-12, 13)
        label = FRAME.label(x, y)
        spelled = "".join(twins.get(ch, ch) for ch in label)
        assert FRAME.parse(spelled) == (x, y)


def test_no_shift_while_everything_fits():
    placements = [(0, 0), (1, 0), (-11, 0), (0, -11), (13, 13)]
    assert frame_for(placements) == LabelFrame(0, 0)
    assert not frame_for(placements).shifted


def test_shift_grows_just_enough_and_stays():
    # A tour growing left along row 13: a card in column A (x = -12) has an empty neighbour
    # at x = -13, which needs a column left of A: the frame shifts by one.
    line = [(-i, 0) for i in range(14)]
    frames = frame_history(line)
    assert frames[11] == LabelFrame(0, 0)  # card at B13, neighbour at A13
    assert frames[12] == LabelFrame(1, 0)  # card at x=-12: its neighbour x=-13 must fit
    assert frames[13] == LabelFrame(2, 0)
    final = frame_for(line)
    assert final == LabelFrame(2, 0) and final.shifted
    assert final.label(-13, 0) == "B13"
    assert final.label(-14, 0) == "A13"  # the empty neighbour of the last card
    assert final.label(0, 0) == "O13"  # the opening card moved with the frame
    # Later cards to the right never undo the shift.
    assert frame_for([*line, (1, 0), (2, 0)]) == final


def test_shift_upwards_and_with_cards():
    cards = [(Card.parse("QC"), 0, 0), (Card.parse("KH"), 0, -1)]
    cards += [(Card(i), 0, -1 - i) for i in range(2, 14)]
    frame = frame_for(cards)
    assert frame.col_shift == 0 and frame.row_shift == 3  # top card y=-14
    top = min(y for _, _, y in cards)
    assert frame.row_label(top - 1) == "1"
    assert frame.label(0, 0) == "M16"


def test_frame_is_reproducible():
    rng = random.Random(9)
    cells = [(0, 0)]
    for _ in range(35):
        x, y = rng.choice(cells)
        dx, dy = rng.choice([(1, 0), (-1, 0), (0, 1), (0, -1)])
        cells.append((x + dx, y + dy))
    assert frame_for(cells) == frame_for(list(cells)) == frame_history(cells)[-1]
    frame = frame_for(cells)
    for x, y in cells:
        for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
            assert frame.parse(frame.label(nx, ny)) == (nx, ny)


def test_label_outside_frame_is_refused():
    with pytest.raises(ValueError):
        FRAME.label(-13, 0)
    with pytest.raises(ValueError):
        FRAME.row_label(-13)
