"""Caps on active matches: per chat and per person. Each match keeps computer players busy,
and those are shared by every chat."""

from __future__ import annotations

from collections.abc import Sequence

from chat.flow.people import People
from chat.i18n import Tr
from storage import Store, is_engine_user

#: The operators' switch that keeps new matches from starting (/admin pause).
PAUSED = "paused"


class Caps:
    def __init__(self, store: Store, people: People, *, per_user: int, per_chat: int) -> None:
        self.store = store
        self.people = people
        self.per_user = per_user
        self.per_chat = per_chat

    async def refusal(self, chat_id: int | None, user_ids: Sequence[int], actor_id: int,
                      tr: Tr) -> str | None:
        """Why one more active match may not begin (``None``: it may): the chat already has
        as many as one chat may, or one of ``user_ids`` plays as many as one person may;
        or the operators paused new matches for maintenance (/admin pause)."""
        if await self.store.switch(PAUSED) is not None:
            return tr._("The bot is being maintained: new matches cannot start for a little "
                        "while. Matches already being played go on. Please try again later.")
        if chat_id is not None:
            count = await self.store.count_active_matches(chat_id=chat_id)
            if count >= self.per_chat:
                return tr.n_("This chat already has {n} match being played, as many as one "
                             "chat may have at once. Start a new one when it is over.",
                             "This chat already has {n} matches being played, as many as one "
                             "chat may have at once. Start a new one when one of them is "
                             "over.", count)
        for user_id in user_ids:
            if is_engine_user(user_id):  # its own cap: chat.flow.engines
                continue
            count = await self.store.count_active_matches(user_id=user_id)
            if count < self.per_user:
                continue
            if user_id == actor_id:
                return tr.n_("You are already playing {n} match, as many as one person may "
                             "at once. Finish it (or /resign) before you start or join "
                             "another.",
                             "You are already playing {n} matches, as many as one person may "
                             "at once. Finish one of them (or /resign) before you start or "
                             "join another.", count)
            return tr.n_("{name} is already playing {n} match, as many as one person may at "
                         "once. This match can start when they finish it or leave this "
                         "table.",
                         "{name} is already playing {n} matches, as many as one person may "
                         "at once. This match can start when they finish one or leave this "
                         "table.", count, name=await self.people.name_of(user_id))
        return None
