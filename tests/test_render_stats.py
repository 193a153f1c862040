"""Statistics pictures: a player's card and the leaderboard, in both languages."""

from __future__ import annotations

import dataclasses
import io

import pytest
from PIL import Image, ImageChops

import render
from chat.i18n import Catalogs, picture_texts
from render.stats import (
    MAX_LEADERS,
    WIDTH,
    LeaderRow,
    StatsCard,
    leaderboard_image,
    leaderboard_png,
    match_ticks,
    nice_ticks,
    number_text,
    rating_text,
    stats_card_image,
    stats_card_png,
)
from render.texts import TEXTS
from render.typeface import clean_text

LANGS = ("en", "ru")
#: The pictures' words per language, as the chat layer passes them (render knows English
#: only; the Russian comes from the catalog).
WORDS = {lang: picture_texts(Catalogs().get(lang)) for lang in LANGS}
HISTORY = (0.0, 2.4, 5.1, 4.2, 7.9, 9.3, 8.8, 11.6)

CARD = StatsCard(
    name="Анна", scope="Friday club", matches=57, wins=31, draws=6, losses=20,
    rating=11.6, rated_matches=8, rated_needed=5, attack_points_per_tour=1.43,
    conceded_per_tour=0.8, best_tour=5, suit_combos=23, progression_combos=41,
    own_goals_conceded=3, rating_history=HISTORY,
)
HIDDEN = dataclasses.replace(CARD, rating=None, rated_matches=2, rating_history=())


def decode(data: bytes) -> Image.Image:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    img = Image.open(io.BytesIO(data))
    assert img.format == "PNG"
    img.load()
    return img


def rows(n: int) -> list[LeaderRow]:
    return [LeaderRow(i + 1, f"Игрок номер {i + 1}", 30 - i if i % 7 else None, 40 - i,
                      20, i % 3, 10) for i in range(n)]


def leader_height(n: int) -> int:
    return leaderboard_image(rows(n), title="Top").height


# Words -----------------------------------------------------------------------------------

STATS_KEYS = [key for key in TEXTS if key.startswith("stats_")]


def test_every_stats_text_exists_in_both_languages():
    assert len(STATS_KEYS) > 20
    assert set(STATS_KEYS) == {key for key in WORDS["ru"] if key.startswith("stats_")}
    for key in STATS_KEYS:
        assert TEXTS[key] and WORDS["ru"][key], key
        # The same placeholders in both languages.
        assert _fields(TEXTS[key]) == _fields(WORDS["ru"][key]), key


def _fields(text: str) -> set[str]:
    import string

    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("key", STATS_KEYS)
def test_russian_stats_texts_are_drawable(key):
    text = WORDS["ru"][key]
    if any(ch.isalpha() for ch in text):
        assert any("а" <= ch.lower() <= "я" or ch in "ёЁ" for ch in text), text
    for bold in (False, True):
        assert clean_text(text, bold=bold) == " ".join(text.split()) or not text.strip()


def test_numbers_follow_the_language():
    en, ru = WORDS["en"], WORDS["ru"]
    assert number_text(1234567, words=en) == "1,234,567"
    assert number_text(1234567, words=ru) == "1\u00a0234\u00a0567"
    assert number_text(1.5, 2, words=en) == "1.50"
    assert number_text(1.5, 2, words=ru) == "1,50"
    assert number_text(-3.25, 1, words=ru) == "\u22123,2"
    assert number_text(-0.01, 1, words=en) == "0.0"  # no "−0.0"
    assert rating_text(27.345, words=en) == "27.3"
    assert rating_text(1534.6, words=en) == "1,535"


def test_axis_ticks_are_round_and_cover_the_values():
    ticks, step = nice_ticks(3.7, 18.2)
    assert step == 5 and ticks[0] <= 3.7 and ticks[-1] >= 18.2
    ticks, step = nice_ticks(10, 10)  # a flat line still gets a range
    assert ticks[0] < 10 < ticks[-1]
    assert match_ticks(1) == [1]
    assert match_ticks(2) == [1, 2]
    assert match_ticks(24) == [1, 5, 10, 15, 20, 24]
    many = match_ticks(500)
    assert many[0] == 1 and many[-1] == 500 and len(many) <= 7


# The card --------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("card", [CARD, HIDDEN], ids=["rated", "hidden"])
def test_card_is_a_png_of_a_sensible_size(card, lang):
    img = decode(stats_card_png(card, texts=WORDS[lang]))
    assert img.width == WIDTH
    assert 600 <= img.height <= 1280
    assert img.width + img.height <= 10_000


def test_card_words_follow_the_language():
    en, ru = stats_card_image(CARD, texts=WORDS["en"]), stats_card_image(CARD, texts=WORDS["ru"])
    assert en.size == ru.size
    assert ImageChops.difference(en, ru).getbbox() is not None
    # A language without a catalog falls back to English; single words can be overridden.
    assert stats_card_png(CARD, texts=picture_texts(Catalogs().get("xx"))) == \
        stats_card_png(CARD)
    other = stats_card_png(CARD, texts={"stats_matches": "Games"})
    assert other != stats_card_png(CARD)


def test_card_is_deterministic():
    assert stats_card_png(CARD, texts=WORDS["ru"]) == stats_card_png(CARD, texts=WORDS["ru"])
    assert stats_card_png(dataclasses.replace(CARD)) == stats_card_png(CARD)


def test_hidden_rating_draws_no_number():
    # A rating given but not yet earned, or none at all: the same picture, whatever it is.
    base = stats_card_png(HIDDEN)
    for rating, history in ((12.3, ()), (45.6, (1.0, 45.6)), (-7.0, HISTORY)):
        card = dataclasses.replace(HIDDEN, rating=rating, rating_history=history)
        assert not card.rating_shown
        assert stats_card_png(card) == base
        assert stats_card_png(card, texts=WORDS["ru"]) == stats_card_png(HIDDEN, texts=WORDS["ru"])
    assert HIDDEN.rated_to_go == 3
    # Once earned, the rating and its plot appear.
    shown = dataclasses.replace(HIDDEN, rating=12.3, rated_matches=5)
    assert shown.rating_shown and stats_card_png(shown) != base


def test_rating_changes_the_rated_picture():
    other = dataclasses.replace(CARD, rating=12.6)
    assert stats_card_png(other) != stats_card_png(CARD)


def test_rating_hidden_by_the_caller_with_enough_matches():
    card = dataclasses.replace(CARD, rating=None)
    assert not card.rating_shown and card.rated_to_go == 0
    assert decode(stats_card_png(card)).width == WIDTH


@pytest.mark.parametrize("history", [(), (12.0,), (12.0, 12.0), tuple(range(300))])
@pytest.mark.parametrize("lang", LANGS)
def test_any_history_draws(history, lang):
    card = dataclasses.replace(CARD, rating_history=history)
    img = decode(stats_card_png(card, texts=WORDS[lang]))
    assert img.width == WIDTH


def test_short_history_shows_a_note_instead_of_a_plot():
    empty = stats_card_image(dataclasses.replace(CARD, rating_history=()))
    single = stats_card_image(dataclasses.replace(CARD, rating_history=(11.6,)))
    plotted = stats_card_image(CARD)
    assert empty.size == single.size
    assert ImageChops.difference(empty, single).getbbox() is None
    assert plotted.height > empty.height


@pytest.mark.parametrize("lang", LANGS)
def test_long_names_and_many_digits_fit(lang):
    card = StatsCard(
        name="Александра Константиновна Преображенская-Щербацкая 🔥" * 3,
        scope="Очень длинное название чата про Крэндзю" * 4,
        matches=123_456_789_012, wins=98_765_432_101, draws=12_345_678_901,
        losses=12_345_678_910, rating=-123_456.789, rated_matches=9_999_999_999,
        rated_needed=5, attack_points_per_tour=123_456_789.125,
        conceded_per_tour=987_654.321, best_tour=99_999_999_999,
        suit_combos=123_456_789_012, progression_combos=987_654_321_098,
        own_goals_conceded=123_456_789_012,
        rating_history=(-1e9, 3.0, 1e9),
    )
    img = decode(stats_card_png(card, texts=WORDS[lang]))
    assert img.size == decode(stats_card_png(CARD, texts=WORDS[lang])).size
    hidden = dataclasses.replace(card, rating=None, rated_matches=1,
                                 rated_needed=123_456_789_012)
    assert decode(stats_card_png(hidden, texts=WORDS[lang])).size == \
        decode(stats_card_png(HIDDEN, texts=WORDS[lang])).size


def test_names_without_drawable_letters_get_a_fallback():
    for lang in LANGS:
        nameless = stats_card_image(dataclasses.replace(CARD, name="🔥🔥", scope="🎲"),
                                    texts=WORDS[lang])
        fallback = stats_card_image(dataclasses.replace(
            CARD, name=WORDS[lang]["stats_no_name"], scope=WORDS[lang]["stats_all_chats"]),
            texts=WORDS[lang])
        assert ImageChops.difference(nameless, fallback).getbbox() is None


# The leaderboard --------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("count", [0, 1, 3, 25])
def test_leaderboard_is_a_png_of_a_sensible_size(count, lang):
    img = decode(leaderboard_png(rows(count), title="Лучшие игроки", texts=WORDS[lang]))
    assert img.width == WIDTH
    assert 200 <= img.height <= 1400


def test_leaderboard_shows_at_most_twenty_rows():
    assert MAX_LEADERS == 20
    assert leader_height(1) < leader_height(2) < leader_height(20)
    assert leader_height(25) == leader_height(21)  # only the "and N more" line differs
    full = leaderboard_image(rows(25), title="Top")
    capped = leaderboard_image(rows(20), title="Top")
    note_h = full.height - capped.height
    assert 0 < note_h <= 40
    top = capped.height - 80  # the table of 20 rows is the same
    assert ImageChops.difference(full.crop((0, 0, WIDTH, top)),
                                 capped.crop((0, 0, WIDTH, top))).getbbox() is None


def test_empty_leaderboard_shows_a_note():
    en = leaderboard_image([], title="Top", texts=WORDS["en"])
    ru = leaderboard_image([], title="Top", texts=WORDS["ru"])
    assert en.size == ru.size
    assert ImageChops.difference(en, ru).getbbox() is not None
    assert leaderboard_png([], title="Top", texts=WORDS["ru"]) != \
        leaderboard_png(rows(1), title="Top", texts=WORDS["ru"])


def test_leaderboard_is_deterministic_and_fits_anything():
    board = rows(25)
    assert leaderboard_png(board, title="Top", texts=WORDS["ru"]) == \
        leaderboard_png(list(board), title="Top", texts=WORDS["ru"])
    wild = [LeaderRow(1, "Александра Константиновна Преображенская" * 3, 123_456_789.5,
                      123_456_789_012, 98_765_432_101, 12_345_678_901, 12_345_678_910),
            LeaderRow(2, "🔥", None, 1, 0, 0, 1),
            LeaderRow(123_456_789, "Ёж", -3.25, 2, 1, 0, 1)]
    img = decode(leaderboard_png(wild, title="Очень длинный заголовок " * 10, texts=WORDS["ru"]))
    assert img.width == WIDTH


def test_unrated_rows_show_a_dash_not_a_number():
    a = [LeaderRow(4, "Eve", None, 3, 1, 0, 2)]
    assert leaderboard_png(a, title="Top") == leaderboard_png(list(a), title="Top")
    rated = [dataclasses.replace(a[0], rating=12.5)]
    assert leaderboard_png(rated, title="Top") != leaderboard_png(a, title="Top")


def test_public_names_are_exported():
    for name in ("StatsCard", "LeaderRow", "stats_card_png", "leaderboard_png",
                 "stats_card_image", "leaderboard_image"):
        assert name in render.__all__
        assert getattr(render, name) is not None


def test_figures_survive_pickling():
    """The chat layer draws pictures in worker processes: the figures travel pickled."""
    import pickle

    assert pickle.loads(pickle.dumps(CARD)) == CARD
    row = rows(1)[0]
    assert pickle.loads(pickle.dumps(row)) == row


def test_an_engines_robot_is_drawn_on_the_leaderboard_and_its_card():
    """The font has no 🤖: an engine's "🤖 NAME" (and a computer's) gets the board's drawn
    robot face, so /top and /stats show it as the chat does; not just the bare name."""
    def name_strip(name: str, medal_rank: int) -> Image.Image:
        img = leaderboard_image([LeaderRow(medal_rank, name, 12.0, 5, 3, 0, 2)], title="Top")
        return img.crop((90, 150, 400, 210))

    for rank in (1, 4):  # bold (a medal) and regular
        robot, bare = name_strip("🤖 Robo", rank), name_strip("Robo", rank)
        assert ImageChops.difference(robot, bare).getbbox() is not None
        # The robot stands before the name: the name itself is drawn further right.
        assert ImageChops.difference(robot, bare).getbbox()[0] < 30
    card = dataclasses.replace(CARD, name="🤖 Robo")
    bare = dataclasses.replace(CARD, name="Robo")
    top = (0, 0, WIDTH, 80)
    assert ImageChops.difference(stats_card_image(card).crop(top),
                                 stats_card_image(bare).crop(top)).getbbox() is not None
