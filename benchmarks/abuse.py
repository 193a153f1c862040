"""Abuse benchmark: honest group matches while one hostile user floods the bot (issue 25).

    python benchmarks/abuse.py [--matches 20] [--seconds 60] [--pace 5] [--attack-rate 10]
                               [--flood-rate 50] [--open-lobbies 3] [--seed 1]
                               [--draw-workers 2] [--overall-rate 30] [--dir DIR]

The real application runs against the in-process fake Telegram as in ``benchmarks/bot.py``
(whose set-up, moves and checks this reuses), with the bot's production limits on: the
per-user and per-chat limits of ``chat/throttle.py`` at their defaults (the test harness
lifts them), 19 messages and edits per group a minute, 30 API calls a second
(``--overall-rate``; the fake's own bot-wide limit is off so that its one-second window cannot
disagree with the bot's leaky bucket). The clock is the real one.

``--matches`` groups each play a duel between two people who type their moves
(``/play@bot QC M12``, ``/pass@bot``, ``end`` privately) at a steady pace: one move every
``--pace`` seconds per match on average (open-loop, round-robin over the matches whose last
move was answered), so the group limits are not the bottleneck. ``--open-lobbies`` more groups
each have a set-up waiting for players. This runs three times with the same seed, each time
with a fresh bot and database: ``without`` an attacker, ``with`` one, and with a ``flood``
(issue 43). The attacker, a stranger who started the bot, does one of these
``--attack-rate`` times a second for ``--seconds``, in turn:

- an information command (``/rules /help /stats /top /top global /history /export /board
  /score``, each with ``@bot``) in one of the match groups or in his private chat;
- a forged button (a modified client sends any callback data): ``v1:l:<id>:join`` for a real
  lobby (open or started) or a random id, ``v1:m:<id>:<seq>:<op>`` (rematch, pass, end, hint)
  for a real match or a random id, or garbage, pressed on the newest bot message of a match
  group or of his private chat;
- a deep link: ``/start j<id>`` or ``/start j<id>_<random key>`` for a real lobby or a random id.

The flood is another stranger sending ``--flood-rate`` commands a second for ``--seconds``
into the first match's group, where its two players type their moves (``/rules@bot``,
``/score@bot``, ``/play@bot QC M12``, ``/board@bot``, ... in turn): far more than the bot
handles one after another, so his updates pile up in that group's queue (chat/updates.py).

Figures (one JSON object):

- ``p95_ratio`` (target <= 2) and ``p50_ratio``: the honest matches' board-post latency (a move's
  update to the group post that shows it) with the attacker over without; each run's
  ``honest`` holds the latency figures of ``benchmarks/bot.py``'s latency phase;
- ``memory_growth_mb`` (target <= 50): the growth of the process's VmRSS from the end of the
  set-up to the end of the attack (``memory_growth_without_attacker_mb``: the same without
  him), each read after ``gc.collect()`` and ``malloc_trim``. The fake Telegram runs in the same
  process and keeps every picture and GIF it is sent, which is not the bot's memory: those
  bytes are dropped before each reading (``fake_files_mb``: how many at the end); its records
  of calls and messages stay in, so the figure is an upper bound. ``workers_growth_mb`` is
  the drawing processes' VmRSS growth;
- ``lost_moves`` (target 0): moves sent but not in the stored move logs, plus moves stored that
  nobody honest sent (a forged press that moved) and moves never answered;
- ``hostile_seated`` (target 0): seats of the attacker in any match, or in any set-up's seats
  (``hostile_invited``: set-ups that were told to expect him) after the run, read from every
  lobby and match row of the database.

``attack`` shows what the attacker did and what it cost: updates refused by the throttle,
replies he got, the most writes any group received in 60 s, and 429 answers (none expected).

``flood`` holds the flood's figures (targets of issue 43):

- ``honest_dropped`` (target 0): updates of anyone but the flooder that the update processor
  dropped (``flooder_dropped``: his, with ``flood_sent``, how many he sent);
- ``p95_ratio`` (target <= 2) and ``p50_ratio``: the honest board posts' latency with the
  flood over ``without``; ``flooded_group`` the same figures for the flooded group's own
  moves alone (its two players share their group's queue with him);
- ``lost_moves`` (target 0), as above, and the messages the group and the flooder got.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import dataclasses
import gc
import json
import logging
import os
import platform
import random
import sqlite3
import string
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bot import BOT, Bench, ObservedTelegram, StepClock, ms, percentile, running_bot
from chat.config import Config
from tests.fakebot import Chat, FakeTelegram, FakeUser

TARGET_RATIO = 2.0
TARGET_MEMORY_MB = 50.0
INFO = ("rules", "help", "stats", "top", "top global", "history", "export", "board", "score")
MOVE_OPS = ("rematch", "pass", "end", "hint")
ATTACKER_ID = 666_000_001
FLOODER_ID = 666_000_002
#: What the flooder sends, in turn.
FLOOD = ("/rules@{bot}", "/score@{bot}", "/play@{bot} QC M12", "/board@{bot}", "/help@{bot}",
         "/pass@{bot}", "/moves@{bot}", "/top@{bot}", "/stats@{bot}", "/history@{bot}")
KEY_CHARS = string.ascii_letters + string.digits + "_-"
#: The per-user and per-chat limits (chat/throttle.py) at their defaults.
PRODUCTION_LIMITS = {f.name: f.default for f in dataclasses.fields(Config)
                     if f.name in ("user_per_minute", "info_per_user", "info_per_chat",
                                   "info_repeat_minutes")}


class HonestBench(Bench):
    """``benchmarks/bot.py``'s matches, in groups that get the attacker's pictures too."""

    def is_board_post(self, caption: str) -> bool:
        # A board post names the moves above its "Score:" line; the /board answer starts with
        # the tour, and the pictures of /rules, /top and /stats show no score.
        return "\nScore: " in caption and not caption.startswith("Tour ")


class Attacker:
    """One hostile user; see the module docstring for what he sends."""

    def __init__(self, fake: FakeTelegram, user: FakeUser, groups: list[Chat],
                 lobby_ids: list[int], match_ids: list[int], rng: random.Random) -> None:
        self.fake = fake
        self.user = user
        self.groups = groups
        self.lobby_ids = lobby_ids
        self.match_ids = match_ids
        self.rng = rng
        self.counts = {"info_commands": 0, "forged_presses": 0, "deep_links": 0}

    def some_id(self, known: list[int]) -> int:
        return self.rng.choice(known) if self.rng.random() < 0.7 else self.rng.randrange(
            1, 10**6)

    def key(self) -> str:
        return "".join(self.rng.choice(KEY_CHARS) for _ in range(22))

    def forged_data(self) -> str:
        kind = self.rng.random()
        if kind < 0.35:
            return f"v1:l:{self.some_id(self.lobby_ids)}:join"
        if kind < 0.8:
            return (f"v1:m:{self.some_id(self.match_ids)}:{self.rng.randrange(200)}:"
                    f"{self.rng.choice(MOVE_OPS)}")
        return "".join(self.rng.choice(string.printable.strip())
                       for _ in range(self.rng.randrange(1, 65)))

    def act(self, tick: int) -> None:
        rng, user = self.rng, self.user
        kind = tick % 3
        if kind == 0:
            command, *args = rng.choice(INFO).split()
            chat = rng.choice([*self.groups, None])
            user.send(chat, " ".join([f"/{command}@{BOT}", *args]))
            self.counts["info_commands"] += 1
        elif kind == 1:
            chat = rng.choice([*self.groups, user])
            message = self.fake.last(chat)
            if message is None:
                return
            user.press(message, data=self.forged_data(), forged=True)
            self.counts["forged_presses"] += 1
        else:
            lobby = self.some_id(self.lobby_ids)
            user.start_bot(f"j{lobby}" if rng.random() < 0.3 else f"j{lobby}_{self.key()}")
            self.counts["deep_links"] += 1

    async def run(self, rate: float, seconds: float) -> None:
        start, tick = time.perf_counter(), 0
        while (target := start + tick / rate) < start + seconds:
            delay = target - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            self.act(tick)
            tick += 1


class Flooder:
    """One stranger sending commands into one group as fast as ``rate`` a second."""

    def __init__(self, user: FakeUser, group: Chat) -> None:
        self.user = user
        self.group = group
        self.sent = 0

    async def run(self, rate: float, seconds: float) -> None:
        start, tick = time.perf_counter(), 0
        while (target := start + tick / rate) < start + seconds:
            delay = target - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            self.user.send(self.group, FLOOD[tick % len(FLOOD)].format(bot=BOT))
            self.sent += 1
            tick += 1


def count_drops(h: object, dropped: dict[str, int], flooder: int) -> None:
    """Count the updates the update processor drops: the flooder's and everyone else's."""
    processor = h.app.update_processor  # type: ignore[attr-defined]
    tell = processor.on_drop

    def counted(update: object) -> None:
        user = getattr(update, "effective_user", None)
        dropped["flooder" if user is not None and user.id == flooder else "honest"] += 1
        if tell is not None:
            tell(update)

    processor.on_drop = counted


def rss_kib(pid: int | str = "self") -> int:
    """The resident memory of a process (VmRSS), 0 if it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def descendants(root: int) -> list[int]:
    """Processes started by ``root`` and by its children (the drawing workers)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        kids = [p for p, parent in parents.items() if parent == pid]
        found += kids
        frontier += kids
    return found


def memory() -> tuple[float, float]:
    """(this process, its descendants) resident memory in MB, after a full collection and
    handing the C heap's free pages back (else RSS keeps what was freed)."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return (rss_kib() / 1024, sum(rss_kib(p) for p in descendants(os.getpid())) / 1024)


def release_fake_files(fake: FakeTelegram) -> float:
    """Forget the bytes of every upload the fake Telegram kept (each picture, GIF and record
    the bot sent: the fake's memory, in this process, not the bot's); the MB released."""
    released = 0
    for record in list(fake.files.values()):
        for part in (record, record.thumb):
            if part is not None:
                released += len(part.data)
                part.data = b""
    return released / 2**20


def hostile_rows(database: Path, user_id: int) -> dict:
    """Where ``user_id`` appears in every match and lobby row of the database."""
    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as conn:
        seats = conn.execute("SELECT COUNT(*) FROM seats WHERE user_id = ?",
                             (user_id,)).fetchone()[0]
        lobbies = seated = invited = 0
        for (state,) in conn.execute("SELECT state FROM lobbies"):
            data = json.loads(state)
            lobbies += 1
            seated += user_id in [s.get("user_id") for s in data.get("seats", [])]
            invited += user_id in data.get("invited", [])
    return {"match_seats": seats, "lobby_seats": seated, "invited": invited,
            "lobbies_checked": lobbies}


async def one_run(args: argparse.Namespace, directory: Path, mode: str) -> dict:
    """One run: ``mode`` is ``without`` (no attacker), ``with`` (the attacker) or
    ``flood``."""
    attack = mode == "with"
    directory.mkdir(parents=True, exist_ok=True)
    # Real time, moved on once the hostile phase is over so the answers held back by the
    # groups' 60-second windows go out at once rather than a minute later (the figures
    # are taken before; the settle only drains what is left).
    clock = StepClock()
    fake = ObservedTelegram(bot_username=BOT, clock=clock, global_limit=None)
    # The test harness lifts the per-user and per-chat limits; here they are production's.
    async with running_bot(directory, fake, log_level="WARNING",
                           overall_rate=args.overall_rate, draw_workers=args.draw_workers,
                           **PRODUCTION_LIMITS) as h:
        bench = HonestBench(h, args.seed)
        started = time.perf_counter()
        await bench.setup(args.matches)
        hosts, open_groups = [], []
        for k in range(args.open_lobbies):
            host = fake.user(2_000_000 + k, "Cat", str(k))
            group = fake.group(-1_002_000_000_000 - k, f"Open table {k}")
            host.start_bot()
            host.send(group, f"/new@{BOT} duel")
            hosts.append(host)
            open_groups.append(group)
        mal = fake.user(ATTACKER_ID, "Mallory")
        mal.start_bot()
        fred = fake.user(FLOODER_ID, "Fred")
        fred.start_bot()
        dropped = {"honest": 0, "flooder": 0}
        count_drops(h, dropped, fred.id)
        await h.settle(timeout=120)
        store = h.services.store
        lobby_ids = [row.lobby_id for group in open_groups
                     if (row := await store.open_lobby(group.id)) is not None]
        for game in bench.games:
            row = await store.lobby_of_match(game.match_id)
            if row is not None:
                lobby_ids.append(row.lobby_id)
        match_ids = [g.match_id for g in bench.games]
        setup_s = time.perf_counter() - started
        attacker = Attacker(fake, mal, [g.group for g in bench.games], lobby_ids, match_ids,
                            random.Random(args.seed + 1))
        flooded = bench.games[0].group
        flooder = Flooder(fred, flooded)
        watchdog = asyncio.create_task(bench.watchdog())
        try:
            for game in bench.games:
                bench.ready.put_nowait(game)
            release_fake_files(fake)
            rss0, workers0 = memory()
            hostile = (asyncio.create_task(attacker.run(args.attack_rate, args.seconds))
                       if attack else asyncio.create_task(
                           flooder.run(args.flood_rate, args.seconds)) if mode == "flood"
                       else None)
            honest = await bench.latency_phase(args.matches / args.pace, args.seconds)
            in_flooded = [m.post - m.sent for m in bench.completed
                          if m.post is not None and m.game.group is flooded]
            if hostile is not None:
                await hostile
            clock.advance(61)  # fresh 60-second windows everywhere
            await h.settle(timeout=180)
            check = await bench.verify()  # compares the groups' last pictures: before release
            files = release_fake_files(fake)
            rss1, workers1 = memory()
        finally:
            watchdog.cancel()
        refused = h.services.throttle.refused
        groups = [g.group for g in bench.games] + open_groups
        to_attacker = len(fake.sent(mal))
        writes = max(fake.max_sends_in_window(g, 60, edits=True) for g in groups)
        limited = len(fake.rate_limited())
        flood = {"flood_sent": flooder.sent, "honest_dropped": dropped["honest"],
                 "flooder_dropped": dropped["flooder"],
                 "flooded_group": {"moves": len(in_flooded),
                                   "p50_ms": ms(percentile(in_flooded, 0.5)),
                                   "p95_ms": ms(percentile(in_flooded, 0.95))},
                 "messages_to_flooded_group": len(fake.sent(flooded)),
                 "messages_to_flooder": len(fake.sent(fred)),
                 "flooded_group_writes_max_per_60s": fake.max_sends_in_window(
                     flooded, 60, edits=True)}
    seated = hostile_rows(Path(h.config.database), mal.id)
    return {
        "attacker": attack, "mode": mode, "setup_s": round(setup_s, 1), "honest": honest,
        "check": check, "flood": flood,
        "memory": {"rss_mb_before": round(rss0, 1), "rss_mb_after": round(rss1, 1),
                   "growth_mb": round(rss1 - rss0, 1), "fake_files_mb": round(files, 1),
                   "workers_growth_mb": round(workers1 - workers0, 1)},
        "attack": {**attacker.counts, "throttle_refused": refused,
                   "messages_to_attacker": to_attacker,
                   "group_writes_max_per_60s": writes, "rate_limited": limited},
        "hostile": seated,
    }


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a is not None and b else None


def flood_figures(without: dict, flooded: dict) -> dict:
    """The flood run's figures against the run without anyone hostile (issue 43)."""
    check = flooded["check"]
    figures = dict(flooded["flood"])
    mine, theirs = figures["flooded_group"], without["flood"]["flooded_group"]
    figures["flooded_group"] = {**mine, "p50_ms_without": theirs["p50_ms"],
                                "p95_ms_without": theirs["p95_ms"],
                                "p95_ratio": ratio(mine["p95_ms"], theirs["p95_ms"])}
    return {
        **figures,
        "p50_ms": {"without": without["honest"]["p50_ms"], "with": flooded["honest"]["p50_ms"]},
        "p95_ms": {"without": without["honest"]["p95_ms"], "with": flooded["honest"]["p95_ms"]},
        "p50_ratio": ratio(flooded["honest"]["p50_ms"], without["honest"]["p50_ms"]),
        "p95_ratio": ratio(flooded["honest"]["p95_ms"], without["honest"]["p95_ms"]),
        "lost_moves": check["lost"] + check["duplicated"] + check["unanswered"],
        "honest_moves": flooded["honest"]["moves"],
        "throttle_refused": flooded["attack"]["throttle_refused"],
    }


async def run(args: argparse.Namespace, directory: str) -> dict:
    without = await one_run(args, Path(directory) / "without", mode="without")
    with_ = await one_run(args, Path(directory) / "with", mode="with")
    flooded = await one_run(args, Path(directory) / "flood", mode="flood")
    flood = flood_figures(without, flooded)
    check = with_["check"]
    lost = check["lost"] + check["duplicated"] + check["unanswered"]
    seated = with_["hostile"]["match_seats"] + with_["hostile"]["lobby_seats"]
    p95_ratio = ratio(with_["honest"]["p95_ms"], without["honest"]["p95_ms"])
    growth = with_["memory"]["growth_mb"]
    ok = (p95_ratio is not None and p95_ratio <= TARGET_RATIO and growth <= TARGET_MEMORY_MB
          and lost == 0 and seated == 0 and without["check"]["lost"] == 0
          and flood["honest_dropped"] == 0 and flood["lost_moves"] == 0
          and flood["p95_ratio"] is not None and flood["p95_ratio"] <= TARGET_RATIO)
    return {
        "matches": args.matches, "seconds": args.seconds, "pace_s": args.pace,
        "attack_rate": args.attack_rate, "open_lobbies": args.open_lobbies,
        "p50_ms": {"without": without["honest"]["p50_ms"], "with": with_["honest"]["p50_ms"]},
        "p95_ms": {"without": without["honest"]["p95_ms"], "with": with_["honest"]["p95_ms"]},
        "p50_ratio": ratio(with_["honest"]["p50_ms"], without["honest"]["p50_ms"]),
        "p95_ratio": p95_ratio,
        "memory_growth_mb": growth,
        "memory_growth_without_attacker_mb": without["memory"]["growth_mb"],
        "lost_moves": lost, "hostile_seated": seated,
        "hostile_invited": with_["hostile"]["invited"],
        "flood_rate": args.flood_rate, "flood": flood,
        "without": without, "with": with_, "flooded": flooded,
        "targets": {"p95_ratio": TARGET_RATIO, "memory_growth_mb": TARGET_MEMORY_MB,
                    "lost_moves": 0, "hostile_seated": 0, "flood_honest_dropped": 0,
                    "flood_p95_ratio": TARGET_RATIO},
        "ok": ok, "python": platform.python_version(), "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matches", type=int, default=20, help="group matches in progress")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of each run")
    parser.add_argument("--pace", type=float, default=5.0,
                        help="seconds between two moves of a match, on average")
    parser.add_argument("--attack-rate", type=float, default=10.0,
                        help="the attacker's actions per second")
    parser.add_argument("--flood-rate", type=float, default=50.0,
                        help="the flooder's commands per second into one match's group")
    parser.add_argument("--open-lobbies", type=int, default=3,
                        help="groups with a set-up waiting for players")
    parser.add_argument("--seed", type=int, default=1, help="seed of moves and attacks")
    parser.add_argument("--draw-workers", type=int, default=2,
                        help="processes drawing pictures, as KRENDZU_DRAW_WORKERS (0: threads)")
    parser.add_argument("--overall-rate", type=float, default=30.0,
                        help="the bot's API calls per second over all chats (production: 30)")
    parser.add_argument("--dir", default=None,
                        help="where the temporary database directories go")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="krendzu-abuse-", dir=args.dir) as directory:
        result = asyncio.run(run(args, directory))
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
