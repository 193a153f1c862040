"""Matches that end before their last move, or go on without a player: resign, cancel, a
seat handed to the computer (left, kicked, resigned in a trio), nobody left, the bot removed
from the group."""

from __future__ import annotations

import logging

from chat.describe import together
from chat.flow.base import Actor, Locks
from chat.flow.deadlines import HANDOVER_AFTER, Deadlines
from chat.flow.games import Games
from chat.flow.people import People
from chat.flow.views.messages import Reader, chat_line, closing, resigned
from chat.notices import ComputerTurn, DropPanel, Notice
from chat.outcomes import Outcome
from krendzu import match_outcome
from storage import DuplicateUpdate, LobbyStatus, MatchStatus, NotFound, Store, StoredMatch

log = logging.getLogger(__name__)


class Endings:
    def __init__(self, store: Store, locks: Locks, people: People, games: Games,
                 deadlines: Deadlines) -> None:
        self.store = store
        self.locks = locks
        self.people = people
        self.games = games
        self.deadlines = deadlines

    async def resign(self, stored: StoredMatch, actor: Actor, *,
                     update_id: int | None = None) -> Outcome:
        """The player gives up: a trio in a group plays on with the computer in the seat
        (once per ``update_id``, as ``/leave``), any other match ends."""
        tr = await self.people.chat_tr(stored.row.chat_id)
        seat = stored.row.seat_of(actor.user_id)
        if seat is None:
            return Outcome(tr._("You are not playing in this match."))
        names = await self.people.seat_names(stored.row, tr)
        if stored.row.table.players == 3 and stored.row.chat_id < 0:
            # A trio plays on: the computer takes the seat (the player ranks last).
            return Outcome(None, await self.hand_over(stored, seat, tr._(
                "{name} resigned: the computer plays their seat to the end, and they rank "
                "last.", name=names[seat]), resigned=True, update_id=update_id))
        async with self.locks.hold(stored.row.chat_id, stored.row.thread_id):
            stored = await self.games.load(stored.match_id)  # the final board: as it is now
            if not await self.store.concede_match(stored.match_id, seat):
                return Outcome(tr._("This match is over."))
            self.games.forget(stored.match_id)
            await self.games.rate(await self.store.get_match(stored.match_id), stored.game)
        outcome = match_outcome(stored.game, conceded=seat)
        winners = together(tr, [names[i] for i in outcome.winners])
        text = tr._("{name} resigned: the match goes to {winners}.", name=names[seat],
                    winners=winners)
        # Told as any ending is: the final board, the summary, the Rematch button.
        players: dict[int, Reader] = {}
        for person in stored.row.seats:
            if person.user_id is not None:
                utr = await self.people.user_tr(person.user_id)
                players[person.user_id] = Reader(utr, await self.people.seat_names(
                    stored.row, utr))
        return Outcome(None, resigned(stored, outcome, text, Reader(tr, names), players,
                                      await self.people.title_of(stored.row.chat_id)))

    async def cancel(self, stored: StoredMatch, actor: Actor, is_admin: bool) -> Outcome:
        tr = await self.people.chat_tr(stored.row.chat_id)
        lobby = await self.store.lobby_of_match(stored.match_id)
        creator = lobby is not None and lobby.creator_id == actor.user_id
        if not (creator or is_admin or stored.row.chat_id > 0):
            return Outcome(tr._("Only the creator or a chat admin can cancel."))
        async with self.locks.hold(stored.row.chat_id, stored.row.thread_id):
            if not await self.store.abandon_match(stored.match_id):
                return Outcome(tr._("This match is over."))
            self.games.forget(stored.match_id)
        return Outcome(None, closing(stored, tr._("The match was cancelled.")))

    async def end_unattended(self, stored: StoredMatch) -> list[Notice]:
        """Cancel the match if nobody plays it any more, telling its chat (in the chat's
        language) and each player; ``[]`` if someone still plays or it ended already. Hold
        the chat's lock."""
        if await self.deadlines.someone_present(stored):
            return []
        if not await self.store.abandon_match(stored.match_id):
            return []
        self.games.forget(stored.match_id)
        log.info("match %s: nobody plays it any more; cancelled", stored.match_id)
        tr = await self.people.chat_tr(stored.row.chat_id)
        return closing(stored, tr._(
            "Nobody plays at this table any more (everyone left or ran out of time): the "
            "match is cancelled. /new sets up a new one."))

    async def hand_over(self, stored: StoredMatch, seat: int, line: str, *,
                        resigned: bool = False,
                        update_id: int | None = None) -> list[Notice]:
        """The computer plays the seat from now on (the player left, resigned in a trio or
        was kicked); ``line`` tells the chat. The player may still come back with /back.

        ``update_id`` (``/leave``, ``/kick``) is stored with the stand-in, as a move stores
        its own: the same update run again (redelivered after a crash before it was marked
        handled) changes nothing and tells nothing, even if the player came back since."""
        row = stored.row
        async with self.locks.hold(row.chat_id, row.thread_id):
            fresh = await self.games.load(stored.match_id)
            if fresh.row.status is not MatchStatus.ACTIVE:
                return []
            try:
                await self.deadlines.set_stand_in(stored.match_id, seat, HANDOVER_AFTER, True,
                                                  resigned=resigned, update_id=update_id)
            except DuplicateUpdate:
                log.info("update %s handed seat %d of match %d over already", update_id,
                         seat, stored.match_id)
                return []
            if not resigned:
                # Left or kicked, and nobody else plays: no match for computers alone. (The
                # last player's resignation in a trio is a result: the computers finish.)
                ended = await self.end_unattended(fresh)
                if ended:
                    return ended
            await self.deadlines.after_moves(fresh)
            notices: list[Notice] = chat_line(row, line)
            user_id = row.seats[seat].user_id
            if user_id is not None:
                notices.append(DropPanel(stored.match_id, user_id))
            if fresh.game.current_player == seat and not fresh.game.is_over:
                notices.append(ComputerTurn(stored.match_id, fresh.next_seq))
            return notices

    async def close_chat(self, chat_id: int) -> int:
        """The bot was removed from a group: close every running match and open set-up of
        it, in every forum topic (nothing can be shown there any more). Returns how many."""
        closed = 0
        for row in await self.store.active_matches_of_chat(chat_id):
            async with self.locks.hold(row.chat_id, row.thread_id):
                if await self.store.abandon_match(row.match_id):
                    closed += 1
                self.games.forget(row.match_id)
        for lobby in await self.store.open_lobbies_of_chat(chat_id):
            async with self.locks.hold(lobby.chat_id, lobby.thread_id):
                try:
                    await self.store.update_lobby(lobby.lobby_id, status=LobbyStatus.CLOSED)
                except NotFound:  # started or closed meanwhile
                    continue
                closed += 1
        return closed
