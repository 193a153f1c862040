"""``python -m krendzu.ai suggest RECORD.json --level LEVEL [--seed S] [--iterations N]
[--budget-ms MS]``

Reads a ``krendzu-record/1`` whose last tour is unfinished and prints, as one JSON object,
the turn the chosen level would play for the player to move, deciding only from that
player's observation: ``{"player": name, "cards": [[card, x, y], ...]}`` (``[]`` = pass).
If that player already placed the first card of a defender's turn, ``cards`` lists only
what is still to play (``[]`` = end the turn there) and ``pending`` the card already down.
In the exchange the object has ``announce`` (a count) or ``discard`` (a card) instead.
Exit 1 when there is nothing to suggest, 2 for an unreadable record.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

from krendzu.actions import Announce, Discard, Place
from krendzu.ai.players import LEVELS, make_player
from krendzu.errors import KrendzuError
from krendzu.record import import_record, read_json
from krendzu.tour import TERMINAL


def suggest(
    data: object,
    level: str = "normal",
    *,
    seed: int = 0,
    iterations: int | None = None,
    budget_ms: float | None = None,
) -> dict[str, object]:
    """The suggestion as a JSON-ready object (see the module doc)."""
    match = import_record(data)
    seat = match.current_player
    if seat == TERMINAL or match.tour.is_over:
        raise ValueError("the record's last tour is finished: no move to suggest")
    if level == "oracle":
        raise ValueError("the oracle sees every hand; it cannot advise from one seat's view")
    player = make_player(level, iterations=iterations, budget_ms=budget_ms)
    view = match.observation(seat)
    actions = player.decide(view, random.Random(seed))
    out: dict[str, object] = {"player": match.players[seat]}
    if isinstance(actions[0], Announce):
        out["announce"] = actions[0].count
        return out
    if isinstance(actions[0], Discard):
        out["discard"] = actions[0].card.code()
        return out
    out["cards"] = [[a.card.code(), a.x, a.y] for a in actions if isinstance(a, Place)]
    if view.tour.pending:
        out["pending"] = [[c.code(), x, y] for c, x, y in view.tour.pending]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m krendzu.ai", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sug = sub.add_parser("suggest", help="the turn a computer player would play")
    sug.add_argument("record", help="krendzu-record/1 JSON file, or - for standard input")
    sug.add_argument("--level", default="normal", choices=[v for v in LEVELS if v != "oracle"])
    sug.add_argument("--seed", type=int, default=0)
    sug.add_argument("--iterations", type=int, default=None)
    sug.add_argument("--budget-ms", type=float, default=None)
    args = parser.parse_args(argv)
    try:
        data = read_json(args.record)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"cannot read {args.record}: {exc}".replace("\n", " "), file=sys.stderr)
        return 2
    try:
        result = suggest(
            data, args.level, seed=args.seed, iterations=args.iterations,
            budget_ms=args.budget_ms,
        )
    except KrendzuError as exc:
        print(f"cannot use this record: {exc}".replace("\n", " "), file=sys.stderr)
        return 2
    except ValueError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
