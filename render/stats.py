"""Statistics pictures for ``/stats`` and ``/top``: a player's card and a leaderboard.

Pure functions, like the other pictures: plain figures in, PNG bytes out, words from
:mod:`render.texts` (English; ``texts={...}`` gives a language's words or single strings)::

    stats_card_png(StatsCard(name="Анна", scope="Friday club", matches=12, ...), texts=words)
    leaderboard_png([LeaderRow(1, "Анна", 31.4, 40, 25, 3, 12), ...], title="Top · Friday club")

A rating the player has not earned yet (``rating`` is None, or fewer than ``rated_needed``
rated matches so far) is never drawn, nor is its history: the card shows how many rated
matches are still to go instead. Both pictures are 960 pixels wide, whatever the names and
numbers; long names are shortened with an ellipsis and long numbers drawn smaller.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw, ImageFont

from render.board import encode_png
from render.faces import DEFAULT_THEME, Theme
from render.texts import texts_for
from render.typeface import clean_text, fit_width, font, seat_name, stamp_text, text_width

RGB = tuple[int, int, int]
Face = ImageFont.FreeTypeFont

WIDTH = 960
PAD = 32
#: The most rows a leaderboard shows.
MAX_LEADERS = 20
SS = 3  # supersampling factor for the plot's lines and dots

#: Colours beyond the theme (as in the rules pictures): wins and losses.
GOOD: RGB = (126, 226, 148)
BAD: RGB = (255, 128, 128)
#: Discs behind the ranks of the top three: gold, silver, bronze.
MEDALS: tuple[RGB, RGB, RGB] = ((255, 196, 46), (206, 214, 220), (214, 142, 84))
MEDAL_TEXT: RGB = (24, 40, 30)


@dataclass(frozen=True, slots=True)
class StatsCard:
    """One player's figures for /stats (in a chat, or over all chats)."""

    name: str                      # display name (cleaned here)
    scope: str                     # e.g. the chat's title, or "" for all chats
    matches: int
    wins: int
    draws: int
    losses: int
    rating: float | None           # conservative display rating (mu - 3 sigma); None = hidden
    rated_matches: int             # rated matches so far
    rated_needed: int              # how many rated matches before the rating is shown
    attack_points_per_tour: float | None   # points per tour when attacking (None: no such tour)
    conceded_per_tour: float | None        # points conceded per tour when defending
    best_tour: int                 # most points in one attacking tour
    suit_combos: int               # combinations of one suit the player's side scored
    progression_combos: int        # progression combinations the player's side scored
    own_goals_conceded: int        # own goals the player made as a defender
    rating_history: tuple[float, ...] = ()   # display rating after each rated match, oldest first

    @property
    def rating_shown(self) -> bool:
        """Whether the rating (and its history) may be drawn."""
        return self.rating is not None and self.rated_matches >= self.rated_needed

    @property
    def rated_to_go(self) -> int:
        """Rated matches still to play before the rating is shown."""
        return max(0, self.rated_needed - self.rated_matches)


@dataclass(frozen=True, slots=True)
class LeaderRow:
    """One line of a leaderboard."""

    rank: int
    name: str
    rating: float | None   # None: not rated yet (too few matches)
    matches: int
    wins: int
    draws: int
    losses: int


# Numbers and words ----------------------------------------------------------------------


def number_text(value: float, decimals: int = 0, *,
                words: Mapping[str, str] | None = None) -> str:
    """``value`` with ``decimals`` places, the language's separators and a true minus sign
    (``1,234.5`` in English, ``1 234,5`` in Russian with a no-break space)."""
    words = words or texts_for()
    text = f"{abs(value):,.{max(0, decimals)}f}"
    text = text.replace(",", "\x00").replace(".", words["stats_decimal_point"])
    text = text.replace("\x00", words["stats_group_separator"])
    if value < 0 and any(ch not in "0,." for ch in f"{abs(value):.{max(0, decimals)}f}"):
        text = "\u2212" + text
    return text


def rating_text(rating: float, *, words: Mapping[str, str] | None = None) -> str:
    """A display rating: one decimal below 100 (OpenSkill's scale), whole numbers above."""
    return number_text(rating, 1 if abs(rating) < 100 else 0, words=words)


def _signed(value: float, decimals: int, words: Mapping[str, str]) -> str:
    text = number_text(value, decimals, words=words)
    return text if text.startswith("\u2212") or text.strip("0,. \u00a0") == "" else "+" + text


def _fitted(text: str, size: int, width: float, *, bold: bool = True,
            smallest: int = 14) -> tuple[str, Face]:
    """``text`` and the largest face up to ``size`` (not below ``smallest``) that draws it in
    ``width`` pixels; shortened with an ellipsis if even the smallest is too wide."""
    face = font(size, bold)
    while face.size > smallest and text_width(face, text) > width:
        face = font(max(smallest, math.floor(face.size * 0.92)), bold)
    return fit_width(text, face, width), face


def _two_lines(text: str, size: int, width: float, *, bold: bool = True,
               smallest: int = 14) -> tuple[list[str], Face]:
    """``text`` on one line of ``width`` pixels, or else on two lines of about equal width
    (so that a number never hangs alone on the second line), at the largest size up to
    ``size`` that fits; shortened with an ellipsis if even the smallest does not."""
    words = [w for w in text.split(" ") if w]
    for points in range(size, smallest - 1, -1):
        face = font(points, bold)
        if text_width(face, text) <= width:
            return [text], face
        best: tuple[float, list[str]] | None = None
        for cut in range(1, len(words)):
            lines = [" ".join(words[:cut]), " ".join(words[cut:])]
            widest = max(text_width(face, t) for t in lines)
            if widest <= width and (best is None or widest < best[0]):
                best = widest, lines
        if best is not None:
            return best[1], face
    half = max(1, len(words) // 2)
    return [fit_width(" ".join(words[:half]), face, width),
            fit_width(" ".join(words[half:]), face, width)], face


def _mix(a: RGB, b: RGB, share: float) -> RGB:
    """``a`` moved ``share`` of the way towards ``b``."""
    return tuple(round(x + (y - x) * share) for x, y in zip(a, b, strict=True))  # type: ignore[return-value]


def _heading(draw: ImageDraw.ImageDraw, y: float, text: str, theme: Theme) -> float:
    """A section heading in the accent colour; return the y below it."""
    text, face = _fitted(text, 24, WIDTH - 2 * PAD)
    draw.text((PAD + 4, y + 26), text, font=face, fill=theme.accent, anchor="ls")
    return y + 40


def _header_bar(img: Image.Image, draw: ImageDraw.ImageDraw, title: str,
                subtitle: str | None, theme: Theme) -> int:
    """The dark bar on top with its gold rule, as on the rules pictures; return its height.
    A title holding the robot mark (:func:`seat_name`) gets the robot face drawn."""
    height = 112 if subtitle else 88
    draw.rectangle([0, 0, WIDTH, height - 1], fill=theme.header)
    draw.rectangle([0, height - 4, WIDTH, height - 1], fill=theme.accent)
    title, face = _fitted(title, 40, WIDTH - 2 * PAD, smallest=26)
    stamp_text(img, (PAD, 58 if subtitle else 56), title, face=face, fill=theme.header_text,
               anchor="ls")
    if subtitle:
        sub = fit_width(subtitle, font(22), WIDTH - 2 * PAD)
        draw.text((PAD, 92), sub, font=font(22), fill=theme.header_dim, anchor="ls")
    return height


# The player's card -----------------------------------------------------------------------

TILE_H = 172
TILE_GAP = 16
#: Widths of the three big tiles (matches, wins / draws / losses, rating), as shares.
TILE_SHARES = (0.27, 0.37, 0.36)
ROW_H = 48
PLOT_H = 300
NOTE_H = 84


def stats_card_image(card: StatsCard, *,
                     texts: Mapping[str, str] | None = None,
                     theme: Theme = DEFAULT_THEME) -> Image.Image:
    """The card of :func:`stats_card_png` as an RGB image (960 pixels wide)."""
    words = texts_for(texts)
    plot = card.rating_shown and len(card.rating_history) >= 2
    header_h = 112
    tiles_top = header_h + 24
    details_top = tiles_top + TILE_H + 20
    details_h = 40 + 5 * ROW_H + 16
    history_top = details_top + details_h + 16
    history_h = 40 + (PLOT_H if plot else NOTE_H)
    height = history_top + history_h + PAD

    img = Image.new("RGB", (WIDTH, height), theme.band)
    draw = ImageDraw.Draw(img)
    # An engine's or computer's "🤖 NAME": the font has no emoji, the robot face is drawn.
    name = seat_name(card.name, words["stats_no_name"], limit=48, bold=True)
    scope = clean_text(card.scope) or words["stats_all_chats"]
    _header_bar(img, draw, name, words["stats_scope"].format(scope=scope), theme)

    boxes = []
    left = PAD
    for share in TILE_SHARES:
        tile_w = round((WIDTH - 2 * PAD - 2 * TILE_GAP) * share)
        boxes.append((left, tiles_top, left + tile_w, tiles_top + TILE_H))
        left += tile_w + TILE_GAP
    _matches_tile(draw, boxes[0], card, words, theme)
    _results_tile(draw, boxes[1], card, words, theme)
    _rating_tile(draw, boxes[2], card, words, theme)

    _details(draw, details_top, card, words, theme)

    y = _heading(draw, history_top, words["stats_history"], theme)
    box = (PAD, round(y), WIDTH - PAD, history_top + history_h)
    draw.rounded_rectangle(box, 16, fill=theme.felt, outline=theme.slot_edge, width=2)
    if plot:
        _plot(img, box, card.rating_history, words, theme)
    else:
        note = words["stats_history_short" if card.rating_shown else "stats_history_hidden"]
        note, face = _fitted(note, 22, box[2] - box[0] - 48, bold=False)
        draw.text(((box[0] + box[2]) / 2, (box[1] + box[3]) / 2), note, font=face,
                  fill=theme.header_dim, anchor="mm")
    return img


def stats_card_png(card: StatsCard, *,
                   texts: Mapping[str, str] | None = None,
                   theme: Theme = DEFAULT_THEME) -> bytes:
    """A player's statistics as a PNG photo: name and scope, the big figures (matches, wins /
    draws / losses, the rating or how many rated matches are still to go), the finer figures
    and a plot of the rating after each rated match."""
    return _encode(stats_card_image(card, texts=texts, theme=theme))


def _tile(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], label: str,
          theme: Theme) -> None:
    draw.rounded_rectangle(box, 16, fill=theme.felt, outline=theme.slot_edge, width=2)
    text, face = _fitted(label, 21, box[2] - box[0] - 32, bold=False)
    draw.text(((box[0] + box[2]) / 2, box[1] + 36), text, font=face, fill=theme.header_dim,
              anchor="ms")


def _tile_note(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], text: str,
               theme: Theme) -> None:
    text, face = _fitted(text, 19, box[2] - box[0] - 28, bold=False)
    draw.text(((box[0] + box[2]) / 2, box[3] - 20), text, font=face, fill=theme.band_text,
              anchor="ms")


def _big_value(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int],
               parts: Sequence[tuple[str, RGB]], theme: Theme, size: int = 56) -> None:
    """Big figures centred in a tile; ``parts`` are drawn side by side in their colours."""
    width = box[2] - box[0] - 28
    text = "".join(t for t, _ in parts)
    _, face = _fitted(text, size, width)
    total = text_width(face, text)
    if total > width:  # too long even at the smallest size: one shortened colour
        parts = [(fit_width(text, face, width), parts[0][1])]
        total = text_width(face, parts[0][0])
    x = (box[0] + box[2]) / 2 - total / 2
    baseline = box[1] + 108
    for part, colour in parts:
        draw.text((x, baseline), part, font=face, fill=colour, anchor="ls")
        x += text_width(face, part)


def _matches_tile(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], card: StatsCard,
                  words: Mapping[str, str], theme: Theme) -> None:
    _tile(draw, box, words["stats_matches"], theme)
    _big_value(draw, box, [(number_text(card.matches, words=words), theme.header_text)], theme)
    _tile_note(draw, box, words["stats_rated_count"].format(
        n=number_text(card.rated_matches, words=words)), theme)


def _results_tile(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], card: StatsCard,
                  words: Mapping[str, str], theme: Theme) -> None:
    _tile(draw, box, words["stats_results"], theme)
    slash = (" / ", theme.header_dim)
    _big_value(draw, box, [(number_text(card.wins, words=words), GOOD), slash,
                           (number_text(card.draws, words=words), theme.header_text), slash,
                           (number_text(card.losses, words=words), BAD)], theme, size=48)
    if card.matches > 0:
        share = number_text(round(100 * card.wins / card.matches), words=words)
        _tile_note(draw, box, words["stats_win_rate"].format(p=share), theme)


def _rating_tile(draw: ImageDraw.ImageDraw, box: tuple[int, int, int, int], card: StatsCard,
                 words: Mapping[str, str], theme: Theme) -> None:
    _tile(draw, box, words["stats_rating"], theme)
    if card.rating_shown:
        assert card.rating is not None
        _big_value(draw, box, [(rating_text(card.rating, words=words), theme.accent)], theme)
        history = card.rating_history
        if len(history) >= 2:
            delta = _signed(history[-1] - history[-2], 1, words)
            _tile_note(draw, box, words["stats_rating_change"].format(delta=delta), theme)
        return
    to_go = card.rated_to_go
    if to_go == 0:  # hidden by the caller, not for want of matches
        _big_value(draw, box, [(words["stats_no_value"], theme.header_dim)], theme)
        return
    # How many rated matches are still to go, and a bar of those played.
    inner = box[2] - box[0] - 32
    lines, face = _two_lines(
        words["stats_rating_hidden"].format(n=number_text(to_go, words=words)), 21, inner)
    cx = (box[0] + box[2]) / 2
    first = box[1] + (84 if len(lines) == 2 else 96)
    for k, line in enumerate(lines):
        draw.text((cx, first + 26 * k), line, font=face, fill=theme.header_text, anchor="ms")
    bar_top = box[3] - 42
    left, right = box[0] + 20, box[2] - 20
    count = (f"{number_text(card.rated_matches, words=words)}/"
             f"{number_text(card.rated_needed, words=words)}")
    count, count_face = _fitted(count, 18, inner / 2)
    right_bar = right - text_width(count_face, count) - 10
    draw.rounded_rectangle([left, bar_top, right_bar, bar_top + 12], 6, fill=theme.band)
    done = min(1.0, card.rated_matches / card.rated_needed) if card.rated_needed > 0 else 1.0
    if done > 0:
        draw.rounded_rectangle([left, bar_top, left + max(12, (right_bar - left) * done),
                                bar_top + 12], 6, fill=theme.accent)
    draw.text((right, bar_top + 6), count, font=count_face, fill=theme.band_text, anchor="rm")


def _details(draw: ImageDraw.ImageDraw, top: int, card: StatsCard, words: Mapping[str, str],
             theme: Theme) -> None:
    """The finer figures: one row each, label on the left, value on the right."""

    def per_tour(value: float | None) -> str:
        return words["stats_no_value"] if value is None else number_text(value, 2, words=words)

    rows = [
        (words["stats_points_per_tour"], per_tour(card.attack_points_per_tour)),
        (words["stats_conceded_per_tour"], per_tour(card.conceded_per_tour)),
        (words["stats_best_tour"], number_text(card.best_tour, words=words)),
        (words["stats_combos"], f"{number_text(card.suit_combos, words=words)} / "
                                f"{number_text(card.progression_combos, words=words)}"),
        (words["stats_own_goals"], number_text(card.own_goals_conceded, words=words)),
    ]
    y = _heading(draw, top, words["stats_details"], theme)
    box = (PAD, round(y), WIDTH - PAD, round(y) + len(rows) * ROW_H + 16)
    draw.rounded_rectangle(box, 16, fill=theme.felt, outline=theme.slot_edge, width=2)
    inner_left, inner_right = box[0] + 22, box[2] - 22
    label_face = font(22)
    for i, (label, value) in enumerate(rows):
        row_top = box[1] + 8 + i * ROW_H
        if i % 2:
            draw.rectangle([box[0] + 2, row_top, box[2] - 2, row_top + ROW_H - 1],
                           fill=theme.slot)
        mid = row_top + ROW_H / 2
        value, value_face = _fitted(value, 26, (inner_right - inner_left) * 0.4)
        value_w = text_width(value_face, value)
        draw.text((inner_right, mid), value, font=value_face, fill=theme.header_text,
                  anchor="rm")
        label = fit_width(label, label_face, inner_right - inner_left - value_w - 24)
        draw.text((inner_left, mid), label, font=label_face, fill=theme.band_text, anchor="lm")


# The rating plot --------------------------------------------------------------------------


def nice_ticks(low: float, high: float, count: int = 4) -> tuple[list[float], float]:
    """About ``count`` round values covering ``low``..``high`` (steps of 1, 2, 2.5 or 5
    times a power of ten), and the step."""
    if not math.isfinite(low) or not math.isfinite(high):
        low, high = 0.0, 1.0
    if high < low:
        low, high = high, low
    if high - low < 1e-9:
        low, high = low - 1, high + 1
    raw = (high - low) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw - 1e-12)
    first = math.floor(low / step + 1e-9) * step
    last = math.ceil(high / step - 1e-9) * step
    ticks = [first + k * step for k in range(round((last - first) / step) + 1)]
    return ticks, step


def _step_decimals(step: float) -> int:
    """Places a tick label needs so that steps like 0.25 or 2.5 stay exact."""
    for places in range(4):
        if abs(step * 10**places - round(step * 10**places)) < 1e-6:
            return places
    return 3


def match_ticks(n: int) -> list[int]:
    """Rated-match numbers to label under a plot of ``n`` points: the first, the last and
    round numbers between them."""
    if n <= 1:
        return [1]
    raw = (n - 1) / 5
    power = 10 ** max(0, math.floor(math.log10(max(1, raw))))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    ticks = [1, *(k for k in range(step, n, step) if k > 1 + step / 2 and k < n - step / 2), n]
    return ticks


def _plot(img: Image.Image, box: tuple[int, int, int, int], history: Sequence[float],
          words: Mapping[str, str], theme: Theme) -> None:
    """A line of ``history`` inside ``box``, with labelled axes (lines drawn supersampled)."""
    draw = ImageDraw.Draw(img)
    values = [v if math.isfinite(v) else 0.0 for v in history]
    ticks, step = nice_ticks(min(values), max(values), 4)
    decimals = _step_decimals(step)
    labels = [number_text(t, decimals, words=words) for t in ticks]
    tick_face = font(18)
    label_w = max(text_width(tick_face, t) for t in labels)
    left = box[0] + 24 + label_w + 12
    right = box[2] - 36
    top = box[1] + 28
    bottom = box[3] - 62
    low, high = ticks[0], ticks[-1]

    def sx(i: int) -> float:
        return left + (right - left) * i / (len(values) - 1)

    def sy(v: float) -> float:
        return bottom - (bottom - top) * (v - low) / (high - low)

    # Lines and dots on a supersampled layer of the plot area (with room for the dots).
    margin = 8
    x0, y0 = round(left) - margin, top - margin
    x1, y1 = right + margin, bottom + margin
    layer = Image.new("RGB", ((x1 - x0) * SS, (y1 - y0) * SS), theme.felt)
    ld = ImageDraw.Draw(layer)

    def at(x: float, y: float) -> tuple[float, float]:
        return (x - x0) * SS, (y - y0) * SS

    points = [at(sx(i), sy(v)) for i, v in enumerate(values)]
    base = at(0, bottom)[1]
    ld.polygon([(points[0][0], base), *points, (points[-1][0], base)],
               fill=_mix(theme.felt, theme.accent, 0.12))
    for t in ticks:
        yy = at(0, sy(t))[1]
        ld.line([(at(left, 0)[0], yy), (at(right, 0)[0], yy)], fill=theme.slot_edge,
                width=SS if t != low else 2 * SS)
    ld.line(points, fill=theme.accent, width=3 * SS, joint="curve")
    radius = (4 if len(values) <= 40 else 0) * SS
    for px, py in points[:-1]:
        if radius:
            ld.ellipse([px - radius, py - radius, px + radius, py + radius], fill=theme.accent)
    px, py = points[-1]
    r = 6 * SS
    ld.ellipse([px - r, py - r, px + r, py + r], fill=theme.header_text,
               outline=theme.accent, width=2 * SS)
    img.paste(layer.resize((x1 - x0, y1 - y0), Image.Resampling.LANCZOS), (x0, y0))

    for t, text in zip(ticks, labels, strict=True):
        draw.text((left - 12, sy(t)), text, font=tick_face, fill=theme.band_text, anchor="rm")
    for k in match_ticks(len(values)):
        draw.text((sx(k - 1), bottom + 12), number_text(k, words=words), font=tick_face,
                  fill=theme.band_text, anchor="mt")
    caption, face = _fitted(words["stats_history_axis"], 18, right - left, bold=False)
    draw.text(((left + right) / 2, box[3] - 14), caption, font=face, fill=theme.header_dim,
              anchor="ms")


# The leaderboard ---------------------------------------------------------------------------

LEADER_ROW_H = 50


def leaderboard_image(rows: Sequence[LeaderRow], *, title: str,
                      texts: Mapping[str, str] | None = None,
                      theme: Theme = DEFAULT_THEME, total: int | None = None) -> Image.Image:
    """The leaderboard of :func:`leaderboard_png` as an RGB image (960 pixels wide)."""
    words = texts_for(texts)
    shown = list(rows[:MAX_LEADERS])
    more = max(len(rows) if total is None else total, len(rows)) - len(shown)
    unrated = any(r.rating is None for r in shown)
    header_h = 88
    table_top = header_h + 20
    head_h = 40
    body_h = len(shown) * LEADER_ROW_H if shown else 96
    footer = [words["stats_more_players"].format(n=number_text(more, words=words))] if more else []
    if unrated:
        footer.append(words["stats_unrated_note"])
    footer_h = 34 * len(footer)
    height = table_top + head_h + body_h + 24 + (footer_h + 8 if footer else 0) + PAD
    img = Image.new("RGB", (WIDTH, height), theme.band)
    draw = ImageDraw.Draw(img)
    _header_bar(img, draw, clean_text(title) or words["stats_leaders"], None, theme)

    # Columns, from the right: W/D/L, matches, rating; the name takes what is left.
    right = WIDTH - PAD - 20
    wdl = (right - 200, right)
    matches = (wdl[0] - 130, wdl[0] - 24)
    rating = (matches[0] - 140, matches[0] - 24)
    rank_centre = PAD + 36
    name = (PAD + 76, rating[0] - 20)

    box = (PAD, table_top, WIDTH - PAD, table_top + head_h + body_h + 24)
    draw.rounded_rectangle(box, 16, fill=theme.felt, outline=theme.slot_edge, width=2)
    head_face = font(19)
    mid = table_top + head_h / 2 + 4
    for text, (a, b), anchor in ((words["stats_rank"], (rank_centre, rank_centre), "mm"),
                                 (words["stats_player"], name, "lm"),
                                 (words["stats_rating"], rating, "rm"),
                                 (words["stats_matches"], matches, "rm"),
                                 (words["stats_wdl_short"], wdl, "rm")):
        text = fit_width(text, head_face, max(40, b - a))
        x = a if anchor == "lm" else b
        draw.text((x, mid), text, font=head_face, fill=theme.header_dim, anchor=anchor)
    line_y = table_top + head_h + 4
    draw.line([(box[0] + 2, line_y), (box[2] - 2, line_y)], fill=theme.slot_edge, width=2)

    body_top = line_y + 4
    if not shown:
        text, face = _fitted(words["stats_no_players"], 24, box[2] - box[0] - 48, bold=False)
        draw.text(((box[0] + box[2]) / 2, body_top + body_h / 2), text, font=face,
                  fill=theme.header_dim, anchor="mm")
    for i, row in enumerate(shown):
        _leader_row(img, draw, row, body_top + i * LEADER_ROW_H, i, box,
                    (rank_centre, name, rating, matches, wdl), words, theme)
    y = box[3] + 8
    for note in footer:
        text, face = _fitted(note, 19, WIDTH - 2 * PAD - 8, bold=False)
        draw.text((PAD + 4, y + 24), text, font=face, fill=theme.header_dim, anchor="ls")
        y += 34
    return img


def leaderboard_png(rows: Sequence[LeaderRow], *, title: str,
                    texts: Mapping[str, str] | None = None,
                    theme: Theme = DEFAULT_THEME, total: int | None = None) -> bytes:
    """A leaderboard as a PNG photo: ``title``, then a row per player (rank, name, rating or
    "—", matches, wins / draws / losses), at most :data:`MAX_LEADERS` rows in the order
    given, the top three subtly marked; a short note when ``rows`` is empty. ``total``: how
    many players the whole board has, when ``rows`` is only its first page (the note counts
    the rest)."""
    return _encode(leaderboard_image(rows, title=title, texts=texts, theme=theme,
                                     total=total))


def _leader_row(img: Image.Image, draw: ImageDraw.ImageDraw, row: LeaderRow, top: int,
                index: int, box: tuple[int, int, int, int], columns: tuple,
                words: Mapping[str, str], theme: Theme) -> None:
    rank_centre, name, rating, matches, wdl = columns
    medal = 1 <= row.rank <= 3
    fill: tuple[int, int, int] | None
    if medal:
        fill = _mix(theme.felt, theme.accent, 0.09 if index % 2 else 0.12)
    else:
        fill = theme.slot if index % 2 else None
    if fill is not None:
        draw.rectangle([box[0] + 2, top, box[2] - 2, top + LEADER_ROW_H - 1], fill=fill)
    mid = top + LEADER_ROW_H / 2
    rank_text = number_text(row.rank, words=words)
    if medal:
        r = 17
        _disc(img, (rank_centre, mid), r, MEDALS[row.rank - 1])
        draw.text((rank_centre, mid), rank_text, font=font(20, True), fill=MEDAL_TEXT,
                  anchor="mm")
    else:
        text, face = _fitted(rank_text, 20, 64)
        draw.text((rank_centre, mid), text, font=face, fill=theme.band_text, anchor="mm")
    # An engine's "🤖 NAME" (the font has no emoji): the robot face drawn, as on the board.
    label = seat_name(row.name, words["stats_no_name"], limit=32, bold=medal)
    name_face = font(23, medal)
    stamp_text(img, (name[0], mid), fit_width(label, name_face, name[1] - name[0]),
               face=name_face, fill=theme.header_text, anchor="lm")
    if row.rating is None:
        value, colour = words["stats_no_value"], theme.header_dim
    else:
        value, colour = rating_text(row.rating, words=words), theme.accent
    text, face = _fitted(value, 24, rating[1] - rating[0])
    draw.text((rating[1], mid), text, font=face, fill=colour, anchor="rm")
    text, face = _fitted(number_text(row.matches, words=words), 22, matches[1] - matches[0],
                         bold=False)
    draw.text((matches[1], mid), text, font=face, fill=theme.header_text, anchor="rm")
    parts = [(number_text(row.wins, words=words), GOOD), (" / ", theme.header_dim),
             (number_text(row.draws, words=words), theme.header_text), (" / ", theme.header_dim),
             (number_text(row.losses, words=words), BAD)]
    whole = "".join(t for t, _ in parts)
    _, face = _fitted(whole, 22, wdl[1] - wdl[0], bold=False)
    if text_width(face, whole) > wdl[1] - wdl[0]:
        parts = [(fit_width(whole, face, wdl[1] - wdl[0]), theme.header_text)]
    x = wdl[1] - sum(text_width(face, t) for t, _ in parts)
    for part, colour in parts:
        draw.text((x, mid), part, font=face, fill=colour, anchor="lm")
        x += text_width(face, part)


def _disc(img: Image.Image, centre: tuple[float, float], radius: int, colour: RGB) -> None:
    """A smooth filled circle (drawn supersampled as a mask)."""
    size = 2 * radius + 2
    mask = Image.new("L", (size * SS, size * SS), 0)
    ImageDraw.Draw(mask).ellipse([SS, SS, (size - 1) * SS, (size - 1) * SS], fill=255)
    mask = mask.resize((size, size), Image.Resampling.LANCZOS)
    img.paste(colour, (round(centre[0] - size / 2), round(centre[1] - size / 2)), mask)


def _encode(img: Image.Image) -> bytes:
    """PNG with a palette of the picture's own (small, exact for the flat colours)."""
    return encode_png(img.quantize(256, method=Image.Quantize.FASTOCTREE,
                                   dither=Image.Dither.NONE))
