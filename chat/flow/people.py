"""People and chats: names, languages and group titles, read from the store; and what of a
name shows (:func:`visible`, :func:`short_name`, :func:`person_name`).

Nothing here is kept by the process between units of work: another process (or a restart)
may have changed a name, a language or a title since. Within one unit of work (an update,
a computer's turn, a timer tick: :func:`chat.flow.base.begin_work`) a row is read once,
however many steps of the flow ask for it, and a write updates that memo.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable

from chat.describe import level_label
from chat.flow.base import Actor, begin_work, chat_key, read_once, user_key, wrote
from chat.i18n import Catalogs, Tr
from chat.model import LEVEL_NAMES, InputError
from storage import ChatRow, MatchRow, SeatKind, Store, UserRow, is_detached_chat

MAX_NAME = 24
#: Zero-width joiners stay: they shape Persian and Indic words and join emoji sequences,
#: and cannot reorder or hide text around them.
_JOINERS = frozenset("\u200c\u200d")
#: Letters and symbols that draw nothing (Hangul fillers, the blank Braille pattern): a
#: favourite for "invisible" names.
_BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def visible(text: str) -> str:
    """``text`` without invisible formatting: bidi controls (U+202A..U+202E, U+2066..U+2069,
    U+200E/F), zero-width spaces, soft hyphens and every other format character (Unicode
    category Cf), control characters (Cc), lone surrogates (Cs) and blank fillers.

    Names are shown inside the bot's own sentences ("{name} left the table"): a right-to-left
    override in a name would reverse the rest of the sentence, and invisible characters make
    two players look alike or a name look empty."""
    return "".join(ch for ch in text if ch not in _BLANKS and (
        ch in _JOINERS or unicodedata.category(ch) not in ("Cf", "Cc", "Cs")))


def _shown(name: str) -> str:
    """The visible part of a name, spaces collapsed; empty if nothing of it shows."""
    name = " ".join(visible(name).split())
    return name if name.strip("".join(_JOINERS)) else ""


def short_name(name: str) -> str:
    name = _shown(name) or "?"
    return name if len(name) <= MAX_NAME else name[: MAX_NAME - 1] + "…"


def person_name(full_name: str | None, username: str | None) -> str:
    """A Telegram user's display name: the full name as far as it is visible, else the
    username, else "Player" (a name of invisible characters only would show nothing)."""
    for candidate in (full_name, username):
        if candidate and _shown(candidate):
            return short_name(candidate)
    return "Player"


class People:
    def __init__(self, store: Store, catalogs: Catalogs, *,
                 panels_in_group: bool = False) -> None:
        self.store = store
        self.catalogs = catalogs
        #: Where a group that did not choose opens its panels (``KRENDZU_PANELS``).
        self.panels_default = panels_in_group

    def begin_request(self) -> None:
        """A new request (an update) starts in this task: read each row once."""
        begin_work()

    async def user_row(self, user_id: int) -> UserRow | None:
        """The user's stored row, read once per unit of work."""
        return await read_once(user_key(user_id), lambda: self.store.get_user(user_id))

    async def started_bot(self, user_id: int) -> bool:
        """Whether the user has pressed Start in the private chat, read afresh (not the
        unit of work's copy: another process may have stored their /start since)."""
        row = await self.store.get_user(user_id)
        return row is not None and row.can_write_privately

    async def chat_row(self, chat_id: int) -> ChatRow | None:
        """The group's stored row, read once per unit of work."""
        return await read_once(chat_key(chat_id), lambda: self.store.get_chat(chat_id))

    async def _upsert_user(self, user_id: int, name: str, *, language: str | None = None,
                           can_write_privately: bool | None = None) -> UserRow:
        row = await self.store.upsert_user(user_id, name, language=language,
                                           can_write_privately=can_write_privately)
        wrote(user_key(user_id), row)
        return row

    async def _upsert_chat(self, chat_id: int, *, language: str | None = None,
                           title: str | None = None, tidy: bool | None = None,
                           panels_in_group: bool | None = None,
                           bot_admin: bool | None = None) -> ChatRow:
        row = await self.store.upsert_chat(chat_id, language=language, title=title, tidy=tidy,
                                           panels_in_group=panels_in_group,
                                           bot_admin=bot_admin)
        wrote(chat_key(chat_id), row)
        return row

    async def see_user(self, actor: Actor, *, private: bool = False) -> Tr:
        """Remember the user (name, language on first sight, that they started the bot);
        the language to answer them in (the group's for a request from a group)."""
        known = await self.user_row(actor.user_id)
        language = None
        if known is None or known.language is None:
            language = self.catalogs.pick(None, actor.language_code).language
        name = short_name(actor.name)
        if (
            known is None or known.display_name != name or language is not None
            or (private and not known.can_write_privately)
        ):
            known = await self._upsert_user(
                actor.user_id, name, language=language,
                can_write_privately=True if private else None,
            )
        return self.catalogs.get(actor.reply_language or known.language)

    async def actor_tr(self, actor: Actor) -> Tr:
        """The language :meth:`see_user` would answer ``actor`` in, without remembering
        them: for a refusal that must leave nothing behind (a stranger's request)."""
        known = await self.user_row(actor.user_id)
        language = known.language if known is not None else None
        return self.catalogs.get(actor.reply_language or language
                                 or self.catalogs.pick(None, actor.language_code).language)

    async def set_language(self, chat_id: int, actor: Actor, language: str) -> Tr:
        if language not in self.catalogs.languages:
            raise InputError("Languages: {names}.", names=", ".join(self.catalogs.languages))
        if chat_id < 0:
            await self.set_chat_language(chat_id, language)
        else:
            await self.see_user(actor)
            await self._upsert_user(actor.user_id, short_name(actor.name), language=language)
        return self.catalogs.get(language)

    async def set_chat_language(self, chat_id: int, language: str) -> None:
        await self._upsert_chat(chat_id, language=language)

    async def adopt_chat_language(self, chat_id: int, language: str) -> Tr:
        """The group's language, fixed to ``language`` now if it has none yet (the bot was
        just added: the language of whoever added it). From then on the group's replies are
        in it whoever writes, a Russian speaker in an English group included, until an
        admin's ``/lang``."""
        row = await self.chat_row(chat_id)
        if row is not None and row.language is not None:
            return self.catalogs.get(row.language)
        await self.set_chat_language(chat_id, language)
        return self.catalogs.get(language)

    async def set_tidy(self, chat_id: int, on: bool) -> None:
        await self._upsert_chat(chat_id, tidy=on)

    async def is_tidy(self, chat_id: int) -> bool:
        row = await self.chat_row(chat_id)
        return row is None or row.tidy

    async def set_panels_in_group(self, chat_id: int, on: bool) -> None:
        await self._upsert_chat(chat_id, panels_in_group=on)

    async def panels_in_group(self, chat_id: int) -> bool:
        """A group's players open their panels in the group itself (issue 42; the default).
        Never a private chat's, nor a Play now match's: its chat is no Telegram chat, and
        each of its players plays in their own private chat."""
        if chat_id > 0 or is_detached_chat(chat_id):
            return False
        row = await self.chat_row(chat_id)
        chosen = row.panels_in_group if row is not None else None
        return self.panels_default if chosen is None else chosen

    async def may_push(self, chat_id: int) -> bool:
        """Whether an ephemeral message may be pushed into the group unasked: the bot
        administers it, or that is not known yet (the first push tells)."""
        row = await self.chat_row(chat_id)
        return row is None or row.bot_admin is not False

    async def set_bot_admin(self, chat_id: int, admin: bool) -> bool:
        """Remember whether the bot administers the group; returns whether that changed."""
        row = await self.chat_row(chat_id)
        if row is not None and row.bot_admin is admin:
            return False
        await self._upsert_chat(chat_id, bot_admin=admin)
        return True

    async def user_tr(self, user_id: int) -> Tr:
        row = await self.user_row(user_id)
        return self.catalogs.get((row.language if row else None) or "en")

    async def chat_tr(self, chat_id: int, fallback: str | None = None) -> Tr:
        if chat_id > 0:
            return await self.user_tr(chat_id)
        row = await self.chat_row(chat_id)
        if row is None or row.language is None:
            return self.catalogs.get(fallback)  # not remembered: it may be set soon
        return self.catalogs.get(row.language)

    async def name_of(self, user_id: int) -> str:
        row = await self.user_row(user_id)
        # Cleaned again: a name stored before invisible characters were removed.
        return short_name(row.display_name) if row else str(user_id)

    async def names_of(self, user_ids: Iterable[int]) -> Callable[[int], str]:
        """The names of ``user_ids`` for a view that must not wait (``"?"`` for others)."""
        names = {u: await self.name_of(u) for u in set(user_ids)}
        return lambda user_id: names.get(user_id, "?")

    async def seat_names(self, row: MatchRow, tr: Tr) -> tuple[str, ...]:
        """Display names by seat; computers of the same level get their seat number."""
        names = []
        levels = [s.level for s in row.seats if s.kind is SeatKind.COMPUTER]
        for seat in row.seats:
            if seat.kind is SeatKind.HUMAN and seat.user_id is not None:
                names.append(await self.name_of(seat.user_id))
            else:
                label = level_label(tr, LEVEL_NAMES.get(seat.level or 2, "normal"))
                if levels.count(seat.level) > 1:
                    label += f" ({seat.seat + 1})"
                names.append(label)
        return tuple(names)

    async def remember_title(self, chat_id: int, title: str | None) -> None:
        """The group's title as an update showed it (stored when it changed)."""
        title = " ".join(visible(title or "").split())  # shown inside our own sentences
        if title and chat_id < 0:
            row = await self.chat_row(chat_id)
            if row is None or row.title != title:
                await self._upsert_chat(chat_id, title=title)

    async def title_of(self, chat_id: int) -> str | None:
        """The group's title as last seen (``None``: never seen, or a private chat)."""
        if chat_id > 0:
            return None
        row = await self.chat_row(chat_id)
        return row.title if row else None

    async def was_unreachable(self, user_id: int) -> bool:
        """The user is known and their private chat refused us (blocked, never started)."""
        row = await self.user_row(user_id)
        return row is not None and not row.can_write_privately

    async def mark_unreachable(self, user_id: int) -> None:
        """The user blocked the bot (``my_chat_member`` in their private chat)."""
        row = await self.user_row(user_id)
        if row is not None and row.can_write_privately:
            await self._upsert_user(user_id, row.display_name, can_write_privately=False)
