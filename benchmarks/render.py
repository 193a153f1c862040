"""Render and encode a 30-card board: median milliseconds (warm face cache) and bytes.

``python benchmarks/render.py [--runs N]`` prints one JSON object. Targets (issue 4):
median ≤ 25 ms and ≤ 300 KB per board picture.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from render import board_image, board_jpeg, board_png, position
from render.sheet import scenario_matches


def timed(func, runs: int) -> tuple[float, bytes]:
    func()  # warm the caches (card faces, fonts)
    times = []
    data = b""
    for _ in range(runs):
        start = time.perf_counter()
        data = func()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    view = position(scenario_matches()["sprawl-30"])
    assert len(view.tour.placements) == 30
    size = board_image(view).size
    jpeg_ms, jpeg = timed(lambda: board_jpeg(view), args.runs)
    png_ms, png = timed(lambda: board_png(view), args.runs)
    draw_ms, _ = timed(lambda: board_image(view), args.runs)
    print(json.dumps({
        "board": "30 cards, duel, tour over",
        "pixels": list(size),
        "runs": args.runs,
        "draw_only_median_ms": round(draw_ms, 2),
        "photo_jpeg_q88": {"median_ms": round(jpeg_ms, 2), "bytes": len(jpeg)},
        "document_png": {"median_ms": round(png_ms, 2), "bytes": len(png)},
        "targets": {"median_ms": 25, "bytes": 300_000},
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
