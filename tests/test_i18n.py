"""The Russian catalog against the code: every marked text translated (the pictures' words
in ``render/texts.py`` too), placeholders kept, Russian plural forms chosen right, Telegram
language codes mapped to a catalog.

A failure lists what a translator has to fix, file and line of the text in the code
included. After changing texts in ``chat/``: ``make messages``, translate the new entries in
``chat/locales/ru/LC_MESSAGES/krendzu.po``, run this test again.
"""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir, extract_from_file
from babel.messages.frontend import parse_keywords
from babel.messages.plurals import get_plural
from babel.messages.pofile import read_po

from chat.i18n import DOMAIN, LOCALE_DIR, Catalogs, language_of

ROOT = Path(__file__).resolve().parent.parent
CHAT_DIR = ROOT / "chat"
#: The pictures' words (marked ``N_``), extracted as babel.cfg says.
PICTURE_TEXTS = ROOT / "render" / "texts.py"
RU_PO = LOCALE_DIR / "ru" / "LC_MESSAGES" / f"{DOMAIN}.po"
#: As the Makefile's ``messages`` target: pybabel's default keywords plus these.
KEYWORDS = {**DEFAULT_KEYWORDS, **parse_keywords(["_", "n_:1,2", "InputError"])}

MessageId = str | tuple[str, str]


def _where(path: str, lineno: int) -> str:
    return f"chat/{path}:{lineno}"


@pytest.fixture(scope="module")
def ru() -> Catalog:
    with RU_PO.open("rb") as handle:
        return read_po(handle, locale="ru", domain=DOMAIN)


@pytest.fixture(scope="module")
def marked() -> dict[MessageId, list[str]]:
    """Every text the code marks for translation → where it is marked (``chat/x.py:12``)."""
    found: dict[MessageId, list[str]] = {}
    for path, lineno, message, _comments, _context in extract_from_dir(
        str(CHAT_DIR), method_map=[("**.py", "python")], keywords=KEYWORDS
    ):
        key = tuple(message) if isinstance(message, list | tuple) else message
        found.setdefault(key, []).append(_where(path, lineno))
    assert found, f"no marked texts found under {CHAT_DIR}"
    pictures = list(extract_from_file("python", str(PICTURE_TEXTS), keywords=KEYWORDS))
    assert len(pictures) > 50, f"no N_ texts found in {PICTURE_TEXTS}"
    for lineno, message, _comments, _context in pictures:
        found.setdefault(message, []).append(f"render/texts.py:{lineno}")
    return found


def _show(msgid: MessageId) -> str:
    if isinstance(msgid, tuple):
        return f"msgid {msgid[0]!r} / msgid_plural {msgid[1]!r}"
    return f"msgid {msgid!r}"


def _report(title: str, problems: list[str]) -> str:
    lines = [f"{title} ({len(problems)}), in {RU_PO.relative_to(ROOT)}:"]
    lines += [f"  - {p}" for p in problems]
    return "\n".join(lines)


def _placeholders(text: str) -> set[str]:
    """``{name}``, ``{n:>3}``, ``{x!r}`` … as written; ``ValueError`` for stray braces."""
    out = set()
    for _literal, field, spec, conversion in string.Formatter().parse(text):
        if field is None:
            continue
        out.add("{" + field + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "") + "}")
    return out


def _first_place(places: list[str]) -> tuple[str, int]:
    path, _, line = places[0].rpartition(":")
    return path, int(line)


def _forms(message: Message) -> list[str]:
    if isinstance(message.string, list | tuple):
        return list(message.string)
    return [message.string]


# (a) everything marked in the code is translated ------------------------------------------


def test_every_marked_text_is_translated(ru: Catalog, marked: dict[MessageId, list[str]]) -> None:
    nplurals = ru.num_plurals
    problems = []
    for msgid, places in sorted(marked.items(), key=lambda item: _first_place(item[1])):
        at = ", ".join(places)
        entry = ru.get(msgid)
        if entry is None:
            problems.append(f"{at}: {_show(msgid)} has no entry (run `make messages`)")
            continue
        plural_in_code = isinstance(msgid, tuple)
        if plural_in_code != entry.pluralizable:
            kind = "a plural (n_)" if plural_in_code else "a singular (_)"
            problems.append(f"{at}: {_show(msgid)} is {kind} in the code but not in the catalog "
                            "(run `make messages`)")
            continue
        if plural_in_code and entry.id != msgid:
            problems.append(f"{at}: {_show(msgid)}: the catalog's plural is "
                            f"{entry.id[1]!r} (run `make messages`)")
            continue
        if entry.fuzzy:
            problems.append(f"{at}: {_show(msgid)} is marked fuzzy (check it, remove the flag)")
            continue
        forms = _forms(entry)
        if plural_in_code and len(forms) != nplurals:
            problems.append(f"{at}: {_show(msgid)} has {len(forms)} plural forms, "
                            f"Russian needs {nplurals} (msgstr[0..{nplurals - 1}])")
            continue
        # A no-break space alone is a translation (the Russian thousands separator of the
        # statistics pictures); ordinary blanks alone are not.
        empty = [i for i, form in enumerate(forms) if not (form or "").strip(" \t\r\n")]
        if empty:
            which = (", ".join(f"msgstr[{i}]" for i in empty) if plural_in_code else "msgstr")
            problems.append(f"{at}: {_show(msgid)}: empty {which}")
    if problems:
        pytest.fail(_report("Texts in the code without a Russian translation", problems),
                    pytrace=False)


# (b) placeholders --------------------------------------------------------------------------


def test_translations_keep_the_placeholders(ru: Catalog) -> None:
    problems = []
    for entry in ru:
        if not entry.id:
            continue
        source = entry.id[-1] if isinstance(entry.id, tuple) else entry.id
        try:
            wanted = _placeholders(source)
            if isinstance(entry.id, tuple):
                # The singular may spell "one" out; every Russian form must show {n} and co.
                wanted |= _placeholders(entry.id[0])
        except ValueError as exc:
            problems.append(f"{_show(entry.id)}: the English text has bad braces ({exc})")
            continue
        for i, form in enumerate(_forms(entry)):
            if not form:
                continue  # reported by the test above
            label = f"msgstr[{i}]" if isinstance(entry.id, tuple) else "msgstr"
            try:
                got = _placeholders(form)
            except ValueError as exc:
                problems.append(f"{_show(entry.id)}: {label} {form!r} has bad braces ({exc})")
                continue
            if got != wanted:
                missing = ", ".join(sorted(wanted - got)) or "none"
                extra = ", ".join(sorted(got - wanted)) or "none"
                problems.append(f"{_show(entry.id)}: {label} {form!r} — missing: {missing}; "
                                f"unknown: {extra}")
    if problems:
        pytest.fail(_report("Translations whose {placeholders} differ from the English",
                            problems), pytrace=False)


# (c) plural forms --------------------------------------------------------------------------


def test_plural_forms_header_is_babels_for_russian(ru: Catalog) -> None:
    expected = get_plural("ru")
    assert ru.plural_forms == expected.plural_forms == Catalog(locale="ru").plural_forms
    assert ru.num_plurals == expected.num_plurals == 3
    assert ru.plural_expr == expected.plural_expr


HAND = ("Your hand ({n} card): {cards}", "Your hand ({n} cards): {cards}")
#: n → (CLDR category index in the Russian Plural-Forms, the word for "card" after n).
RUSSIAN_FORMS = {1: (0, "карта"), 2: (1, "карты"), 5: (2, "карт"), 11: (2, "карт"),
                 21: (0, "карта"), 22: (1, "карты"), 25: (2, "карт")}


@pytest.mark.parametrize("n", sorted(RUSSIAN_FORMS))
def test_plural_forms_are_chosen_for_russian(ru: Catalog, n: int) -> None:
    entry = ru.get(HAND)
    assert entry is not None and entry.id == HAND, f"{_show(HAND)} is not in the catalog"
    index, word = RUSSIAN_FORMS[n]
    text = Catalogs().get("ru").n_(*HAND, n, cards="Q♣ 9♦")
    assert text == entry.string[index].format(n=n, cards="Q♣ 9♦"), (
        f"n={n} should use msgstr[{index}] of {_show(HAND)}, got {text!r}")
    assert re.search(rf"(?<!\d){n} {word}(?!\w)", text), (
        f"n={n}: expected “{n} {word}” in {text!r}")


def test_every_plural_message_follows_the_russian_rule(ru: Catalog) -> None:
    tr = Catalogs().get("ru")
    problems = []
    for entry in ru:
        if not entry.id or not isinstance(entry.id, tuple) or not all(entry.string):
            continue
        for n, (index, _word) in RUSSIAN_FORMS.items():
            names = {p.strip("{}").split("!")[0].split(":")[0]
                     for p in _placeholders(entry.id[1])} - {"n"}
            values = {name: f"<{name}>" for name in names}
            got = tr.n_(entry.id[0], entry.id[1], n, **values)
            want = entry.string[index].format(n=n, **values)
            if got != want:
                problems.append(f"{_show(entry.id)}, n={n}: got {got!r}, want {want!r}")
    if problems:
        pytest.fail(_report("Plural messages with a wrong form", problems), pytrace=False)


# (d) Telegram language codes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "language"),
    [("ru", "ru"), ("ru-RU", "ru"), ("RU", "ru"), ("en", "en"), ("de", "en"),
     (None, "en"), ("", "en"), ("en-GB", "en"),
     # Russian only for Russian-language users (issue 27): Ukrainian, Belarusian, Kazakh …
     # get English until /lang says otherwise.
     ("uk", "en"), ("uk-UA", "en"), ("be", "en"), ("kk", "en"), ("hy", "en")],
)
def test_language_of_telegram_codes(code: str | None, language: str) -> None:
    assert language_of(code) == language
    assert Catalogs().pick(None, code).language == language


def test_russian_catalog_is_loaded() -> None:
    catalogs = Catalogs()
    assert "ru" in catalogs.languages
    assert catalogs.get("ru")._("Join") != "Join"
    assert catalogs.get("en")._("Join") == "Join"


def test_a_draw_names_the_players_with_the_readers_and() -> None:
    """The summary's draw line joins the names as every other list of players does."""
    from chat.describe import result_text
    from krendzu import Table
    from krendzu.outcome import Outcome

    catalogs = Catalogs()
    duel = Outcome.of_totals(Table.DUEL, [1, 1])
    assert result_text(catalogs.get("en"), duel, ["Ann", "Bob"]) == "A draw between Ann and Bob!"
    assert (result_text(catalogs.get("ru"), duel, ["Анна", "Борис"])
            == "Ничья между игроками: Анна и Борис!")
    trio = Outcome.of_totals(Table.TRIO_LONE_DEFENDER, [2, 2, 2])
    assert (result_text(catalogs.get("en"), trio, ["Ann", "Bob", "Cy"])
            == "A draw between Ann, Bob and Cy!")
