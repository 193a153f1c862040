"""The "Play now" pool: people waiting for a rated table, matched by rating, from any chat.

State in, decision out: :func:`match_pool` takes the entries (who, their rating, the table
they want, when they joined, whom they blocked), the time now and the settings, and returns
the tables to start and the computer offers to make. Nothing is kept here between calls.

**Windows.** A person accepts opponents within a rating window that widens while they wait::

    window = base_window + widen_by × ⌊waited / widen_every⌋     (100 + 50 per 5 s by default)

Two people may meet only when **each** window includes the other (the rating difference is
at most the smaller window), so a newcomer is not thrown at someone far away just because
that other person has waited long. Nobody meets a person either of them blocked.

**Matching**, per table kind, the longest-waiting first (their window is the widest and
their patience the shortest): a duel takes the closest rating that both windows allow; a
trio or a teams table gathers the closest ratings until it has 3 or 4 people whose windows
all include each other.

**Computers.** Whoever is still unmatched after ``computer_after`` seconds (30 by default)
is offered a computer of similar strength: the calibrated level whose rating is closest
(:func:`closest_level`). The offer is only that; until they accept, they stay in the pool.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from tournaments.common import TournamentError


class TableKind(Enum):
    """The tables the pool fills, with their number of people."""

    DUEL = "duel"
    TRIO = "trio"
    TEAMS = "teams"

    @property
    def size(self) -> int:
        """How many people sit at the table."""
        return {"duel": 2, "trio": 3, "teams": 4}[self.value]


@dataclass(frozen=True, slots=True)
class PoolEntry:
    """One person waiting: ``joined_at`` on the caller's clock (seconds); ``blocked`` the
    people they never want to meet again (the block works both ways)."""

    player: int
    rating: int
    table: TableKind = TableKind.DUEL
    joined_at: float = 0.0
    blocked: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class PoolSettings:
    """The window's start and widening, the wait before a computer offer, and the calibrated
    computer levels (name → rating) to offer from."""

    base_window: int = 100
    widen_by: int = 50
    widen_every: float = 5.0
    computer_after: float = 30.0
    levels: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PoolGroup:
    """A table to start: its kind and its people, highest rating first (ties by id)."""

    table: TableKind
    players: tuple[int, ...]

    @property
    def sides(self) -> tuple[tuple[int, ...], ...]:
        """Who plays with whom: each alone, except at a teams table, where the strongest and
        the weakest partner the two in the middle (1st + 4th against 2nd + 3rd), so that the
        two sides' rating sums are as close as the order allows."""
        if self.table is TableKind.TEAMS:
            first, second, third, fourth = self.players
            return ((first, fourth), (second, third))
        return tuple((pid,) for pid in self.players)


@dataclass(frozen=True, slots=True)
class ComputerOffer:
    """An offer to someone who waited long enough: the closest computer level and its rating."""

    player: int
    level: str
    rating: int


def window(entry: PoolEntry, now: float, settings: PoolSettings) -> int:
    """The rating difference ``entry`` accepts at ``now``: it starts at ``base_window`` and
    grows by ``widen_by`` each full ``widen_every`` seconds of waiting."""
    waited = max(0.0, now - entry.joined_at)
    steps = int(waited // settings.widen_every) if settings.widen_every > 0 else 0
    return settings.base_window + settings.widen_by * steps


def closest_level(rating: int, levels: Mapping[str, int]) -> str:
    """The computer level whose calibrated rating is closest to ``rating``; on a tie the
    weaker level (a first game against a computer should not be the harder of two equals),
    then the name."""
    if not levels:
        raise TournamentError("no computer level to offer")
    return min(levels, key=lambda name: (abs(levels[name] - rating), levels[name], name))


def match_pool(
    entries: Iterable[PoolEntry], now: float, settings: PoolSettings = PoolSettings()
) -> tuple[tuple[PoolGroup, ...], tuple[ComputerOffer, ...]]:
    """The tables to start now and the computer offers to make (see the module's docstring).

    Groups come kind by kind (duel, trio, teams), each kind's in the order they were formed
    (the longest-waiting person's table first); offers in the order of waiting. Each person is
    in at most one group, and those in a group get no offer. Deterministic: ties in rating
    distance go to the longer wait, then the smaller id. About O(n log n) when windows hold a
    bounded number of people; a pool of 1,000 is matched in a few milliseconds.
    """
    listed = list(entries)
    seen: set[int] = set()
    for entry in listed:
        if entry.player in seen:
            raise TournamentError(f"player {entry.player} is in the pool twice")
        seen.add(entry.player)
    widths = {e.player: window(e, now, settings) for e in listed}
    groups: list[PoolGroup] = []
    for kind in TableKind:
        of_kind = [e for e in listed if e.table is kind]
        groups.extend(_match_kind(kind, of_kind, widths))
    seated = {pid for group in groups for pid in group.players}
    offers: list[ComputerOffer] = []
    if settings.levels:
        for entry in sorted(listed, key=_seniority):
            if entry.player not in seated and now - entry.joined_at >= settings.computer_after:
                level = closest_level(entry.rating, settings.levels)
                offers.append(ComputerOffer(entry.player, level, settings.levels[level]))
    return tuple(groups), tuple(offers)


def _seniority(entry: PoolEntry) -> tuple[float, int]:
    return (entry.joined_at, entry.player)


def _compatible(a: PoolEntry, b: PoolEntry, widths: Mapping[int, int]) -> bool:
    """Both windows include the other, and neither blocked the other."""
    gap = abs(a.rating - b.rating)
    return (
        gap <= widths[a.player]
        and gap <= widths[b.player]
        and b.player not in a.blocked
        and a.player not in b.blocked
    )


def _match_kind(
    kind: TableKind, entries: Sequence[PoolEntry], widths: Mapping[int, int]
) -> list[PoolGroup]:
    """The tables of one kind. The free people are kept sorted by rating, so that each
    search looks only at the ratings inside the seeker's window, nearest first."""
    free = sorted(entries, key=lambda e: (e.rating, e.joined_at, e.player))
    ratings = [e.rating for e in free]
    groups: list[PoolGroup] = []
    for seeker in sorted(entries, key=_seniority):
        at = _position(free, ratings, seeker)
        if at is None:
            continue  # already seated at an earlier table
        table = [seeker]
        for other in _nearest(free, at, widths[seeker.player]):
            if all(_compatible(member, other, widths) for member in table):
                table.append(other)
                if len(table) == kind.size:
                    break
        if len(table) < kind.size:
            continue
        for member in table:
            spot = _position(free, ratings, member)
            assert spot is not None
            del free[spot]
            del ratings[spot]
        members = sorted(table, key=lambda e: (-e.rating, e.player))
        groups.append(PoolGroup(kind, tuple(e.player for e in members)))
    return groups


def _position(free: Sequence[PoolEntry], ratings: Sequence[int], entry: PoolEntry) -> int | None:
    """Where ``entry`` is in ``free`` (sorted by rating), or ``None`` once it has left it."""
    at = bisect.bisect_left(ratings, entry.rating)
    while at < len(free) and ratings[at] == entry.rating:
        if free[at].player == entry.player:
            return at
        at += 1
    return None


def _nearest(free: Sequence[PoolEntry], at: int, width: int) -> Iterable[PoolEntry]:
    """The free people around index ``at`` (the seeker) within ``width`` rating points of
    it, nearest rating first; between a lower and a higher rating at the same distance, the
    longer wait, then the smaller id."""
    centre = free[at].rating
    below, above = at - 1, at + 1

    def key(entry: PoolEntry) -> tuple[int, float, int]:
        return (abs(entry.rating - centre), entry.joined_at, entry.player)

    while True:
        low = free[below] if below >= 0 and centre - free[below].rating <= width else None
        high = free[above] if above < len(free) and free[above].rating - centre <= width else None
        if low is None and high is None:
            return
        if high is None or (low is not None and key(low) <= key(high)):
            assert low is not None
            yield low
            below -= 1
        else:
            yield high
            above += 1
