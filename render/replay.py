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

from render.board import Position, board_layout, draw_board, fresh_combos, occupied_area
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
    frames, durations, headers = [], [], []
    for i, view in enumerate(views):
        position = Position.of(view, players)
        layout = board_layout(position, cell=cell, area=area, texts=texts)
        headers.append((layout.header_height, max(2, layout.cell // 24)))  # rule: see header
        frames.append(draw_board(position, layout, theme=theme, hint_cells=False))
        if i == len(views) - 1:
            durations.append(LAST_MS)
        elif i and fresh_combos(position):
            durations.append(SCORE_MS)
        else:
            durations.append(FRAME_MS)
    return _same_height(frames, headers, theme), durations


def _same_height(frames: list[Image.Image], headers: list[tuple[int, int]],
                 theme: Theme) -> list[Image.Image]:
    """Frames as tall as the tallest: a header that wraps to one line more on some move
    grows every frame's header to match, so the board never jumps and a GIF (whose canvas is
    the first frame's size) never cuts a taller frame off."""
    top = max(header for header, _ in headers)
    if len({f.width for f in frames}) != 1:
        return frames
    out = []
    for frame, (header, rule) in zip(frames, headers, strict=True):
        if header == top:
            out.append(frame)
            continue
        # The accent rule under the header moves down with the board.
        grown = Image.new("RGB", (frame.width, frame.height + top - header), theme.header)
        grown.paste(frame.crop((0, 0, frame.width, header - rule)), (0, 0))
        grown.paste(frame.crop((0, header - rule, frame.width, frame.height)), (0, top - rule))
        out.append(grown)
    return out


def replay_gif(
    source: Any,
    *,
    tour: int | None = None,
    cell: int = 48,
    texts: Mapping[str, str] | None = None,
    players: Sequence[str] | None = None,
    theme: Theme = DEFAULT_THEME,
    loop: int = 0,
) -> bytes:
    """The replay of tour ``tour`` (0-based; default the last with a move) of a record or a
    :class:`~krendzu.Match`, as GIF bytes: ``placements + 1`` frames."""
    frames, durations = replay_frames(source, tour=tour, cell=cell, texts=texts,
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
