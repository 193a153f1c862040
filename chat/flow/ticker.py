"""The ticker that drives the turn deadlines (:mod:`chat.flow.deadlines`): reminders and
timeouts that are due, a player's return (/back), and idle set-ups closed.

At a deadline the normal computer player makes the turn for the seat and the group is told;
after two timeouts in a row the computer keeps the seat until the player comes back. When
no seat is played by a present person any more (everyone left, was kicked or timed out
twice), the match is cancelled: computers playing for nobody would only take the workers
every other chat's computers, hints and timeouts need. The application's job queue calls
:meth:`Ticker.tick` and :meth:`Ticker.expire_lobbies` every few seconds.
"""

from __future__ import annotations

import logging

from chat.flow.announce import in_group as in_group_notices
from chat.flow.announce import turn_button
from chat.flow.base import Actor
from chat.flow.deadlines import HANDOVER_AFTER, STAND_IN_LEVEL
from chat.flow.endings import Endings
from chat.flow.lobbies import Lobbies
from chat.flow.matches import Matches
from chat.flow.parts import HoldsSharedParts, SharedParts
from chat.flow.views.messages import chat_line
from chat.flow.views.texts import clock_text
from chat.i18n import Tr
from chat.notices import BoardClock, Notice, Send
from chat.outcomes import Outcome
from krendzu import Action, Announce, Card
from krendzu.tour import ANNOUNCE
from storage import Door, MatchStatus, StoredMatch, is_detached_chat

log = logging.getLogger(__name__)


class Ticker(HoldsSharedParts):
    def __init__(self, parts: SharedParts, matches: Matches, endings: Endings,
                 lobbies: Lobbies) -> None:
        super().__init__(parts)
        self.matches = matches
        self.endings = endings
        self.lobbies = lobbies

    async def tick(self) -> list[Notice]:
        """Reminders and timeouts that are due now."""
        notices: list[Notice] = []
        now = self.deadlines.clock()
        for timer in await self.store.due_timers(now):
            try:
                if timer.deadline is not None and timer.deadline <= now:
                    notices += await self.timeout(timer.match_id, timer.seq)
                elif not timer.reminded:
                    notices += await self.remind(timer.match_id, timer.seq)
            except Exception:
                log.exception("match %s: the turn timer failed", timer.match_id)
        return notices

    async def expire_lobbies(self, older_than: float) -> list[Notice]:
        """Close set-ups nobody touched for ``older_than`` seconds, saying so in the chat."""
        return await self.lobbies.expire(older_than)

    async def _current(self, match_id: int, seq: int | None
                       ) -> tuple[StoredMatch, int, int] | None:
        """The match, seat and user whose deadline this is, if it still stands."""
        stored = await self.games.load(match_id)
        if stored.row.status is not MatchStatus.ACTIVE or stored.next_seq != seq:
            return None
        seat = stored.game.current_player
        user_id = stored.row.seats[seat].user_id
        if user_id is None:
            return None
        return stored, seat, user_id

    async def remind(self, match_id: int, seq: int | None) -> list[Notice]:
        row = await self.store.get_match(match_id)
        async with self.locks.hold(row.chat_id, row.thread_id):
            current = await self._current(match_id, seq)
            timer = await self.deadlines.timer(match_id)
            if current is None or timer is None or seq is None:
                await self.deadlines.reminded(match_id, seq or 0, None)
                return []
            if timer.reminded and timer.seq == seq:
                return []  # another process's reminder (a job run twice) came first
            stored, seat, user_id = current
            await self.deadlines.reminded(match_id, seq, timer)
            return await self._reminders(stored, seat, user_id)

    async def _reminders(self, stored: StoredMatch, seat: int, user_id: int) -> list[Notice]:
        """The clock refreshed where the player looks: a fresh panel at the bottom of their
        private chat (it notifies them, and says what happens at zero) and the clock line of
        the group's board post (one edit: within the group's flood limit)."""
        tr = await self.people.user_tr(user_id)
        names = await self.people.seat_names(stored.row, tr)
        shown = await self.games.shown(stored.match_id, user_id)
        # Mid-turn after a first card whose key named the second (stored with the move):
        # the fresh panel asks for that card's cell, as the one it follows.
        game = stored.game
        named = stored.moves[-1].by.then if game.tour.pending and stored.moves else None
        then = Card.parse(named) if named else None
        if then is not None and then not in game.observation(seat).tour.hand:
            then = None
        notices: list[Notice] = [await self.broadcast.panel(stored, seat, user_id, tr, names,
                                                            shown, reminder=True, card=then)]
        left = await self.deadlines.seconds_left(stored)
        row = stored.row
        in_group = await self.people.panels_in_group(row.chat_id)
        if in_group:  # issue 42: the fresh panel pushed in the group, or left to the button
            notices = in_group_notices(notices, row.chat_id, row.thread_id,
                                       push=await self.people.may_push(row.chat_id))
        if row.chat_id < 0 and left:
            group = await self.broadcast.reader(row, await self.people.chat_tr(row.chat_id))
            notices.append(BoardClock(stored.match_id, row.chat_id, clock_text(group.tr, left),
                                      turn_button(stored, group, self.broadcast.bot_username,
                                                  self.broadcast.app, in_group=in_group)))
        return notices

    async def timeout(self, match_id: int, seq: int | None, *,
                      illegal: bool = False) -> list[Notice]:
        """The deadline passed: the normal computer player makes the seat's turn.

        The turn is thought out without the chat's lock (urgent: a person is waiting), then
        made only if the person did not move meanwhile. A second timeout in a row hands the
        seat to the computer, or cancels the match if nobody else plays it any more.
        ``illegal``: not the clock but an outside engine's illegal moves (as many as
        :data:`chat.engines_api.ILLEGAL_LIMIT` in one turn) brought the stand-in early; it
        counts as a timeout all the same (the engine is as good as absent)."""
        row = await self.store.get_match(match_id)
        async with self.locks.hold(row.chat_id, row.thread_id):
            current = await self._current(match_id, seq)
            if current is None:
                stored = await self.games.load(match_id)
                await self.deadlines.after_moves(stored)
                return []
            stored, seat, user_id = current
            actions: list[Action] | None = None
            if stored.game.tour.phase == ANNOUNCE:
                actions = [Announce(0)]  # a timeout in the exchange means no exchange
            elif await self.deadlines.last_to_go(stored, seat):
                return await self._time_out(stored, seat, user_id, [], illegal=illegal)
            else:
                view = stored.game.observation(seat)
        if actions is None:
            actions = await self.matches.think(STAND_IN_LEVEL, view,
                                               f"{row.seed}:{seq}:timeout", urgent=True)
        async with self.locks.hold(row.chat_id, row.thread_id):
            current = await self._current(match_id, seq)
            if current is None or current[1] != seat:
                log.debug("match %s: the player moved before the stand-in's move %s was "
                          "stored; it is dropped", match_id, seq)
                stored = await self.games.load(match_id)
                await self.deadlines.after_moves(stored)
                return []
            stored, seat, user_id = current
            return await self._time_out(stored, seat, user_id, actions, illegal=illegal)

    async def _time_out(self, stored: StoredMatch, seat: int, user_id: int,
                        actions: list[Action], *, illegal: bool = False) -> list[Notice]:
        """Count the timeout, then make ``actions`` for the seat, or cancel the match if the
        seat was the last one a person played. Hold the chat's lock."""
        match_id = stored.match_id
        timeouts = await self.deadlines.timeouts(match_id, seat) + 1
        handover = timeouts >= HANDOVER_AFTER
        await self.deadlines.set_stand_in(match_id, seat, timeouts, handover)
        if handover:
            ended = await self.endings.end_unattended(stored)
            if ended:
                return ended
        if not actions:  # only when the match was to end, and another ended it first
            return []
        outcome = await self.matches.play_for_seat(stored, actions, Door.TIMER)
        group_tr = await self.people.chat_tr(stored.row.chat_id)
        return (await self._told(stored, user_id, handover, group_tr, illegal=illegal)
                + outcome.notices)

    async def _told(self, stored: StoredMatch, user_id: int, handover: bool, group_tr: Tr,
                    *, illegal: bool = False) -> list[Notice]:
        name = await self.people.name_of(user_id)

        def line(tr: Tr) -> str:
            said = (tr._("⛔ {name} sent only illegal moves: the computer moved for them.",
                         name=name) if illegal else
                    tr._("⏰ {name} ran out of time: the computer moved for them.",
                         name=name))
            if handover:
                said += " " + tr._("It keeps the seat until {name} is back (/back).",
                                   name=name)
            return said

        notices: list[Notice] = []
        if is_detached_chat(stored.row.chat_id):
            # A pool match has no group to tell: each of its players is told privately.
            for seat in stored.row.seats:
                if seat.user_id is not None:
                    tr = await self.people.user_tr(seat.user_id)
                    notices.append(Send(seat.user_id, line(tr), silent=True,
                                        match_id=stored.match_id))
        elif stored.row.chat_id < 0:
            notices.append(Send(stored.row.chat_id, line(group_tr),
                                thread_id=stored.row.thread_id, silent=True, group=True))
        return notices

    async def hand_over(self, stored: StoredMatch, seat: int, line: str, *,
                        resigned: bool = False,
                        update_id: int | None = None) -> list[Notice]:
        """The computer plays the seat from now on (the player left, resigned in a trio or
        was kicked); ``line`` tells the chat. The player may still come back with /back.
        An ``update_id`` hands the seat over (and tells it) once however often the update
        is delivered."""
        return await self.endings.hand_over(stored, seat, line, resigned=resigned,
                                            update_id=update_id)

    async def back(self, actor: Actor, matches: list[StoredMatch]) -> Outcome:
        """The player returns: their seats are theirs again, and their turn is timed anew."""
        tr = await self.people.user_tr(actor.user_id)
        notices: list[Notice] = []
        returned = 0
        for stored in matches:
            seat = stored.row.seat_of(actor.user_id)
            if seat is None:
                continue
            row = stored.row
            async with self.locks.hold(row.chat_id, row.thread_id):
                stand_in = (await self.deadlines.stand_ins(stored.match_id)).get(seat)
                if stand_in is None or not (stand_in.computer or stand_in.timeouts):
                    continue
                await self.deadlines.set_stand_in(stored.match_id, seat, 0, False)
                returned += 1
                fresh = await self.games.load(stored.match_id)
                if fresh.game.current_player == seat and not fresh.game.is_over:
                    notices += await self.broadcast.panel_for(fresh, seat, actor.user_id)
                    await self.deadlines.after_moves(fresh)
                if row.chat_id < 0:
                    group_tr = await self.people.chat_tr(row.chat_id)
                    notices += chat_line(row, group_tr._("{name} is back and plays again.",
                                                         name=actor.name))
        if not returned:
            return Outcome(tr._("Nobody was playing for you: you are in the game."))
        return Outcome(tr._("Welcome back: your seat is yours again."), notices, alert=True)
