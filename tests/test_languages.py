"""Languages (issue 27, item 13): the pictures' words come from the gettext catalog, a group
speaks one language whoever writes in it, Russian only for Russian-language users, and the
slips found in the Russian texts stay fixed.

Chats are driven through the fake Bot API; the catalog and the pictures' words are checked
directly against ``chat/locales/ru/LC_MESSAGES/krendzu.po``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po

from chat.describe import preset_label, score_text, together
from chat.handlers.welcome import help_text, welcome_text
from chat.i18n import LOCALE_DIR, Catalogs, picture_texts
from chat.menus import PRIVATE_COMMANDS
from chat.notices import BoardPicture
from chat.painter import Painter, draw_board
from krendzu import DEAL_PRESETS, Match, Settings, Table
from krendzu.coords import frame_for
from render.board import Position, board_layout, header_segments
from render.texts import TEXTS
from tests.bot_harness import BOT, FastClock, running_bot
from tests.fakebot import FakeTelegram

ROOT = Path(__file__).resolve().parent.parent
RU_PO = LOCALE_DIR / "ru" / "LC_MESSAGES" / "krendzu.po"
CYRILLIC = re.compile("[\u0400-\u04ff]")
CATALOGS = Catalogs()
EN, RU = CATALOGS.get("en"), CATALOGS.get("ru")


@pytest.fixture(scope="module")
def ru_po() -> Catalog:
    with RU_PO.open("rb") as handle:
        return read_po(handle, locale="ru")


def teams_match() -> Match:
    match = Match(["ann", "bob", "cy", "dan"], Settings(Table.TEAMS), seed=3)
    match.apply(match.legal_actions()[0])
    return match


# The pictures' words ----------------------------------------------------------------------


def test_render_keeps_only_the_english_source_texts() -> None:
    source = (ROOT / "render" / "texts.py").read_text(encoding="utf-8")
    assert not CYRILLIC.search(source), CYRILLIC.findall(source)[:10]
    assert all(not CYRILLIC.search(text) for text in TEXTS.values())
    # Every text is marked for extraction, as babel.cfg reads it.
    assert source.count('N_("') >= len(set(TEXTS.values()))
    assert "render/texts.py" in (ROOT / "babel.cfg").read_text(encoding="utf-8")


def test_russian_picture_words_are_the_catalogs(ru_po: Catalog) -> None:
    words = picture_texts(RU)
    assert set(words) == set(TEXTS)
    for key, english in TEXTS.items():
        entry = ru_po.get(english)
        assert entry is not None and entry.string, f"{key}: {english!r} is not in {RU_PO}"
        assert words[key] == entry.string, key
    assert words["to_move"] == "▶ Ход: {name}" and words["team"] == "{a} и {b}"
    # The number format of the statistics cards is the translator's too.
    assert (words["stats_decimal_point"], words["stats_group_separator"]) == (",", "\u00a0")
    # English (and a language without a catalog) is the source text itself.
    assert picture_texts(EN) == TEXTS == picture_texts(CATALOGS.get("xx"))


async def test_a_russian_board_is_drawn_in_a_worker_process_with_the_catalogs_words() -> None:
    match = Match(["a", "b"], Settings(Table.DUEL), seed=1)
    match.apply(match.legal_actions()[0])
    picture = BoardPicture(match.observation(None), ("Анна", "Bob"), "ru")
    painter = Painter(1, CATALOGS)  # a real drawing process: the words travel pickled
    try:
        drawn = await painter.board(picture)
    finally:
        painter.close()
    assert drawn == draw_board(picture, picture_texts(RU))
    assert drawn != draw_board(picture)  # not the English header
    layout = board_layout(picture.view, players=picture.names, texts=picture_texts(RU))
    header = " ".join(t for line in layout.header_lines for t, _ in line.segments)
    assert "Атака" in header and "Ход: " in header and "Attack" not in header


# "&" between team names --------------------------------------------------------------------


def test_team_names_are_joined_by_the_languages_and() -> None:
    assert together(RU, ["Анна", "Вера"]) == "Анна и Вера"
    assert together(EN, ["Ann", "Cy"]) == "Ann and Cy"
    assert together(EN, ["Ann", "Bob", "Cy"]) == "Ann, Bob and Cy"
    assert together(RU, ["Анна"]) == "Анна"
    match = teams_match()
    view = match.observation(None)
    names = ("Анна", "Борис", "Вера", "Глеб")
    text = score_text(RU, view, names)
    assert "Анна и Вера" in text and "Борис и Глеб" in text and "&" not in text
    assert "Ann and Cy" in score_text(EN, view, ("Ann", "Bob", "Cy", "Dan"))
    # The picture's header says the same.
    position = Position.of(view, names)
    frame = frame_for(position.placements)
    for tr, want in ((RU, "Анна и Вера"), (EN, "Анна and Вера")):
        header = " ".join(t for t, _ in header_segments(position, frame, picture_texts(tr)))
        assert want in header and "&" not in header, header


# Slips in the Russian texts ----------------------------------------------------------------


def test_no_name_is_declined_after_u(ru_po: Catalog) -> None:
    """«у {side}» would need the genitive of a name the bot cannot decline: every text keeps
    names in the nominative ("Ход: {name}", "{name}: карт нет")."""
    bad = []
    for entry in ru_po:
        forms = entry.string if isinstance(entry.string, list | tuple) else [entry.string]
        bad += [form for form in forms if form and re.search(r"(^|[\s(«])[уУ] \{", form)]
    assert not bad, bad


def test_deal_presets_are_named_in_the_readers_language() -> None:
    presets = {name for table in DEAL_PRESETS.values() for name in table} | {"custom"}
    for preset in presets:
        assert preset_label(EN, preset) == preset
        russian = preset_label(RU, preset)
        assert russian != preset and CYRILLIC.search(russian), preset


# Chats, through the fake Bot API -------------------------------------------------------------


async def test_an_english_group_answers_a_russian_speaker_in_english(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(701, "Ann", language_code="en")
    boris = fake.user(702, "Борис", language_code="ru")
    group = fake.group(-1007010, "Friends", bot=False, members=(ann, boris))
    async with running_bot(tmp_path, fake) as h:
        fake.add_bot(group, by=ann)  # Ann added the bot: the group speaks English
        await h.settle()
        assert "Krendzu" in (fake.last(group).text or "")
        boris.send(group, f"/help@{BOT}")
        await h.settle()
        assert fake.last(group).text == help_text(EN)
        # The match Boris sets up there is in English too, its deal preset included.
        boris.send(group, f"/new@{BOT} deal=sharp")
        await h.settle()
        lobby = fake.last(group).text or ""
        assert "(sharp)" in lobby and not CYRILLIC.search(lobby.replace("Борис", "")), lobby
        # Boris's private replies stay in his own language.
        boris.start_bot()
        await h.settle()
        private = [m.text for m in fake.sent(boris)]
        assert welcome_text(RU) in private, private
        assert "Вы за столом в группе «Friends». Ваши карты будут приходить сюда." in private
        # What the flow answers him in the group is English too (not «Вы уже за столом»).
        boris.send(group, f"/join@{BOT}")
        await h.settle()
        assert fake.last(group).text == "You are already seated."
        # A button's toast is his alone: in his own language.
        lobby = next(m for m in reversed(fake.sent(group))
                     if any(b.get("callback_data", "").endswith(":join") for b in m.buttons()))
        join = next(b for b in lobby.buttons() if b.get("callback_data", "").endswith(":join"))
        query = boris.press(lobby, data=join["callback_data"])
        await h.settle()
        assert fake.answer(query).text == "Вы уже за столом."
        ann.send(group, f"/join@{BOT}")
        boris.send(group, f"/go@{BOT}")  # not the creator: Ann starts the match
        await h.settle()
        # (The English /help shows the Russian way to write a card, «Дт», on purpose.)
        said = [m.text or "" for m in fake.sent(group) if m.text != help_text(EN)]
        assert len(said) >= 5
        assert not [t for t in said if CYRILLIC.search(t.replace("Борис", ""))], said


async def test_a_russian_group_names_its_deal_preset_in_russian(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    anna = fake.user(711, "Анна", language_code="ru")
    bob = fake.user(712, "Bob", language_code="en")
    group = fake.group(-1007110, "Друзья", bot=False, members=(anna, bob))
    async with running_bot(tmp_path, fake) as h:
        fake.add_bot(group, by=anna)
        await h.settle()
        bob.send(group, f"/new@{BOT} deal=sharp")  # an English speaker, in a Russian group
        await h.settle()
        lobby = fake.last(group).text or ""
        assert "(острая)" in lobby and "sharp" not in lobby, lobby


async def test_a_ukrainian_user_gets_english_until_lang(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    olena = fake.user(721, "Olena", language_code="uk")
    async with running_bot(tmp_path, fake) as h:
        olena.start_bot()
        await h.settle()
        assert fake.sent(olena)[-1].text == welcome_text(EN)
        # The command menu agrees: English by default, Russian only for Russian clients.
        for scope in ("all_private_chats", "all_group_chats"):
            assert fake.commands(scope) and fake.commands(scope, "uk") is None
            assert not any(CYRILLIC.search(c["description"]) for c in fake.commands(scope))
            assert all(CYRILLIC.search(c["description"])
                       for c in fake.commands(scope, "ru") or [{"description": ""}])
        olena.send(None, "/lang ru")
        await h.settle()
        assert fake.sent(olena)[-1].text == "Язык: русский."
        olena.send(None, "/help")
        await h.settle()
        assert fake.sent(olena)[-1].text == help_text(RU)
        # Her own chat's menu follows her choice (the menus by Telegram language do not).
        mine = fake.commands({"type": "chat", "chat_id": olena.id})
        assert mine and all(CYRILLIC.search(c["description"]) for c in mine)
        assert {c["command"] for c in mine} == set(PRIVATE_COMMANDS)
        olena.send(None, "/lang en")
        await h.settle()
        mine = fake.commands({"type": "chat", "chat_id": olena.id})
        assert mine and not any(CYRILLIC.search(c["description"]) for c in mine)


async def test_lang_names_the_language_once(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    anna = fake.user(731, "Анна", language_code="ru")
    async with running_bot(tmp_path, fake) as h:
        anna.start_bot()
        await h.settle()
        anna.send(None, "/lang ru")
        await h.settle()
        said = fake.sent(anna)[-1].text or ""
        assert said == "Язык: русский." and said.count("русский") == 1
        anna.send(None, "/lang en")
        await h.settle()
        assert fake.sent(anna)[-1].text == "Language: English."
