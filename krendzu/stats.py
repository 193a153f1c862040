"""What each seat's statistics gain from a finished match (wins, points, combinations...).

These are rule facts — which side attacked a tour, which combination was one suit, which
was an own goal — so the engine computes them and storage only adds them up. Who won is
not decided here: it is the :class:`~krendzu.outcome.Outcome` the caller passes (the one the
closing summary and the ratings use), so statistics cannot disagree with them.

Standard library only, like the rest of the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

from krendzu.match import Match
from krendzu.outcome import Outcome


@dataclass(frozen=True, slots=True)
class SeatStatistics:
    """What one seat's statistics gain from a finished match."""

    seat: int
    win: bool
    draw: bool
    points_scored: int  # its side's match total (points scored while it attacked)
    points_conceded: int  # the points of every tour in which it defended
    tours_attacked: int = 0
    tours_defended: int = 0
    best_tour: int = 0  # most points in one tour it attacked
    suit_combos: int = 0  # combinations of one suit scored while it attacked
    progression_combos: int = 0  # the other combinations scored while it attacked
    own_goals_conceded: int = 0  # combinations it completed itself while defending


def seat_statistics(match: Match, outcome: Outcome) -> list[SeatStatistics]:
    """Per-seat statistics of a match played to the end, by seat.

    ``outcome`` is :func:`krendzu.outcome.match_outcome` of the same match (with the seats
    that resigned): it alone says who won or drew, and its points are what each seat
    scored. A match that is not over has none (``ValueError``): a conceded match ends
    before its last tour, and only who won it is counted (``Outcome.won`` of the
    concession)."""
    if not match.is_over:
        raise ValueError("the match is not over")
    if len(outcome.points) != len(match.players):
        raise ValueError("that outcome is not of this match (the seat counts differ)")
    out = []
    for seat in range(len(match.players)):
        attacked = [t for t in match.tours if t.is_attacker[seat]]
        suited = progression = own_goals = 0
        for tour in match.tours:
            board = tour.board()
            for combo in tour.combos:
                if tour.is_attacker[seat]:
                    if len({board[cell].suit for cell in combo.cells}) == 1:
                        suited += 1
                    else:
                        progression += 1
                elif combo.own_goal and combo.player == seat:
                    own_goals += 1
        out.append(
            SeatStatistics(
                seat=seat,
                win=outcome.won(seat),
                draw=outcome.drew(seat),
                points_scored=outcome.points[seat],
                points_conceded=sum(t.points for t in match.tours if not t.is_attacker[seat]),
                tours_attacked=len(attacked),
                tours_defended=len(match.tours) - len(attacked),
                best_tour=max((t.points for t in attacked), default=0),
                suit_combos=suited,
                progression_combos=progression,
                own_goals_conceded=own_goals,
            )
        )
    return out


__all__ = ["SeatStatistics", "seat_statistics"]
