"""Duplicate-deal arena for the computer players.

``python -m krendzu.arena LEVEL_X LEVEL_Y --deals 400 --seed 7 [--table duel] [--jobs 2]
[--budget-ms N] [--iterations N] [--exchange K] [--preset P] [--json] [--save FILE]
[--journal FILE]``

Every seeded deal is played twice: X holds the attacking seats with the attackers' cards
while Y holds the defending seats, then the same cards again with the sides swapped. Per
deal the paired difference is (points X scored attacking) − (points Y scored attacking);
the two tours form a mini-match won by the side that scored more. Decisions use rngs
derived from the seed, the deal and the move, so the same options give the same table
whatever ``--jobs`` is (unless ``--budget-ms`` trades the iteration budget for time).

``--journal FILE`` appends every finished deal to FILE (one JSON line) and skips the deals
already there: a long run (hours at the bot's 1 s budget) survives being stopped and is
finished by running the same command again.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import multiprocessing
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from krendzu.ai import BASELINES, LEVELS, OraclePlayer, Player, make_player, warm_up
from krendzu.tables import DEAL_PRESETS, Table, tour_roles
from krendzu.tour import CHANCE, OVER, PLAY, Tour, TourView


@dataclass
class ArenaOptions:
    x: str
    y: str
    deals: int = 400
    seed: int = 7
    table: str = "duel"
    jobs: int = 1
    budget_ms: float | None = None
    iterations: int | None = None
    exchange: int = 0
    preset: str | None = None


@dataclass
class DealResult:
    x_points: int
    y_points: int
    times: dict[str, list[float]] = field(default_factory=dict)


_PLAYERS: dict[tuple[str, float | None, int | None], Player] = {}


def _player(level: str, opts: ArenaOptions) -> Player:
    key = (level, opts.budget_ms, opts.iterations)
    if key not in _PLAYERS:
        warm_up()
        _PLAYERS[key] = make_player(level, iterations=opts.iterations, budget_ms=opts.budget_ms)
    return _PLAYERS[key]


def deal_tour(opts: ArenaOptions, index: int) -> Tour:
    """The ``index``-th seeded deal (roles and hands), before any exchange or move."""
    table = Table.parse(opts.table)
    rng = random.Random(f"krendzu-arena/{opts.seed}/{index}")
    roles = tour_roles(table, rng.randrange(table.players))
    presets = DEAL_PRESETS[table]
    sizes = presets[opts.preset] if opts.preset else next(iter(presets.values()))
    return Tour.deal(table, roles, sizes, rng, opts.exchange)


def play_tour(
    tour: Tour,
    attack: str,
    defend: str,
    opts: ArenaOptions,
    tag: str,
    times: dict[str, list[float]],
    watch: Callable[[Tour, int], None] | None = None,
) -> int:
    """Play ``tour`` to the end with ``attack`` in the attacking seats; return the points.
    ``watch(tour, seat)`` is called before every decision (calibration looks on)."""
    chance_rng = random.Random(f"{tag}/chance")
    step = 0
    while tour.phase != OVER:
        seat = tour.current_player
        if seat == CHANCE:
            tour.redeal(tour.sample_redeal(chance_rng))
            continue
        if watch is not None:
            watch(tour, seat)
        level = attack if tour.is_attacker[seat] else defend
        player = _player(level, opts)
        rng = random.Random(f"{tag}/{step}")
        step += 1
        start = time.perf_counter()
        if isinstance(player, OraclePlayer):
            actions = player.decide_full(tour, rng)
        else:
            actions = player.decide(tour.observation(seat), rng)
        times.setdefault(level, []).append((time.perf_counter() - start) * 1000.0)
        for action in actions:
            tour.apply(action)
    return tour.points


def play_first_tours(
    opts: ArenaOptions,
    watch: Callable[[Tour, int], None],
    start: Callable[[str], None] | None = None,
) -> Iterator[Tour]:
    """The first tour of each deal (``opts.x`` attacking, ``opts.y`` defending) with the
    arena's own decisions, ``watch`` looking on before each decision: the benchmarks'
    probes. Each finished tour is yielded before the next deal is played; ``start(tag)``
    is told each tour's tag (the prefix of its decision rngs) before it begins."""
    for index in range(opts.deals):
        tag = f"{opts.seed}/{index}/x"
        if start is not None:
            start(tag)
        tour = deal_tour(opts, index)
        play_tour(tour, opts.x, opts.y, opts, tag, {}, watch)
        yield tour


def probe_parser(doc: str, deals: int) -> argparse.ArgumentParser:
    """The options every probe benchmark takes (``--attacker --defender --deals
    --iterations --seed --table``); a script adds its own."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--attacker", default="oracle")
    parser.add_argument("--defender", default="hard")
    parser.add_argument("--deals", type=int, default=deals)
    parser.add_argument("--iterations", type=int, default=24)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--table", default="duel")
    return parser


def probe_options(args: argparse.Namespace) -> ArenaOptions:
    """The arena options of :func:`probe_parser`'s parsed arguments."""
    return ArenaOptions(args.attacker, args.defender, deals=args.deals, seed=args.seed,
                        table=args.table, iterations=args.iterations)


def parse_observing_probe(parser: argparse.ArgumentParser,
                          argv: list[str] | None) -> argparse.Namespace:
    """:func:`probe_parser`'s arguments for a probe that reads the defender's own view
    (beliefs, decisions from the observation): the oracle cannot defend there."""
    args = parser.parse_args(argv)
    if args.defender == "oracle":
        parser.error("the defender must decide from its observation: not the oracle")
    return args


def probe_report(opts: ArenaOptions) -> dict[str, Any]:
    """The head every probe's JSON report starts with."""
    return {"attacker": opts.x, "defender": opts.y, "table": opts.table, "deals": opts.deals,
            "iterations": opts.iterations}


def defence_after_attack(tour: Tour, seat: int) -> TourView | None:
    """``seat``'s view when it is about to defend right after an attacker placed a card
    (not the opening) while the attackers still hold cards; else ``None``."""
    if tour.phase != PLAY or tour.is_attacker[seat] or len(tour.placed) < 2:
        return None
    if not tour.attackers_have_cards():
        return None
    view = tour.observation(seat)
    last = view.turns[-1] if view.turns else None
    if last is None or not last.cards or last.player not in view.roles.attackers:
        return None
    return view


def play_deal(args: tuple[ArenaOptions, int]) -> DealResult:
    opts, index = args
    times: dict[str, list[float]] = {}
    base = deal_tour(opts, index)
    tag = f"{opts.seed}/{index}"
    x_pts = play_tour(base.clone(), opts.x, opts.y, opts, tag + "/x", times)
    y_pts = play_tour(base.clone(), opts.y, opts.x, opts, tag + "/y", times)
    return DealResult(x_pts, y_pts, times)


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    pos = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[pos]


def _fingerprint(opts: ArenaOptions) -> dict[str, Any]:
    """What decides a deal's result (not how many deals or jobs)."""
    return {"x": opts.x, "y": opts.y, "seed": opts.seed, "table": opts.table,
            "budget_ms": opts.budget_ms, "iterations": opts.iterations,
            "exchange": opts.exchange, "preset": opts.preset}


def _logged(log: IO[str] | None, opts: ArenaOptions, index: int, result: DealResult
            ) -> DealResult:
    if log is not None:
        log.write(json.dumps({"options": _fingerprint(opts), "deal": index,
                              "x": result.x_points, "y": result.y_points,
                              "times": result.times}) + "\n")
        log.flush()
    return result


def _end_cut_line(path: str) -> None:
    """End a line a kill cut short, so the next deal logged starts a line of its own."""
    if os.path.exists(path) and os.path.getsize(path):
        with open(path, "rb+") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")


def read_journal(path: str, opts: ArenaOptions) -> dict[int, DealResult]:
    """The deals a journal already holds for these options. A line cut short by a kill is
    skipped (that deal is played again); a journal of other options is refused."""
    done: dict[int, DealResult] = {}
    if not os.path.exists(path):
        return done
    want = _fingerprint(opts)
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                row = json.loads(line)
                options, index = row["options"], int(row["deal"])
                result = DealResult(int(row["x"]), int(row["y"]), dict(row["times"]))
            except (ValueError, KeyError, TypeError):
                continue
            if options != want:
                raise SystemExit(f"{path} holds deals of another run ({options}); "
                                 "use another journal file")
            done[index] = result
    return done


def run(opts: ArenaOptions, journal: str | None = None) -> dict[str, Any]:
    for level in (opts.x, opts.y):
        if level not in LEVELS + BASELINES:
            raise SystemExit(f"unknown level {level!r}: use one of {', '.join(LEVELS)}")
    start = time.perf_counter()
    done: dict[int, DealResult] = {}
    if journal:
        done = read_journal(journal, opts)
        _end_cut_line(journal)
    work = [(opts, i) for i in range(opts.deals) if i not in done]
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(open(journal, "a", encoding="utf-8")) if journal else None
        played: Iterable[DealResult] = map(play_deal, work)
        if opts.jobs > 1 and work:
            pool = stack.enter_context(multiprocessing.get_context("spawn").Pool(opts.jobs))
            chunk = 1 if journal else max(1, opts.deals // (opts.jobs * 8))
            played = pool.imap(play_deal, work, chunksize=chunk)
        for (_, index), result in zip(work, played, strict=True):
            done[index] = _logged(log, opts, index, result)
    results = [done[i] for i in range(opts.deals)]
    elapsed = time.perf_counter() - start
    n = len(results)
    diffs = [r.x_points - r.y_points for r in results]
    mean = statistics.fmean(diffs) if diffs else 0.0
    sd = statistics.stdev(diffs) if n > 1 else 0.0
    half = 1.96 * sd / math.sqrt(n) if n else 0.0
    wins = sum(1 for d in diffs if d > 0)
    draws = sum(1 for d in diffs if d == 0)
    kx, ky = (opts.x, opts.y) if opts.x != opts.y else (f"{opts.x} (X)", f"{opts.y} (Y)")
    times: dict[str, list[float]] = {}
    for r in results:
        for level, ts in r.times.items():
            times.setdefault(level, []).extend(ts)
    decision = {
        level: {
            "median": round(statistics.median(ts), 3) if ts else 0.0,
            "p95": round(_quantile(ts, 0.95), 3),
            "max": round(max(ts), 3) if ts else 0.0,
            "decisions": len(ts),
        }
        for level, ts in times.items()
    }
    return {
        "x": opts.x,
        "y": opts.y,
        "table": opts.table,
        "deals": n,
        "seed": opts.seed,
        "exchange": opts.exchange,
        "preset": opts.preset or "standard",
        "budget_ms": opts.budget_ms,
        "iterations": opts.iterations,
        "mean_attack_points": {
            kx: round(statistics.fmean(r.x_points for r in results), 4) if n else 0.0,
            ky: round(statistics.fmean(r.y_points for r in results), 4) if n else 0.0,
        },
        "diff_mean": round(mean, 4),
        "diff_ci95": [round(mean - half, 4), round(mean + half, 4)],
        "wins_draws_losses": [wins, draws, n - wins - draws],
        "decision_ms": decision,
        "seconds": round(elapsed, 1),
    }


def format_table(report: dict[str, Any]) -> str:
    x, y = report["x"], report["y"]
    kx, ky = list(report["mean_attack_points"])
    lines = [
        f"arena {x} v {y}: {report['deals']} deals x 2 tours, table {report['table']}, "
        f"seed {report['seed']}"
        + (f", budget {report['budget_ms']} ms" if report["budget_ms"] else "")
        + (f", exchange {report['exchange']}" if report["exchange"] else ""),
        "",
        "| level | mean points attacking |",
        "|---|---|",
        f"| X = {kx} | {report['mean_attack_points'][kx]:.3f} |",
        f"| Y = {ky} | {report['mean_attack_points'][ky]:.3f} |",
        "",
        f"paired difference X − Y per deal: {report['diff_mean']:+.3f} "
        f"(95% CI {report['diff_ci95'][0]:+.3f} .. {report['diff_ci95'][1]:+.3f})",
        "mini-matches X wins / draws / losses: "
        + " / ".join(str(v) for v in report["wins_draws_losses"]),
        "",
        "| level | decisions | median ms | p95 ms | max ms |",
        "|---|---|---|---|---|",
    ]
    for level, d in report["decision_ms"].items():
        lines.append(
            f"| {level} | {d['decisions']} | {d['median']:.2f} | {d['p95']:.2f} | {d['max']:.2f} |"
        )
    lines.append("")
    lines.append(f"wall time {report['seconds']} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m krendzu.arena", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("x", choices=LEVELS + BASELINES, help="level X")
    parser.add_argument("y", choices=LEVELS + BASELINES, help="level Y")
    parser.add_argument("--deals", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--table", default="duel", choices=[t.value for t in Table])
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--budget-ms", type=float, default=None,
                        help="hard level: think this long per turn instead of an iteration budget")
    parser.add_argument("--iterations", type=int, default=None,
                        help="hard level: sampled deals per decision (reproducible)")
    parser.add_argument("--preset", default=None, help="deal preset of the table (e.g. sharp)")
    parser.add_argument("--exchange", type=int, default=0, help="exchange limit (0 = none)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--save", default=None, help="also write the JSON object to this file")
    parser.add_argument("--journal", default=None,
                        help="append each finished deal to this file and skip the deals "
                             "already there (a long run can be stopped and resumed)")
    args = parser.parse_args(argv)
    opts = ArenaOptions(
        args.x, args.y, args.deals, args.seed, args.table, max(1, args.jobs),
        args.budget_ms, args.iterations, max(0, args.exchange), args.preset,
    )
    report = run(opts, args.journal)
    if args.save:
        with open(args.save, "w", encoding="utf-8") as handle:
            json.dump(report, handle, ensure_ascii=False, indent=1)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
    else:
        print(format_table(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
