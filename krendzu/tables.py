"""Tables of 2, 3 and 4 players: seats, roles, turn order, rotation, deal sizes (RULES.md §4–6).

Seats are numbered 0..n-1 in joining order, clockwise. Everything about "who does what in
tour t" is a pure function of the table, the first dealer (drawn by lot) and t.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from krendzu.cards import DECK_SIZE
from krendzu.errors import SettingsError


class Table(StrEnum):
    """The four kinds of table. Values are the record spellings."""

    DUEL = "duel"
    TRIO_LONE_ATTACKER = "trio-lone-attacker"
    TRIO_LONE_DEFENDER = "trio-lone-defender"
    TEAMS = "teams"

    @property
    def players(self) -> int:
        return {"duel": 2, "teams": 4}.get(self.value, 3)

    @property
    def sides(self) -> tuple[tuple[int, ...], ...]:
        """Seats sharing a match result: teams are seats 1 & 3 against 2 & 4 (§6); at the
        other tables every player has their own total."""
        if self is Table.TEAMS:
            return ((0, 2), (1, 3))
        return tuple((seat,) for seat in range(self.players))

    @classmethod
    def parse(cls, text: str | Table) -> Table:
        try:
            return cls(text)
        except ValueError:
            names = ", ".join(t.value for t in cls)
            raise SettingsError(f"unknown table {text!r}: use one of {names}") from None


@dataclass(frozen=True, slots=True)
class DealSizes:
    """Cards each attacker and each defender gets."""

    attacker: int
    defender: int


#: Recommended deal presets per table (RULES.md §5). The first is the default.
DEAL_PRESETS: dict[Table, dict[str, DealSizes]] = {
    Table.DUEL: {
        "standard": DealSizes(12, 14),
        "sharp": DealSizes(12, 13),
        "short": DealSizes(9, 11),
        "long": DealSizes(14, 16),
    },
    Table.TRIO_LONE_DEFENDER: {
        "standard": DealSizes(7, 15),
        "large": DealSizes(8, 17),
        "cautious": DealSizes(7, 16),
    },
    Table.TRIO_LONE_ATTACKER: {
        "standard": DealSizes(12, 7),
        "large": DealSizes(13, 7),
    },
    Table.TEAMS: {
        "standard": DealSizes(7, 8),
    },
}

DEFAULT_TOURS = {
    Table.DUEL: 2,
    Table.TRIO_LONE_ATTACKER: 6,
    Table.TRIO_LONE_DEFENDER: 6,
    Table.TEAMS: 2,
}


@dataclass(frozen=True, slots=True)
class TourRoles:
    """Who deals, attacks and defends in one tour, and the cyclic turn order (opener first)."""

    dealer: int
    attackers: tuple[int, ...]
    defenders: tuple[int, ...]
    order: tuple[int, ...]

    @property
    def opener(self) -> int:
        return self.order[0]


def tour_roles(table: Table, dealer: int) -> TourRoles:
    """Roles of a tour dealt by seat ``dealer`` (RULES.md §6)."""
    n = table.players
    if not 0 <= dealer < n:
        raise SettingsError(f"dealer seat {dealer} does not exist at a {table.value} table")
    if table is Table.DUEL:
        defender = (dealer + 1) % 2
        return TourRoles(dealer, (dealer,), (defender,), (defender, dealer))
    if table is Table.TRIO_LONE_ATTACKER:
        d1, d2 = (dealer + 1) % 3, (dealer + 2) % 3
        return TourRoles(dealer, (dealer,), (d1, d2), (d1, dealer, d2, dealer))
    if table is Table.TRIO_LONE_DEFENDER:
        a1, a2 = (dealer + 1) % 3, (dealer + 2) % 3
        return TourRoles(dealer, (a1, a2), (dealer,), (dealer, a1, dealer, a2))
    d1, a1, d2 = (dealer + 1) % 4, (dealer + 2) % 4, (dealer + 3) % 4
    return TourRoles(dealer, (a1, dealer), (d1, d2), (d1, a1, d2, dealer))


def dealer_of_tour(table: Table, first_dealer: int, tour: int) -> int:
    """The deal passes clockwise to the next seat every tour."""
    return (first_dealer + tour) % table.players


@dataclass(frozen=True, slots=True)
class Settings:
    """Match settings, fixed before the match starts."""

    table: Table = Table.DUEL
    tours: int | None = None
    exchange_limit: int = 0
    deal: DealSizes | None = None
    preset: str = field(default="standard")

    def __post_init__(self) -> None:
        object.__setattr__(self, "table", Table.parse(self.table))
        if self.tours is None:
            object.__setattr__(self, "tours", DEFAULT_TOURS[self.table])
        if self.deal is None:
            presets = DEAL_PRESETS[self.table]
            if self.preset not in presets:
                names = ", ".join(presets)
                raise SettingsError(
                    f"unknown deal preset {self.preset!r} for {self.table.value}: use {names}"
                )
            object.__setattr__(self, "deal", presets[self.preset])
        else:
            object.__setattr__(self, "preset", "custom")
        self.validate()

    @property
    def deal_sizes(self) -> DealSizes:
        assert self.deal is not None
        return self.deal

    @property
    def tour_count(self) -> int:
        assert self.tours is not None
        return self.tours

    def validate(self) -> None:
        tours = self.tour_count
        if not isinstance(tours, int) or tours < 2 or tours % 2:
            raise SettingsError(f"a match has an even number of tours (2 or more), not {tours}")
        if self.table.players == 3 and tours % 6:
            raise SettingsError(
                f"a 3-player match has a multiple of 6 tours (each player is alone equally "
                f"often), not {tours}"
            )
        if tours > 60:
            raise SettingsError(f"at most 60 tours in a match, not {tours}")
        if not isinstance(self.exchange_limit, int) or self.exchange_limit < 0:
            raise SettingsError(f"the exchange limit is 0 or more, not {self.exchange_limit}")
        deal = self.deal_sizes
        if deal.attacker < 1 or deal.defender < 1:
            raise SettingsError("every player gets at least one card")
        total = self.cards_dealt
        if total > DECK_SIZE:
            raise SettingsError(
                f"the deal needs {total} cards but the deck has {DECK_SIZE}: "
                f"{self.describe_deal()}"
            )

    @property
    def cards_dealt(self) -> int:
        roles = tour_roles(self.table, 0)
        deal = self.deal_sizes
        return len(roles.attackers) * deal.attacker + len(roles.defenders) * deal.defender

    def describe_deal(self) -> str:
        deal = self.deal_sizes
        return f"{deal.attacker} per attacker, {deal.defender} per defender"

    def to_json(self) -> dict[str, object]:
        deal = self.deal_sizes
        return {
            "tours": self.tour_count,
            "exchange_limit": self.exchange_limit,
            "deal": {"attacker": deal.attacker, "defender": deal.defender},
        }

    @classmethod
    def from_json(cls, table: Table | str, data: dict[str, object]) -> Settings:
        """Inverse of :meth:`to_json` (``deal`` optional: then the default preset)."""
        deal_data = data.get("deal")
        deal = None
        if deal_data is not None:
            if not isinstance(deal_data, dict):
                raise SettingsError("settings.deal must be an object {attacker, defender}")
            attacker, defender = deal_data.get("attacker"), deal_data.get("defender")
            if not isinstance(attacker, int) or not isinstance(defender, int):
                raise SettingsError("settings.deal.attacker and .defender must be integers")
            deal = DealSizes(attacker, defender)
        tours = data.get("tours")
        limit = data.get("exchange_limit", 0)
        if tours is not None and (not isinstance(tours, int) or isinstance(tours, bool)):
            raise SettingsError("settings.tours must be an integer")
        if not isinstance(limit, int) or isinstance(limit, bool):
            raise SettingsError("settings.exchange_limit must be an integer")
        return cls(table=Table.parse(table), tours=tours, exchange_limit=limit, deal=deal)
