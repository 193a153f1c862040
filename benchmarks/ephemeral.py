"""In-group play (issue 42), the phase ``benchmarks/bot.py`` adds as ``in_group``.

    python benchmarks/ephemeral.py [--seconds 8] [--duels 4] [--teams 2] [--tables 3]
                                   [--deal short] [--seed 1]

The real application runs against the in-process fake Telegram with panels in the group
(``KRENDZU_PANELS=group``), on a clock 60 times faster than real time (as the tests'
``FastClock``), so a group's 60-second flood window lasts one real second and a few real
seconds cover many windows. The fake's 15-second window for answering a press is widened to
90 of its seconds (1.5 real seconds), as in ``tests/test_ephemeral_play.py``; its
ephemeral writes count against the group's ~20 a minute, the choice the bot makes.

* ``duel``: group duels played out by people who never pressed Start, the bot not an
  administrator. The player to move presses the board post's "your move" and plays from the
  panel that opens. ``press_to_panel_p95_ms`` runs from the press to Telegram accepting the
  ephemeral panel (target <= 150 ms). ``writes_per_move`` counts the group's ``public``
  writes (new messages and edits) and its ``ephemeral`` ones (sends and edits; deletions
  apart).
* ``teams``: 2 v 2 with the exchange where the bot administers the group (pushed panels, no
  press). The same counts.
* ``computer_table``: one person against the computer in groups, at full speed: they press
  and tap the moment anything arrives, for ``--seconds`` real seconds. ``429s`` must be 0.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.bot_harness import (
    BOT,
    FastClock,
    Harness,
    live_panel,
    open_button,
    play_step_with_buttons,
    running_bot,
    start_group_match,
)
from tests.fakebot import Chat, FakeTelegram, FakeUser

TARGET_PRESS_P95_MS = 150.0
WINDOW = 90.0  # the fake's seconds for answering a press (1.5 real seconds)
UNLIMITED = 1e9
PUBLIC_WRITES = {"sendmessage", "sendphoto", "senddocument", "sendanimation",
                 "editmessagetext", "editmessagecaption", "editmessagemedia",
                 "editmessagereplymarkup"}
EPHEMERAL_EDITS = {"editephemeralmessagetext", "editephemeralmessagecaption",
                   "editephemeralmessagemedia", "editephemeralmessagereplymarkup"}


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class CountingTelegram(FakeTelegram):
    """The fake Bot API counting each group's accepted writes, and when each ephemeral
    message reached its receiver."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.writes: dict[str, int] = {"public": 0, "ephemeral": 0, "deleted": 0}
        self.arrived: dict[int, float] = {}  # receiver → when their newest one was accepted

    def _log(self, method: str, params: dict, status: int, body: dict, started: float) -> None:
        super()._log(method, params, status, body, started)
        name = method.lower()
        chat = params.get("chat_id")
        if status != 200 or not isinstance(chat, int | str) or int(chat) > 0:
            return
        ephemeral = params.get("ephemeral_message_parameters")
        if name.startswith("send") and ephemeral:
            self.writes["ephemeral"] += 1
            receiver = (json.loads(ephemeral) if isinstance(ephemeral, str)
                        else ephemeral)["receiver_user_id"]
            self.arrived[int(receiver)] = time.perf_counter()
        elif name in EPHEMERAL_EDITS:
            self.writes["ephemeral"] += 1
        elif name in PUBLIC_WRITES:
            self.writes["public"] += 1
        elif name.startswith("delete"):
            self.writes["deleted"] += 1


def fake_telegram() -> CountingTelegram:
    fake = CountingTelegram(bot_username=BOT, clock=FastClock(), global_limit=None)
    fake.ephemeral_window = WINDOW
    return fake


async def play_out(h: Harness, fake: CountingTelegram, group: Chat,
                   users: dict[int, FakeUser], match_id: int, rng: random.Random,
                   presses: list[float]) -> int:
    """Play the match from in-group panels; the press → panel times into ``presses``.
    Returns the moves stored."""
    for _ in range(2000):
        stored = await h.services.flow.load(match_id)
        if stored.row.status.value != "active":
            return len(stored.moves)
        user = users[stored.row.seats[stored.game.current_player].user_id or 0]
        panel = live_panel(fake, group, user)
        found = open_button(fake, group)
        stale = panel is not None and found is not None and all(
            int(b["callback_data"].split(":")[3]) != stored.next_seq
            for b in panel.buttons() if b.get("callback_data", "").startswith("v1:m:"))
        if panel is None or stale:
            if found is None:
                await h.settle(timeout=30)
                continue
            fake.arrived.pop(user.id, None)
            pressed = time.perf_counter()
            user.press(found[0], data=found[1]["callback_data"])
            await h.settle(timeout=30)
            if user.id in fake.arrived:
                presses.append(fake.arrived[user.id] - pressed)
            panel = live_panel(fake, group, user)
            if panel is None:
                continue  # the group was busy: press again
        await play_step_with_buttons(h, user, rng, message=panel)
    raise AssertionError("the match did not end")


async def tables(directory: Path, kind: str, count: int, seed: int,
                 deal: str = "short") -> dict:
    """``count`` groups of ``kind`` (duel: by presses; teams: pushed) played out."""
    fake = fake_telegram()
    rng = random.Random(seed)
    presses: list[float] = []
    moves = 0
    async with running_bot(directory, fake, log_level="WARNING", panels_in_group=True,
                           draw_workers=0, user_per_minute=UNLIMITED, info_per_user=UNLIMITED,
                           info_per_chat=UNLIMITED) as h:
        size = 2 if kind == "duel" else 4
        args = (f"duel tours=2 deal={deal} timer=off" if kind == "duel"
                else "teams deal=3/3 exchange=1 timer=off")
        for i in range(count):
            people = [fake.user(7_000_000 + 10 * i + k, f"P{k}") for k in range(size)]
            group = fake.group(-1_007_000_000 - i, f"{kind} {i}", members=people,
                               bot_admin=kind == "teams")
            match_id = (await start_group_match(h, group, people, args)).match_id
            fake.writes.update(public=0, ephemeral=0, deleted=0)  # the match's own writes
            played = await play_out(h, fake, group, {p.id: p for p in people}, match_id, rng,
                                    presses)
            await h.settle(timeout=60)
            moves += played
            if i == 0:
                totals = dict(fake.writes)
            else:
                totals = {k: totals[k] + fake.writes[k] for k in totals}
        rate_limited = len(fake.rate_limited())
    p95 = percentile(presses, 0.95)
    return {
        "matches": count, "moves": moves, "presses": len(presses),
        "press_to_panel_p50_ms": None if not presses
        else round(1000 * (percentile(presses, 0.5) or 0), 1),
        "press_to_panel_p95_ms": None if p95 is None else round(1000 * p95, 1),
        "writes_per_move": {k: round(v / max(moves, 1), 2) for k, v in totals.items()},
        "429s": rate_limited,
    }


async def computer_table(directory: Path, groups: int, seconds: float, seed: int) -> dict:
    """People against the computer in groups, pressing and tapping at full speed."""
    fake = fake_telegram()
    rng = random.Random(seed)
    moves = busy = 0
    async with running_bot(directory, fake, log_level="WARNING", panels_in_group=True,
                           draw_workers=0, ai_delay=0.0, user_per_minute=UNLIMITED,
                           info_per_user=UNLIMITED, info_per_chat=UNLIMITED) as h:
        tables: list[tuple[Chat, FakeUser, int]] = []
        for i in range(groups):
            person = fake.user(7_100_000 + i, "Solo")
            group = fake.group(-1_007_100_000 - i, f"solo {i}", members=[person])
            person.send(group, f"/new@{BOT} duel tours=2 deal=short timer=off")
            await h.settle(timeout=60)
            person.send(group, f"/add@{BOT} easy")
            await h.settle(timeout=60)
            person.send(group, f"/go@{BOT}")
            await h.settle(timeout=60)
            row = await h.services.store.active_match(group.id)
            assert row is not None, fake.describe()
            tables.append((group, person, row.match_id))
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            progressed = False
            for group, person, match_id in tables:
                stored = await h.services.flow.load(match_id)
                if stored.row.status.value != "active":
                    continue
                if stored.row.seats[stored.game.current_player].user_id != person.id:
                    continue
                panel = live_panel(fake, group, person)
                if panel is None:
                    found = open_button(fake, group)
                    if found is None:
                        continue
                    query = person.press(found[0], data=found[1]["callback_data"])
                    await asyncio.sleep(0)
                    await fake.wait_for(lambda q=query: fake.answer(q).answered, timeout=30)
                    busy += "busy" in (fake.answer(query).text or "")
                    continue
                if await play_step_with_buttons(h, person, rng, message=panel):
                    moves += 1
                    progressed = True
            if not progressed:
                await asyncio.sleep(0.01)
        await h.settle(timeout=60)
        rate_limited = len(fake.rate_limited())
    return {"groups": groups, "seconds": seconds, "steps": moves, "busy_answers": busy,
            "429s": rate_limited}


async def in_group(directory: Path, *, seconds: float = 8.0, seed: int = 1, duels: int = 4,
                   teams_count: int = 2, computer_tables: int = 3, deal: str = "short") -> dict:
    """Every in-group figure, for benchmarks/bot.py's ``in_group``."""
    duel = await tables(directory / "duel", "duel", duels, seed, deal)
    teams = await tables(directory / "teams", "teams", teams_count, seed)
    computer = await computer_table(directory / "computer", computer_tables, seconds, seed)
    p95 = duel["press_to_panel_p95_ms"]
    return {"duel": duel, "teams": teams, "computer_table": computer,
            "targets": {"press_to_panel_p95_ms": TARGET_PRESS_P95_MS, "429s": 0},
            "ok": (p95 is not None and p95 <= TARGET_PRESS_P95_MS
                   and duel["429s"] == teams["429s"] == computer["429s"] == 0)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0,
                        help="real seconds of full-speed play at the computer tables")
    parser.add_argument("--duels", type=int, default=4, help="group duels played out")
    parser.add_argument("--teams", type=int, default=2, help="2 v 2 matches played out")
    parser.add_argument("--tables", type=int, default=3,
                        help="groups playing the computer at full speed")
    parser.add_argument("--deal", default="short", help="the duels' deal (e.g. 3/3)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="krendzu-bench-") as directory:
        root = Path(directory)
        for name in ("duel", "teams", "computer"):
            (root / name).mkdir()
        result = asyncio.run(in_group(root, seconds=args.seconds, seed=args.seed,
                                      duels=args.duels, teams_count=args.teams,
                                      computer_tables=args.tables, deal=args.deal))
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
