"""The flow's doors to setting a game up, apart from :mod:`chat.flow.facade` so that the
facade stays small: :class:`SetUpDoors`, a base of :class:`~chat.flow.facade.Flow`, holds
the handlers' calls about lobbies, join links, outside engines, the "Play now" pool and the
arenas' and leagues' posts. Each only delegates to the module named in its docstring; the
typed /play path (people, matches) stays in the facade itself."""

from __future__ import annotations

from collections.abc import Sequence

from chat.flow.arenas import Arenas
from chat.flow.base import Actor
from chat.flow.engines import EngineAnswer, Engines
from chat.flow.invites import Invites
from chat.flow.leagues import Leagues
from chat.flow.lobbies import Lobbies
from chat.flow.people import People
from chat.flow.pool import Pool
from chat.flow.reactions import Reactions
from chat.flow.views.reactions import OFF_OP, ON_OP
from chat.flow.watch import Watch
from chat.i18n import Tr
from chat.lobby_model import LobbyState
from chat.notices import Send
from chat.outcomes import Outcome
from storage import MatchRow, Store


class SetUpDoors:
    """Flow's calls that set a game up; the rooms they delegate to are built by
    :meth:`Flow.__init__ <chat.flow.facade.Flow>`."""

    store: Store
    people: People
    lobbies: Lobbies
    invites: Invites
    engines: Engines
    pool: Pool
    arenas: Arenas
    leagues: Leagues
    watch: Watch
    reactions: Reactions

    # "Play now": chat.flow.pool ----------------------------------------------------------

    async def playnow(self, actor: Actor, args: Sequence[str]) -> Outcome:
        """``/playnow [duel]``: join the pool, or leave it (chat.flow.pool)."""
        return await self.pool.toggle(actor, args)

    async def pool_press(self, actor: Actor, op: str) -> Outcome:
        """A pool button: join (``""``), ``leave``, ``c:<level>`` (the computer offered),
        ``w:<match>`` (a pool match's watch link turned off: chat.flow.watch),
        ``reactions:off`` / ``reactions:on``."""
        if op.startswith("w:"):
            return await self.watch.turn_off(actor, op[2:])
        if op in (OFF_OP, ON_OP):
            return await self.reactions.switch(actor, op == ON_OP)
        if op == "leave":
            return await self.pool.leave(actor)
        if op.startswith("c:"):
            return await self.pool.accept_computer(actor, op[2:])
        return await self.pool.toggle(actor, [])

    async def arena_press(self, actor: Actor, op: str, arena_id: int, *, is_admin: bool) -> Outcome:
        """An arena's or a league's post's button (chat.flow.leagues.Leagues.press)."""
        return await self.leagues.press(self.arenas, op, arena_id, actor, is_admin=is_admin)

    # Lobbies: chat.flow.lobbies, chat.flow.invites ----------------------------------------

    async def sets_up(self, chat_id: int, thread_id: int | None, user_id: int) -> bool:
        return await self.lobbies.sets_up(chat_id, thread_id, user_id)

    async def is_set_up(self, chat_id: int, thread_id: int | None) -> bool:
        """Whether a match is being set up in this chat (or forum topic)."""
        return await self.store.open_lobby(chat_id, thread_id) is not None

    async def created(self, match_id: int, user_id: int) -> bool:
        return await self.lobbies.created(match_id, user_id)

    async def set_tidy(self, chat_id: int, on: bool) -> None:
        """``/settings tidy=on|off`` (delivery keeps its own copy of the flag)."""
        await self.people.set_tidy(chat_id, on)

    async def is_tidy(self, chat_id: int) -> bool:
        """The chat keeps only its newest board post (``/settings tidy=on``)."""
        return await self.people.is_tidy(chat_id)

    async def new_lobby(self, chat_id: int, thread_id: int | None, actor: Actor,
                        args: list[str], *, title: str = "") -> Outcome:
        return await self.lobbies.new_lobby(chat_id, thread_id, actor, args, title=title)

    async def lobby_action(self, chat_id: int, thread_id: int | None, actor: Actor, op: str,
                           *, lobby_id: int | None = None, is_admin: bool = False,
                           update_id: int | None = None) -> Outcome:
        return await self.lobbies.lobby_action(chat_id, thread_id, actor, op,
                                               lobby_id=lobby_id, is_admin=is_admin,
                                               update_id=update_id)

    async def rematch(self, row: MatchRow, actor: Actor) -> Outcome:
        return await self.lobbies.rematch(row, actor)

    def deep_link(self, lobby_id: int, state: LobbyState) -> str:
        return self.lobbies.deep_link(lobby_id, state)

    async def join_by_link(self, actor: Actor, payload: str) -> Outcome:
        return await self.invites.join_by_link(actor, payload)

    async def seat_invited(self, actor: Actor) -> list[Outcome]:
        return await self.invites.seat_invited(actor)

    async def private_chat_closed(self, chat_id: int, thread_id: int | None, actor: Actor,
                                  command: str, tr: Tr) -> Send | None:
        return await self.invites.private_chat_closed(chat_id, thread_id, actor, command, tr)

    # Outside engines: chat.flow.engines ---------------------------------------------------

    async def engine_command(self, actor: Actor, args: list[str], *,
                             private: bool) -> EngineAnswer:
        return await self.engines.command(actor, args, private=private)
