"""A typed move as game steps: pure helpers on the engine's actions."""

from __future__ import annotations

from collections.abc import Sequence

from chat.describe import tour_frame
from chat.model import END_WORDS, Placement, parse_placements
from krendzu import Action, EndTurn, IllegalMove, Match, Pass, Place
from krendzu.tour import PLAY


def words_to_steps(game: Match, seat: int | None, words: Sequence[str]) -> list[Action]:
    """A typed move (``QC M12``, ``9D L12 QS M14``, ``pass``, ``end``) as the steps of
    ``seat``'s turn: a defender's one-card move also ends the turn. :class:`InputError` for
    words that are not a move."""
    lowered = [w.lower() for w in words]
    if lowered in (["pass"], ["пас"]):
        return [Pass()]
    if len(lowered) == 1 and lowered[0] in END_WORDS:
        return [EndTurn()]
    placements = parse_placements(list(words), tour_frame(game))
    defender = (seat is not None and game.current_player == seat
                and game.tour.phase == PLAY
                and seat not in game.tour.roles.attackers
                and bool(game.tour.placed) and game.tour.step_in_turn == 0)
    return placements_to_steps(placements, defender)


def placements_to_steps(placements: Sequence[Placement], defender_turn: bool) -> list[Action]:
    steps: list[Action] = [Place(p.card, p.x, p.y) for p in placements]
    if defender_turn and len(steps) == 1:
        steps.append(EndTurn())
    return steps


def without_needless_end(game: Match, steps: Sequence[Action]) -> list[Action]:
    """Drop an ``EndTurn`` that a one-card ``/play`` adds when the card already ended the turn
    (the defender's last card, or the tour's end)."""
    if not steps or not isinstance(steps[-1], EndTurn) or len(steps) < 2:
        return list(steps)
    trial = game.clone()
    seat = trial.current_player
    try:
        for step in steps[:-1]:
            trial.apply(step)
    except IllegalMove:
        return list(steps)  # the check that follows explains what is wrong
    if turn_is_over(trial, seat):
        return list(steps[:-1])
    return list(steps)


def turn_is_over(trial: Match, seat: int) -> bool:
    """After a defender's first card: whether that card already ended the seat's turn (its
    last card, or the tour's end), so an ``EndTurn`` added by a one-card ``/play`` is not
    needed."""
    return trial.is_over or trial.current_player != seat or trial.tour.step_in_turn != 1
