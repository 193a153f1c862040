"""Turn deadlines and absent players: the state only (what is due when, who plays for whom).

A match may have a turn timer (``/new … timer=90``). When a person is to move, a deadline is
stored for that move; the ticker (:mod:`chat.flow.ticker`) asks the store what is due and
acts. A third of the time before the deadline the player is reminded privately; at the
deadline the normal computer player makes the turn for the seat. After two timeouts in a
row the computer keeps the seat (a *stand-in*), moving at once on its turns, until the
player comes back (``/back``). Deadlines and stand-ins live in the store, so they survive a
restart; within one unit of work (:func:`chat.flow.base.begin_work`) each is read once. At
start-up every running deadline gets at least a grace period, so an outage does not time out
every match at once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from chat.flow.base import read_once, stand_ins_key, timer_key, work_memo, wrote
from storage import MatchStatus, SeatKind, StandIn, Store, StoredMatch, TimerRow

log = logging.getLogger(__name__)

#: A turn's deadline to store: the move number and when it is due (epoch seconds); both
#: ``None`` when no person is to move.
Arm = tuple[int | None, float | None]

#: Consecutive timeouts after which the computer keeps the seat.
HANDOVER_AFTER = 2
#: The level that plays for an absent player.
STAND_IN_LEVEL = "normal"
#: Seconds between a turn's deadline being armed and its panel being composed from which
#: the deadline moves by the delay (:meth:`Deadlines.start_late`): less is delivery's usual.
LATE_START = 1.0


class Deadlines:
    def __init__(self, store: Store, clock: Callable[[], float], grace: float = 60.0) -> None:
        self.store = store
        self.clock = clock
        self.grace = grace

    async def timer(self, match_id: int) -> TimerRow | None:
        return await read_once(timer_key(match_id), lambda: self.store.timer_of(match_id))

    def _timer_is(self, match_id: int, timer: TimerRow | None) -> None:
        wrote(timer_key(match_id), timer)

    async def stand_ins(self, match_id: int) -> dict[int, StandIn]:
        return await read_once(stand_ins_key(match_id),
                               lambda: self.store.stand_ins(match_id))

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

    async def timeouts(self, match_id: int, seat: int) -> int:
        """The seat's timeouts in a row so far."""
        stand_in = (await self.stand_ins(match_id)).get(seat)
        return stand_in.timeouts if stand_in else 0

    async def last_to_go(self, stored: StoredMatch, seat: int) -> bool:
        """A timeout of ``seat`` now would hand it over and leave nobody playing."""
        if await self.timeouts(stored.match_id, seat) + 1 < HANDOVER_AFTER:
            return False
        for other in stored.row.seats:
            if (other.kind is SeatKind.HUMAN and other.user_id is not None
                    and other.seat != seat
                    and not await self.computer_keeps(stored.match_id, other.seat)):
                return False
        return True

    async def set_stand_in(self, match_id: int, seat: int, timeouts: int,
                           computer: bool, *, resigned: bool = False,
                           update_id: int | None = None) -> None:
        """Store the seat's stand-in (with ``update_id``: once per update, else
        :class:`storage.DuplicateUpdate` and nothing changes)."""
        known = (await self.stand_ins(match_id)).get(seat)
        resigned = resigned or bool(known and known.resigned)
        await self.store.set_stand_in(match_id, seat, timeouts=timeouts, computer=computer,
                                      resigned=resigned, update_id=update_id)
        (await self.stand_ins(match_id))[seat] = StandIn(seat, timeouts, computer, resigned)

    async def _arm(self, match_id: int, seq: int | None, deadline: float | None) -> None:
        timer = await self.timer(match_id)
        if timer is None or (timer.seq, timer.deadline) == (seq, deadline):
            return
        await self.store.arm_timer(match_id, seq, deadline)
        self._timer_is(match_id, TimerRow(match_id, timer.seconds, seq, deadline, False))

    async def reminded(self, match_id: int, seq: int, timer: TimerRow | None) -> None:
        """The reminder of move ``seq`` is done (sent, or ``timer`` ``None``: not needed
        any more), so the ticker does not ask again."""
        await self.store.set_reminded(match_id, seq)
        if timer is not None:
            self._timer_is(match_id, TimerRow(match_id, timer.seconds, timer.seq,
                                              timer.deadline, True))

    async def start(self, match_id: int, seconds: int | None) -> None:
        """A match begins, with a turn timer of ``seconds`` (``None``: no timer)."""
        if seconds:
            await self.store.set_timer(match_id, seconds)
        memo = work_memo()
        if memo is not None:
            memo.pop(timer_key(match_id), None)  # read again: it now exists

    async def next_arm(self, stored: StoredMatch) -> tuple[Arm, TimerRow] | None:
        """The deadline a move leaves behind it (``stored``: the match after the move, or
        as it began), with the timer as it was: ``(seq, deadline)`` for the next person's
        turn, ``(None, None)`` when no person is to move; ``None`` when the match has no
        timer or it is armed so already. The move's own append stores it, then
        :meth:`armed`; else :meth:`after_moves`."""
        timer = await self.timer(stored.match_id)
        if timer is None:
            return None
        game = stored.game
        arm: Arm = (None, None)
        if stored.row.status is MatchStatus.ACTIVE and not game.is_over:
            seat = game.current_player
            if (stored.row.seats[seat].kind is SeatKind.HUMAN
                    and not await self.computer_keeps(stored.match_id, seat)):
                seq = stored.next_seq
                if timer.seq == seq:
                    return None
                # A defender's second card belongs to the same turn: the same deadline.
                same_turn = bool(game.tour.pending) and timer.deadline is not None
                arm = (seq, timer.deadline if same_turn else self.clock() + timer.seconds)
        return None if (timer.seq, timer.deadline) == arm else (arm, timer)

    async def armed(self, stored: StoredMatch, planned: tuple[Arm, TimerRow]) -> None:
        """What :meth:`next_arm` planned for ``stored`` is stored: later reads of this unit
        of work see it. The turn's reminder, if it was sent, is not sent again for a
        defender's second card (its fresh panel would ask for a card anew in the middle of
        the turn)."""
        (seq, deadline), timer = planned
        self._timer_is(stored.match_id,
                       TimerRow(stored.match_id, timer.seconds, seq, deadline, False))
        if (seq is not None and timer.reminded and deadline == timer.deadline
                and stored.game.tour.pending):
            await self.reminded(stored.match_id, seq, await self.timer(stored.match_id))

    async def after_moves(self, stored: StoredMatch) -> None:
        """A move was made (or the match began): start the next person's deadline, unless
        the move's append did (:meth:`next_arm`)."""
        planned = await self.next_arm(stored)
        if planned is not None:
            await self.store.arm_timer(stored.match_id, *planned[0])
            await self.armed(stored, planned)

    async def start_late(self, stored: StoredMatch) -> None:
        """The next person's panel is composed only now (the scaled mode's announcement
        job, :data:`LATE_START` or more after the move armed the turn's deadline): the
        deadline moves by the delay, so the turn's clock starts no earlier than the panel
        goes out and the panel shows the whole turn. A defender's second card keeps the
        turn's deadline."""
        timer = await self.timer(stored.match_id)
        game = stored.game
        if (timer is None or timer.deadline is None or timer.seq != stored.next_seq
                or game.is_over or game.tour.pending):
            return
        late = self.clock() - (timer.deadline - timer.seconds)
        if late >= LATE_START:
            log.info("match %s: the panel of move %s comes %.1f s after its deadline was "
                     "armed: the deadline moves by as much", stored.match_id, timer.seq, late)
            await self._arm(stored.match_id, timer.seq, timer.deadline + late)

    async def seconds_left(self, stored: StoredMatch) -> int | None:
        """Seconds left for the current move if a turn timer runs for it (else ``None``)."""
        timer = await self.timer(stored.match_id)
        if (timer is None or timer.deadline is None or timer.seq != stored.next_seq
                or stored.game.is_over):
            return None
        return max(0, round(timer.deadline - self.clock()))

    async def timed_out(self, match_id: int, seat: int) -> bool:
        """The seat's player timed out lately, or the computer keeps the seat: their move
        resets that (:meth:`moved_by`, a write)."""
        stand_in = (await self.stand_ins(match_id)).get(seat)
        return stand_in is not None and bool(stand_in.timeouts or stand_in.computer)

    async def moved_by(self, match_id: int, seat: int) -> None:
        """The player moved: their timeouts no longer count as consecutive."""
        if await self.timed_out(match_id, seat):
            await self.set_stand_in(match_id, seat, 0, False)

    async def resume(self) -> None:
        """After a restart: every running deadline gets at least the grace period."""
        moved = await self.store.stretch_deadlines(self.clock() + self.grace)
        if moved:
            log.info("turn timers: %d deadline(s) moved on by the restart's grace", moved)
