"""Engine speed: random legal 2-player tours per second and microseconds per placement.

Prints one JSON object. Tours are dealt 12 v 14 with full rules and scoring on, played by
uniformly random legal steps through the engine's integer core (the same code ``apply``
runs after validation). Figures are medians over several repeats; the machine is shared.

    python benchmarks/engine.py [--tours 4000] [--repeats 5] [--seed 1]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from krendzu import DealSizes, Table, Tour, tour_roles
from krendzu.combos import window_table

SIZES = DealSizes(12, 14)


def tours_per_second(n: int, rng: random.Random) -> tuple[float, float]:
    roles = tour_roles(Table.DUEL, 0)
    points = 0
    start = time.perf_counter()
    for _ in range(n):
        points += Tour.deal(Table.DUEL, roles, SIZES, rng).play_random(rng)
    elapsed = time.perf_counter() - start
    return n / elapsed, points / n


def placement_micros(n_tours: int, rng: random.Random) -> float:
    """Replay recorded random placements and time ``place`` alone."""
    roles = tour_roles(Table.DUEL, 0)
    scripts = []
    for _ in range(n_tours):
        tour = Tour.deal(Table.DUEL, roles, SIZES, rng)
        start = tour.clone()
        tour.play_random(rng)
        scripts.append((start, list(tour._history)))
    total = 0.0
    count = 0
    cells = 80 * 80
    for start, history in scripts:
        tour = start
        for code in history:
            if code >= 0:
                card, cell = divmod(code, cells)
                t0 = time.perf_counter()
                tour.place(card, cell)
                total += time.perf_counter() - t0
                count += 1
            elif code == -1:
                tour.pass_turn()
            else:
                tour.end_turn()
    return total / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tours", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    t0 = time.perf_counter()
    window_table()
    table_ms = (time.perf_counter() - t0) * 1000
    rng = random.Random(args.seed)
    rates, points, micros = [], [], []
    for _ in range(args.repeats):
        rate, mean_points = tours_per_second(args.tours, rng)
        rates.append(rate)
        points.append(mean_points)
        micros.append(placement_micros(args.tours // 4, rng))
    print(
        json.dumps(
            {
                "benchmark": "engine",
                "python": platform.python_version(),
                "deal": "12 v 14, duel, random legal steps, scoring on",
                "tours_per_repeat": args.tours,
                "repeats": args.repeats,
                "tours_per_second_median": round(statistics.median(rates)),
                "tours_per_second_all": [round(r) for r in rates],
                "placement_us_median": round(statistics.median(micros), 2),
                "mean_attack_points_random_play": round(statistics.mean(points), 3),
                "window_table_build_ms": round(table_ms, 1),
                "target_tours_per_second": 10000,
            }
        )
    )


if __name__ == "__main__":
    main()
