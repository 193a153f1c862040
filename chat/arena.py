"""The engine arena: an outside engine plays the built-in levels through the engine protocol.

``python -m chat.arena --level normal --deals 100 [--table duel] [--timer 30] [--parallel 4]
[--json] [--save FILE] [-- PROGRAM ARGS...]``

Engine authors measure their program here. The arena is a Krendzu bot without Telegram: the
bot's own flow (rules, clocks, stand-ins), store (a throwaway SQLite file) and engine protocol
(:mod:`chat.engines_api`, the very routes a bot serves) on ``127.0.0.1``. It registers an
engine ``Arena`` and either

- runs ``PROGRAM`` through the command-line bridge (``python -m engines.bridge``, started as
  a process of its own: the bot never imports ``engines``), or
- without a program, prints the API's URL and the engine's token and waits for the author's
  own HTTP client to connect (the same ``/api/engine/v1`` a bot serves).

Each seeded deal is played twice, as ``python -m krendzu.arena`` does: once with the engine
in seat 0 and the level in the other seats, once with the seats swapped and the same seed (so
the same cards and roles per seat; a trio's deal is played once per seat). The engine's
margin in a match is its side's total minus the best other side's; a deal's score is the mean
of its margins, which cancels the luck of the cards. The report gives the mean score with a
95% confidence interval, the wins, and how often a stand-in had to move for the engine (a
timeout or too many illegal moves: not the engine's own play).

The protocol loses no strength when a level played through it (``-- python -m engines.builtin
normal``) scores zero within the interval against the same level in-process:
``benchmarks/engines.py --arena`` records that run (``docs/benchmarks.md``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chat.computer import Thinker
from chat.config import split_listen
from chat.engines_api import PREFIX, EngineApi
from chat.flow import Actor, Flow
from chat.flow.engines import new_token, token_hash
from chat.i18n import Catalogs
from chat.model import LEVEL_CODES
from chat.notices import ComputerTurn, Notice, Send
from chat.webserver import serve_routes
from krendzu.ai import LEVELS
from krendzu.tables import Settings, Table
from storage import EngineRow, MatchStatus, SeatSpec, Store, open_store

#: The arena's owner of the engine (a user id no Telegram user has).
OWNER = Actor(1, "Arena", "en")
ENGINE_NAME = "Arena"
#: First chat id of the arena's tables (one per match: a chat holds one active match).
CHAT_BASE = -1_999_000_000_000
ROOT = Path(__file__).resolve().parent.parent


@dataclass
class ArenaOptions:
    level: str = "normal"
    deals: int = 20
    seed: int = 7
    table: str = "duel"
    timer: int = 30
    parallel: int = 4
    program: list[str] = field(default_factory=list)
    listen: str = "127.0.0.1:0"
    ai_workers: int = 1
    hard_budget_ms: float = 1000.0


@dataclass
class Played:
    """One finished match: the engine's seat and every seat's total."""

    match_id: int
    seat: int
    totals: tuple[int, ...]
    status: str
    stand_in_moves: int

    def margin(self, table: Table) -> float:
        """The engine's side's points minus the best other side's (teams: seats 0+2 and
        1+3 score together)."""
        totals = list(self.totals)
        if table is Table.TEAMS:
            mine = self.seat % 2
            return float(totals[mine] - totals[1 - mine])
        others = [t for i, t in enumerate(totals) if i != self.seat]
        return float(totals[self.seat] - max(others))


class QuietDelivery:
    """Delivery without Telegram: computers' turns are played at once, everything else (the
    posts and panels a chat would get) is dropped; the engine learns through its streams."""

    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self.tasks: set[asyncio.Task[None]] = set()

    def run(self, notices: list[Notice]) -> None:
        for notice in notices:
            if isinstance(notice, ComputerTurn):
                task = asyncio.create_task(self._computer(notice.match_id, notice.seq))
                self.tasks.add(task)
                task.add_done_callback(self.tasks.discard)

    async def _computer(self, match_id: int, seq: int) -> None:
        outcome = await self.flow.computer_turn(match_id, seq)
        self.run(outcome.notices)


@dataclass
class ArenaHost:
    """What the engine API needs of a running bot (:class:`chat.engines_api.ApiHost`)."""

    store: Store
    flow: Flow
    delivery: QuietDelivery


class Arena:
    def __init__(self, opts: ArenaOptions, store: Store, thinker: Thinker) -> None:
        self.opts = opts
        self.store = store
        self.thinker = thinker
        self.flow = Flow(store, Catalogs(), thinker.decide, bot_username="arena",
                         engine_api_url="arena", max_matches_per_user=10_000,
                         max_matches_per_chat=1)
        self.host = ArenaHost(store, self.flow, QuietDelivery(self.flow))
        # One local engine, as fast as it can: no request limit to speak of (a bot's is
        # 600 a minute per token, which a built-in level through the bridge exceeds).
        self.api = EngineApi(lambda: self.host, per_minute=1_000_000.0)
        self.table = Table.parse(opts.table)
        #: Stand-in moves for the engine, by the arena chat of its match.
        self.stood_in: dict[int, int] = {}

    async def register(self) -> tuple[EngineRow, str]:
        await self.flow.see_user(OWNER, private=True)
        token = new_token()
        engine = await self.store.create_engine(OWNER.user_id, ENGINE_NAME, token_hash(token))
        engine = await self.store.update_engine(engine.engine_id,
                                                max_matches=max(1, self.opts.parallel))
        return engine, token

    async def play_match(self, engine: EngineRow, index: int, deal: int, seat: int
                         ) -> Played:
        """One match of deal ``deal`` with the engine in ``seat``, to its end."""
        flow = self.flow
        flow.begin_request()
        level = LEVEL_CODES[self.opts.level]
        specs = [SeatSpec.human(engine.user_id) if s == seat else SeatSpec.computer(level)
                 for s in range(self.table.players)]
        seed = (self.opts.seed * 1_000_003 + deal) % (2**63)
        stored = await self.store.create_match(CHAT_BASE - index, Settings(self.table), specs,
                                               seed=seed)
        flow.games.keep(stored)
        await flow.deadlines.start(stored.match_id, self.opts.timer)
        self.host.delivery.run(await flow.broadcast.started(stored))
        while True:
            await flow.broadcast.signals.wait(stored.match_id, 1.0)
            row = await self.store.get_match(stored.match_id)
            if row.status is not MatchStatus.ACTIVE:
                break
        return Played(stored.match_id, seat, tuple(row.totals or ()), row.status.value,
                      self.stood_in.get(row.chat_id, 0))

    async def tick(self) -> None:
        """The turn timers, as the bot's job queue ticks them. The group line of a timeout
        (the only group message a tick sends: an arena table's only person is the engine)
        counts a stand-in's move for the engine."""
        while True:
            await asyncio.sleep(0.25)
            self.flow.begin_request()
            notices = await self.flow.ticker.tick()
            self.count_stand_ins(notices)
            self.host.delivery.run(notices)

    def count_stand_ins(self, notices: list[Notice]) -> None:
        for notice in notices:
            if isinstance(notice, Send) and notice.group:
                self.stood_in[notice.chat_id] = self.stood_in.get(notice.chat_id, 0) + 1

    async def run(self, engine: EngineRow) -> list[list[Played]]:
        """Every deal once per seat the engine takes (:func:`seats_of`), ``parallel``
        matches at once."""
        gate = asyncio.Semaphore(max(1, self.opts.parallel))
        seats = seats_of(self.table)

        async def deal(d: int) -> list[Played]:
            results: list[Played] = []
            for k, seat in enumerate(seats):
                async with gate:
                    results.append(await self.play_match(engine, len(seats) * d + k, d, seat))
            return results

        return list(await asyncio.gather(*(deal(d) for d in range(self.opts.deals))))


def seats_of(table: Table) -> tuple[int, ...]:
    """The seats the engine takes in turn for one deal: both sides of a duel or of teams
    (seat 0 or 1 and its partner), every seat of a trio (the lone seat and the pair)."""
    return (0, 1) if table.players in (2, 4) else tuple(range(table.players))


def report(opts: ArenaOptions, pairs: list[list[Played]], seconds: float
           ) -> dict[str, Any]:
    """The arena's JSON: the engine's mean score per deal and its 95% confidence interval."""
    table = Table.parse(opts.table)
    scores = [statistics.fmean(p.margin(table) for p in deal) for deal in pairs]
    n = len(scores)
    mean = statistics.fmean(scores) if scores else 0.0
    sd = statistics.stdev(scores) if n > 1 else 0.0
    half = 1.96 * sd / math.sqrt(n) if n else 0.0
    matches = [p for pair in pairs for p in pair]
    return {
        "engine": " ".join(opts.program) if opts.program else "(connected by hand)",
        "level": opts.level,
        "table": opts.table,
        "deals": n,
        "matches": len(matches),
        "seed": opts.seed,
        "timer": opts.timer,
        "score_mean": round(mean, 3),
        "score_ci95": [round(mean - half, 3), round(mean + half, 3)],
        "score_sd": round(sd, 3),
        "wins_draws_losses": [sum(1 for p in matches if p.margin(table) > 0),
                              sum(1 for p in matches if p.margin(table) == 0),
                              sum(1 for p in matches if p.margin(table) < 0)],
        "not_finished": sum(1 for p in matches if p.status != "finished"),
        "stand_in_moves": sum(p.stand_in_moves for p in matches),
        "seconds": round(seconds, 1),
    }


async def arena(opts: ArenaOptions, *, ready: Any = None) -> dict[str, Any]:
    """Run the arena; ``ready(url, token)`` is called once the API listens (tests, and the
    printout for an engine connected by hand)."""
    if opts.level not in LEVELS:
        raise SystemExit(f"unknown level {opts.level!r}: use one of {', '.join(LEVELS)}")
    with tempfile.TemporaryDirectory(prefix="krendzu-arena-") as tmp:
        store = await open_store(os.path.join(tmp, "arena.sqlite3"))
        thinker = Thinker(workers=opts.ai_workers, hard_budget_ms=opts.hard_budget_ms)
        bridge: subprocess.Popen[bytes] | None = None
        server = task = ticker = None
        try:
            arena_ = Arena(opts, store, thinker)
            engine, token = await arena_.register()
            host, port = (split_listen(opts.listen) if not opts.listen.endswith(":0")
                          else (opts.listen[:-2], 0))  # any free port
            server, task = await serve_routes(arena_.api.routes(), host, port,
                                              log_level="warning")
            url = f"http://{host}:{server.port}{PREFIX}"
            if opts.program:
                bridge = subprocess.Popen(
                    [sys.executable, "-m", "engines.bridge", url, "--", *opts.program],
                    cwd=ROOT, env={**os.environ, "KRENDZU_ENGINE_TOKEN": token},
                    stdout=subprocess.DEVNULL)
            if ready is not None:
                ready(url, token)
            ticker = asyncio.create_task(arena_.tick())
            start = time.perf_counter()
            pairs = await arena_.run(engine)
            return report(opts, pairs, time.perf_counter() - start)
        finally:
            if ticker is not None:
                ticker.cancel()
            if bridge is not None:
                bridge.terminate()
                try:
                    bridge.wait(10)
                except subprocess.TimeoutExpired:
                    bridge.kill()
                    bridge.wait()
            if server is not None and task is not None:
                server.should_exit = True
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 5)
            thinker.close()
            await thinker.wait_closed()
            await store.close()


def parse(argv: Sequence[str] | None) -> tuple[ArenaOptions, argparse.Namespace]:
    args_in = list(sys.argv[1:] if argv is None else argv)
    program: list[str] = []
    if "--" in args_in:
        at = args_in.index("--")
        args_in, program = args_in[:at], args_in[at + 1:]
    parser = argparse.ArgumentParser(
        prog="python -m chat.arena", description=(__doc__ or "").split("\n\n")[1],
        epilog="Without a program after --, the engine's URL and token are printed and the "
               "arena waits for it to connect.")
    parser.add_argument("--level", default="normal", choices=LEVELS)
    parser.add_argument("--deals", type=int, default=20, help="seeded deals, each played twice")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--table", default="duel", choices=[t.value for t in Table])
    parser.add_argument("--timer", type=int, default=30,
                        help="turn timer of the engine's seat, seconds (the bot's default)")
    parser.add_argument("--parallel", type=int, default=4, help="matches at once")
    parser.add_argument("--listen", default="127.0.0.1:0", help="host:port of the API")
    parser.add_argument("--ai-workers", type=int, default=1,
                        help="processes for the built-in levels (0: threads)")
    parser.add_argument("--hard-budget-ms", type=float, default=1000.0,
                        help="the hard level's thinking time per turn (the bot's default)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--save", default=None, help="also write the JSON to this file")
    args = parser.parse_args(args_in)
    opts = ArenaOptions(args.level, max(1, args.deals), args.seed, args.table,
                        max(1, args.timer), max(1, args.parallel), program, args.listen,
                        max(0, args.ai_workers), args.hard_budget_ms)
    return opts, args


def main(argv: Sequence[str] | None = None) -> int:
    opts, args = parse(argv)

    def ready(url: str, token: str) -> None:
        if not opts.program:
            print(f"engine API {url}\nKRENDZU_ENGINE_TOKEN={token}\n(waiting for the engine "
                  "to connect)", flush=True)

    result = asyncio.run(arena(opts, ready=ready))
    if args.save:
        Path(args.save).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(result))
    else:
        low, high = result["score_ci95"]
        print(f"{result['engine']} v {result['level']} ({result['table']}): "
              f"{result['deals']} deals x 2 matches, score {result['score_mean']:+.2f} points "
              f"per match (95% CI {low:+.2f} .. {high:+.2f}); wins/draws/losses "
              f"{'/'.join(map(str, result['wins_draws_losses']))}; stand-in moves "
              f"{result['stand_in_moves']}; {result['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
