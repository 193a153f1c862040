"""Card notation (RULES.md §1): every spelling parses, bad input raises a typed error."""

from __future__ import annotations

import pickle

import pytest

from krendzu import DECK, Card, CardError, parse_card, parse_cards


@pytest.mark.parametrize(
    ("text", "pretty"),
    [
        ("QC", "Q♣"),
        ("qc", "Q♣"),
        ("10d", "10♦"),
        ("10D", "10♦"),
        ("TD", "10♦"),
        ("td", "10♦"),
        ("Q♣", "Q♣"),
        ("A♥", "A♥"),
        ("K♠", "K♠"),
        ("6♦", "6♦"),
        ("Дт", "Q♣"),
        ("дТ", "Q♣"),
        ("Тп", "A♠"),
        ("Вч", "J♥"),
        ("Кб", "K♦"),
        ("10к", "10♣"),
        ("7п", "7♠"),
        (" 9 h ", "9♥"),
        ("Q♣\ufe0f", "Q♣"),
        ("T♤", "10♠"),
    ],
)
def test_spellings(text: str, pretty: str) -> None:
    assert parse_card(text).pretty() == pretty


def test_cyrillic_te_is_the_ace_latin_t_the_ten() -> None:
    assert parse_card("Тч").rank_name == "A"
    assert parse_card("TH").rank_name == "10"


@pytest.mark.parametrize("text", ["ДC", "QП", "Tп", "Вs"])
def test_mixed_alphabets_refused_with_hint(text: str) -> None:
    with pytest.raises(CardError, match="mixes Latin and Cyrillic"):
        parse_card(text)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("Q", "rank and a suit"),
        ("1C", "unknown rank"),
        ("5S", "unknown rank"),
        ("QX", "unknown suit"),
        ("QCC", "unknown rank"),
        ("10♦♦", "not a card"),
        ("Жп", "unknown rank"),
    ],
)
def test_bad_cards_say_what_is_wrong(text: str, fragment: str) -> None:
    with pytest.raises(CardError, match=fragment):
        parse_card(text)


def test_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_card("ZZ")
    with pytest.raises(CardError):
        parse_card(12)  # type: ignore[arg-type]


def test_code_round_trip_and_interning() -> None:
    assert len(DECK) == 36
    assert len({c.code() for c in DECK}) == 36
    for card in DECK:
        assert parse_card(card.code()) is card
        assert parse_card(card.pretty()) is card
        assert parse_card(card.code().lower()) is card
        assert Card(card.index) is card
        assert pickle.loads(pickle.dumps(card)) is card
    with pytest.raises(CardError):
        Card(36)


def test_card_values() -> None:
    values = {c.rank_name: c.values for c in DECK}
    assert values == {
        "6": (6,), "7": (7,), "8": (8,), "9": (9,), "10": (10,),
        "J": (2, 12), "Q": (3, 13), "K": (4, 14), "A": (1, 5, 11, 15),
    }
    covered = sorted({v for vs in values.values() for v in vs})
    assert covered == list(range(1, 16))


def test_parse_cards_list_and_string() -> None:
    assert [c.code() for c in parse_cards("QC, 10d  Дт")] == ["QC", "TD", "QC"]
    assert [c.code() for c in parse_cards(["AS", "6h"])] == ["AS", "6H"]


def test_cards_are_immutable_and_hashable() -> None:
    card = parse_card("QC")
    with pytest.raises(AttributeError):
        card.rank = 3  # type: ignore[misc]
    assert {card, parse_card("Дт")} == {card}
