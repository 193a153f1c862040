"""Every word the pictures show, in one place, so the chat layer can translate or override.

Pass ``lang="ru"`` to any picture function, or ``texts={...}`` to replace single strings.
"""

from __future__ import annotations

from collections.abc import Mapping

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "tour": "Tour {n}/{total}",
        "tour_only": "Tour",
        "attack": "Attack: {names}",
        "defence": "Defence: {names}",
        "score": "Score {score}",
        "cards_left": "Cards left: {items}",
        "to_move": "▶ To move: {name}",
        "exchange": "▶ Exchange: {name}",
        "tour_over": "Tour over",
        "match_over": "Match over",
        "winner": "{names} won",
        "draw": "a draw",
        "last_move": "Last: {name} {cards}",
        "passed": "Last: {name} passed",
        "player": "Player {n}",
        "team": "{a} & {b}",
        "hand_title": "Your hand · {n} cards",
        "hand_empty": "No cards left",
    },
    "ru": {
        "tour": "Тур {n}/{total}",
        "tour_only": "Тур",
        "attack": "Атака: {names}",
        "defence": "Защита: {names}",
        "score": "Счёт {score}",
        "cards_left": "Карт на руках: {items}",
        "to_move": "▶ Ход: {name}",
        "exchange": "▶ Обмен: {name}",
        "tour_over": "Тур окончен",
        "match_over": "Матч окончен",
        "winner": "победа: {names}",
        "draw": "ничья",
        "last_move": "Последний ход: {name} {cards}",
        "passed": "Последний ход: {name} — пас",
        "player": "Игрок {n}",
        "team": "{a} и {b}",
        "hand_title": "Ваши карты · {n}",
        "hand_empty": "Карт не осталось",
    },
}

LANGUAGES = tuple(TEXTS)


def texts_for(lang: str = "en", overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The strings of ``lang`` (English for an unknown language) with ``overrides`` applied."""
    out = dict(TEXTS["en"])
    out.update(TEXTS.get(lang, {}))
    if overrides:
        out.update(overrides)
    return out
