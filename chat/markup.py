"""Our plain keyboards and texts in Telegram's shapes: inline keyboards built from the flow's
:class:`chat.model.Button` rows, and texts cut to Telegram's limits keeping their newest
lines (chat/sending.py sends them)."""

from __future__ import annotations

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo

from chat.model import Button, Keyboard

CAPTION_LIMIT = 1024
TEXT_LIMIT = 4096


def markup(keyboard: Keyboard | None) -> InlineKeyboardMarkup | None:
    if not keyboard:
        return None
    return InlineKeyboardMarkup([[button(b) for b in row] for row in keyboard if row])


def button(b: Button) -> InlineKeyboardButton:
    if b.web_app:
        return InlineKeyboardButton(b.label, web_app=WebAppInfo(b.web_app))
    if b.url:
        return InlineKeyboardButton(b.label, url=b.url)
    return InlineKeyboardButton(b.label, callback_data=b.data)


def fit(text: str, limit: int) -> str:
    """Keep the end of ``text`` (the newest lines and the footer) within ``limit``."""
    if len(text) <= limit:
        return text
    lines = text.split("\n")
    while len(lines) > 2 and len("\n".join(["…", *lines])) > limit:
        lines.pop(0)
    out = "\n".join(["…", *lines])
    return out if len(out) <= limit else out[: limit - 1] + "…"
