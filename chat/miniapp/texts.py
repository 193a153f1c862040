"""The page's own words, served to it in the reader's language from the bot's catalog.

The page (``static/app.js``) holds no text of its own: it asks ``/api/app/v1/texts`` and gets
this table translated, so translators edit the one ``.po`` file (``make messages`` finds
these through ``N_``). Texts that describe the position (score, whose turn, what to do) are
written by the server with the same functions as the bot's messages (chat/describe.py).
"""

from __future__ import annotations

from chat.i18n import Tr
from render.texts import N_  # gettext's marker: pybabel finds the text, translated later

#: key → English source text; ``{card}`` and ``{cell}`` are filled in by the page.
PAGE_TEXTS: dict[str, str] = {
    "title": N_("Krendzu"),
    "hand": N_("Your hand"),
    "board": N_("The board"),
    "pickCell": N_("{card}: tap a highlighted cell."),
    "confirm": N_("Play {card} at {cell}?"),
    "play": N_("✓ Play"),
    "playEnd": N_("✓ Play and end the turn"),
    "playTwo": N_("✓ Play, then a second card"),
    "cancel": N_("Cancel"),
    "endTurn": N_("End turn"),
    "pass": N_("Pass"),
    "discardConfirm": N_("Exchange {card}?"),
    "discardYes": N_("✓ Exchange"),
    "swap": N_("Swap {n}"),
    "keep": N_("Keep my cards"),
    "hint": N_("Hint"),
    "resign": N_("Resign"),
    "resignConfirm": N_("Resign this match? It cannot be undone."),
    "resignYes": N_("✓ Yes, resign"),
    "recent": N_("Last moves"),
    "unknownNext": N_("Open the match again with the ▶ Play button under its newest board "
                      "post, or set up a new one with /new."),
    "offline": N_("No connection: trying again…"),
    "noInit": N_("Open this page with the ▶ Play button in Telegram."),
    "help": N_("Tap a card, then a highlighted cell, then confirm. With a keyboard: Tab moves, "
               "Enter chooses."),
    "cell": N_("cell {cell}"),
}


def page_texts(tr: Tr) -> dict[str, str]:
    """The table in ``tr``'s language (English where the catalog has no translation)."""
    return {key: tr._(text) for key, text in PAGE_TEXTS.items()}
