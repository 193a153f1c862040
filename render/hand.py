"""The hand picture for a private chat: a player's cards, sorted, each with its button label."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from PIL import Image, ImageDraw

from krendzu.cards import Card, parse_card
from render.board import encode_jpeg, encode_png
from render.faces import DEFAULT_THEME, Theme, card_tile
from render.texts import texts_for
from render.typeface import clean_text, fit_width, font


def _labels_for(cards: list[Card], labels: Any) -> list[str]:
    if labels is None:
        return [c.pretty() for c in cards]
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
    lang: str = "en",
    texts: Mapping[str, str] | None = None,
    theme: Theme = DEFAULT_THEME,
) -> Image.Image:
    """The cards sorted by suit then rank, in rows of ``per_row``, each with its label.

    ``labels``: the inline keyboard's label for each card — a mapping (Card or code → text)
    or a sequence in the *sorted* order; by default the card's own name (``Q♣``).
    """
    hand = sorted(parse_card(c) if isinstance(c, str) else c for c in cards)
    names = _labels_for(hand, labels)
    if len(names) != len(hand):
        raise ValueError(f"{len(hand)} cards but {len(names)} labels")
    words = texts_for(lang, texts)
    cols = max(1, min(per_row, len(hand) or 1))
    rows = max(1, -(-len(hand) // cols))
    label_size = max(11, round(cell * 0.22))
    label_h = round(label_size * 1.5)
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
    for i, (card, name) in enumerate(zip(hand, names, strict=True)):
        row, col = divmod(i, cols)
        left = pad + col * cell
        top = pad + title_h + row * (cell + label_h)
        img.paste(card_tile(card, cell, False, theme), (left, top))
        name = fit_width(clean_text(name, bold=True), face, cell - 4)
        draw.text((left + cell / 2, top + cell + label_h * 0.45), name, font=face,
                  fill=theme.header_text, anchor="mm")
    return img


def hand_png(cards: Iterable[Card | str], labels: Any = None, **options: Any) -> bytes:
    return encode_png(hand_image(cards, labels, **options))


def hand_jpeg(cards: Iterable[Card | str], labels: Any = None, **options: Any) -> bytes:
    return encode_jpeg(hand_image(cards, labels, **options))
