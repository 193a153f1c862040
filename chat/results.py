"""The outcome of a stored match: the engine's :mod:`krendzu.outcome` fed with what the
store knows (the seats whose players resigned, the seat that conceded, the final totals).

The closing summary, the ratings and ``/history`` all take their winner from here, and the
statistics from the same engine function inside the store, so none of them can name a
different winner (a trio player who resigned ranks last in every one of them).
"""

from __future__ import annotations

from krendzu import Match, Outcome, match_outcome
from storage import MatchRow, MatchStatus, Store


async def resigned_seats(store: Store, match_id: int) -> frozenset[int]:
    """Seats whose players resigned while the computer played on (a trio in a group)."""
    return frozenset(s.seat for s in (await store.stand_ins(match_id)).values() if s.resigned)


async def stored_outcome(store: Store, row: MatchRow, game: Match | None = None
                         ) -> Outcome | None:
    """The result of a finished or conceded match; ``None`` while it is played or when it
    was cancelled. ``game`` (the rebuilt match) gives the totals of a conceded match;
    without it a finished match's stored totals do, and a conceded one's points are 0."""
    if row.status is MatchStatus.ABANDONED and row.conceded_by is not None:
        totals = game.totals() if game is not None else (0,) * row.table.players
        return Outcome.of_totals(row.table, totals, conceded=row.conceded_by)
    if row.status is not MatchStatus.FINISHED:
        return None
    resigned = await resigned_seats(store, row.match_id)
    if game is not None and game.is_over:
        return match_outcome(game, resigned)
    if row.totals is None:
        return None
    return Outcome.of_totals(row.table, row.totals, resigned=resigned)
