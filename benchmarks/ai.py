"""Decision-time figures of the computer players on this machine.

``python benchmarks/ai.py [--deals N]`` plays a few seeded duel tours (the measured level in
the seats of one side, normal in the others, both roles) and prints per level the
decision-time median / p95 / max (one decision = one whole turn) and, for the hard level,
playouts per second (the time spent reading hands counts: it is part of the decision), at
the bot's default budget (1000 ms) and at 200 ms, and for the hard-v1 baseline (uniform
deals) at 200 ms. Then the peak
memory allocated during one hard decision at the bot's budget (tracemalloc, which slows
that decision down; its time is not reported), and a last line with every figure as JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from krendzu.ai import BOT_BUDGET_MS, HardPlayer, make_player, warm_up
from krendzu.arena import ArenaOptions, deal_tour
from krendzu.tour import OVER


def measure(level: str, deals: int, budget_ms: float | None = None) -> dict[str, float]:
    player = make_player(level, budget_ms=budget_ms)
    other = make_player("normal")
    times: list[float] = []
    for i in range(deals):
        for side in (True, False):
            tour = deal_tour(ArenaOptions(level, "normal", seed=1), i)
            step = 0
            while tour.phase != OVER:
                seat = tour.current_player
                mine = tour.is_attacker[seat] == side
                p = player if mine else other
                rng = random.Random(f"bench/{i}/{side}/{step}")
                step += 1
                start = time.perf_counter()
                actions = p.decide(tour.observation(seat), rng)
                if mine:
                    times.append((time.perf_counter() - start) * 1000.0)
                for a in actions:
                    tour.apply(a)
    times.sort()
    out = {
        "decisions": len(times),
        "median_ms": statistics.median(times),
        "p95_ms": times[max(0, int(0.95 * len(times)) - 1)],
        "max_ms": times[-1],
    }
    if isinstance(player, HardPlayer):
        st = player.search.stats
        out["playouts_per_s"] = st.rate()
        out["searched_decisions"] = st.searches
        out["playouts_per_search"] = st.playouts / max(1, st.searches)
    return out


def decision_peak_kib(budget_ms: float) -> float:
    """Peak KiB allocated during one hard decision on a fixed mid-game position (the
    defender's, after six normal-level turns), caches already warm."""
    tour = deal_tour(ArenaOptions("hard", "normal", seed=1), 0)
    other = make_player("normal")
    step = 0
    while step < 6 or tour.is_attacker[tour.current_player]:
        view = tour.observation(tour.current_player)
        for a in other.decide(view, random.Random(f"bench/memory/{step}")):
            tour.apply(a)
        step += 1
    view = tour.observation(tour.current_player)
    player = make_player("hard", budget_ms=budget_ms)
    tracemalloc.start()
    player.decide(view, random.Random("bench/memory"))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--deals", type=int, default=3)
    args = parser.parse_args()
    warm_up()  # fill the caches outside the timing
    rows = [
        ("normal", None, measure("normal", args.deals * 4)),
        ("easy", None, measure("easy", args.deals * 4)),
        ("hard", BOT_BUDGET_MS, measure("hard", args.deals, BOT_BUDGET_MS)),
        ("hard", 200.0, measure("hard", args.deals, 200.0)),
        ("hard-v1", 200.0, measure("hard-v1", args.deals, 200.0)),
    ]
    for level, budget, r in rows:
        label = level + (f" @ {budget:.0f} ms" if budget else "")
        line = (
            f"{label:18} decisions {r['decisions']:4d}  median {r['median_ms']:8.2f} ms  "
            f"p95 {r['p95_ms']:8.2f} ms  max {r['max_ms']:8.2f} ms"
        )
        if "playouts_per_s" in r:
            line += (
                f"  playouts/s {r['playouts_per_s']:.0f}"
                f"  playouts/search {r['playouts_per_search']:.0f}"
            )
        print(line)
    peak = decision_peak_kib(BOT_BUDGET_MS)
    print(f"hard @ {BOT_BUDGET_MS:.0f} ms: peak memory of one decision {peak:.0f} KiB")
    figures = [
        {"level": level, "budget_ms": budget} | {k: round(v, 2) for k, v in r.items()}
        for level, budget, r in rows
    ]
    print(
        json.dumps(
            {
                "benchmark": "ai",
                "python": platform.python_version(),
                "deals": args.deals,
                "levels": figures,
                "hard_decision_peak_kib": round(peak),
            }
        )
    )


if __name__ == "__main__":
    main()
