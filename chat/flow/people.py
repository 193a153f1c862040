"""People and chats: names, languages and group titles, read through small caches.

Every change of a name or a language goes through here, so the caches stay true; a miss
reads the store. Group titles are only known from what Telegram last showed (a lobby's
state, an update): they name the group in private messages.
"""

from __future__ import annotations

from contextvars import ContextVar

from chat.describe import level_label, short_name, visible
from chat.flow.base import Actor
from chat.i18n import Catalogs, Tr
from chat.model import LEVEL_NAMES, InputError
from storage import MatchRow, SeatKind, Store, UserRow

#: The user rows read while one request is served (set by :meth:`People.begin_request` in
#: the request's task): a person's row is read from the store once per request, however
#: many steps of the flow ask for it. Outside a request every read goes to the store.
REQUEST_USERS: ContextVar[dict[int, UserRow | None] | None] = ContextVar(
    "krendzu_request_users", default=None)


class People:
    def __init__(self, store: Store, catalogs: Catalogs) -> None:
        self.store = store
        self.catalogs = catalogs
        self._names: dict[int, str] = {}
        self._languages: dict[int, str] = {}
        #: Group languages (every change goes through this flow, so the cache stays true).
        self._chat_languages: dict[int, str] = {}
        self._titles: dict[int, str] = {}

    def begin_request(self) -> None:
        """A new request (an update) starts in this task: read each user's row once."""
        REQUEST_USERS.set({})

    async def user_row(self, user_id: int) -> UserRow | None:
        """The user's stored row, read once per request (always read outside one)."""
        memo = REQUEST_USERS.get()
        if memo is not None and user_id in memo:
            return memo[user_id]
        row = await self.store.get_user(user_id)
        if memo is not None:
            memo[user_id] = row
        return row

    async def _upsert_user(self, user_id: int, name: str, *, language: str | None = None,
                           can_write_privately: bool | None = None) -> UserRow:
        row = await self.store.upsert_user(user_id, name, language=language,
                                           can_write_privately=can_write_privately)
        memo = REQUEST_USERS.get()
        if memo is not None:
            memo[user_id] = row
        return row

    async def see_user(self, actor: Actor, *, private: bool = False) -> Tr:
        """Remember the user (name, language on first sight, that they started the bot)."""
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
        self._names[actor.user_id] = known.display_name
        self._languages[actor.user_id] = known.language or "en"
        return self.catalogs.get(known.language)

    async def set_language(self, chat_id: int, actor: Actor, language: str) -> Tr:
        if language not in self.catalogs.languages:
            raise InputError("Languages: {names}.", names=", ".join(self.catalogs.languages))
        if chat_id < 0:
            await self.set_chat_language(chat_id, language)
        else:
            await self.see_user(actor)
            await self._upsert_user(actor.user_id, short_name(actor.name), language=language)
            self._languages[actor.user_id] = language
        return self.catalogs.get(language)

    async def set_chat_language(self, chat_id: int, language: str) -> None:
        await self.store.upsert_chat(chat_id, language=language)
        self._chat_languages[chat_id] = language

    async def user_tr(self, user_id: int) -> Tr:
        if user_id not in self._languages:
            row = await self.store.get_user(user_id)
            self._languages[user_id] = (row.language if row else None) or "en"
            if row:
                self._names[user_id] = short_name(row.display_name)
        return self.catalogs.get(self._languages[user_id])

    async def chat_tr(self, chat_id: int, fallback: str | None = None) -> Tr:
        if chat_id > 0:
            return await self.user_tr(chat_id)
        if chat_id not in self._chat_languages:
            row = await self.store.get_chat(chat_id)
            if row is None or row.language is None:
                return self.catalogs.get(fallback)  # not remembered: it may be set soon
            self._chat_languages[chat_id] = row.language
        return self.catalogs.get(self._chat_languages[chat_id])

    async def name_of(self, user_id: int) -> str:
        if user_id not in self._names:
            row = await self.store.get_user(user_id)
            # Cleaned again: a name stored before invisible characters were removed.
            self._names[user_id] = short_name(row.display_name) if row else str(user_id)
        return self._names[user_id]

    def seen_name(self, user_id: int) -> str:
        """The name if this process has seen it, else ``"?"`` (views that must not wait)."""
        return self._names.get(user_id, "?")

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

    def remember_title(self, chat_id: int, title: str | None) -> None:
        title = " ".join(visible(title or "").split())  # shown inside our own sentences
        if title:
            self._titles[chat_id] = title

    def knows_title(self, chat_id: int) -> bool:
        return chat_id in self._titles

    def title_of(self, chat_id: int) -> str | None:
        """The group's title as last seen (``None``: not seen since the start)."""
        return self._titles.get(chat_id)

    async def was_unreachable(self, user_id: int) -> bool:
        """The user is known and their private chat refused us (blocked, never started)."""
        row = await self.user_row(user_id)
        return row is not None and not row.can_write_privately

    async def mark_unreachable(self, user_id: int) -> None:
        """The user blocked the bot (``my_chat_member`` in their private chat)."""
        row = await self.user_row(user_id)
        if row is not None and row.can_write_privately:
            await self._upsert_user(user_id, row.display_name, can_write_privately=False)
