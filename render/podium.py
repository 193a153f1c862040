"""The arena's podium (issue 40): the first three on their steps, with their points, drawn
for the group's last arena post. Words come in the reader's language from the caller
(``title``, each place's points); names are the players' display names, never a username.

A top-level function (:func:`podium_png`) so the drawing processes can run it (the bot sends
it as a :class:`chat.notices.Drawing`, drawn just before it is sent).
"""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image, ImageDraw

from render.board import encode_png
from render.faces import DEFAULT_THEME, Theme
from render.typeface import fit_width, font, stamp_text

WIDTH = 900
HEIGHT = 560
STEP_W = 240
#: The steps' heights, in the podium's order left to right: second, first, third.
STEP_HEIGHTS = (170, 240, 120)
MEDALS = ("1", "2", "3")
#: Gold, silver, bronze.
MEDAL_COLOURS = ((255, 196, 46), (200, 206, 214), (176, 106, 52))


def podium_png(title: str, places: Sequence[tuple[str, str]], subtitle: str = "",
               theme: Theme = DEFAULT_THEME) -> bytes:
    """``places``: (name, points as the reader reads them: "4 points") of the first, second
    and third (fewer when fewer played)."""
    img = Image.new("RGB", (WIDTH, HEIGHT), theme.felt)
    draw = ImageDraw.Draw(img)
    draw.rectangle([0, 0, WIDTH, 96], fill=theme.header)
    draw.rectangle([0, 92, WIDTH, 96], fill=theme.accent)
    stamp_text(img, (WIDTH / 2, 56), fit_width(title, font(40, bold=True), WIDTH - 60),
               face=font(40, bold=True), fill=theme.header_text, anchor="ms")
    if subtitle:
        draw.text((WIDTH / 2, 84), fit_width(subtitle, font(20), WIDTH - 60), font=font(20),
                  fill=theme.header_dim, anchor="ms")
    base = HEIGHT - 30
    left = (WIDTH - 3 * STEP_W) // 2
    for column, place in enumerate((1, 0, 2)):  # second, first, third
        x0 = left + column * STEP_W
        height = STEP_HEIGHTS[column]
        top = base - height
        colour = MEDAL_COLOURS[place]
        draw.rectangle([x0 + 8, top, x0 + STEP_W - 8, base], fill=theme.band,
                       outline=colour, width=4)
        draw.text((x0 + STEP_W / 2, top + 62), MEDALS[place], font=font(64, bold=True),
                  fill=colour, anchor="ms")
        if place >= len(places):
            continue
        name, points = places[place]
        face = font(28, bold=True)
        stamp_text(img, (x0 + STEP_W / 2, top - 50), fit_width(name, face, STEP_W - 16),
                   face=face, fill=theme.card, anchor="ms")
        draw.text((x0 + STEP_W / 2, top - 18), points, font=font(22),
                  fill=theme.band_text, anchor="ms")
    return encode_png(img, indexed=False)  # the medals' colours kept exactly
