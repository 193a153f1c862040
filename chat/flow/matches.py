"""Moves of a running match: a person's steps checked once on a copy, stored one by one,
rated when the match ends, and announced; a computer's turn (its own seat's, or an absent
person's) thought out without the lock and stored only if the match still waits for it;
hints.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence

from chat.describe import next_text, tour_frame
from chat.flow.base import Actor, Decide, HintRequest
from chat.flow.deadlines import STAND_IN_LEVEL
from chat.flow.parts import Parts, Room
from chat.flow.steps import turn_is_over
from chat.flow.views.messages import hint_message
from chat.flow.views.texts import echo, illegal
from chat.i18n import Tr
from chat.model import LEVEL_NAMES
from chat.notices import MOVING, Mover, Outcome, Send, then_key
from krendzu import Action, Card, EndTurn, IllegalMove, Match, PlayerAction, Redeal
from krendzu.coords import frame_for
from storage import (
    DuplicateUpdate,
    MatchClosed,
    MatchStatus,
    NotFound,
    SeatKind,
    SequenceConflict,
    StoredMatch,
)

log = logging.getLogger(__name__)


class Matches(Room):
    def __init__(self, parts: Parts, decide: Decide) -> None:
        super().__init__(parts)
        self.decide = decide

    async def play(self, match_id: int, actor: Actor, steps: Sequence[Action], *,
                   update_id: int | None = None, expected_seq: int | None = None,
                   from_panel: bool = False, then: Card | None = None) -> Outcome:
        """Apply a player's steps (validated on a clone first), store them, announce them.
        ``then``: a defender's first card was placed from a key that named the second
        card, whose cells the redrawn panel then asks for at once."""
        tr = await self.people.see_user(actor)
        try:
            row = await self.store.get_match(match_id)
        except NotFound:
            return Outcome(tr._("This match does not exist any more."))
        async with self.locks.hold(row.chat_id, row.thread_id):
            stored = await self.games.load(match_id)
            if stored.row.status is not MatchStatus.ACTIVE:
                return Outcome(tr._("This match is over."))
            seat = stored.row.seat_of(actor.user_id)
            if seat is None:
                return Outcome(tr._("You are not playing in this match."))
            if expected_seq is not None and expected_seq != stored.next_seq:
                return Outcome(tr._("This panel is out of date: use the newest one."))
            game = stored.game
            if game.current_player != seat:
                names = await self.people.seat_names(stored.row, tr)
                view = game.observation(None)
                return Outcome(tr._("It is not your turn. {next}", next=next_text(tr, view, names)))
            steps, error = check(tr, game, steps)
            if error:
                return Outcome(error, private_reply=True)
            await self.deadlines.moved_by(match_id, seat)
            return await self.commit(stored, list(steps), tr, update_id=update_id,
                                     mover=actor.user_id, from_panel=from_panel, then=then)

    async def commit(self, stored: StoredMatch, steps: list[Action], tr: Tr, *,
                     update_id: int | None, mover: int | None,
                     from_panel: bool = False, then: Card | None = None) -> Outcome:
        """Store checked steps (in one transaction where the store can, else one by one, a
        refused one stopping there), rate a finished match, and announce what was stored.
        Hold the chat's lock. The mover is known to the append as :data:`MOVING` (for the
        scaled mode's announcement job)."""
        token = MOVING.set(Mover(mover, from_panel, then) if mover is not None else None)
        try:
            return await self._commit(stored, steps, tr, update_id=update_id, mover=mover,
                                      from_panel=from_panel, then=then)
        finally:
            MOVING.reset(token)

    async def _commit(self, stored: StoredMatch, steps: list[Action], tr: Tr, *,
                      update_id: int | None, mover: int | None, from_panel: bool,
                      then: Card | None = None) -> Outcome:
        before = stored.game.clone()
        game = stored.game
        done: list[Action] = []
        if len(steps) > 1 and self.store.appends_atomically:
            # One transaction for the whole move: stored whole or not at all.
            planned: list[tuple[int, PlayerAction]] = []
            for step in steps:
                assert not isinstance(step, Redeal), "a deal is the engine's, never a player's"
                game.apply(step)
                planned.append((stored.next_seq - 1, step))
            try:
                stored.moves += tuple(await self.store.append_moves(
                    stored.match_id, planned, update_id=update_id,
                    final=game if game.is_over else None))
            except DuplicateUpdate:
                self.games.forget(stored.match_id)
                return Outcome(None)
            except (SequenceConflict, MatchClosed):
                self.games.forget(stored.match_id)
                return Outcome(tr._("Someone was quicker: the position changed. Look at "
                                    "the newest board."))
            done = list(steps)
            steps = []
        for i, step in enumerate(steps):
            assert not isinstance(step, Redeal), "a deal is the engine's, never a player's"
            # Applied to the kept state before it is stored (checked already, so it is not
            # simulated again); if the store refuses it, the kept state is dropped.
            game.apply(step)
            try:
                stored.moves += (await self.store.append_move(
                    stored.match_id, stored.next_seq - 1, step,
                    update_id=update_id if i == 0 else None,
                    final=game if game.is_over else None,
                ),)
            except DuplicateUpdate:
                self.games.forget(stored.match_id)
                return Outcome(None)
            except (SequenceConflict, MatchClosed):
                self.games.forget(stored.match_id)
                if not done:
                    return Outcome(tr._("Someone was quicker: the position changed. Look at "
                                        "the newest board."))
                game = before.clone()
                for kept in done:
                    game.apply(kept)
                stored.game = game
                break
            done.append(step)
        if game.is_over:
            self.games.forget(stored.match_id)
            stored.row = await self.store.get_match(stored.match_id)
            await self.games.rate(stored.row, game)
        if then is not None and done and not self.broadcast.by_jobs:
            # The second card a defender's first card named, noted as the scaled mode notes
            # it with the move: the turn's reminder, drawing a fresh panel, asks for its cell.
            await self.store.note_told(stored.match_id, then_key(len(game.history), then))
        notices = await self.broadcast.change(stored, before, done, mover=mover,
                                              from_panel=from_panel, then=then)
        frame = frame_for(game.tours[before.tour_index].observation(None).placements)
        return Outcome(echo(tr, done, frame), notices,
                       announced_later=self.broadcast.by_jobs and bool(done))

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
            outcome = await self.play_for_seat(stored, actions)
            return Outcome(None, outcome.notices)

    async def play_for_seat(self, stored: StoredMatch, actions: Sequence[Action]) -> Outcome:
        """The computer makes the turn of the seat to move (a computer seat's, or an absent
        person's) with ``actions`` decided beforehand. Hold the chat's lock, and check first
        that the match is still at the move the actions were decided for; the store refuses
        a stale move number anyway (:class:`SequenceConflict`)."""
        game = stored.game
        tr = await self.people.chat_tr(stored.row.chat_id)
        if check(tr, game, actions)[1] is not None:
            log.error("match %s: the computer chose an illegal turn; playing the first "
                      "legal step instead", stored.match_id)
            actions = [game.legal_actions()[0]]
        return await self.commit(stored, list(actions), tr, update_id=None, mover=None)


def check(tr: Tr, game: Match, steps: Sequence[Action]) -> tuple[list[Action], str | None]:
    """The one simulation of a person's move, on a copy: (the steps to store, None) if all
    are legal, else ([], the reply refusing them). Every step is played as the seat to
    move's: a step after the turn passed on is refused, never played for the next seat. An
    ``EndTurn`` that a one-card ``/play`` adds is dropped when the card already ended the
    turn (the defender's last card, or the tour's end)."""
    trial = game.clone()
    frame = tour_frame(trial)
    seat = trial.current_player
    for i, step in enumerate(steps):
        if (isinstance(step, EndTurn) and i == len(steps) - 1 and i >= 1
                and turn_is_over(trial, seat)):
            return list(steps[:-1]), None
        try:
            trial.apply(step, seat=seat)
        except IllegalMove as exc:
            return [], illegal(tr, step, frame, exc)
    return list(steps), None
