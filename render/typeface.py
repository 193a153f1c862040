"""The shipped fonts (DejaVu Sans, Cyrillic included) and text that never shows tofu boxes.

Fonts load only from this package's ``fonts/`` directory, never from the system. Which
characters a font draws is read from its own ``cmap`` table (formats 4 and 12, parsed here
with :mod:`struct`), so :func:`clean_text` can drop what the font lacks (most emoji, CJK)
instead of drawing ``.notdef`` boxes, along with control, zero-width and stray combining
characters.
"""

from __future__ import annotations

import math
import struct
import unicodedata
from functools import cache, lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONT_DIR = Path(__file__).resolve().parent / "fonts"
REGULAR = FONT_DIR / "DejaVuSans.ttf"
BOLD = FONT_DIR / "DejaVuSans-Bold.ttf"
ELLIPSIS = "…"


@lru_cache(maxsize=64)
def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """DejaVu Sans (or Bold) at ``size`` pixels, from the package directory."""
    return ImageFont.truetype(str(BOLD if bold else REGULAR), max(6, int(size)))


#: How the chat marks a computer seat ("🤖 Normal"). The font has no emoji, so a picture
#: draws a robot face of its own there (:func:`seat_name`): texts and pictures look alike.
ROBOT = "🤖"
#: A private-use character standing for the drawn robot face inside a picture's text; only
#: :func:`seat_name` puts it there (:func:`clean_text` drops every private-use character).
ROBOT_MARK = "\ue000"


def seat_name(name: str, fallback: str, *, limit: int = 18, bold: bool = False) -> str:
    """:func:`display_name`, keeping the chat's robot prefix of a computer seat as
    :data:`ROBOT_MARK`, which :func:`stamp_text` draws as a robot face."""
    rest = name.strip()
    if not rest.startswith(ROBOT):
        return display_name(name, fallback, limit=limit, bold=bold)
    return ROBOT_MARK + "\u00a0" + display_name(rest[len(ROBOT):], fallback, limit=limit, bold=bold)


def _mark_advance(face: ImageFont.FreeTypeFont) -> float:
    """How wide the robot face is, with its side bearings, in ``face``."""
    return round(face.size * 1.08)


def _measure(face: ImageFont.FreeTypeFont, text: str) -> float:
    if ROBOT_MARK not in text:
        return face.getlength(text)
    parts = text.split(ROBOT_MARK)
    return sum(face.getlength(p) for p in parts) + (len(parts) - 1) * _mark_advance(face)


@lru_cache(maxsize=8192)
def text_width(face: ImageFont.FreeTypeFont, text: str) -> float:
    """``face.getlength(text)`` (the robot mark counted at its drawn width), remembered:
    boards measure the same words every move."""
    return _measure(face, text)


@lru_cache(maxsize=64)
def robot_face(size: int) -> Image.Image:
    """A mask of the robot face for text of ``size`` pixels, as tall as an emoji would be:
    an antenna, a rounded head with ears, two eyes and a mouth cut out. Drawn four times
    larger and scaled down."""
    ss = 4
    h = max(8, round(size * 0.94)) * ss
    w = h
    big = Image.new("L", (w, h), 0)
    draw = ImageDraw.Draw(big)
    head = (round(w * 0.13), round(h * 0.27), round(w * 0.87), h - 1)
    draw.rounded_rectangle(head, radius=round(h * 0.17), fill=255)
    for left in (0, round(w * 0.87) - ss):
        draw.rounded_rectangle([left, round(h * 0.5), left + round(w * 0.13) + ss,
                                round(h * 0.78)], radius=round(h * 0.04), fill=255)
    stem = max(ss, round(h * 0.07))
    draw.rectangle([w // 2 - stem // 2, round(h * 0.08), w // 2 + stem // 2, head[1]],
                   fill=255)
    r = round(h * 0.085)
    draw.ellipse([w // 2 - r, 0, w // 2 + r, 2 * r], fill=255)
    eye = round(h * 0.1)
    for cx in (round(w * 0.36), round(w * 0.64)):
        cy = round(h * 0.53)
        draw.ellipse([cx - eye, cy - eye, cx + eye, cy + eye], fill=0)
    draw.rounded_rectangle([round(w * 0.33), round(h * 0.78), round(w * 0.67), round(h * 0.87)],
                           radius=round(h * 0.04), fill=0)
    return big.resize((round(w / ss), round(h / ss)), Image.Resampling.LANCZOS)


def _stamp_marked(face: ImageFont.FreeTypeFont, text: str,
                  anchor: str) -> tuple[Image.Image, int, int]:
    """A line with robot marks: laid out on a baseline, then placed as ``anchor`` says."""
    ascent, descent = face.getmetrics()
    width = math.ceil(_measure(face, text)) + 2
    mask = Image.new("L", (width, ascent + descent + 2), 0)
    draw = ImageDraw.Draw(mask)
    base = ascent + 1
    icon = robot_face(face.size)
    drop = round(face.size * 0.1)  # an emoji sits a little below the baseline
    advance = _mark_advance(face)
    x = 0.0
    for i, part in enumerate(text.split(ROBOT_MARK)):
        if i:
            at = (round(x + (advance - icon.width) / 2), base + drop - icon.height)
            mask.paste(255, (*at, at[0] + icon.width, at[1] + icon.height), icon)
            x += advance
        if part:
            draw.text((x, base), part, font=face, fill=255, anchor="ls")
            x += face.getlength(part)
    # Where the anchor point lies on this canvas: horizontally by the measured width,
    # vertically where Pillow would put it for the same text without the marks.
    plain = text.replace(ROBOT_MARK, "") or "H"
    ax = {"l": 0.0, "m": x / 2, "r": x}[anchor[0]]
    ay = base + face.getbbox(plain, anchor="ls")[1] - face.getbbox(plain, anchor="l" + anchor[1])[1]
    box = mask.getbbox() or (0, 0, 1, 1)
    return mask.crop(box), box[0] - round(ax), box[1] - round(ay)


@lru_cache(maxsize=4096)
def _stamp(face: ImageFont.FreeTypeFont, text: str, anchor: str) -> tuple[Image.Image, int, int]:
    if ROBOT_MARK in text:
        return _stamp_marked(face, text, anchor)
    # Pillow types the box as floats; FreeType's pixel box is whole numbers.
    left, top, right, bottom = (int(v) for v in face.getbbox(text, anchor=anchor))
    mask = Image.new("L", (max(1, right - left), max(1, bottom - top)), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, font=face, fill=255, anchor=anchor)
    return mask, left, top


def stamp_text(img: Image.Image, xy: tuple[float, float], text: str, *,
               face: ImageFont.FreeTypeFont, fill: tuple[int, int, int],
               anchor: str = "la") -> None:
    """Draw one line of text like ``ImageDraw.text``, from a cached rendering of it: the
    same labels, names and words come back on every board, and rasterising them again was
    the largest cost of a board picture."""
    if not text:
        return
    mask, left, top = _stamp(face, text, anchor)
    img.paste(fill, (round(xy[0]) + left, round(xy[1]) + top), mask)


@cache
def coverage(bold: bool = False) -> frozenset[int]:
    """Code points the shipped font maps to a real glyph."""
    return frozenset(_read_cmap((BOLD if bold else REGULAR).read_bytes()))


def covers(ch: str, bold: bool = False) -> bool:
    return ord(ch) in coverage(bold)


def _read_cmap(data: bytes) -> set[int]:
    num_tables = struct.unpack_from(">H", data, 4)[0]
    cmap_offset = None
    for i in range(num_tables):
        tag, _, offset, _ = struct.unpack_from(">4sIII", data, 12 + 16 * i)
        if tag == b"cmap":
            cmap_offset = offset
            break
    if cmap_offset is None:
        raise ValueError("font has no cmap table")
    _, count = struct.unpack_from(">HH", data, cmap_offset)
    subtables: dict[tuple[int, int], int] = {}
    for i in range(count):
        platform, encoding, offset = struct.unpack_from(">HHI", data, cmap_offset + 4 + 8 * i)
        subtables[(platform, encoding)] = cmap_offset + offset
    for key in ((3, 10), (0, 6), (0, 4), (3, 1), (0, 3)):
        if key in subtables:
            start = subtables[key]
            fmt = struct.unpack_from(">H", data, start)[0]
            if fmt == 12:
                return _cmap_format12(data, start)
            if fmt == 4:
                return _cmap_format4(data, start)
    raise ValueError("font has no Unicode cmap of format 4 or 12")


def _cmap_format12(data: bytes, start: int) -> set[int]:
    groups = struct.unpack_from(">I", data, start + 12)[0]
    out: set[int] = set()
    for i in range(groups):
        first, last, glyph = struct.unpack_from(">III", data, start + 16 + 12 * i)
        if glyph == 0:
            first += 1  # the first code point maps to .notdef
        out.update(range(first, last + 1))
    return out


def _cmap_format4(data: bytes, start: int) -> set[int]:
    seg_count = struct.unpack_from(">H", data, start + 6)[0] // 2
    ends = struct.unpack_from(f">{seg_count}H", data, start + 14)
    starts_at = start + 16 + 2 * seg_count
    starts = struct.unpack_from(f">{seg_count}H", data, starts_at)
    deltas = struct.unpack_from(f">{seg_count}h", data, starts_at + 2 * seg_count)
    ranges_at = starts_at + 4 * seg_count
    range_offsets = struct.unpack_from(f">{seg_count}H", data, ranges_at)
    out: set[int] = set()
    for i in range(seg_count):
        first, last, delta, roff = starts[i], ends[i], deltas[i], range_offsets[i]
        if first == 0xFFFF:
            continue
        for code in range(first, last + 1):
            if roff == 0:
                glyph = (code + delta) & 0xFFFF
            else:
                at = ranges_at + 2 * i + roff + 2 * (code - first)
                glyph = struct.unpack_from(">H", data, at)[0]
                if glyph:
                    glyph = (glyph + delta) & 0xFFFF
            if glyph:
                out.add(code)
    return out


def clean_text(text: str, *, bold: bool = False) -> str:
    """``text`` with only what the shipped font can draw.

    Characters the font lacks (emoji, CJK, ...) are dropped, as are control and format
    characters (zero-width joiners, variation selectors, direction marks) and combining marks
    that have no base or no glyph; any run of white space becomes one space.
    """
    text = unicodedata.normalize("NFC", str(text))
    have = coverage(bold)
    out: list[str] = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch.isspace() or cat == "Zs":
            if out and out[-1] != " ":
                out.append(" ")
            continue
        if cat in ("Cc", "Cf", "Cs", "Co", "Cn") or _is_variation_selector(ch):
            continue
        if cat in ("Mn", "Me", "Mc"):
            if out and out[-1] != " " and ord(ch) in have:
                out.append(ch)
            continue
        if ord(ch) in have:
            out.append(ch)
    return "".join(out).strip()


def _is_variation_selector(ch: str) -> bool:
    code = ord(ch)
    return 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF or 0x1F3FB <= code <= 0x1F3FF


def display_name(name: str, fallback: str, *, limit: int = 18, bold: bool = False) -> str:
    """A player name fit for a picture: cleaned, at most ``limit`` characters, never empty."""
    clean = clean_text(name, bold=bold)
    if not any(ch.isalnum() for ch in clean):
        return fallback
    if len(clean) > limit:
        clean = clean[: limit - 1].rstrip() + ELLIPSIS
    return clean


def fit_width(text: str, face: ImageFont.FreeTypeFont, width: float) -> str:
    """Shorten ``text`` with an ellipsis until it is at most ``width`` pixels wide."""
    if text_width(face, text) <= width:
        return text
    while text and _measure(face, text + ELLIPSIS) > width:
        text = text[:-1]
    return text.rstrip() + ELLIPSIS
