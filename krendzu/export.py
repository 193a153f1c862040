"""Writing a match as a ``krendzu-record/1`` object (RULES.md §8); reading one back and the
referee's replay are :mod:`krendzu.record`'s.

Kept apart from :mod:`krendzu.record` so that :meth:`krendzu.match.Match.to_record` can
use it without an import cycle: ``record`` builds matches (it imports ``match``), while
this module reads a match only through the :class:`RecordedMatch` protocol and imports
nothing above the tour.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from krendzu.board import cell_xy
from krendzu.cards import Card
from krendzu.errors import RecordError
from krendzu.tables import Settings, Table
from krendzu.tour import Tour

FORMAT = "krendzu-record/1"


class RecordedMatch(Protocol):
    """What the export reads of a match (:class:`krendzu.match.Match` has it all)."""

    @property
    def players(self) -> tuple[str, ...]: ...

    @property
    def table(self) -> Table: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def tours(self) -> Sequence[Tour]: ...


def export_record(
    match: RecordedMatch, *, players: Sequence[str] | None = None
) -> dict[str, Any]:
    """The match as a ``krendzu-record/1`` object (JSON-ready).

    ``players``: the names the record gives the seats, in seat order, instead of the match's
    own (distinct and non-empty, as a record's names must be). A caller whose match names are
    private (the bot's engine names carry Telegram user ids) writes opaque ones instead.
    """
    names = match.players if players is None else tuple(players)
    if len(names) != len(match.players) or len(set(names)) != len(names) or not all(names):
        raise RecordError(f"a record needs {len(match.players)} distinct, non-empty names")
    tours = []
    for tour in match.tours:
        tours.append(_export_tour(tour, names))
    return {
        "format": FORMAT,
        "players": list(names),
        "table": match.table.value,
        "settings": match.settings.to_json(),
        "tours": tours,
    }


def _export_tour(tour: Tour, names: tuple[str, ...]) -> dict[str, Any]:
    hands: dict[str, list[str]] = {}
    for seat, name in enumerate(names):
        cards = list(tour.initial_hands[seat])
        for card in tour.discards.get(seat, ()):
            cards.remove(card)
        cards.extend(tour.draws(seat))
        hands[name] = [Card(c).code() for c in sorted(cards)]
    out: dict[str, Any] = {
        "attackers": [names[s] for s in tour.roles.attackers],
        "defenders": [names[s] for s in tour.roles.defenders],
        "dealer": names[tour.roles.dealer],
        "hands": hands,
    }
    if tour.announcements:
        # Written as far as it has gone: a record may stop in the middle of an exchange.
        out["exchange"] = {
            names[seat]: {
                "count": count,
                "discards": [Card(c).code() for c in tour.discards.get(seat, ())],
                "draws": [Card(c).code() for c in tour.draws(seat)],
            }
            for seat, count in tour.announcements
        }
    moves: list[dict[str, Any]] = []
    for seat, turn in tour.turns_raw:
        moves.append({"player": names[seat], "cards": _cards_json(turn)})
    if tour._pending:
        moves.append(
            {
                "player": names[tour.current_player],
                "cards": _cards_json(tour._pending),
                "pending": True,
            }
        )
    out["moves"] = moves
    return out


def _cards_json(cards: tuple[tuple[int, int], ...] | list[tuple[int, int]]) -> list[list[Any]]:
    return [[Card(c).code(), *cell_xy(cell)] for c, cell in cards]
