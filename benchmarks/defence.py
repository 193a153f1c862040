"""How a defender spends its cards: the arena's seeded deals, ATTACKER in the attacking
seats and DEFENDER in the defending ones (the first tour of each duplicate pair).

Prints one JSON object: points conceded per tour, the defender's turns by cards placed
(0 = pass), how many attacker cards were still to come when the defender ran out, and
the points conceded per tour after that. A defender that doubles too freely runs out
first and concedes the attacker's last cards unopposed (docs/ai.md, "Card economy").

    python benchmarks/defence.py [--attacker oracle] [--defender hard] [--deals 80]
        [--iterations 24] [--seed 7] [--table duel]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from krendzu.arena import ArenaOptions, play_first_tours, probe_options, probe_parser, probe_report
from krendzu.tour import Tour


class DefenceLedger:
    """What the defenders' turns placed, read through the arena's ``watch`` hook: before
    each decision it settles the one before, so the tours are played by the arena's own
    loop (the same decisions as ``python -m krendzu.arena``)."""

    def __init__(self) -> None:
        self.turns = {0: 0, 1: 0, 2: 0}
        self.conceded = 0
        self.after_empty = 0
        self.to_come: list[int] = []
        self._last: tuple[int, int] | None = None
        self._empty_at: int | None = None

    def watch(self, tour: Tour, seat: int) -> None:
        self._settle(tour)
        self._last = (seat, len(tour.placed))

    def finish(self, tour: Tour) -> None:
        self._settle(tour)
        self.conceded += tour.points
        if self._empty_at is not None:
            self.after_empty += tour.points - self._empty_at
        self._last = self._empty_at = None

    def _settle(self, tour: Tour) -> None:
        if self._last is None:
            return
        seat, before = self._last
        self._last = None
        if tour.is_attacker[seat] or before == 0:
            return  # the exchange and the opening card are not a choice of how many
        self.turns[len(tour.placed) - before] += 1
        if self._empty_at is None and not any(tour.hands[s] for s in tour.roles.defenders):
            self._empty_at = tour.points
            self.to_come.append(sum(len(tour.hands[s]) for s in tour.roles.attackers))


def measure(opts: ArenaOptions) -> dict[str, object]:
    ledger = DefenceLedger()
    for tour in play_first_tours(opts, ledger.watch):
        ledger.finish(tour)
    return {
        **probe_report(opts),
        "conceded_per_tour": round(ledger.conceded / opts.deals, 4),
        "defender_turns_by_cards": ledger.turns,
        "attacker_cards_to_come_when_defence_empty": (
            round(statistics.fmean(ledger.to_come), 3) if ledger.to_come else None
        ),
        "conceded_after_defence_empty_per_tour": round(ledger.after_empty / opts.deals, 4),
    }


def main(argv: list[str] | None = None) -> int:
    parser = probe_parser(__doc__, deals=80)
    args = parser.parse_args(argv)
    print(json.dumps(measure(probe_options(args))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
