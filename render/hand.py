"""The hand picture for a private chat: a player's cards, sorted (with a label under each
only when the caller gives labels that say more than the card face)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw

from krendzu.cards import Card, parse_card
from render.board import encode_jpeg, encode_png
from render.faces import DEFAULT_THEME, Theme, card_tile
from render.texts import texts_for
from render.typeface import clean_text, fit_width, font


def _labels_for(cards: list[Card], labels: Any) -> list[str] | None:
    if labels is None:
        return None
    if isinstance(labels, Mapping):
        out = []
        for c in cards:
            text = labels.get(c, labels.get(c.code(), c.pretty()))
            out.append(str(text))
        return out
    return [str(t) for t in labels]


def hand_image(
    cards: Iterable[Card | str],
    labels: Sequence[str] | Mapping[Any, str] | None = None,
    *,
    cell: int = 96,
    per_row: int = 7,
    title: bool = True,
    texts: Mapping[str, str] | None = None,
    theme: Theme = DEFAULT_THEME,
) -> Image.Image:
    """The cards sorted by suit then rank, in rows of ``per_row``.

    ``labels``: a text under each card (a number to type, say) — a mapping (Card or code →
    text) or a sequence in the *sorted* order. By default none: the face already shows the
    rank and suit, and repeating its name under it only took room.
    """
    hand = sorted(parse_card(c) if isinstance(c, str) else c for c in cards)
    names = _labels_for(hand, labels)
    if names is not None and len(names) != len(hand):
        raise ValueError(f"{len(hand)} cards but {len(names)} labels")
    words = texts_for(texts)
    cols = max(1, min(per_row, len(hand) or 1))
    rows = max(1, -(-len(hand) // cols))
    label_size = max(11, round(cell * 0.22))
    label_h = round(label_size * 1.5) if names is not None else 0
    pad = round(cell * 0.2)
    title_h = round(cell * 0.45) if title else 0
    width = cols * cell + 2 * pad
    height = title_h + rows * (cell + label_h) + 2 * pad
    img = Image.new("RGB", (width, height), theme.felt)
    draw = ImageDraw.Draw(img)
    if title:
        text = (words["hand_title"].format(n=len(hand)) if hand else words["hand_empty"])
        face = font(round(cell * 0.24), bold=True)
        draw.text((pad, pad + title_h * 0.55), fit_width(text, face, width - 2 * pad),
                  font=face, fill=theme.header_text, anchor="lm")
    face = font(label_size, bold=True)
    for i, card in enumerate(hand):
        row, col = divmod(i, cols)
        left = pad + col * cell
        top = pad + title_h + row * (cell + label_h)
        img.paste(card_tile(card, cell, False, theme), (left, top))
        if names is None:
            continue
        name = fit_width(clean_text(names[i], bold=True), face, cell - 4)
        draw.text((left + cell / 2, top + cell + label_h * 0.45), name, font=face,
                  fill=theme.header_text, anchor="mm")
    return img


def hand_png(cards: Iterable[Card | str], labels: Any = None, **options: Any) -> bytes:
    return encode_png(hand_image(cards, labels, **options))


def hand_jpeg(cards: Iterable[Card | str], labels: Any = None, **options: Any) -> bytes:
    return encode_jpeg(hand_image(cards, labels, **options))
