"""``python bot.py`` as a process over real HTTP on 127.0.0.1: killed mid-match, it resumes."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from krendzu import Match, Pass, Place
from krendzu.coords import frame_for
from storage import MatchRow
from storage.base import rebuild_game
from tests.bot_harness import BOT
from tests.fakebot import FakeTelegram, FakeUser

ROOT = Path(__file__).resolve().parent.parent


def start_bot(base: str, fake: FakeTelegram, db: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE_URL": base,
           "KRENDZU_DB": str(db), "KRENDZU_AI_DELAY": "0", "KRENDZU_AI_WORKERS": "1",
           "KRENDZU_HARD_MS": "100", "KRENDZU_DRAW_WORKERS": "1", "LOG_LEVEL": "INFO",
           "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, str(ROOT / "bot.py")], cwd=db.parent, env=env,
                            stdout=log.open("ab"), stderr=subprocess.STDOUT)


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
