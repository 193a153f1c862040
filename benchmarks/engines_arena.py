"""The engine protocol loses no strength (issue 31): a built-in level played as an outside
engine, through the command-line bridge and HTTP, against the same level in-process.

    python benchmarks/engines_arena.py [--level normal] [--deals 150] [--seed 7]
        [--hard-budget-ms 1000]

It runs ``python -m chat.arena --level LEVEL -- python -m engines.builtin LEVEL``: every
seeded deal is played twice with the seats swapped (:mod:`chat.arena`), so the cards' luck
cancels. The figure is the outside engine's mean score per match (its points minus the
other side's), with a 95% confidence interval: an interval holding zero means the protocol
costs no measurable strength. ``stand_in_moves`` counts moves a stand-in made for the
engine (a timeout): expected 0, else the run measured the stand-in too. One JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chat.arena import ArenaOptions, arena
from krendzu.ai import LEVELS


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--level", default="normal", choices=LEVELS)
    parser.add_argument("--deals", type=int, default=150)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--table", default="duel")
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--hard-budget-ms", type=float, default=1000.0,
                        help="the hard level's time per turn, on both sides")
    args = parser.parse_args()
    opts = ArenaOptions(level=args.level, deals=args.deals, seed=args.seed, table=args.table,
                        parallel=args.parallel, hard_budget_ms=args.hard_budget_ms,
                        program=[sys.executable, "-m", "engines.builtin", args.level,
                                 "0", "--budget-ms", str(args.hard_budget_ms)])
    result = asyncio.run(arena(opts))
    result["engine"] = f"engines.builtin {args.level} (through the bridge and HTTP)"
    result["within_noise"] = result["score_ci95"][0] <= 0.0 <= result["score_ci95"][1]
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
