"""Matches being set up: /new and the lobby's buttons and commands (join, leave, add a
computer, settings, cancel, start). Starting the match, a rematch and closing idle set-ups
are :mod:`chat.flow.lobby_start`'s, which this builds on.

The lobby's state is stored as JSON (:class:`~chat.lobby_model.LobbyState`), changed only under
the chat's lock; its message is redrawn from it by :mod:`chat.flow.views.lobby_view`.
"""

from __future__ import annotations

from chat.describe import level_label
from chat.flow.base import Actor
from chat.flow.lobby_start import LobbyStarts
from chat.flow.lobby_state import choose, cycle, fill_computers, fit_seats, seat_person, state_of
from chat.flow.views import codec
from chat.flow.views.lobby_view import closed_lobby
from chat.i18n import Tr
from chat.lobby_model import DEFAULT_GROUP_TIMER, LobbySeat, LobbyState, apply_new_args
from chat.model import LEVELS
from chat.outcomes import Outcome
from krendzu import SettingsError
from storage import (
    DuplicateUpdate,
    LobbyExists,
    LobbyRow,
    LobbyStatus,
    NotFound,
    is_engine_user,
)


class Lobbies(LobbyStarts):
    """Matches being set up: /new, the lobby's buttons and commands (the start and what
    follows it: :class:`~chat.flow.lobby_start.LobbyStarts`)."""

    async def created(self, match_id: int, user_id: int) -> bool:
        """Whether the user set up this match (the creator may /kick)."""
        lobby = await self.store.lobby_of_match(match_id)
        return lobby is not None and lobby.creator_id == user_id

    async def sets_up(self, chat_id: int, thread_id: int | None, user_id: int) -> bool:
        """Whether the user created the match being set up in this chat (or forum topic)."""
        lobby = await self.store.open_lobby(chat_id, thread_id)
        return lobby is not None and lobby.creator_id == user_id

    async def new_lobby(self, chat_id: int, thread_id: int | None, actor: Actor,
                        args: list[str], *, title: str = "") -> Outcome:
        private = chat_id > 0
        tr = await self.people.see_user(actor, private=private)
        group_tr = await self.people.chat_tr(chat_id, tr.language)
        async with self.locks.hold(chat_id, thread_id):
            if await self.store.active_match(chat_id, thread_id):
                return Outcome(group_tr._("A match is already being played here: /board shows "
                                          "it, /cancel ends it."))
            lobby = await self.store.open_lobby(chat_id, thread_id)
            if lobby is not None:
                return Outcome(notices=[await self.show(lobby, state_of(lobby), group_tr,
                                                  repost=True)])
            refusal = await self.caps.refusal(chat_id, [actor.user_id], actor.user_id, group_tr)
            if refusal is not None:
                return Outcome(refusal)
            known = None if private else await self.store.get_chat(chat_id)
            in_group = await self.people.panels_in_group(chat_id)  # issue 42: no Start needed
            if not private and (known is None or known.language is None):
                # The group speaks its first creator's language until /lang says otherwise.
                await self.people.set_chat_language(chat_id, group_tr.language)
            state = LobbyState(language=group_tr.language, private=private, title=title,
                               timer=None if private else DEFAULT_GROUP_TIMER)
            apply_new_args(state, args, private=private)
            user = await self.people.user_row(actor.user_id)
            if private or (user and user.can_write_privately) or in_group:
                state.seats.append(LobbySeat("human", actor.user_id))
            else:
                # Never started the bot: seated like any joiner, through the link that opens
                # the private chat (the lobby shows it), so the deal never meets a 403.
                state.invited.append(actor.user_id)
            if private:
                fill_computers(state)
            try:
                lobby = await self.store.create_lobby(chat_id, actor.user_id, state.to_json(),
                                                      thread_id=thread_id)
            except LobbyExists:
                return Outcome(group_tr._("A new match is being set up here already."))
            if state.invited:
                lobby, _ = await self._seat_late_starter(lobby, state, actor.user_id)
            return Outcome(notices=[await self.show(lobby, state, group_tr)])

    async def _seat_late_starter(self, lobby: LobbyRow, state: LobbyState,
                                 user_id: int) -> tuple[LobbyRow, bool]:
        """Seat an invited person whose /start, run meanwhile elsewhere, found no table (it
        read before this invitation was stored, as this read before it): stored, then read."""
        if user_id not in state.invited or not await self.people.started_bot(user_id):
            return lobby, False
        seat_person(state, user_id)
        return await self.store.update_lobby(lobby.lobby_id, state=state.to_json()), True

    async def lobby_action(self, chat_id: int, thread_id: int | None, actor: Actor, op: str,
                           *, lobby_id: int | None = None, is_admin: bool = False,
                           update_id: int | None = None) -> Outcome:
        """join, leave, add:<level>, go, cancel, level:<l>, menu:<view>,
        set:<option>:<value>, and the old ↻ ops table, tours, deal, exchange, timer (the
        ops are listed in :mod:`chat.flow.views.codec`). The change is stored with
        ``update_id`` in the ledger, in one transaction: an update run again (a webhook
        worker killed before it answered) changes nothing twice (``/add``: one computer)."""
        tr = await self.people.see_user(actor, private=chat_id > 0)
        async with self.locks.hold(chat_id, thread_id):
            try:
                lobby = await (self.store.get_lobby(lobby_id) if lobby_id is not None
                               else self.store.open_lobby(chat_id, thread_id))
            except NotFound:  # a forged (or long forgotten) button: the same answer
                lobby = None
            if lobby is None or lobby.chat_id != chat_id:
                return Outcome(tr._("There is no match being set up here. Start one with /new."))
            if lobby.status is not LobbyStatus.OPEN:
                return Outcome(tr._("This match has already started or was cancelled."))
            state = state_of(lobby)
            group_tr = await self.people.chat_tr(chat_id, state.language)
            try:
                return await self._op(lobby, state, actor, op, tr, group_tr, is_admin,
                                      update_id)
            except DuplicateUpdate:  # applied once already: nothing more to do or say
                return Outcome(None)

    async def _op(self, lobby: LobbyRow, state: LobbyState, actor: Actor, op: str,
                  tr: Tr, group_tr: Tr, is_admin: bool, update_id: int | None) -> Outcome:
        creator = actor.user_id == lobby.creator_id
        seated = state.seat_of(actor.user_id) is not None
        reply: str | None = None
        if op == "join":
            if seated and actor.user_id in state.waiting:
                state.waiting.remove(actor.user_id)
                if not state.waiting and state.full:
                    return await self.start(lobby, state, actor, tr, group_tr)
                reply = tr._("Your seat is ready: waiting for the others.")
                lobby = await self._save(lobby, update_id, state=state.to_json())
                return Outcome(reply, [await self.show(lobby, state, group_tr)])
            if seated:
                return Outcome(tr._("You are already seated."))
            if state.full:
                return Outcome(tr._("All seats are taken."))
            refusal = await self.caps.refusal(None, [actor.user_id], actor.user_id, tr)
            if refusal is not None:
                return Outcome(refusal)
            user = await self.people.user_row(actor.user_id)
            if not ((user and user.can_write_privately) or await self.people.panels_in_group(
                    lobby.chat_id)):
                if actor.user_id not in state.invited:
                    state.invited.append(actor.user_id)
                lobby = await self._save(lobby, update_id, state=state.to_json())
                lobby, seated = await self._seat_late_starter(lobby, state, actor.user_id)
                if seated:
                    shown = await self.show(lobby, state, group_tr)
                    return Outcome(tr._("You are seated."), [shown])
                link = self.deep_link(lobby.lobby_id, state)
                return Outcome(
                    tr._("First open my private chat and press Start — your hand will come "
                         "there: {link}", link=link),
                    [await self.show(lobby, state, group_tr)], alert=True, url=link,
                )
            seat_person(state, actor.user_id)
            reply = tr._("You are seated.")
        elif op == "leave":
            index = state.seat_of(actor.user_id)
            if index is None:
                return Outcome(tr._("You are not seated."))
            del state.seats[index]
            state.invited = [u for u in state.invited if u != actor.user_id]
            state.waiting = [u for u in state.waiting if u != actor.user_id]
            reply = tr._("You left the table.")
            if not any(s.kind == "human" and not is_engine_user(s.user_id)
                       for s in state.seats):
                await self._save(lobby, update_id, state=state.to_json(),
                                              status=LobbyStatus.CLOSED)
                return Outcome(reply, [closed_lobby(lobby, group_tr._(
                    "The table is empty: set-up cancelled. /new starts again."))])
        elif op.startswith("add:@") and self.engines is not None:
            if not (seated or creator):
                return Outcome(tr._("Only seated players can add computer players."))
            refusal = await self.engines.seat(state, actor, op[5:], tr)
            if refusal is not None:
                return Outcome(refusal)
            if state.full:
                state.menu = ""
            reply = tr._("{name} joined.", name=await self.people.name_of(state.seats[-1].user_id
                                                                          or 0))
        elif op.startswith("add:") or op == "add":
            level = op[4:] or "normal"
            if level not in LEVELS:
                return Outcome(tr._("Unknown level “{value}”: use easy, normal or hard.",
                                    value=level[:20]))
            if state.full:
                return Outcome(tr._("All seats are taken."))
            if not (seated or creator):
                return Outcome(tr._("Only seated players can add computer players."))
            state.seats.append(LobbySeat("computer", level=level))
            if state.full:
                state.menu = ""
            reply = tr._("{level} joined.", level=level_label(tr, level))
        elif (menu := codec.menu_of(op)) is not None:
            if menu == codec.MENU_SETTINGS and not creator:
                return Outcome(tr._("Only the creator can change the settings."))
            if menu == codec.MENU_ADD:
                if state.full:
                    return Outcome(tr._("All seats are taken."))
                if not (seated or creator):
                    return Outcome(tr._("Only seated players can add computer players."))
            # Back is anyone's: the creator may leave the sub-menu open and walk away.
            state.menu = "" if menu == codec.MENU_MAIN else menu
        elif (setting := codec.setting_of(op)) is not None:
            if not creator:
                return Outcome(tr._("Only the creator can change the settings."))
            option, value = setting
            if not value:  # the row's name
                return Outcome(tr._("Press one of the values in this row to choose it."))
            try:
                choose(state, option, value)
            except SettingsError:
                return Outcome(tr._("This choice is not offered: press one of the buttons."))
            fit_seats(state)
        elif op in ("table", "tours", "deal", "exchange", "timer") or op.startswith("level:"):
            if not creator:
                return Outcome(tr._("Only the creator can change the settings."))
            try:
                cycle(state, op)
            except SettingsError:
                return Outcome(tr._("This button is not valid any more."))
            fit_seats(state)
        elif op == "cancel":
            if not (creator or is_admin):
                return Outcome(tr._("Only the creator or a chat admin can cancel."))
            await self._save(lobby, update_id, status=LobbyStatus.CLOSED)
            return Outcome(tr._("Cancelled."), [closed_lobby(
                lobby, group_tr._("Match set-up cancelled. /new starts again."))])
        elif op == "go":
            return await self.start(lobby, state, actor, tr, group_tr)
        else:
            return Outcome(tr._("This button is not valid any more."))
        lobby = await self._save(lobby, update_id, state=state.to_json())
        return Outcome(reply, [await self.show(lobby, state, group_tr)])
