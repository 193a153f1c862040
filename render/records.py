"""Positions out of ``krendzu-record/1`` records: "after move M of tour T", and every step.

A position is rebuilt by importing a truncated copy of the record (the tours up to T, that
tour's moves up to M), so every move is checked by the engine on the way. The public
observation is returned: pictures of a record never show a hand.
"""

from __future__ import annotations

import copy
from typing import Any

from krendzu.match import Match, MatchView
from krendzu.record import export_record, import_record


def as_record(source: Any) -> dict[str, Any]:
    """A record dict from a record or a :class:`~krendzu.Match`."""
    if isinstance(source, Match):
        return export_record(source)
    if isinstance(source, dict):
        return source
    raise TypeError(f"expected a krendzu-record/1 dict or a Match, not {type(source).__name__}")


def default_tour(record: dict[str, Any]) -> int:
    """The last tour with a move (or the last tour) of the record."""
    tours = record.get("tours") or []
    for t in range(len(tours) - 1, -1, -1):
        if tours[t].get("moves"):
            return t
    return max(0, len(tours) - 1)


def truncate(record: dict[str, Any], tour: int, moves: int, cards: int | None = None
             ) -> dict[str, Any]:
    """A copy of ``record`` with tours[:tour + 1] and that tour's first ``moves`` moves.

    With ``cards``, the last kept move is cut to its first ``cards`` cards and marked
    ``pending`` when that leaves a defender's double half done.
    """
    out = copy.deepcopy(record)
    out["tours"] = out["tours"][: tour + 1]
    raw = out["tours"][tour]
    kept = raw.get("moves", [])[:moves]
    if cards is not None and kept:
        last = kept[-1]
        if cards < len(last["cards"]):
            last["cards"] = last["cards"][:cards]
            last["pending"] = True
        else:
            last.pop("pending", None)
    raw["moves"] = kept
    return out


def _view(match: Match, tour: int) -> MatchView:
    """The public view of tour ``tour`` (import deals the next tour after a finished one)."""
    tours = match.tours[: tour + 1]
    totals = [0] * len(match.players)
    points = []
    for t in tours:
        by_seat = t.points_by_player()
        points.append(tuple(sorted(by_seat.items())))
        for seat, p in by_seat.items():
            totals[seat] += p
    last = tours[-1]
    return MatchView(
        viewer=None,
        players=match.players,
        settings=match.settings,
        first_dealer=match.first_dealer,
        tour_index=tour,
        tour_points=tuple(points),
        totals=tuple(totals),
        match_over=last.is_over and tour + 1 >= match.tour_count,
        tour=last.observation(None),
    )


def position(source: Any, *, tour: int | None = None, move: int | None = None) -> MatchView:
    """The public view after move ``move`` (0-based; -1 = before the first move) of tour
    ``tour`` (0-based; default: the last tour with a move); default move: the tour's end."""
    record = as_record(source)
    tours = record.get("tours") or []
    if not tours:
        return import_record(record).observation(None)
    if tour is None:
        t = default_tour(record)
    else:
        t = tour + len(tours) if tour < 0 else tour
        if not 0 <= t < len(tours):
            raise IndexError(f"tour {tour} is out of range 0..{len(tours) - 1}")
    count = len(tours[t].get("moves", []))
    m = count - 1 if move is None else move
    if not -1 <= m < count:
        raise IndexError(f"move {move} is out of range -1..{count - 1} in tour {t}")
    return _view(import_record(truncate(record, t, m + 1)), t)


def tour_steps(source: Any, *, tour: int | None = None) -> list[MatchView]:
    """Public views of tour ``tour``: before the first card, then after every card placed
    (``placements + 1`` views). A pass shows in the view of the next card, and the last view
    includes every move of the tour."""
    record = as_record(source)
    t = default_tour(record) if tour is None else tour
    moves = record["tours"][t].get("moves", [])
    steps: list[tuple[int, int | None]] = []
    for m, move in enumerate(moves):
        for placed in range(1, len(move.get("cards", [])) + 1):
            steps.append((m, placed))
    views = [_view(import_record(truncate(record, t, 0)), t)]
    for i, (m, k) in enumerate(steps):
        cut = m + 1
        if k == len(moves[m]["cards"]):
            # Include the passes that follow, up to the next move with cards.
            nxt = steps[i + 1][0] if i + 1 < len(steps) else len(moves)
            cut = nxt
            k = None
        views.append(_view(import_record(truncate(record, t, cut, k)), t))
    return views
