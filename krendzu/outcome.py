"""Who won a match: places, winners, a draw and the points, resignations and concessions
included (RULES.md §7).

The one place that decides a result. The closing summary, the statistics, the ratings and
the list of past matches all ask :func:`match_outcome` (or :meth:`Outcome.of_totals` where
only the stored totals are at hand), so they cannot disagree. The rules it applies:

- Sides (:attr:`~krendzu.tables.Table.sides`: one seat each, or two partners in ``teams``)
  are ranked by their match totals; sides level at the top share a draw.
- A side with a seat that *resigned* (in a trio the computer plays the seat on to the end)
  ranks last whatever its points; several such sides share the last place. If every side
  resigned, nobody wins.
- A side that *conceded* (a duel or team match, or a trio alone with computers, ended at
  once by ``/resign``) loses; every other side wins it together, whatever the points so far.

Standard library only, like the rest of the engine; it does not import :mod:`krendzu.match`
(a :class:`~krendzu.match.Match` fits :class:`Played`), so ``Match.result()`` can be built
on it without an import cycle.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from krendzu.tables import Table


class Played(Protocol):
    """What :func:`match_outcome` reads of a match (a :class:`~krendzu.match.Match`)."""

    @property
    def table(self) -> Table: ...

    @property
    def is_over(self) -> bool: ...

    def totals(self) -> tuple[int, ...]: ...


@dataclass(frozen=True, slots=True)
class Outcome:
    """The result of a match, per seat.

    ``places``: 1 is first; sides that tie share a place and the next place is skipped
    (1, 1, 3), so a place is 1 + the number of sides strictly ahead. ``winners``: the seats
    that won, or that share a draw (``draw``); empty when nobody won. ``points``: the match
    totals per seat (partners share theirs; a concession keeps the points so far)."""

    table: Table
    points: tuple[int, ...]
    places: tuple[int, ...]
    winners: tuple[int, ...]
    draw: bool
    resigned: tuple[int, ...] = ()
    conceded_by: int | None = None

    def won(self, seat: int) -> bool:
        """The seat won outright (alone or with its partner, or with the other sides of a
        concession)."""
        return seat in self.winners and not self.draw

    def drew(self, seat: int) -> bool:
        """The seat shares a draw at the top."""
        return seat in self.winners and self.draw

    def lost(self, seat: int) -> bool:
        return seat not in self.winners

    @property
    def side_places(self) -> tuple[int, ...]:
        """The place of each side, in :attr:`Table.sides` order (what a rating model ranks:
        lower is better, equal is a tie)."""
        return tuple(self.places[side[0]] for side in self.table.sides)

    @classmethod
    def of_totals(
        cls,
        table: Table,
        totals: Sequence[int],
        *,
        resigned: Collection[int] = (),
        conceded: int | None = None,
    ) -> Outcome:
        """The outcome from the match totals per seat (see the module's rules).

        For a concession the totals only fill :attr:`points`: pass zeros if unknown."""
        n = table.players
        points = tuple(int(t) for t in totals)
        if len(points) != n:
            raise ValueError(f"a {table.value} match has {n} totals, not {len(points)}")
        out_seats = frozenset(resigned)
        if conceded is not None:
            out_seats |= {conceded}
        if any(not 0 <= seat < n for seat in out_seats):
            raise ValueError(f"a {table.value} match has seats 0..{n - 1}")
        sides = table.sides
        out = [any(seat in out_seats for seat in side) for side in sides]
        # A sort key per side, smaller is better: contenders by points (all level after a
        # concession), then every side that resigned or conceded, level with each other.
        worst = float("inf")
        keys: list[float] = []
        for side, gone in zip(sides, out, strict=True):
            if gone:
                keys.append(worst)
            elif conceded is not None:
                keys.append(0.0)
            else:
                keys.append(-max(points[seat] for seat in side))
        side_place = [1 + sum(other < key for other in keys) for key in keys]
        top = [i for i, gone in enumerate(out) if not gone and side_place[i] == 1]
        places = [0] * n
        for side, place in zip(sides, side_place, strict=True):
            for seat in side:
                places[seat] = place
        return cls(
            table=table,
            points=points,
            places=tuple(places),
            winners=tuple(sorted(seat for i in top for seat in sides[i])),
            draw=conceded is None and len(top) > 1,
            resigned=tuple(sorted(frozenset(resigned))),
            conceded_by=conceded,
        )


def match_outcome(
    match: Played, resigned: Collection[int] = (), conceded: int | None = None
) -> Outcome:
    """The outcome of ``match``: played to the end (``resigned``: the seats whose players
    resigned while the computer played on), or ended early because seat ``conceded``
    conceded it. A match that is neither over nor conceded has no outcome yet
    (``ValueError``); ``Match.result()`` gives the standing so far."""
    if conceded is None and not match.is_over:
        raise ValueError("the match is not over (and nobody conceded it)")
    return Outcome.of_totals(match.table, match.totals(), resigned=resigned, conceded=conceded)


__all__ = ["Outcome", "Played", "match_outcome"]
