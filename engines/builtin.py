"""The built-in players (easy, normal, hard) as an outside engine speaking the bridge's line
protocol on stdin/stdout: ``python -m engines.builtin hard``. Run through
``python -m engines.bridge`` they play at a table exactly as the in-process levels do: they
decide from the same view (the state's ``view``, :mod:`krendzu.viewjson`).

The line protocol (``docs/engines.md``)::

    bridge: krendzu 1                 engine: ready NAME
    bridge: position {...}            engine: move QC M12 | move pass | resign
    bridge: finish {...}              (no answer)
    bridge: quit                      (the engine exits)
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Sequence
from typing import IO

from krendzu import Action, Announce, Discard, EndTurn, Pass, Place
from krendzu.ai import LEVELS, make_player
from krendzu.coords import frame_for
from krendzu.match import MatchView
from krendzu.viewjson import view_from_json


def words_of(view: MatchView, actions: Sequence[Action]) -> str:
    """A decided turn in the words ``/play`` reads (cells in the position's labels)."""
    if not actions:
        return "pass"
    first = actions[0]
    if isinstance(first, Announce):
        return f"exchange {first.count}"
    if isinstance(first, Discard):
        return "discard " + " ".join(a.card.code() for a in actions if isinstance(a, Discard))
    if isinstance(first, Pass):
        return "pass"
    if isinstance(first, EndTurn):
        return "end"
    frame = frame_for(view.tour.placements)
    words: list[str] = []
    for action in actions:
        if isinstance(action, Place):
            if not frame.fits(action.x, action.y):
                break  # a cell left of A or above 1: the next position names it
            words.append(f"{action.card.code()} {frame.label(action.x, action.y)}")
    return " ".join(words) if words else "pass"


def serve(level: str, stdin: IO[str], stdout: IO[str], *, seed: int = 0,
          budget_ms: float | None = None) -> None:
    player = make_player(level, budget_ms=budget_ms if level == "hard" else None)
    rng = random.Random(seed)

    def say(line: str) -> None:
        stdout.write(line + "\n")
        stdout.flush()

    for raw in stdin:
        command, _, rest = raw.strip().partition(" ")
        if command == "krendzu":
            say(f"ready builtin-{level}")
        elif command == "position":
            view = view_from_json(json.loads(rest)["view"])
            say("move " + words_of(view, player.decide(view, rng)))
        elif command == "quit":
            return


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m engines.builtin LEVEL [SEED] [--budget-ms N]``: ``--budget-ms`` is the
    hard level's thinking time per turn (the bot's is 1,000 ms; without it the hard level
    searches a fixed number of sampled deals)."""
    args = list(sys.argv[1:] if argv is None else argv)
    budget: float | None = None
    if "--budget-ms" in args:
        at = args.index("--budget-ms")
        try:
            budget = float(args[at + 1])
        except (IndexError, ValueError):
            budget = -1.0
        del args[at:at + 2]
    level = args[0] if args else "normal"
    if level not in LEVELS or (budget is not None and budget <= 0):
        print(f"usage: python -m engines.builtin {{{'|'.join(LEVELS)}}} [SEED] "
              "[--budget-ms N]", file=sys.stderr)
        return 2
    serve(level, sys.stdin, sys.stdout, seed=int(args[1]) if len(args) > 1 else 0,
          budget_ms=budget)
    return 0


if __name__ == "__main__":
    sys.exit(main())
