"""Turn timers and absent players: matches that never stall.

A match may have a turn timer (``/new … timer=90``). When a person is to move, a deadline is
stored for that move; a ticker (the application's job queue) asks :meth:`TurnTimers.tick`
what is due. A third of the time before the deadline the player is reminded privately; at the
deadline the normal computer player makes the turn for the seat and the group is told. After
two timeouts in a row the computer keeps the seat, moving at once on its turns, until the
player comes back (``/back``). When no seat is played by a present person any more (everyone
left, was kicked or timed out twice), the match is cancelled: computers playing for nobody
would only take the workers every other chat's computers, hints and timeouts need.
Deadlines live in the store, so they survive a restart; at start-up every running deadline
gets at least a grace period, so an outage does not time out every match at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from chat.i18n import Tr
from chat.notices import ComputerTurn, DropPanel, Notice, Outcome, Send, ShowLobby
from krendzu import Action, Announce
from krendzu.tour import ANNOUNCE
from storage import LobbyStatus, MatchStatus, SeatKind, StandIn, StoredMatch, TimerRow

if TYPE_CHECKING:
    from chat.flow import Actor, Flow

log = logging.getLogger(__name__)

#: Consecutive timeouts after which the computer keeps the seat.
HANDOVER_AFTER = 2
#: The level that plays for an absent player.
STAND_IN_LEVEL = "normal"


class TurnTimers:
    def __init__(self, flow: Flow, clock: Callable[[], float], grace: float = 60.0) -> None:
        self.flow = flow
        self.store = flow.store
        self.clock = clock
        self.grace = grace
        self._timers: dict[int, TimerRow | None] = {}
        self._stand_ins: dict[int, dict[int, StandIn]] = {}
        self._lobbies_checked = 0.0

    # State --------------------------------------------------------------------------------

    async def timer(self, match_id: int) -> TimerRow | None:
        if match_id not in self._timers:
            self._timers[match_id] = await self.store.timer_of(match_id)
        return self._timers[match_id]

    async def stand_ins(self, match_id: int) -> dict[int, StandIn]:
        if match_id not in self._stand_ins:
            self._stand_ins[match_id] = await self.store.stand_ins(match_id)
        return self._stand_ins[match_id]

    async def computer_keeps(self, match_id: int, seat: int) -> bool:
        """The seat's player is absent and the computer plays for them."""
        stand_in = (await self.stand_ins(match_id)).get(seat)
        return stand_in is not None and stand_in.computer

    async def someone_present(self, stored: StoredMatch) -> bool:
        """Some seat is a person's who still plays it (not handed to the computer): they
        wait for the computers' moves, so those are urgent."""
        for seat in stored.row.seats:
            if (seat.kind is SeatKind.HUMAN and seat.user_id is not None
                    and not await self.computer_keeps(stored.match_id, seat.seat)):
                return True
        return False

    async def end_unattended(self, stored: StoredMatch) -> list[Notice]:
        """Cancel the match if nobody plays it any more, telling its chat (in the chat's
        language) and each player; ``[]`` if someone still plays or it ended already. Hold
        the chat's lock."""
        if await self.someone_present(stored):
            return []
        if not await self.store.abandon_match(stored.match_id):
            return []
        self.flow._games.pop(stored.match_id, None)
        log.info("match %s: nobody plays it any more; cancelled", stored.match_id)
        tr = await self.flow.chat_tr(stored.row.chat_id)
        return self.flow._closing(stored, tr, tr._(
            "Nobody plays at this table any more (everyone left or ran out of time): the "
            "match is cancelled. /new sets up a new one."))

    async def _set_stand_in(self, match_id: int, seat: int, timeouts: int,
                            computer: bool, *, resigned: bool = False) -> None:
        known = (await self.stand_ins(match_id)).get(seat)
        resigned = resigned or bool(known and known.resigned)
        await self.store.set_stand_in(match_id, seat, timeouts=timeouts, computer=computer,
                                      resigned=resigned)
        (await self.stand_ins(match_id))[seat] = StandIn(seat, timeouts, computer, resigned)

    async def _arm(self, match_id: int, seq: int | None, deadline: float | None) -> None:
        timer = await self.timer(match_id)
        if timer is None or (timer.seq, timer.deadline) == (seq, deadline):
            return
        await self.store.arm_timer(match_id, seq, deadline)
        self._timers[match_id] = TimerRow(match_id, timer.seconds, seq, deadline, False)

    # Hooks from the flow -----------------------------------------------------------------

    async def start(self, match_id: int, seconds: int | None) -> None:
        if seconds:
            await self.store.set_timer(match_id, seconds)
        self._timers.pop(match_id, None)

    async def after_moves(self, stored: StoredMatch) -> None:
        """A move was made (or the match began): start the next person's deadline."""
        timer = await self.timer(stored.match_id)
        if timer is None:
            return
        game = stored.game
        if stored.row.status is not MatchStatus.ACTIVE or game.is_over:
            await self._arm(stored.match_id, None, None)
            return
        seat = game.current_player
        if (stored.row.seats[seat].kind is not SeatKind.HUMAN
                or await self.computer_keeps(stored.match_id, seat)):
            await self._arm(stored.match_id, None, None)
            return
        seq = stored.next_seq
        if timer.seq == seq:
            return
        # A defender's second card belongs to the same turn: the same deadline.
        same_turn = bool(game.tour.pending) and timer.deadline is not None
        deadline = timer.deadline if same_turn else self.clock() + timer.seconds
        await self._arm(stored.match_id, seq, deadline)

    async def moved_by(self, match_id: int, seat: int) -> None:
        """The player moved: their timeouts no longer count as consecutive."""
        stand_in = (await self.stand_ins(match_id)).get(seat)
        if stand_in is not None and (stand_in.timeouts or stand_in.computer):
            await self._set_stand_in(match_id, seat, 0, False)

    # The ticker ---------------------------------------------------------------------------

    async def tick(self) -> list[Notice]:
        """Reminders and timeouts that are due now."""
        notices: list[Notice] = []
        now = self.clock()
        for timer in await self.store.due_timers(now):
            try:
                if timer.deadline is not None and timer.deadline <= now:
                    notices += await self.timeout(timer.match_id, timer.seq)
                elif not timer.reminded:
                    notices += await self.remind(timer.match_id, timer.seq)
            except Exception:
                log.exception("match %s: the turn timer failed", timer.match_id)
        return notices

    async def resume(self) -> None:
        """After a restart: every running deadline gets at least the grace period."""
        moved = await self.store.stretch_deadlines(self.clock() + self.grace)
        if moved:
            log.info("turn timers: %d deadline(s) moved on by the restart's grace", moved)
        self._timers.clear()

    async def _current(self, match_id: int, seq: int | None
                       ) -> tuple[StoredMatch, int, int] | None:
        """The match, seat and user whose deadline this is, if it still stands."""
        stored = await self.flow.load(match_id)
        if stored.row.status is not MatchStatus.ACTIVE or stored.next_seq != seq:
            return None
        seat = stored.game.current_player
        user_id = stored.row.seats[seat].user_id
        if user_id is None:
            return None
        return stored, seat, user_id

    async def remind(self, match_id: int, seq: int | None) -> list[Notice]:
        row = await self.store.get_match(match_id)
        async with self.flow.lock(row.chat_id, row.thread_id):
            current = await self._current(match_id, seq)
            timer = await self.timer(match_id)
            if current is None or timer is None or seq is None:
                await self.store.set_reminded(match_id, seq or 0)
                return []
            stored, _, user_id = current
            await self.store.set_reminded(match_id, seq)
            self._timers[match_id] = TimerRow(match_id, timer.seconds, timer.seq,
                                              timer.deadline, True)
            tr = await self.flow.user_tr(user_id)
            left = max(1, round((timer.deadline or self.clock()) - self.clock()))
            text = tr.n_("⏰ {n} second left for your move ({where}). Then the computer moves "
                         "for you.",
                         "⏰ {n} seconds left for your move ({where}). Then the computer "
                         "moves for you.", left, where=self._where(stored, tr))
            return [Send(user_id, text, match_id=match_id)]

    async def timeout(self, match_id: int, seq: int | None) -> list[Notice]:
        """The deadline passed: the normal computer player makes the seat's turn.

        The turn is thought out without the chat's lock (urgent: a person is waiting), then
        made only if the person did not move meanwhile. A second timeout in a row hands the
        seat to the computer, or cancels the match if nobody else plays it any more."""
        row = await self.store.get_match(match_id)
        lock = self.flow.lock(row.chat_id, row.thread_id)
        async with lock:
            current = await self._current(match_id, seq)
            if current is None:
                stored = await self.flow.load(match_id)
                await self.after_moves(stored)
                return []
            stored, seat, user_id = current
            actions: list[Action] | None = None
            if stored.game.tour.phase == ANNOUNCE:
                actions = [Announce(0)]  # a timeout in the exchange means no exchange
            elif await self._last_to_go(stored, seat):
                return await self._time_out(stored, seat, user_id, [])
            else:
                view = stored.game.observation(seat)
        if actions is None:
            actions = await self.flow.think(STAND_IN_LEVEL, view,
                                            f"{row.seed}:{seq}:timeout", urgent=True)
        async with lock:
            current = await self._current(match_id, seq)
            if current is None or current[1] != seat:
                log.debug("match %s: the player moved before the stand-in's move %s was "
                          "stored; it is dropped", match_id, seq)
                stored = await self.flow.load(match_id)
                await self.after_moves(stored)
                return []
            stored, seat, user_id = current
            return await self._time_out(stored, seat, user_id, actions)

    async def _last_to_go(self, stored: StoredMatch, seat: int) -> bool:
        """A timeout of ``seat`` now would hand it over and leave nobody playing."""
        before = (await self.stand_ins(stored.match_id)).get(seat)
        if (before.timeouts if before else 0) + 1 < HANDOVER_AFTER:
            return False
        for other in stored.row.seats:
            if (other.kind is SeatKind.HUMAN and other.user_id is not None
                    and other.seat != seat
                    and not await self.computer_keeps(stored.match_id, other.seat)):
                return False
        return True

    async def _time_out(self, stored: StoredMatch, seat: int, user_id: int,
                        actions: list[Action]) -> list[Notice]:
        """Count the timeout, then make ``actions`` for the seat, or cancel the match if the
        seat was the last one a person played. Hold the chat's lock."""
        match_id = stored.match_id
        before = (await self.stand_ins(match_id)).get(seat)
        timeouts = (before.timeouts if before else 0) + 1
        handover = timeouts >= HANDOVER_AFTER
        await self._set_stand_in(match_id, seat, timeouts, handover)
        if handover:
            ended = await self.end_unattended(stored)
            if ended:
                return ended
        if not actions:  # only when the match was to end, and another ended it first
            return []
        outcome = await self.flow.play_for_seat(stored, actions)
        group_tr = await self.flow.chat_tr(stored.row.chat_id)
        return self._told(stored, user_id, handover, group_tr) + outcome.notices

    def _told(self, stored: StoredMatch, user_id: int, handover: bool, group_tr: Tr
              ) -> list[Notice]:
        name = self.flow._names.get(user_id, "?")
        line = group_tr._("⏰ {name} ran out of time: the computer moved for them.", name=name)
        if handover:
            line += " " + group_tr._("It keeps the seat until {name} is back (/back).",
                                     name=name)
        notices: list[Notice] = []
        if stored.row.chat_id < 0:
            notices.append(Send(stored.row.chat_id, line, thread_id=stored.row.thread_id,
                                silent=True, group=True))
        return notices

    # Leaving and kicking -------------------------------------------------------------------

    async def hand_over(self, stored: StoredMatch, seat: int, line: str, *,
                        resigned: bool = False) -> list[Notice]:
        """The computer plays the seat from now on (the player left, resigned in a trio or
        was kicked); ``line`` tells the chat. The player may still come back with /back."""
        row = stored.row
        async with self.flow.lock(row.chat_id, row.thread_id):
            fresh = await self.flow.load(stored.match_id)
            if fresh.row.status is not MatchStatus.ACTIVE:
                return []
            await self._set_stand_in(stored.match_id, seat, HANDOVER_AFTER, True,
                                     resigned=resigned)
            if not resigned:
                # Left or kicked, and nobody else plays: no match for computers alone. (The
                # last player's resignation in a trio is a result: the computers finish.)
                ended = await self.end_unattended(fresh)
                if ended:
                    return ended
            await self.after_moves(fresh)
            notices: list[Notice] = [Send(row.chat_id, line, thread_id=row.thread_id,
                                          silent=True, group=row.chat_id < 0)]
            user_id = row.seats[seat].user_id
            if user_id is not None:
                notices.append(DropPanel(stored.match_id, user_id))
            if fresh.game.current_player == seat and not fresh.game.is_over:
                notices.append(ComputerTurn(stored.match_id, fresh.next_seq))
            return notices

    # Idle lobbies ---------------------------------------------------------------------------

    async def expire_lobbies(self, older_than: float) -> list[Notice]:
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
            tr = await self.flow.chat_tr(lobby.chat_id)
            minutes = max(1, round(older_than / 60))
            notices.append(ShowLobby(lobby.lobby_id, lobby.chat_id, lobby.thread_id,
                                     lobby.message_id, tr.n_(
                                         "Nobody started this match for {n} minute: the set-up "
                                         "is closed. /new starts again.",
                                         "Nobody started this match for {n} minutes: the "
                                         "set-up is closed. /new starts again.", minutes),
                                     None))
        return notices

    # /back ----------------------------------------------------------------------------------

    async def back(self, actor: Actor, matches: list[StoredMatch]) -> Outcome:
        """The player returns: their seats are theirs again, and their turn is timed anew."""
        tr = await self.flow.user_tr(actor.user_id)
        notices: list[Notice] = []
        returned = 0
        for stored in matches:
            seat = stored.row.seat_of(actor.user_id)
            if seat is None:
                continue
            row = stored.row
            async with self.flow.lock(row.chat_id, row.thread_id):
                stand_in = (await self.stand_ins(stored.match_id)).get(seat)
                if stand_in is None or not (stand_in.computer or stand_in.timeouts):
                    continue
                await self._set_stand_in(stored.match_id, seat, 0, False)
                returned += 1
                fresh = await self.flow.load(stored.match_id)
                if fresh.game.current_player == seat and not fresh.game.is_over:
                    notices += await self.flow.panel_for(fresh, seat, actor.user_id)
                    await self.after_moves(fresh)
                if row.chat_id < 0:
                    group_tr = await self.flow.chat_tr(row.chat_id)
                    notices.append(Send(row.chat_id, group_tr._(
                        "{name} is back and plays again.", name=actor.name),
                        thread_id=row.thread_id, silent=True, group=True))
        if not returned:
            return Outcome(tr._("Nobody was playing for you: you are in the game."))
        return Outcome(tr._("Welcome back: your seat is yours again."), notices, alert=True)

    def _where(self, stored: StoredMatch, tr: Tr) -> str:
        if stored.row.chat_id > 0:
            return tr._("your match against the computer")
        return tr._("in “{title}”", title=self.flow._titles.get(stored.row.chat_id, "?"))
