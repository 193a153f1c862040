"""Texts the bot sends, in English and Russian. Pick by the user's Telegram language code."""

from __future__ import annotations

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "start": (
            "Hi! I am the Krendzu bot — card renju, «four in a row» with a 36-card deck.\n"
            "Match play in groups and against the computer is being built; for now "
            "/rules tells you how the game goes."
        ),
        "help": "/start — about this bot\n/rules — the rules in short\n/help — this list",
        "rules": (
            "Krendzu in short:\n"
            "• Deck of 36 (6…A). Cards go face up on an open grid and must touch a card "
            "edge to edge.\n"
            "• Four in a line (across, down or diagonal) score for the attackers when they are "
            "one suit or their values make an arithmetic progression. J=2/12, Q=3/13, "
            "K=4/14, A=1/5/11/15.\n"
            "• The defender opens with one card; then the attacker plays exactly one, the "
            "defender none, one or two.\n"
            "• Every line completed scores, even by the defender (own goal). Roles swap each "
            "tour; most points wins."
        ),
        "error": "Sorry, something went wrong on my side. Please try again.",
    },
    "ru": {
        "start": (
            "Привет! Я бот «Крэндзю» — карточное рэндзю, «четыре в ряд» колодой в 36 карт.\n"
            "Матчи в группах и против компьютера скоро будут; пока /rules расскажет правила."
        ),
        "help": "/start — о боте\n/rules — правила коротко\n/help — этот список",
        "rules": (
            "Крэндзю коротко:\n"
            "• Колода 36 карт (6…Т). Карты кладут в открытую на поле без границ, вплотную "
            "стороной к другой карте.\n"
            "• Четыре в линию (по горизонтали, вертикали или диагонали) — очко атаке, если они "
            "одной масти или их номиналы дают арифметическую прогрессию. В=2/12, Д=3/13, "
            "К=4/14, Т=1/5/11/15.\n"
            "• Первой кладёт защита одну карту; атака всегда ровно одну, защита — ни одной, "
            "одну или две.\n"
            "• Каждая собранная линия — очко атаке, даже если её собрала защита (автогол). "
            "Роли меняются каждый тур; побеждает больший счёт."
        ),
        "error": "Извините, что-то пошло не так. Попробуйте ещё раз.",
    },
}


def language_of(code: str | None) -> str:
    """'ru' for Russian-speaking users (ru, uk, be), else 'en'."""
    if code and code.split("-")[0].lower() in {"ru", "uk", "be"}:
        return "ru"
    return "en"


def text(key: str, language: str) -> str:
    return TEXTS.get(language, TEXTS["en"]).get(key) or TEXTS["en"][key]
