"""``python bot.py`` as a process over real HTTP on 127.0.0.1: killed mid-match, it resumes;
stopped mid-match (its whole process group signalled), it tells every move once."""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from chat.config import STOP_SECONDS
from krendzu import Match, Pass, Place
from krendzu.coords import frame_for
from storage import MatchRow
from storage.base import rebuild_game
from tests.bot_harness import BOT
from tests.fakebot import Chat, FakeTelegram, FakeUser
from tests.webhook_harness import PATH, SECRET, free_port

ROOT = Path(__file__).resolve().parent.parent


def start_bot(base: str, fake: FakeTelegram, db: Path, log: Path, *,
              hard_ms: int = 100, webhook_port: int | None = None,
              **settings: str) -> subprocess.Popen[bytes]:
    """``python bot.py`` (polling), or with ``webhook_port`` ``python -m chat.web`` (the
    webhook worker), in a process group of its own (as a terminal or a service manager
    starts it: a stop signals the whole group). ``settings``: more of its environment."""
    env = {**os.environ, "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE_URL": base,
           "KRENDZU_DB": str(db), "KRENDZU_AI_DELAY": "0", "KRENDZU_AI_WORKERS": "1",
           "KRENDZU_HARD_MS": str(hard_ms), "KRENDZU_DRAW_WORKERS": "1", "LOG_LEVEL": "INFO",
           "PYTHONPATH": str(ROOT), **settings}
    command = [sys.executable, str(ROOT / "bot.py")]
    if webhook_port is not None:
        env |= {"KRENDZU_WEBHOOK_URL": f"http://127.0.0.1:{webhook_port}{PATH}",
                "KRENDZU_WEBHOOK_SECRET": SECRET,
                "KRENDZU_WEB_LISTEN": f"127.0.0.1:{webhook_port}"}
        command = [sys.executable, "-m", "chat.web"]
    return subprocess.Popen(command, cwd=db.parent, env=env, stdout=log.open("ab"),
                            stderr=subprocess.STDOUT, process_group=0)


def stored_game(db: Path) -> tuple[MatchRow, Match] | None:
    """The newest match's row and rebuilt state, read with plain sqlite3 (no bot code)."""
    import json
    import sqlite3

    from krendzu import Settings, Table
    from storage import MatchStatus, SeatKind, SeatRow

    with sqlite3.connect(db) as conn:
        r = conn.execute("SELECT match_id, table_kind, settings, seed, status FROM matches "
                         "ORDER BY match_id DESC LIMIT 1").fetchone()
        if r is None:
            return None
        seats = conn.execute("SELECT seat, kind, user_id, level, label FROM seats WHERE "
                             "match_id = ? ORDER BY seat", (r[0],)).fetchall()
        moves = [m[0] for m in conn.execute("SELECT action FROM moves WHERE match_id = ? "
                                             "ORDER BY seq", (r[0],))]
    data = json.loads(r[2])
    settings = Settings.from_json(Table(r[1]), data)
    row = MatchRow(r[0], 51, None, settings, r[3], MatchStatus(r[4]),
                   tuple(SeatRow(s[0], SeatKind(s[1]), s[2], s[3], s[4]) for s in seats),
                   len(moves), None, None, None, None)  # type: ignore[arg-type]
    return row, rebuild_game(row, moves)


def moves_stored(db: Path) -> int:
    found = stored_game(db)
    return len(found[1].history) if found else 0


def play_some(fake: FakeTelegram, user: FakeUser, db: Path, rng: random.Random,
              moves: int) -> int:
    """Type ``moves`` legal moves as the human; returns how many were made."""
    made = 0
    deadline = time.time() + 90
    while made < moves and time.time() < deadline:
        found = stored_game(db)
        if found is None or found[0].status.value != "active":
            break
        row, game = found
        if row.seats[game.current_player].user_id != user.id:
            time.sleep(0.1)
            continue
        before = len(game.history)
        step = rng.choice(game.legal_actions())
        if isinstance(step, Place):
            label = frame_for(game.tour.observation(None).placements).label(step.x, step.y)
            user.send(user.chat, f"{step.card.code()} {label}")
        elif isinstance(step, Pass):
            user.send(user.chat, "pass")
        else:
            user.send(user.chat, "end")
        fake.wait_for_sync(lambda b=before: moves_stored(db) > b, timeout=20)
        made += 1
    return made


def test_sigkill_mid_match_then_restart_resumes_and_finishes(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT)
    base = fake.serve_http()
    db = tmp_path / "krendzu.sqlite3"
    log = tmp_path / "bot.log"
    ann = fake.user(51, "Ann")
    bot = start_bot(base, fake, db, log)
    try:
        ann.start_bot()
        fake.wait_for_message_sync(ann, "Krendzu", timeout=30)
        ann.send(ann.chat, "/new deal=short level=easy")
        lobby = fake.wait_for_message_sync(ann, "🤖", timeout=20)
        ann.press(lobby, data=next(b for b in lobby.buttons()
                                   if b["callback_data"].endswith(":go"))["callback_data"])
        fake.wait_for_sync(lambda: stored_game(db) is not None, timeout=20)
        rng = random.Random(5)
        assert play_some(fake, ann, db, rng, 6) == 6
        made_before = len(stored_game(db)[1].history)
        bot.send_signal(signal.SIGKILL)
        bot.wait(timeout=10)
        # What the killed bot left replays (a computer's answer may have landed meanwhile).
        row, game = stored_game(db)
        before_kill = len(game.history)
        assert before_kill >= made_before
        if row.seats[game.current_player].user_id == ann.id:
            # Typed while the bot is down: Telegram keeps the update until the next poll.
            step = next(a for a in game.legal_actions() if isinstance(a, Place))
            label = frame_for(game.tour.observation(None).placements).label(step.x, step.y)
            ann.send(ann.chat, f"{step.card.code()} {label}")
        # Either way a move follows the restart: the typed one, or the computer's that the
        # restart wakes.
        bot = start_bot(base, fake, db, log)
        fake.wait_for_sync(lambda: moves_stored(db) > before_kill, timeout=30)
        assert play_some(fake, ann, db, rng, 400) > 0
        fake.wait_for_sync(lambda: stored_game(db)[0].status.value == "finished", timeout=60)
        fake.wait_for_message_sync(ann, "🏁", timeout=20, since=0)
        _, game = stored_game(db)
        assert game.is_over and len(game.history) > before_kill
        assert not fake.errors
    finally:
        bot.send_signal(signal.SIGTERM)
        try:
            bot.wait(timeout=20)
        except subprocess.TimeoutExpired:
            bot.kill()
        fake.stop()
    text = log.read_text(errors="replace")
    assert fake.token not in text, "the token never reaches the log"
    assert "Traceback" not in text, text[-3000:]
    assert "Application started" in text, "INFO lines reach the log"
    assert "apscheduler" not in text, "the one-second timer tick does not flood the log"


def my_turn(db: Path, user: FakeUser) -> bool:
    found = stored_game(db)
    if found is None or found[0].status.value != "active":
        return False
    row, game = found
    return row.seats[game.current_player].user_id == user.id


def play_in_group(fake: FakeTelegram, user: FakeUser, group: Chat, db: Path,
                  rng: random.Random, bot: subprocess.Popen[bytes], moves: int) -> int:
    """``user`` plays ``moves`` turns in ``group`` with ``/play`` and ``/pass`` (a
    defender's one-card ``/play`` ends the turn), or until the match is over; how many."""
    made = 0
    deadline = time.time() + 90
    while made < moves and time.time() < deadline:
        found = stored_game(db)
        assert found is not None and bot.poll() is None
        if found[0].status.value != "active":
            break
        if not my_turn(db, user):
            time.sleep(0.05)
            continue
        game = found[1]
        step = rng.choice([a for a in game.legal_actions() if isinstance(a, Place | Pass)])
        if isinstance(step, Place):
            label = frame_for(game.tour.observation(None).placements).label(step.x, step.y)
            user.send(group, f"/play@{BOT} {step.card.code()} {label}")
        else:
            user.send(group, f"/pass@{BOT}")
        before = len(game.history)
        fake.wait_for_sync(lambda b=before: moves_stored(db) > b, timeout=20)
        made += 1
    return made


def told_in_group(fake: FakeTelegram, group: Chat, names: tuple[str, ...]) -> Counter[str]:
    """Each card the group's board posts show played (``Ann: 9♦ L12 + Q♠ M14``), and each
    ``pass``, counted over every post: a move told twice counts twice."""
    told: Counter[str] = Counter()
    turn = re.compile(rf"^({'|'.join(map(re.escape, names))}): (.+)$")
    for message in fake.sent(group):
        if message.kind != "photo":
            continue
        for line in (message.caption or "").splitlines():
            found = turn.match(line)
            if found is None:
                continue
            if found[2] == "pass":
                told[f"{found[1]}: pass"] += 1
            else:
                told.update(card for card, _cell in re.findall(r"(\S+[♠♣♦♥]) ([A-Z]\d+)",
                                                                found[2]))
    return told


def stored_turns(db: Path, names: dict[int | None, str]) -> Counter[str]:
    """What :func:`told_in_group` should count once each: every stored card and pass
    (``names``: a seat's user id → the name the posts give it)."""
    found = stored_game(db)
    assert found is not None
    row, game = found
    stored: Counter[str] = Counter()
    replay = Match(row.labels, row.settings, seed=row.seed)
    for action in game.history:
        if isinstance(action, Place):
            stored[action.card.pretty()] += 1
        elif isinstance(action, Pass):
            stored[f"{names[row.seats[replay.current_player].user_id]}: pass"] += 1
        replay.apply(action)
    return stored


@pytest.mark.parametrize("mode", ["polling", "webhook"])
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_signal_to_the_process_group_mid_match_loses_nothing_and_tells_each_move_once(
        tmp_path: Path, stop: signal.Signals, mode: str) -> None:
    """Ctrl-C in a terminal (SIGINT) and systemd's stop (SIGTERM to every process of the
    service) reach the drawing and computer workers with the bot: while a computer moves
    and its board is drawn, the stop leaves no traceback, ends within its limit, and after
    the restart the group reads every stored move exactly once."""
    fake = FakeTelegram(bot_username=BOT)
    base = fake.serve_http()
    db = tmp_path / "krendzu.sqlite3"
    log = tmp_path / "bot.log"
    port = free_port() if mode == "webhook" else None
    ann = fake.user(51, "Ann")
    group = fake.group(-100777, "Table")
    bot = start_bot(base, fake, db, log, hard_ms=300, webhook_port=port)
    try:
        ann.start_bot()
        fake.wait_for_message_sync(ann, "Krendzu", timeout=30)
        ann.send(group, f"/new@{BOT} deal=3/4 tours=2 exchange=0")
        fake.wait_for_message_sync(group, "Krendzu", timeout=20)
        ann.send(group, f"/add@{BOT} hard")
        fake.wait_for_sync(lambda: any("🤖" in (m.content or "") for m in fake.sent(group)),
                           timeout=20)  # the lobby, edited or posted again
        ann.send(group, f"/go@{BOT}")
        fake.wait_for_sync(lambda: stored_game(db) is not None, timeout=20)
        rng = random.Random(7)
        assert play_in_group(fake, ann, group, db, rng, bot, 2) == 2
        fake.wait_for_sync(lambda: my_turn(db, ann), timeout=30)
        assert play_in_group(fake, ann, group, db, rng, bot, 1) == 1
        # The computer thinks (300 ms) and Ann's move is being drawn: stop now.
        time.sleep(0.1)
        assert stored_game(db)[0].status.value == "active"
        started = time.monotonic()
        os.killpg(bot.pid, stop)
        status = bot.wait(timeout=STOP_SECONDS + 30)
        took = time.monotonic() - started
        assert status == 0, log.read_text(errors="replace")[-3000:]
        assert took < STOP_SECONDS, f"stopped after {took:.1f} s"
        stopped = log.read_text(errors="replace")
        assert "Traceback" not in stopped and "Error" not in stopped, stopped[-4000:]

        bot = start_bot(base, fake, db, log, hard_ms=300, webhook_port=port)
        assert play_in_group(fake, ann, group, db, rng, bot, 1000) > 0
        fake.wait_for_sync(lambda: stored_game(db)[0].status.value == "finished", timeout=60)
        fake.wait_for_message_sync(group, "🏁", timeout=90, since=0)
        os.killpg(bot.pid, stop)
        assert bot.wait(timeout=STOP_SECONDS + 30) == 0
    finally:
        if bot.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(bot.pid, signal.SIGKILL)
            bot.wait(timeout=10)
        fake.stop()
    names: dict[int | None, str] = {ann.id: "Ann", None: "🤖 Hard"}
    assert told_in_group(fake, group, tuple(names.values())) == stored_turns(db, names)
    assert not fake.errors
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-4000:]


@pytest.mark.parametrize("mode", ["polling", "webhook"])
def test_a_stop_ends_within_krendzu_stop_seconds_while_messages_wait(
        tmp_path: Path, mode: str) -> None:
    """KRENDZU_STOP_SECONDS=3: SIGTERM while a group's message waits out a minute's 429
    (the queue cannot drain) ends the bot within 3 s, exit 0, no traceback; the waiting
    message is the restart's (the outbox). Before, the queue alone had a fixed 5 s."""
    limit = 3.0
    fake = FakeTelegram(bot_username=BOT)
    base = fake.serve_http()
    db = tmp_path / "krendzu.sqlite3"
    log = tmp_path / "bot.log"
    port = free_port() if mode == "webhook" else None
    ann = fake.user(51, "Ann")
    group = fake.group(-100778, "Busy")
    bot = start_bot(base, fake, db, log, webhook_port=port, KRENDZU_STOP_SECONDS=str(limit))
    try:
        ann.start_bot()
        fake.wait_for_message_sync(ann, "Krendzu", timeout=30)
        fake.flood(group, 60)
        ann.send(group, f"/new@{BOT} duel")
        fake.wait_for_sync(lambda: bool(fake.rate_limited(group)), timeout=20)
        started = time.monotonic()
        os.killpg(bot.pid, signal.SIGTERM)
        status = bot.wait(timeout=limit + 30)
        took = time.monotonic() - started
        text = log.read_text(errors="replace")
        assert status == 0, text[-3000:]
        assert took < limit, f"stopped after {took:.1f} s"
        assert "Traceback" not in text, text[-3000:]
    finally:
        if bot.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(bot.pid, signal.SIGKILL)
            bot.wait(timeout=10)
        fake.stop()
