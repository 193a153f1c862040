"""A match: several tours with rotating roles, totals and a result (RULES.md §4, §6, §7).

Randomness (the lot for the first dealer, every shuffle, every exchange redeal) comes from
one ``random.Random`` owned by the match, so ``Match(players, settings, seed=s)`` followed
by the same player actions always reaches the same state: that is how storage rebuilds a
match from its seed and move log. Chance steps are resolved by the match itself; its
``current_player`` is always a seat or ``TERMINAL``.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from krendzu.actions import Action, Redeal, parse_action
from krendzu.errors import SettingsError
from krendzu.export import export_record
from krendzu.illegal import GameOver, NotAnAction, NotYourTurn, WrongPhase
from krendzu.outcome import Outcome, match_outcome
from krendzu.tables import Settings, Table, TourRoles, dealer_of_tour, tour_roles
from krendzu.tour import OVER, REDEAL, TERMINAL, Tour, TourView


@dataclass(frozen=True, slots=True)
class MatchResult:
    """Final (or current) standing by points alone: totals per seat, the leading seats, and
    whether tied. A result with resignations or a concession is
    :func:`krendzu.outcome.match_outcome`'s."""

    totals: tuple[int, ...]
    winners: tuple[int, ...]
    draw: bool


class Match:
    """Full state of a match. Seats are 0..n-1; ``players`` holds their display names."""

    def __init__(
        self,
        players: Sequence[str],
        settings: Settings | None = None,
        *,
        seed: int | None = None,
        rng: random.Random | None = None,
        first_dealer: int | None = None,
        deal_first_tour: bool = True,
    ) -> None:
        settings = settings or Settings()
        if len(players) != settings.table.players:
            raise SettingsError(
                f"a {settings.table.value} table seats {settings.table.players} players, "
                f"not {len(players)}"
            )
        names = [str(p) for p in players]
        if len(set(names)) != len(names) or any(not name for name in names):
            raise SettingsError("players need distinct, non-empty names")
        if rng is None:
            rng = random.Random(seed)
        self.players: tuple[str, ...] = tuple(names)
        self.settings = settings
        self.rng = rng
        if first_dealer is None:
            first_dealer = rng.randrange(len(players))  # the lot (RULES.md §6)
        self.first_dealer = first_dealer
        self.tours: list[Tour] = []
        self.history: list[Action] = []  # player actions, in order, across tours
        if deal_first_tour:
            self.deal_next_tour()

    # Structure ------------------------------------------------------------------------

    @property
    def table(self) -> Table:
        return self.settings.table

    @property
    def tour_count(self) -> int:
        return self.settings.tour_count

    def roles_of_tour(self, index: int) -> TourRoles:
        return tour_roles(self.table, dealer_of_tour(self.table, self.first_dealer, index))

    @property
    def tour(self) -> Tour:
        """The tour being played (the last one dealt)."""
        if not self.tours:
            raise WrongPhase("no tour has been dealt yet", phase=None)
        return self.tours[-1]

    @property
    def tour_index(self) -> int:
        return len(self.tours) - 1

    def deal_next_tour(self) -> Tour:
        if len(self.tours) >= self.tour_count:
            raise GameOver("every tour of the match has been played")
        if self.tours and not self.tours[-1].is_over:
            raise WrongPhase("the current tour is not over", phase=self.tours[-1].phase)
        roles = self.roles_of_tour(len(self.tours))
        tour = Tour.deal(
            self.table, roles, self.settings.deal_sizes, self.rng, self.settings.exchange_limit
        )
        self.tours.append(tour)
        return tour

    @property
    def is_over(self) -> bool:
        return len(self.tours) == self.tour_count and self.tours[-1].is_over

    @property
    def current_player(self) -> int:
        if self.is_over or not self.tours:
            return TERMINAL
        return self.tour.current_player

    # Playing --------------------------------------------------------------------------

    def legal_actions(self) -> list[Action]:
        if self.is_over or not self.tours:
            return []
        return self.tour.legal_actions()

    def apply(self, action: Action | str, *, seat: int | None = None) -> None:
        """Apply a player's step (object or its text); resolve chance; deal the next tour.

        ``seat``: who means to act. Given, a step that is not that seat's to make raises
        :class:`~krendzu.illegal.NotYourTurn`: the turn may pass on in the middle of a
        command of several steps (an attacker's one card, the opening card), and the rest
        must not be played for the next seat."""
        if isinstance(action, str):
            action = parse_action(action)
        if isinstance(action, Redeal):
            raise NotAnAction("the redeal is dealt by the match, not played", given=action)
        if self.is_over:
            raise GameOver("the match is over")
        if seat is not None and seat != self.current_player:
            raise NotYourTurn(seat, self.current_player)
        tour = self.tour
        tour.apply(action)
        self.history.append(action)
        self.resolve_chance()

    def resolve_chance(self) -> None:
        """Deal what chance owes: the exchange redeal, then the next tour after one ends."""
        tour = self.tour
        if tour.phase == REDEAL:
            tour.redeal(tour.sample_redeal(self.rng))
        if tour.phase == OVER and len(self.tours) < self.tour_count:
            self.deal_next_tour()

    def clone(self) -> Match:
        new = object.__new__(Match)
        new.players = self.players
        new.settings = self.settings
        new.rng = random.Random()
        new.rng.setstate(self.rng.getstate())
        new.first_dealer = self.first_dealer
        new.tours = [t.clone() for t in self.tours]
        new.history = self.history[:]
        return new

    # Scores ---------------------------------------------------------------------------

    def tour_points(self) -> list[dict[int, int]]:
        return [t.points_by_player() for t in self.tours]

    def totals(self) -> tuple[int, ...]:
        totals = [0] * len(self.players)
        for tour in self.tours:
            for seat, pts in tour.points_by_player().items():
                totals[seat] += pts
        return tuple(totals)

    def result(self) -> MatchResult:
        """Highest total wins; equal totals are a draw. Teams share their total. (The
        standing by points, also during the match: :meth:`outcome` adds resignations.)"""
        outcome = Outcome.of_totals(self.table, self.totals())
        return MatchResult(outcome.points, outcome.winners, outcome.draw)

    def outcome(self, resigned: Collection[int] = (), conceded: int | None = None) -> Outcome:
        """The match's outcome with resignations and a concession: see
        :func:`krendzu.outcome.match_outcome`."""
        return match_outcome(self, resigned, conceded)

    # Views ----------------------------------------------------------------------------

    def observation(self, seat: int | None) -> MatchView:
        return MatchView(
            viewer=seat,
            players=self.players,
            settings=self.settings,
            first_dealer=self.first_dealer,
            tour_index=self.tour_index,
            tour_points=tuple(tuple(sorted(p.items())) for p in self.tour_points()),
            totals=self.totals(),
            match_over=self.is_over,
            tour=self.tour.observation(seat),
        )

    def to_record(self) -> dict[str, object]:
        return export_record(self)

    def __repr__(self) -> str:
        return (
            f"<Match {self.table.value} tour {self.tour_index + 1}/{self.tour_count} "
            f"totals={self.totals()}>"
        )


@dataclass(frozen=True, slots=True)
class MatchView:
    """What one seat (or, with ``viewer=None``, the public) may see of a match."""

    viewer: int | None
    players: tuple[str, ...]
    settings: Settings
    first_dealer: int
    tour_index: int
    tour_points: tuple[tuple[tuple[int, int], ...], ...]
    totals: tuple[int, ...]
    match_over: bool
    tour: TourView

    @property
    def current_player(self) -> int:
        return TERMINAL if self.match_over else self.tour.current_player
