"""Fonts shipped in the package; names in any script render without tofu boxes."""

from __future__ import annotations

from PIL import Image, ImageChops, ImageDraw

from render.board import board_layout
from render.hand import hand_image
from render.sheet import scenario_matches
from render.typeface import BOLD, FONT_DIR, REGULAR, clean_text, covers, display_name, font

MISSING = "\U0001f525"  # 🔥: not in DejaVu Sans, so drawn as the .notdef box


def ink(text: str, bold: bool = False) -> Image.Image:
    face = font(40, bold)
    img = Image.new("L", (80, 80), 0)
    ImageDraw.Draw(img).text((40, 40), text, font=face, fill=255, anchor="mm")
    return img


def test_fonts_come_from_the_package_with_a_licence():
    assert REGULAR.parent == BOLD.parent == FONT_DIR
    assert REGULAR.is_file() and BOLD.is_file()
    licence = (FONT_DIR / "LICENSE").read_text()
    assert "Bitstream" in licence and "Permission is hereby granted" in licence
    assert font(20).path == str(REGULAR)


def test_notdef_box_is_what_a_missing_character_draws():
    assert not covers(MISSING)
    box = ink(MISSING)
    assert box.getbbox() is not None  # it does draw something: the box we must avoid
    assert ImageChops.difference(box, ink("\U0001f9e8")).getbbox() is None


def test_cyrillic_names_do_not_turn_into_boxes():
    box = ink(MISSING)
    for bold in (False, True):
        for ch in "АаБбВвГгДдЕеЁёЖжЗзИиЙйКкЛлМмНнОоПпРрСсТтУуФфХхЦцЧчШшЩщЪъЫыЬьЭэЮюЯя":
            assert covers(ch, bold), ch
            glyph = ink(ch, bold)
            assert glyph.getbbox() is not None, ch
            assert ImageChops.difference(glyph, ink(MISSING, bold)).getbbox() is not None, ch
    assert clean_text("Дмитрий Ёлкин") == "Дмитрий Ёлкин"
    assert box.getbbox()


def test_emoji_and_invisible_characters_are_dropped():
    assert clean_text("Анна 🔥🔥") == "Анна"
    assert clean_text("bob\u200d\ufe0f\u202e x") == "bob x"
    assert clean_text("  a\n\tb  ") == "a b"
    assert clean_text("\u0301abc") == "abc"  # a combining mark without a base
    assert clean_text("é") == "é"
    assert display_name("🔥🔥", "Player 2") == "Player 2"
    assert display_name("李雷", "Player 2") == "Player 2"
    long = display_name("Александр Константинович", "x", limit=12)
    assert len(long) == 12 and long.endswith("…")


def test_board_header_has_cyrillic_and_no_missing_glyphs():
    match = scenario_matches()["teams-4"]
    layout = board_layout(match.observation(None))
    text = "".join(t for line in layout.header_lines for t, _ in line.segments)
    assert "Анна" in text and "Борис" in text and "Zoë-Élise" in text
    assert "🌸" not in text
    for ch in text:
        assert ch == " " or covers(ch, True) or covers(ch), repr(ch)


def test_hand_labels_are_cleaned():
    img = hand_image(["QC", "10D"], ["Дама 🔥", "десять"])
    assert img.width > 0
