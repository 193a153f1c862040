"""Moves of a running match: a person's steps checked once on a copy, stored one by one,
rated when the match ends, and announced; a computer's turn (its own seat's, or an absent
person's) thought out without the lock and stored only if the match still waits for it;
hints.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from chat.describe import next_text
from chat.flow.base import Actor, Decide, HintRequest
from chat.flow.deadlines import STAND_IN_LEVEL
from chat.flow.parts import HoldsSharedParts, SharedParts
from chat.flow.views.messages import hint_message
from chat.flow.views.texts import echo as echo_text
from chat.flow.views.texts import illegal
from chat.i18n import Tr
from chat.model import LEVEL_NAMES, InputError, tour_frame, turn_is_over
from chat.notices import Send
from chat.outcomes import Accepted, Outcome, Refusal, Refused
from krendzu import Action, Card, EndTurn, IllegalMove, Match, PlayerAction, Redeal
from krendzu.coords import frame_for
from storage import (
    Door,
    DuplicateUpdate,
    MatchClosed,
    MatchRow,
    MatchStatus,
    MovedBy,
    MoveRow,
    NotFound,
    SeatKind,
    SequenceConflict,
    StoredMatch,
)

log = logging.getLogger(__name__)

#: A move's steps as a door hands them to :meth:`Matches.play`: the steps, or how to read
#: them from the stored position and the actor's seat under the chat's lock (words that
#: need the position, such as an engine's ``QC M12``), raising :class:`InputError`.
Steps = Sequence[Action] | Callable[[StoredMatch, int], Sequence[Action]]


@dataclass(frozen=True, slots=True)
class Checked:
    """Steps the rules accepted, and the copy of the position they were played on: what
    the store takes, and the position after them (not simulated again)."""

    steps: tuple[Action, ...]
    game: Match


class Matches(HoldsSharedParts):
    def __init__(self, parts: SharedParts, decide: Decide) -> None:
        super().__init__(parts)
        self.decide = decide
        #: Told how many moves each commit stored (the metrics' moves committed).
        self.on_committed: Callable[[int], None] = lambda count: None

    async def play(self, match_id: int, actor: Actor, steps: Steps, *,
                   update_id: int | None = None, expected_seq: int | None = None,
                   door: Door = Door.TYPED, then: Card | None = None,
                   row: MatchRow | None = None, echo: bool = True) -> Outcome:
        """Check a player's steps once (on a copy of the position), store them with the
        actor and the ``door`` they came through, announce them; the outcome's
        :class:`~chat.outcomes.Verdict` says which, for every door alike. ``steps``: the
        steps, or how to read them from the position under the lock (an engine's words:
        :data:`Steps`). ``then``: a defender's first card was placed from a key that named
        the second card, whose cells the redrawn panel then asks for at once (stored with
        the move too). ``row``: the match's row as the door just read it (a group's match,
        found by its chat), so that it is not read again before the lock; under the lock
        the match is read afresh all the same. ``echo``: whether an accepted move's reply
        (and its verdict's ``echo``) says the move as understood, for a door that shows
        it (a button's toast, the Mini App, an ephemeral command's answer); a move typed
        in a chat is told by its board post, and composes none.

        The refusals come in one order whatever the door: no such match, not seated, over,
        another position (``expected_seq``), not the actor's turn, illegal."""
        try:
            if row is None or row.match_id != match_id:
                row = await self.store.get_match(match_id)
        except NotFound:
            tr = await self.people.actor_tr(actor)
            return refused(Refusal.GONE, tr._("This match does not exist any more."))
        if row.seat_of(actor.user_id) is None:
            # Read only: a stranger's refused request leaves nothing behind.
            tr = await self.people.actor_tr(actor)
            return refused(Refusal.NOT_SEATED, tr._("You are not playing in this match."))
        tr = await self.people.see_user(actor)
        async with self.locks.hold(row.chat_id, row.thread_id):
            early = self.games.early(match_id)
            outcome = await self._locked_play(early or await self.games.load(match_id), actor,
                                              steps, tr, update_id=update_id,
                                              expected_seq=expected_seq, door=door, then=then,
                                              early=early is not None, echo=echo)
            if (early is not None and isinstance(outcome.verdict, Refused)
                    and outcome.verdict.reason is not Refusal.REPEATED):
                # Checked on the request's read, from before the lock: a refusal (or the
                # append's, when another process stored a move since) is said only from
                # the match as stored now.
                outcome = await self._locked_play(await self.games.load(match_id), actor,
                                                  steps, tr, update_id=update_id,
                                                  expected_seq=expected_seq, door=door,
                                                  then=then, echo=echo)
            return outcome

    async def _locked_play(self, stored: StoredMatch, actor: Actor, steps: Steps, tr: Tr, *,
                           update_id: int | None, expected_seq: int | None, door: Door,
                           then: Card | None, early: bool = False,
                           echo: bool = True) -> Outcome:
        """:meth:`play`'s checks and commit on ``stored``, under the chat's lock.
        ``early``: ``stored`` is the request's read, from before the lock, so nothing is
        written on it but the conditional append (the caller checks again on the match as
        stored now when this refuses)."""
        match_id = stored.match_id
        seat = stored.row.seat_of(actor.user_id)
        if seat is None:
            return refused(Refusal.NOT_SEATED, tr._("You are not playing in this match."))
        if stored.row.status is not MatchStatus.ACTIVE:
            return refused(Refusal.OVER, tr._("This match is over."), stored.next_seq)
        if expected_seq is not None and expected_seq != stored.next_seq:
            return refused(Refusal.STALE,
                           tr._("This panel is out of date: use the newest one."),
                           stored.next_seq)
        game = stored.game
        if game.current_player != seat:
            names = await self.people.seat_names(stored.row, tr)
            view = game.observation(None)
            return refused(Refusal.NOT_YOUR_TURN, tr._(
                "It is not your turn. {next}", next=next_text(tr, view, names)),
                stored.next_seq)
        if callable(steps):
            try:
                steps = steps(stored, seat)
            except InputError as exc:
                return refused(Refusal.ILLEGAL, tr._(exc.key, **exc.values),
                               stored.next_seq, private=True)
        checked = check(tr, game, steps)
        if isinstance(checked, str):
            return refused(Refusal.ILLEGAL, checked, stored.next_seq, private=True)
        if early and (await self.deadlines.timed_out(match_id, seat) or (
                checked.game.tour.pending and await self.deadlines.timer(match_id))):
            # The player comes back (a write before the append), or the turn goes on with
            # its deadline and reminder (which a job may have changed since the read):
            # checked on the match as it is.
            return refused(Refusal.OVERTAKEN, None, stored.next_seq)
        await self.deadlines.moved_by(match_id, seat)
        by = MovedBy(actor.user_id, door, then.code() if then is not None else None)
        return await self.commit(stored, checked, tr, update_id=update_id, by=by, echo=echo)

    async def commit(self, stored: StoredMatch, checked: Checked, tr: Tr, *,
                     update_id: int | None, by: MovedBy, echo: bool = True) -> Outcome:
        """Store checked steps (in one transaction where the store can, else one by one, a
        refused one stopping there) with who made them and through which door (``by``, in
        the rows the announcer reads), rate a finished match, and hand what was stored to
        the announcer (:meth:`~chat.flow.broadcast.Broadcast.stored`); ``echo``: as in
        :meth:`play`. Hold the chat's lock."""
        # The copy that checked the steps is the position after them: python-chess's habit
        # (a move checked once is pushed unchecked), so the move is simulated once. The
        # kept position stays as it was until the store took the steps.
        before = stored.game
        game = checked.game
        steps = list(checked.steps)
        first = stored.next_seq
        done: list[Action] = []
        added: list[MoveRow] = []
        # The next turn's deadline is stored with the move, in its transaction (the scaled
        # mode's timer jobs deferred there too): the move is written once.
        timing = await self.deadlines.next_arm(StoredMatch(stored.row, stored.moves, game))
        arm = timing[0] if timing is not None else None
        armed = False
        if len(steps) > 1 and self.store.appends_atomically:
            # One transaction for the whole move: stored whole or not at all.
            planned: list[tuple[int, PlayerAction]] = []
            for i, step in enumerate(steps):
                assert not isinstance(step, Redeal), "a deal is the engine's, never a player's"
                planned.append((first + i, step))
            try:
                added = list(await self.store.append_moves(
                    stored.match_id, planned, update_id=update_id,
                    final=game if game.is_over else None, by=by, arm=arm))
                armed = True
            except DuplicateUpdate:
                self.games.forget(stored.match_id)
                return refused(Refusal.REPEATED, None, first)
            except (SequenceConflict, MatchClosed):
                self.games.forget(stored.match_id)
                return refused(Refusal.OVERTAKEN, overtaken(tr), first)
            done = steps
            steps = []
        for i, step in enumerate(steps):
            assert not isinstance(step, Redeal), "a deal is the engine's, never a player's"
            try:
                added.append(await self.store.append_move(
                    stored.match_id, first + i, step,
                    update_id=update_id if i == 0 else None,
                    # Only the last step can end the match: the check refuses a step after.
                    final=game if game.is_over and i == len(steps) - 1 else None,
                    by=by if i == len(steps) - 1 else MovedBy(by.user_id, by.door),
                    arm=arm if i == len(steps) - 1 else None,
                ))
                armed = i == len(steps) - 1
            except DuplicateUpdate:
                self.games.forget(stored.match_id)
                return refused(Refusal.REPEATED, None, first)
            except (SequenceConflict, MatchClosed):
                self.games.forget(stored.match_id)
                if not done:
                    return refused(Refusal.OVERTAKEN, overtaken(tr), first)
                # The steps stored before the refused one are the move (a rare path, and
                # only where the store cannot append atomically): replayed from before.
                game = before.clone()
                for kept in done:
                    game.apply(kept)
                break
            done.append(step)
        stored.moves += tuple(added)
        stored.game = game
        if armed and timing is not None:
            await self.deadlines.armed(stored, timing)
        if game.is_over:
            self.games.forget(stored.match_id)
            stored.row = await self.store.get_match(stored.match_id)
            await self.games.rate(stored.row, game)
        self.on_committed(len(added))
        notices = await self.broadcast.stored(stored, before) if done else []
        tour = game.tours[before.tour_index]

        def said() -> str:
            return echo_text(tr, done, frame_for(tour.observation(None).placements))

        reply = said() if echo else None
        verdict = Accepted(tuple(row.seq for row in added), first + len(done), reply or said)
        return Outcome(reply, notices, announced_later=self.broadcast.later and bool(done),
                       verdict=verdict)

    # Hints ----------------------------------------------------------------------------------

    def hint_request(self, stored: StoredMatch, seat: int) -> HintRequest:
        """What a hint needs from the position, taken now: the seat's view and the board's
        frame (``stored.game`` moves on with the next move, also while the hint is thought
        out)."""
        return stored.game.observation(seat), tour_frame(stored.game)

    async def hint_notice(self, stored: StoredMatch, seat: int, user_id: int, *,
                          request: HintRequest | None = None, seq: int | None = None,
                          actions: Sequence[Action] | None = None) -> Send:
        """The suggestion, with a Play it key for the move ``seq`` (the one ``request`` was
        taken at; by default the stored match's next): pressed once the match moved on,
        it is refused as out of date. ``actions``: the suggestion when the caller thought
        it out already (the Mini App shows it on the page as well)."""
        seq = stored.next_seq if seq is None else seq
        view, frame = request or self.hint_request(stored, seat)
        reader = await self.broadcast.reader(stored.row, await self.people.user_tr(user_id))
        if actions is None:
            actions = await self.suggest(view)
        return hint_message(stored, user_id, reader, view, frame, actions, seq)

    async def suggest(self, view: object) -> list[Action]:
        """The normal level's suggestion (set by the application to run off the loop); a
        person waits for it, so it is urgent."""
        return await self.decide("normal", view, 0, urgent=True)

    # Computers --------------------------------------------------------------------------------

    async def think(self, level: str, view: object, seed_text: str, *,
                    urgent: bool) -> list[Action]:
        """A computer's decision for ``view``, seeded by ``seed_text`` (so a replay of the
        same move decides the same). Call it without holding the chat's lock."""
        seed = random.Random(seed_text).randrange(2**32)
        return await self.decide(level, view, seed, urgent=urgent)

    async def computer_level(self, stored: StoredMatch, seat: int) -> str | None:
        """The level that plays ``seat`` now: a computer seat's own, the stand-in's for an
        absent person, or ``None`` for a person who plays it."""
        seat_row = stored.row.seats[seat]
        if seat_row.kind is SeatKind.COMPUTER:
            return LEVEL_NAMES.get(seat_row.level or 2, "normal")
        if await self.deadlines.computer_keeps(stored.match_id, seat):
            return STAND_IN_LEVEL  # the player is away: the computer keeps the seat
        return None

    async def computer_turn(self, match_id: int, seq: int) -> Outcome:
        """The computer's move ``seq``. It is thought out without the chat's lock (people of
        the chat may act meanwhile: /back, a move, /cancel); under the lock again it is stored
        only if the match still waits for that very move of that seat, else dropped."""
        row = await self.store.get_match(match_id)
        async with self.locks.hold(row.chat_id, row.thread_id):
            stored = await self.games.load(match_id)
            if stored.row.status is not MatchStatus.ACTIVE or stored.next_seq != seq:
                return Outcome(None)
            seat = stored.game.current_player
            level = await self.computer_level(stored, seat)
            if level is None:
                return Outcome(None)
            view = stored.game.observation(seat)
            urgent = await self.deadlines.someone_present(stored)
        actions = await self.think(level, view, f"{row.seed}:{seq}", urgent=urgent)
        async with self.locks.hold(row.chat_id, row.thread_id):
            stored = await self.games.load(match_id)
            if (stored.row.status is not MatchStatus.ACTIVE or stored.next_seq != seq
                    or stored.game.current_player != seat
                    or await self.computer_level(stored, seat) != level):
                log.debug("match %s: move %s was made or the seat changed hands while the "
                          "computer thought; its decision is dropped", match_id, seq)
                return Outcome(None)
            door = Door.TIMER if level == STAND_IN_LEVEL else Door.COMPUTER
            outcome = await self.play_for_seat(stored, actions, door)
            return Outcome(None, outcome.notices, verdict=outcome.verdict)

    async def play_for_seat(self, stored: StoredMatch, actions: Sequence[Action],
                            door: Door) -> Outcome:
        """The computer makes the turn of the seat to move with ``actions`` decided
        beforehand: a computer seat's (``door`` :attr:`Door.COMPUTER`), or an absent
        person's (:attr:`Door.TIMER`: their time ran out, or it keeps their seat). Hold the
        chat's lock, and check first that the match is still at the move the actions were
        decided for; the store refuses a stale move number anyway
        (:class:`SequenceConflict`)."""
        game = stored.game
        tr = await self.people.chat_tr(stored.row.chat_id)
        checked = check(tr, game, actions)
        if isinstance(checked, str):
            log.error("match %s: the computer chose an illegal turn; playing the first "
                      "legal step instead", stored.match_id)
            checked = check(tr, game, [game.legal_actions()[0]])
            assert not isinstance(checked, str), "a legal action is legal"
        return await self.commit(stored, checked, tr, update_id=None, by=MovedBy(None, door))


def check(tr: Tr, game: Match, steps: Sequence[Action]) -> Checked | str:
    """The one simulation of a move, on a copy: the steps to store with the position after
    them (:class:`Checked`) if all are legal, else the reply refusing them. Every step is
    played as the seat to move's: a step after the turn passed on is refused, never played
    for the next seat. An ``EndTurn`` that a one-card ``/play`` adds is dropped when the
    card already ended the turn (the defender's last card, or the tour's end)."""
    trial = game.clone()
    frame = tour_frame(trial)
    seat = trial.current_player
    for i, step in enumerate(steps):
        if (isinstance(step, EndTurn) and i == len(steps) - 1 and i >= 1
                and turn_is_over(trial, seat)):
            return Checked(tuple(steps[:-1]), trial)
        try:
            trial.apply(step, seat=seat)
        except IllegalMove as exc:
            return illegal(tr, step, frame, exc)
    return Checked(tuple(steps), trial)


def overtaken(tr: Tr) -> str:
    """The reply to a move whose number another move took first (said only then)."""
    return tr._("Someone was quicker: the position changed. Look at the newest board.")


def refused(reason: Refusal, text: str | None, next_seq: int | None = None, *,
            private: bool = False) -> Outcome:
    """The outcome of a move that stored nothing: ``text`` is the actor's reply (privately
    where it may name a held card)."""
    return Outcome(text, private_reply=private,
                   verdict=Refused(reason, text, next_seq))
