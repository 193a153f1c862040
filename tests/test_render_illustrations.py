"""Pictures for the rules: every example is checked with the engine; both languages draw."""

from __future__ import annotations

import io
import itertools
import time
from functools import cache

import pytest
from PIL import Image, ImageChops

import render
from chat.i18n import Catalogs, picture_texts
from chat.painter import main as write_in_every_language
from krendzu import is_combination, is_progression, parse_action
from krendzu.cards import RANK_VALUES
from render.illustrations import (
    COORDS_STEPS,
    EXAMPLE_AREA,
    EXAMPLE_MOVES,
    EXAMPLES,
    VALUE_CARDS,
    board_example_image,
    coordinates_example_image,
    example_tour,
    main,
    rules_board_example,
    rules_coordinates_example,
    rules_image,
    rules_picture,
    wrap,
)
from render.texts import TEXTS
from render.typeface import clean_text, font

PICTURES = [rules_picture, rules_board_example, rules_coordinates_example]
#: The pictures' words per language, as the chat layer passes them (render knows English
#: only; the Russian comes from the catalog).
WORDS = {lang: picture_texts(Catalogs().get(lang)) for lang in ("en", "ru")}


@cache
def png(draw, lang: str) -> bytes:
    return draw(texts=WORDS[lang])


def decode(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    assert img.format == "PNG"
    return img


def examples(key: str):
    return next(e for e in EXAMPLES if e.key == key)


# The examples are right ---------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_every_example_is_judged_by_the_engine(example):
    assert is_combination(example.cards) is example.valid
    cards = example.parsed
    if example.values is None:  # a suit line: one suit, and not a progression
        assert len({c.suit for c in cards}) == 1
        assert not is_progression(example.cards)
        return
    # The values printed under the cards are values those cards may take...
    for card, value in zip(cards, example.values, strict=True):
        assert value in RANK_VALUES[card.rank]
    steps = {b - a for a, b in itertools.pairwise(example.values)}
    if example.valid:
        # ...and they make the progression the picture claims.
        assert len(steps) == 1 and 0 not in steps
        assert is_progression(example.cards)
    else:
        assert len(steps) > 1 or 0 in steps
        assert not is_progression(example.cards)
        assert len({c.suit for c in cards}) > 1


def test_the_examples_the_rules_ask_for_are_shown():
    shown = {tuple(e.cards): e for e in EXAMPLES}
    four_hearts = [e for e in EXAMPLES if e.values is None]
    assert four_hearts and all(c.suit == 3 for c in four_hearts[0].parsed)
    assert examples("run").values == (6, 7, 8, 9)
    # The sources' own examples: J 9 6 Q = 12 9 6 3, A A 9 Q = 1 5 9 13, A 6 7 8 = 5 6 7 8.
    ranks = {tuple(c.rank for c in e.parsed): e.values for e in EXAMPLES}
    assert ranks[(5, 3, 0, 6)] == (12, 9, 6, 3)
    assert ranks[(8, 8, 3, 6)] == (1, 5, 9, 13)
    assert ranks[(8, 0, 1, 2)] == (5, 6, 7, 8)
    # Contrast: four of one rank, and a broken run.
    invalid = [e for e in EXAMPLES if not e.valid]
    assert any(len({c.rank for c in e.parsed}) == 1 for e in invalid)
    assert any(len({c.rank for c in e.parsed}) == 4 for e in invalid)
    assert len(shown) == len(EXAMPLES)


def test_the_values_table_has_one_card_of_each_rank():
    from krendzu import parse_card

    assert sorted(parse_card(c).rank for c in VALUE_CARDS) == list(range(9))


def test_the_board_example_is_a_real_tour_with_a_goal_and_an_own_goal():
    tour = example_tour()
    assert tour.is_over
    assert tour.points == 2
    goals = [c for c in tour.combos if not c.own_goal]
    own = [c for c in tour.combos if c.own_goal]
    assert len(goals) == 1 and len(own) == 1
    board = tour.observation(None).board
    for combo in tour.combos:
        assert is_combination([board[cell] for cell in combo.cells])
    # The goal is a progression of mixed suits, the own goal a suit line.
    goal_cards = [board[cell] for cell in goals[0].cells]
    assert is_progression(goal_cards) and len({c.suit for c in goal_cards}) == 4
    own_cards = [board[cell] for cell in own[0].cells]
    assert len({c.suit for c in own_cards}) == 1 and not is_progression(own_cards)
    # Every card is inside the area the pictures show.
    x0, y0, x1, y1 = EXAMPLE_AREA
    assert all(x0 <= x <= x1 and y0 <= y <= y1 for x, y in board)


def test_the_coordinates_example_suggests_the_scoring_card():
    tour = example_tour(COORDS_STEPS)
    assert not tour.is_over and tour.points == 0
    step = EXAMPLE_MOVES[COORDS_STEPS]
    tour.apply(parse_action(step))  # legal, and it scores
    assert tour.points == 1


# Pictures -----------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("draw", PICTURES, ids=lambda f: f.__name__)
def test_pictures_render_small_enough(draw, lang):
    start = time.perf_counter()
    data = png(draw, lang)
    assert time.perf_counter() - start < 5
    img = decode(data)
    assert max(img.size) <= 1280
    assert min(img.size) >= 600
    assert len(data) < 300_000


@pytest.mark.parametrize("draw", PICTURES, ids=lambda f: f.__name__)
def test_languages_differ(draw):
    en = decode(png(draw, "en")).convert("RGB")
    ru = decode(png(draw, "ru")).convert("RGB")
    assert en.size != ru.size or ImageChops.difference(en, ru).getbbox() is not None


def test_unknown_language_falls_back_to_english():
    assert rules_picture(texts=picture_texts(Catalogs().get("xx"))) == png(rules_picture, "en")
    assert rules_picture() == png(rules_picture, "en")


RULE_KEYS = [key for key in TEXTS if key.startswith(
    ("rules_", "values_", "combos_", "ex_", "example_", "board_", "coords_"))]


def test_every_rules_text_exists_in_both_languages():
    assert len(RULE_KEYS) > 20
    for key in RULE_KEYS:
        assert TEXTS[key] and WORDS["ru"][key], key
        assert TEXTS[key] != WORDS["ru"][key] or key.endswith("_values"), key


@pytest.mark.parametrize("key", RULE_KEYS)
def test_russian_texts_are_cyrillic_and_fully_drawable(key):
    text = WORDS["ru"][key]
    assert any("а" <= ch.lower() <= "я" or ch in "ёЁ" for ch in text), text
    # Nothing the shipped font lacks (it would be dropped, not drawn as a box).
    for bold in (False, True):
        assert clean_text(text, bold=bold) == " ".join(text.split())


def test_cyrillic_glyphs_are_drawn():
    face = font(24, bold=True)
    for ch in "КрэндзюЖШЩё":
        assert face.getmask(ch).getbbox() is not None
    # The Russian title really appears: the title bar differs from the English one.
    en, ru = rules_image(), rules_image(texts=WORDS["ru"])
    bar = (0, 0, en.width, 70)
    assert ImageChops.difference(en.crop(bar), ru.crop(bar)).getbbox() is not None


def test_caption_words_follow_the_language():
    ru = WORDS["ru"]
    img = board_example_image(texts=ru)
    other = board_example_image(texts={**ru, "board_goal": ru["board_goal"] + " !!!"})
    assert ImageChops.difference(img, other).getbbox() is not None
    assert coordinates_example_image(texts=ru).size[0] == img.size[0]


def test_wrap_respects_the_width():
    face = font(18)
    text = WORDS["ru"]["combos_note"]
    lines = wrap(text, face, 300)
    assert len(lines) > 2
    assert all(face.getlength(line) <= 300 for line in lines)
    assert " ".join(lines) == " ".join(text.split(" "))


def test_exported_from_render():
    assert render.rules_picture is rules_picture
    assert render.rules_board_example is rules_board_example
    assert render.rules_coordinates_example is rules_coordinates_example
    for name in ("rules_picture", "rules_board_example", "rules_coordinates_example"):
        assert name in render.__all__


def test_command_line_writes_every_picture(tmp_path, capsys):
    # render alone: the English pictures.
    assert main([str(tmp_path / "en")]) == 0
    names = sorted(p.name for p in (tmp_path / "en").iterdir())
    assert names == ["board-example-en.png", "coordinates-en.png", "rules-en.png"]
    assert (tmp_path / "en" / "rules-en.png").read_bytes() == png(rules_picture, "en")
    # The chat layer: every language of the catalog (the pictures in docs/img).
    assert write_in_every_language([str(tmp_path / "all")]) == 0
    written = {p.name for p in (tmp_path / "all").iterdir()}
    assert {"rules-en.png", "rules-ru.png", "board-example-ru.png",
            "coordinates-ru.png"} <= written
    assert (tmp_path / "all" / "rules-ru.png").read_bytes() == png(rules_picture, "ru")
    assert "rules-ru.png" in capsys.readouterr().out
