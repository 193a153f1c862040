"""Seats taken from the private chat: a person who pressed Join before the bot could write
to them opens the invitation link (``/start j<lobby>_<key>``) or just presses Start, and is
seated where they were invited. Also the line that sends someone there from a group: a
command answered privately, typed by a person the bot cannot write to yet; the group's line
when a player cannot be written to; and, where panels open in the group (issue 42), the
admins' one notice that the bot's administrator rights would push each panel unasked."""

from __future__ import annotations

import hmac

from chat.flow.base import Actor
from chat.flow.lobbies import Lobbies
from chat.flow.lobby_state import state_of
from chat.flow.people import People
from chat.flow.views import codec
from chat.i18n import Tr
from chat.model import Button
from chat.notices import Send
from chat.outcomes import Outcome
from storage import LobbyRow, LobbyStatus, NotFound, Store


class Invites:
    def __init__(self, store: Store, people: People, lobbies: Lobbies) -> None:
        self.store = store
        self.people = people
        self.lobbies = lobbies

    async def join_by_link(self, actor: Actor, payload: str) -> Outcome:
        """``/start j<lobby>_<key>`` in the private chat: the player can be written to now;
        seat them, if they pressed Join in that lobby (or it invited them). Any other payload
        (guessed, forwarded, stale) gets the same neutral answer, naming no group."""
        tr = await self.people.see_user(actor, private=True)
        refused = Outcome(tr._("This invitation link is not valid. Press Join in the group "
                               "again."))
        parsed = codec.parse_join_payload(payload)
        if parsed is None:
            return refused
        try:
            lobby = await self.store.get_lobby(parsed[0])
        except NotFound:
            return refused
        state = state_of(lobby)
        if (not hmac.compare_digest(state.invite_key, parsed[1])
                or actor.user_id not in (*state.invited, *state.waiting)):
            return refused
        return await self._seat_from_private(actor, lobby, tr)

    async def seat_invited(self, actor: Actor) -> list[Outcome]:
        """A plain ``/start`` from someone who pressed Join before they could be written to:
        seat them at every open table that waits for them."""
        tr = await self.people.see_user(actor, private=True)
        outcomes = []
        for lobby in await self.store.open_lobbies():
            if actor.user_id in state_of(lobby).invited:
                outcomes.append(await self._seat_from_private(actor, lobby, tr))
        return outcomes

    async def private_chat_closed(self, chat_id: int, thread_id: int | None, actor: Actor,
                                  command: str, tr: Tr) -> Send | None:
        """``command`` typed in a group is answered in the private chat: ``None`` if the
        bot may write there, else the group's one line (in ``tr``, the group's language)
        with a button that opens the private chat with Start. Without it the answer would
        meet Telegram's 403 and the person would hear nothing. The line names no card."""
        if chat_id > 0 or not await self.people.was_unreachable(actor.user_id):
            return None
        link = codec.hello_link(self.lobbies.bot_username)
        return Send(chat_id, tr._(
            "{name}, I answer {command} in our private chat, and I cannot write to you there "
            "yet: tap the button below, then Start.", name=actor.name, command=command),
            thread_id=thread_id, group=True,
            keyboard=[[Button(tr._("Open the private chat"), url=link)]])

    async def _seat_from_private(self, actor: Actor, lobby: LobbyRow, tr: Tr) -> Outcome:
        if lobby.status is not LobbyStatus.OPEN:
            return Outcome(tr._("This match has already started or was cancelled."))
        outcome = await self.lobbies.lobby_action(lobby.chat_id, lobby.thread_id, actor, "join",
                                                  lobby_id=lobby.lobby_id)
        state = state_of(await self.store.get_lobby(lobby.lobby_id))
        if state.seat_of(actor.user_id) is not None:
            outcome.reply = tr._("You are seated in “{title}”. Your cards will come here.",
                                 title=state.title or "?")
            outcome.alert = True  # said even though the lobby is updated too
        return outcome

    async def unreachable(self, match_id: int, user_id: int, bot_username: str) -> list[Send]:
        """The group's line when a seated player's private chat refuses the bot."""
        row = await self.store.get_match(match_id)
        if row.chat_id > 0:
            return []
        tr = await self.people.chat_tr(row.chat_id)
        name = await self.people.name_of(user_id)
        return [Send(row.chat_id, tr._(
            "I cannot write to {name} privately, so their cards cannot reach them. "
            "{name}, please open my private chat and press Start: your seat is kept.",
            name=name) + f"\nhttps://t.me/{bot_username}", thread_id=row.thread_id,
            group=True)]

    async def bot_rights(self, chat_id: int, admin: bool, *, tell: bool = True) -> list[Send]:
        """Telegram showed whether the bot administers the group (its membership update, or
        a push refused). When it turns out not to, in a group whose panels open there, its
        admins are told once, in plain words, what the rights would bring (``tell``; a bot
        just added says it in its greeting instead)."""
        if chat_id > 0 or not await self.people.set_bot_admin(chat_id, admin) or admin \
                or not tell:
            return []
        if not await self.people.panels_in_group(chat_id):
            return []
        tr = await self.people.chat_tr(chat_id)
        return [Send(chat_id, tr._(
            "Admins: each player opens their hand here with the 🃏 button under the board. "
            "Make me an administrator of this group and I will open it for them on their "
            "turn, with no press needed (/settings panels=private sends hands to the "
            "private chat instead)."), group=True)]
