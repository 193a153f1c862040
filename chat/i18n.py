"""Translations from gettext catalogs (``chat/locales/<lang>/LC_MESSAGES/krendzu.po``).

Texts are written in English in the code, marked ``tr._("...")`` (``tr.n_(one, many, n)``
for plurals) so that ``pybabel extract`` finds them (``make messages``). Translators edit
only the ``.po`` files; a new language is a new folder. Catalogs are read with Babel when the
application starts (no compiled ``.mo`` to keep in step), and plural forms follow the
catalog's ``Plural-Forms`` header, which Babel writes from the CLDR rules (Russian: one /
few / many / other, so 1 карта, 2 карты, 5 карт).

The pictures' words live in the same catalog: :mod:`render` knows only their English source
(``render/texts.py``, marked ``N_``) and :func:`picture_texts` translates them for a reader,
so a translator edits one ``.po`` file per language for texts and pictures alike.
"""

from __future__ import annotations

import functools
import gettext
import io
import logging
from pathlib import Path
from typing import Any

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

from render.texts import texts_in

log = logging.getLogger(__name__)

LOCALE_DIR = Path(__file__).resolve().parent / "locales"
DOMAIN = "krendzu"
DEFAULT_LANGUAGE = "en"


class Tr:
    """The texts of one language: ``tr._("Hi {name}", name=...)``, ``tr.n_(...)``."""

    def __init__(self, language: str, translations: gettext.NullTranslations) -> None:
        self.language = language
        self._t = translations

    def _(self, message: str, /, **values: Any) -> str:
        text = self._t.gettext(message)
        return text.format(**values) if values else text

    def n_(self, singular: str, plural: str, n: int, /, **values: Any) -> str:
        """Plural form for ``n`` (``{n}`` is filled in as well as ``values``)."""
        return self._t.ngettext(singular, plural, n).format(n=n, **values)

    def __repr__(self) -> str:
        return f"<Tr {self.language}>"


def read_catalog(path: Path) -> gettext.GNUTranslations:
    """A ``.po`` file as gettext translations (compiled in memory with Babel)."""
    with path.open("rb") as handle:
        catalog = read_po(handle, domain=DOMAIN)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


class Catalogs:
    """Every language found under ``directory``, English (the source texts) always."""

    def __init__(self, directory: Path = LOCALE_DIR) -> None:
        self._by_language: dict[str, Tr] = {
            DEFAULT_LANGUAGE: Tr(DEFAULT_LANGUAGE, gettext.NullTranslations())
        }
        for po in sorted(directory.glob(f"*/LC_MESSAGES/{DOMAIN}.po")):
            language = po.parent.parent.name
            self._by_language[language] = Tr(language, read_catalog(po))

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(self._by_language)

    def get(self, language: str | None) -> Tr:
        return self._by_language.get(language or "", self._by_language[DEFAULT_LANGUAGE])

    def pick(self, chosen: str | None, telegram_code: str | None) -> Tr:
        """The user's choice (``/lang``) if any, else from their Telegram language."""
        if chosen in self._by_language:
            return self._by_language[chosen]
        return self.get(language_of(telegram_code, self.languages))


def language_of(code: str | None, available: tuple[str, ...] = ("en", "ru")) -> str:
    """A Telegram ``language_code`` (``ru``, ``ru-RU``, ``en-GB``) → a catalog language.

    Only the language itself picks its catalog: a Ukrainian or Kazakh user gets English, not
    Russian (guessing someone's second language is not ours to do), until ``/lang`` says
    otherwise. The command menu, registered per language code, agrees."""
    base = (code or "").split("-")[0].lower()
    return base if base in available else DEFAULT_LANGUAGE


@functools.lru_cache(maxsize=16)
def _picture_words(tr: Tr) -> tuple[tuple[str, str], ...]:
    return tuple(texts_in(tr._).items())


def picture_texts(tr: Tr) -> dict[str, str]:
    """Every word the pictures show, in ``tr``'s language (English where the catalog has no
    translation): the ``texts`` of a :mod:`render` picture. A fresh small dict each time, so
    it can travel to a drawing process and be changed by the caller."""
    return dict(_picture_words(tr))
