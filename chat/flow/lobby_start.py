"""Matches started from their set-up: a lobby shown and its names, a full table started
(:meth:`LobbyStarts.start`), a rematch of a finished match (the seats rotated, each kept until
its player presses Rematch too), and idle set-ups closed.

The set-up itself (/new, the lobby's buttons and commands) is :mod:`chat.flow.lobbies`, built
on this: it changes a lobby's state, this turns a state into a match, or closes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chat.flow.base import Actor
from chat.flow.caps import Caps
from chat.flow.engines import ENGINE_DUEL_TIMER, Engines
from chat.flow.lobby_state import state_of
from chat.flow.parts import HoldsSharedParts, SharedParts
from chat.flow.views import codec
from chat.flow.views.lobby_view import NameOf, closed_lobby, show_lobby, started_text
from chat.i18n import Tr
from chat.lobby_model import LobbySeat, LobbyState
from chat.model import LEVEL_CODES, LEVEL_NAMES
from chat.notices import Notice, ShowLobby
from chat.outcomes import Outcome
from storage import (
    ActiveMatchExists,
    LobbyExists,
    LobbyRow,
    LobbyStatus,
    MatchRow,
    MatchStatus,
    SeatSpec,
    is_engine_user,
)


class LobbyStarts(HoldsSharedParts):
    def __init__(self, parts: SharedParts, caps: Caps, *, bot_username: str,
                 clock: Callable[[], float]) -> None:
        super().__init__(parts)
        self.caps = caps
        self.bot_username = bot_username
        self.clock = clock
        self._lobbies_checked = 0.0
        #: Outside engines (``/add @NAME``), when the bot serves the engine protocol.
        self.engines: Engines | None = None

    async def show(self, lobby: LobbyRow, state: LobbyState, tr: Tr, *,
                   repost: bool = False) -> ShowLobby:
        engines: list[str] = []
        if self.engines is not None and state.menu == "add" and not state.private:
            engines = await self.engines.offered(lobby.creator_id)
        return show_lobby(lobby, state, tr, await self.names(state), self.bot_username,
                          repost=repost, engines=engines)

    async def names(self, state: LobbyState) -> NameOf:
        """The names a lobby's view shows, read before it is drawn."""
        return await self.people.names_of(
            [s.user_id for s in state.seats if s.user_id is not None]
            + list(state.waiting) + list(state.invited))

    def deep_link(self, lobby_id: int, state: LobbyState) -> str:
        """The invitation link: the lobby id plus its secret key (never the id alone)."""
        return codec.join_link(self.bot_username, lobby_id, state.invite_key)

    async def _save(self, lobby: LobbyRow, update_id: int | None, *,
                    state: dict[str, Any] | None = None,
                    status: LobbyStatus | None = None) -> LobbyRow:
        """Store a set-up change, with the update that made it (see :meth:`lobby_action`)."""
        return await self.store.update_lobby(lobby.lobby_id, state=state, status=status,
                                             update_id=update_id)

    async def start(self, lobby: LobbyRow, state: LobbyState, actor: Actor, tr: Tr,
                    group_tr: Tr) -> Outcome:
        """Start the match if every seat is taken and claimed; hold the chat's lock."""
        if not state.full:
            missing = state.table.players - len(state.seats)
            return Outcome(tr.n_("{n} seat is still free.", "{n} seats are still free.", missing))
        if state.seat_of(actor.user_id) is None and actor.user_id != lobby.creator_id:
            return Outcome(tr._("Only seated players can start the match."))
        if state.waiting:
            # Start pressed before everyone pressed Rematch: their seats are freed.
            state.seats = [s for s in state.seats if s.user_id not in state.waiting]
            state.waiting = []
            lobby = await self.store.update_lobby(lobby.lobby_id, state=state.to_json())
            return Outcome(tr._("Seats nobody claimed are free now: Join, or add a computer."),
                           [await self.show(lobby, state, group_tr)])
        refusal = await self.caps.refusal(lobby.chat_id, [s.user_id for s in state.seats
                                                          if s.user_id is not None],
                                          actor.user_id, tr)
        if refusal is None and self.engines is not None:
            refusal = await self.engines.start_refusal(
                [s.user_id for s in state.seats if s.user_id is not None], tr)
        if refusal is not None:
            return Outcome(refusal)
        specs = [SeatSpec.human(s.user_id) if s.kind == "human" and s.user_id is not None
                 else SeatSpec.computer(LEVEL_CODES[s.level or "normal"]) for s in state.seats]
        try:
            stored = await self.store.create_match(lobby.chat_id, state.settings(), specs,
                                                   thread_id=lobby.thread_id,
                                                   lobby_id=lobby.lobby_id)
        except ActiveMatchExists:
            return Outcome(tr._("A match is already being played here: /board shows it, "
                                "/cancel ends it."))
        self.games.keep(stored)
        timer = state.timer
        if timer is None and any(is_engine_user(s.user_id) for s in state.seats):
            timer = ENGINE_DUEL_TIMER  # an engine never makes the table wait unbounded
        await self.deadlines.start(stored.match_id, timer)
        await self.people.remember_title(lobby.chat_id, state.title)
        notices: list[Notice] = [closed_lobby(
            lobby, started_text(state, group_tr, await self.names(state)))]
        notices += await self.broadcast.started(stored)
        return Outcome(tr._("The match has started."), notices)

    async def rematch(self, row: MatchRow, actor: Actor) -> Outcome:
        """The same table and settings with the seats rotated by one. Every player's seat is
        kept for them until they press Rematch too; the last press starts the match."""
        tr = await self.people.user_tr(actor.user_id)
        if row.status is MatchStatus.ACTIVE:
            return Outcome(tr._("This match is not over yet."))
        if row.seat_of(actor.user_id) is None:
            return Outcome(tr._("You are not playing in this match."))
        group_tr = await self.people.chat_tr(row.chat_id)
        async with self.locks.hold(row.chat_id, row.thread_id):
            if await self.store.active_match(row.chat_id, row.thread_id):
                return Outcome(tr._("A match is already being played here: /board shows it, "
                                "/cancel ends it."))
            lobby = await self.store.open_lobby(row.chat_id, row.thread_id)
            if lobby is not None:
                state = state_of(lobby)
                if state.rematch_of != row.match_id:
                    return Outcome(tr._("A new match is being set up here already."),
                                   [await self.show(lobby, state, group_tr, repost=True)])
                if actor.user_id not in state.waiting:
                    return Outcome(tr._("Your seat is ready: waiting for the others."))
                state.waiting.remove(actor.user_id)
            else:
                old = await self.store.lobby_of_match(row.match_id)
                state = state_of(old) if old else LobbyState(private=row.chat_id > 0)
                seats = [LobbySeat("human", s.user_id) if s.user_id is not None
                         else LobbySeat("computer",
                                        level=LEVEL_NAMES.get(s.level or 2, "normal"))
                         for s in row.seats]
                state.seats = seats[1:] + seats[:1]
                state.invited = []
                state.menu = ""
                state.rematch_of = row.match_id
                state.waiting = [s.user_id for s in row.seats  # engines never press
                                 if s.user_id is not None and s.user_id != actor.user_id
                                 and not is_engine_user(s.user_id)]
                group_tr = await self.people.chat_tr(row.chat_id, state.language)
                try:
                    lobby = await self.store.create_lobby(row.chat_id, actor.user_id,
                                                          state.to_json(),
                                                          thread_id=row.thread_id)
                except LobbyExists:
                    return Outcome(tr._("A new match is being set up here already."))
            if not state.waiting:
                return await self.start(lobby, state, actor, tr, group_tr)
            lobby = await self.store.update_lobby(lobby.lobby_id, state=state.to_json())
            return Outcome(tr._("Your seat is ready: waiting for the others."),
                           [await self.show(lobby, state, group_tr,
                                      repost=lobby.message_id is None)])

    async def expire(self, older_than: float) -> list[Notice]:
        """Close set-ups nobody touched for ``older_than`` seconds, saying so in the chat."""
        notices: list[Notice] = []
        now = self.clock()
        if now - self._lobbies_checked < min(60.0, older_than / 10):
            return notices
        self._lobbies_checked = now
        for lobby in await self.store.open_lobbies():
            if lobby.updated_at.timestamp() > now - older_than:
                continue
            await self.store.update_lobby(lobby.lobby_id, status=LobbyStatus.CLOSED)
            tr = await self.people.chat_tr(lobby.chat_id)
            minutes = max(1, round(older_than / 60))
            notices.append(closed_lobby(lobby, tr.n_(
                "Nobody started this match for {n} minute: the set-up is closed. /new "
                "starts again.",
                "Nobody started this match for {n} minutes: the set-up is closed. /new "
                "starts again.", minutes)))
        return notices
