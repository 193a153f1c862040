"""Ratings after every finished match: the OpenSkill (Weng-Lin) Plackett-Luce model.

One model for every table: a duel is two sides of one, a trio three sides of one (each player
has their own total), 2 v 2 two sides of two. Sides are ranked by their places in the engine's
outcome (:mod:`krendzu.outcome`: by match totals, equal totals tie; a side that resigned or
conceded last), the same places the summary and the statistics use. Computer seats play at
a fixed rating per level and are never updated, so a match against the computer rates the
person too. What players see is the conservative ``mu - 3 sigma``, and only after a few rated
matches.
"""

from __future__ import annotations

import logging
from collections.abc import Collection

from openskill.models import PlackettLuce

from chat.results import resigned_seats
from krendzu import Match, match_outcome
from storage import MatchRow, MatchStatus, RatingRow, SeatKind, Store

log = logging.getLogger(__name__)

#: Fixed (mu, sigma) of the computer levels (level codes as stored: 1 easy, 2 normal, 3 hard).
COMPUTER_RATINGS: dict[int, tuple[float, float]] = {1: (18.0, 1.0), 2: (25.0, 1.0),
                                                     3: (31.0, 1.0)}
#: Rated matches before a player's rating is shown.
SHOW_AFTER = 3

_MODEL = PlackettLuce()

#: The "Play now" pool's scale (issue 40): a person's skill ``mu`` times this, so that the
#: pool's windows (100 points, +50 per 5 s: tournaments/pool.py) span a few mu. A newcomer
#: (mu 25) is 1000, like the normal computer.
POOL_SCALE = 40
#: The computer levels the pool offers, at their fixed calibrated ratings above
#: (:data:`COMPUTER_RATINGS`) on the pool's scale: easy 720, normal 1000, hard 1240.
POOL_LEVELS: dict[str, int] = {name: round(COMPUTER_RATINGS[code][0] * POOL_SCALE)
                               for code, name in ((1, "easy"), (2, "normal"), (3, "hard"))}


def pool_rating(rating: RatingRow | None) -> int:
    """A person's rating in the pool: their skill ``mu`` on the pool's scale (the expected
    strength, not the conservative figure /top shows, so a newcomer meets newcomers)."""
    return round((rating.mu if rating is not None else _MODEL.mu) * POOL_SCALE)


def display_rating(mu: float, sigma: float) -> float:
    """What players see: the conservative estimate mu - 3 sigma (0 for a newcomer)."""
    return mu - 3 * sigma


def shown(rating: RatingRow | None) -> float | None:
    """The display rating, or None while it rests on too few matches."""
    if rating is None or rating.rated_matches < SHOW_AFTER:
        return None
    return display_rating(rating.mu, rating.sigma)


def new_ratings(row: MatchRow, game: Match, current: dict[int, RatingRow],
                resigned: Collection[int] = ()) -> dict[int, tuple[float, float]]:
    """(mu, sigma) after the match for every person seated in it, ranked by the engine's
    outcome: a side that conceded (``row.conceded_by``) or a trio seat that ``resigned``
    ranks last."""
    ranks = list(match_outcome(game, resigned, row.conceded_by).side_places)
    teams = []
    for side in row.table.sides:
        team = []
        for seat in side:
            seat_row = row.seats[seat]
            if seat_row.kind is SeatKind.HUMAN and seat_row.user_id is not None:
                known = current.get(seat_row.user_id)
                team.append(_MODEL.rating(mu=known.mu, sigma=known.sigma) if known
                            else _MODEL.rating())
            else:
                mu, sigma = COMPUTER_RATINGS.get(seat_row.level or 2, COMPUTER_RATINGS[2])
                team.append(_MODEL.rating(mu=mu, sigma=sigma))
        teams.append(team)
    rated = _MODEL.rate(teams, ranks=[float(r) for r in ranks])
    out: dict[int, tuple[float, float]] = {}
    for side, team in zip(row.table.sides, rated, strict=True):
        for seat, rating in zip(side, team, strict=True):
            user_id = row.seats[seat].user_id
            if row.seats[seat].kind is SeatKind.HUMAN and user_id is not None:
                out[user_id] = (float(rating.mu), float(rating.sigma))
    return out


async def rate_match(store: Store, row: MatchRow, game: Match) -> bool:
    """Rate a finished match once (False if it was rated already or has no person)."""
    conceded = row.status is MatchStatus.ABANDONED and row.conceded_by is not None
    if not conceded and (row.status is not MatchStatus.FINISHED or not game.is_over):
        return False
    people = [s.user_id for s in row.seats if s.user_id is not None]
    if not people:
        return await store.apply_ratings(row.match_id, {})  # nothing to rate: done
    resigned = await resigned_seats(store, row.match_id)
    updated = new_ratings(row, game, await store.ratings_of(people), resigned)
    return await store.apply_ratings(row.match_id, updated)
