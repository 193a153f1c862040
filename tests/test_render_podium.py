"""render/podium.py: the arena's podium picture, for one to three players, any names."""

from __future__ import annotations

import io

from PIL import Image

from render.podium import HEIGHT, MEDAL_COLOURS, WIDTH, podium_png


def test_the_podium_draws_three_steps_with_their_medal_colours() -> None:
    picture = Image.open(io.BytesIO(podium_png(
        "Арена · пьедестал", [("Ann Longname-Smith", "19 points"), ("Борис", "12 очков"),
                              ("Dee", "3 points")], "6 players · 14 games")))
    assert picture.size == (WIDTH, HEIGHT) and picture.format == "PNG"
    colours = {colour for _, colour in picture.convert("RGB").getcolors(WIDTH * HEIGHT)}
    assert all(medal in colours for medal in MEDAL_COLOURS)


def test_fewer_than_three_players_leave_steps_empty() -> None:
    for places in ([], [("Ann", "2 points")], [("Ann", "2 points"), ("Bob", "0 points")]):
        assert podium_png("Arena", places).startswith(b"\x89PNG")
