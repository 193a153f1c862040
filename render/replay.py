"""The replay: an animated GIF of one tour, one frame per card placed (plus the empty start).

Every frame shows the same area (the tour's final extent), so nothing jumps; labels follow
the tour's frame as it stood at that moment. A frame in which combinations score shows
them flashing (thick, gold-edged lines) and stays longer on screen.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from PIL import Image

from render.board import Position, board_image, fresh_combos, occupied_area
from render.faces import DEFAULT_THEME, Theme
from render.records import as_record, default_tour, tour_steps

FRAME_MS = 700
SCORE_MS = 1600
LAST_MS = 3000


def replay_frames(
    source: Any,
    *,
    tour: int | None = None,
    cell: int = 48,
    lang: str = "en",
    texts: Mapping[str, str] | None = None,
    players: Sequence[str] | None = None,
    theme: Theme = DEFAULT_THEME,
) -> tuple[list[Image.Image], list[int]]:
    """RGB frames of the tour and their durations (milliseconds)."""
    record = as_record(source)
    t = default_tour(record) if tour is None else tour
    views = tour_steps(record, tour=t)
    final = views[-1].tour.placements
    x0, y0, x1, y1 = occupied_area(final)
    width, height = max(x1 - x0 + 1, 9), max(y1 - y0 + 1, 7)
    x0 -= (width - (x1 - x0 + 1)) // 2
    y0 -= (height - (y1 - y0 + 1)) // 2
    area = (x0, y0, x0 + width - 1, y0 + height - 1)
    frames, durations = [], []
    for i, view in enumerate(views):
        position = Position.of(view, players)
        frames.append(board_image(position, cell=cell, area=area, lang=lang, texts=texts,
                                  theme=theme, hint_cells=False))
        if i == len(views) - 1:
            durations.append(LAST_MS)
        elif i and fresh_combos(position):
            durations.append(SCORE_MS)
        else:
            durations.append(FRAME_MS)
    return frames, durations


def replay_gif(
    source: Any,
    *,
    tour: int | None = None,
    cell: int = 48,
    lang: str = "en",
    texts: Mapping[str, str] | None = None,
    players: Sequence[str] | None = None,
    theme: Theme = DEFAULT_THEME,
    loop: int = 0,
) -> bytes:
    """The replay of tour ``tour`` (0-based; default the last with a move) of a record or a
    :class:`~krendzu.Match`, as GIF bytes: ``placements + 1`` frames."""
    frames, durations = replay_frames(source, tour=tour, cell=cell, lang=lang, texts=texts,
                                      players=players, theme=theme)
    # One shared palette (from the last frame and any flashing frame) keeps colours steady
    # and quantising fast.
    flashing = [f for f, d in zip(frames, durations, strict=True) if d == SCORE_MS]
    sample = [frames[-1], *flashing[:1]]
    sheet = Image.new("RGB", (frames[0].width, frames[0].height * len(sample)))
    for i, frame in enumerate(sample):
        sheet.paste(frame, (0, i * frame.height))
    palette = sheet.quantize(colors=255, method=Image.Quantize.MEDIANCUT)
    quantised = [f.quantize(palette=palette, dither=Image.Dither.NONE) for f in frames]
    out = io.BytesIO()
    quantised[0].save(out, "GIF", save_all=True, append_images=quantised[1:],
                      duration=durations, loop=loop, optimize=False, disposal=1)
    return out.getvalue()
