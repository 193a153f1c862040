"""Webhook mode (chat/web.py, issue 28): Telegram posts updates to the bot's own web server.

Driven through the real stack: the fake Bot API delivers every update by POSTing it to
uvicorn on 127.0.0.1, one at a time per chat (per user for button presses), and retries
what was not answered 2xx (tests/fakebot/webhook.py)."""

from __future__ import annotations

import itertools
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from chat.config import ConfigError, load_config
from krendzu import EndTurn, Pass, Place
from krendzu.coords import frame_for
from tests.bot_harness import (
    BOT,
    FastClock,
    Harness,
    play_step_with_buttons,
    start_group_duel,
)
from tests.fakebot import Chat, FakeTelegram, FakeUser
from tests.test_bot_process import moves_stored, stored_game
from tests.webhook_harness import PATH, SECRET, free_port, running_webhook_bot

ROOT = Path(__file__).resolve().parent.parent
SORRY = "something went wrong"


def stored_moves(h: Harness, match_id: int) -> list[tuple[int, str, int | None]]:
    """(seq, action, update_id) of every stored move, read with plain sqlite3."""
    with sqlite3.connect(h.config.database) as conn:
        return conn.execute("SELECT seq, action, update_id FROM moves WHERE match_id = ? "
                            "ORDER BY seq", (match_id,)).fetchall()


def one_at_a_time_per_queue(fake: FakeTelegram) -> None:
    """No two tries of one queue (a chat, a user's presses) overlapped: each went after the
    previous one's answer, as Telegram sends them."""
    by_queue: dict[tuple[str, int], list] = {}
    for attempt in fake.webhook_attempts():
        by_queue.setdefault(attempt.queue, []).append(attempt)
    for attempts in by_queue.values():
        for earlier, later in itertools.pairwise(attempts):
            assert earlier.answered_at is not None and earlier.answered_at <= later.wall


async def typed_move(h: Harness, group: Chat, users: dict[int, FakeUser], match_id: int,
                     rng: random.Random) -> int:
    """The player to move types a legal move; the update id it travels in."""
    stored = await h.services.flow.load(match_id)
    game = stored.game
    user = users[stored.row.seats[game.current_player].user_id or 0]
    step = rng.choice(game.legal_actions())
    if isinstance(step, Place):
        cell = frame_for(game.tour.observation(None).placements).label(step.x, step.y)
        user.send(group, f"/play@{BOT} {step.card.code()} {cell}")
    elif isinstance(step, Pass):
        user.send(group, f"/pass@{BOT}")
    else:
        assert isinstance(step, EndTurn)
        user.send(user.chat, "end")
    return h.fake.update_log[-1]["update_id"]


async def test_a_group_duel_is_set_up_and_played_by_webhook(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(301, "Ann"), fake.user(302, "Bob")
    group = fake.group(-1003010, "Hooked")
    users = {ann.id: ann, bob.id: bob}
    async with running_webhook_bot(tmp_path, fake) as h:
        [hook] = fake.calls_to("setWebhook")
        assert hook.params["url"].endswith(PATH) and hook.params["secret_token"] == SECRET
        assert "callback_query" in hook.params["allowed_updates"]
        ann.start_bot()
        bob.start_bot()
        await h.settle()  # private chats are delivered in parallel with the group's
        row = await start_group_duel(h, group, ann, bob, "duel deal=short timer=off")
        rng = random.Random(7)
        typed = 0
        for turn in range(400):
            if (await h.services.store.get_match(row.match_id)).status.value != "active":
                break
            if turn % 2:  # typed commands and buttons by turns
                await typed_move(h, group, users, row.match_id, rng)
                typed += 1
                await h.settle()
            elif not any([await play_step_with_buttons(h, u, rng) for u in (ann, bob)]):
                await h.settle()
        else:
            raise AssertionError("the match did not end:\n" + fake.describe())
        await h.settle()
        assert typed > 5
        assert any("🏁" in (m.text or "") for m in fake.sent(group))
        assert not fake.calls_to("getUpdates"), "no polling in webhook mode"
        attempts = fake.webhook_attempts()
        assert {a.update_id for a in attempts} == {u["update_id"] for u in fake.update_log}
        assert all(a.status == 200 for a in attempts), "every update answered 200 at once"
        presses = [a for a in attempts if a.queue[0] == "user"]
        assert len(presses) > 5, len(presses)
        one_at_a_time_per_queue(fake)
        moves = stored_moves(h, row.match_id)
        assert [m[0] for m in moves] == list(range(1, len(moves) + 1))
        assert not fake.errors


async def test_the_secret_token_is_checked_and_healthz_answers(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(311, "Ann")
    group = fake.group(-1003110, "Guarded")
    async with running_webhook_bot(tmp_path, fake) as h:
        base = h.config.webhook_url or ""
        update = {"update_id": 777, "message": {
            "message_id": 1, "date": int(time.time()), "text": f"/new@{BOT} duel",
            "entities": [{"type": "bot_command", "offset": 0, "length": len(f"/new@{BOT}")}],
            "chat": {"id": group.id, "type": "supergroup", "title": group.title},
            "from": {"id": ann.id, "is_bot": False, "first_name": "Ann"}}}
        async with httpx.AsyncClient() as client:
            health = await client.get(base.replace(PATH, "/healthz"))
            assert (health.status_code, health.text) == (200, "ok")
            for headers in ({}, {"X-Telegram-Bot-Api-Secret-Token": "not-the-secret-1234"},
                            {"X-Telegram-Bot-Api-Secret-Token": SECRET[:-1]}):
                refused = await client.post(base, json=update, headers=headers)
                assert refused.status_code == 403
            junk = await client.post(base, content=b"[1, 2",
                                     headers={"X-Telegram-Bot-Api-Secret-Token": SECRET})
            assert junk.status_code == 400
            assert (await client.get(base)).status_code == 405  # POST only
        await h.settle()
        assert fake.sent(group) == [] and fake.calls_to("sendMessage") == []
        assert not await h.services.store.seen_update(777)
        assert not await h.services.flow.is_set_up(group.id, None)


async def test_a_failed_update_is_answered_500_and_applied_once_on_redelivery(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(321, "Ann"), fake.user(322, "Bob")
    group = fake.group(-1003210, "Flaky")
    users = {ann.id: ann, bob.id: bob}
    async with running_webhook_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()  # private chats are delivered in parallel with the group's
        row = await start_group_duel(h, group, ann, bob, "duel deal=short timer=off")
        store = h.services.store
        real_append = store.append_move
        failures = []

        async def append_once_broken(*args, **kwargs):  # type: ignore[no-untyped-def]
            if not failures:
                failures.append(args)
                raise OSError("disk I/O error (simulated)")
            return await real_append(*args, **kwargs)

        monkeypatch.setattr(store, "append_move", append_once_broken)
        rng = random.Random(3)
        before = len(stored_moves(h, row.match_id))
        update_id = await typed_move(h, group, users, row.match_id, rng)
        await h.settle()
        assert failures, "the store's append failed once"
        assert [a.status for a in fake.webhook_attempts(update_id)] == [500, 200]
        moves = stored_moves(h, row.match_id)
        assert len(moves) >= before + 1
        assert [m[2] for m in moves].count(update_id) == 1, "applied exactly once"
        assert not any(SORRY in (m.text or "") for m in fake.messages(group)), \
            "no apology for an update Telegram delivers again"
        # The chat's next update went only after the redelivered one was answered 200.
        next_id = await typed_move(h, group, users, row.match_id, rng)
        await h.settle()
        assert [a.status for a in fake.webhook_attempts(next_id)] == [200]
        assert [m[2] for m in stored_moves(h, row.match_id)].count(next_id) == 1
        one_at_a_time_per_queue(fake)


@pytest.mark.parametrize(("step", "apologies"), [
    ("flow.new_lobby", 1), ("throttle.admit", 1), ("flow.read_request", 0)])
async def test_an_update_that_always_fails_is_given_up_with_an_apology(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str, apologies: int) -> None:
    """One broken update must not hold back its chat for the day Telegram keeps it. Also
    when it fails before the request's read (the preamble's limits, ``throttle.admit``) or
    in it (``read_request``), the read that reads a group update's ledger (issue 39): its
    tries are then known to the webhook alone, which gives it up, and apologises itself
    (but where the apology's own language needs the read that fails)."""
    from chat.webhook import MAX_ATTEMPTS

    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    fake.webhook_retry_cap = 2.0
    ann = fake.user(331, "Ann")
    group = fake.group(-1003310, "Broken")
    async with running_webhook_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()

        async def broken(*args: object, **kwargs: object) -> None:
            raise RuntimeError("a bug (simulated)")

        part, name = step.split(".")
        monkeypatch.setattr(getattr(h.services, part), name, broken)
        ann.send(group, f"/new@{BOT} duel")
        update_id = fake.update_log[-1]["update_id"]
        await h.settle(timeout=30)
        statuses = [a.status for a in fake.webhook_attempts(update_id)]
        assert statuses == [500] * (MAX_ATTEMPTS - 1) + [200]
        assert sum(SORRY in (m.text or "") for m in fake.sent(group)) == apologies
        monkeypatch.undo()
        # The chat's next update goes through.
        ann.send(group, f"/rules@{BOT}")
        await h.settle()
        assert [a.status for a in fake.webhook_attempts(update_id + 1)] == [200]


async def test_a_redelivered_update_applies_once(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(341, "Ann"), fake.user(342, "Bob")
    group = fake.group(-1003410, "Echo")
    users = {ann.id: ann, bob.id: bob}
    async with running_webhook_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()  # private chats are delivered in parallel with the group's
        ann.send(group, f"/new@{BOT} duel deal=short timer=off")
        await h.settle()
        fake.drop_webhook(answered=True)  # /join is processed, its answer lost
        bob.send(group, f"/join@{BOT}")
        join_id = fake.update_log[-1]["update_id"]
        await h.settle()
        assert [a.status for a in fake.webhook_attempts(join_id)] == [None, 200]
        assert not any("already" in (m.text or "") for m in fake.sent(group))
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        row = await h.services.store.active_match(group.id)
        assert row is not None and len(row.seats) == 2
        rng = random.Random(5)
        for answered in (True, False, True, False):
            fake.drop_webhook(answered=answered)
            before = len(stored_moves(h, row.match_id))
            posts = len([m for m in fake.sent(group) if m.kind == "photo"])
            update_id = await typed_move(h, group, users, row.match_id, rng)
            await h.settle()
            attempts = fake.webhook_attempts(update_id)
            assert len(attempts) == 2 and attempts[0].status is None
            assert attempts[1].status == 200
            moves = stored_moves(h, row.match_id)
            assert [m[2] for m in moves].count(update_id) == 1, "applied once"
            assert len(moves) > before  # (a typed move may end the turn too: two steps)
            now_posts = [m for m in fake.sent(group) if m.kind == "photo"]
            assert len(now_posts) == posts + 1, "one board post for the move, not two"


def test_webhook_configuration_is_checked(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("KRENDZU_WEBHOOK_URL", "KRENDZU_WEBHOOK_SECRET", "KRENDZU_WEB_LISTEN",
                "TELEGRAM_API_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    config = load_config(None)
    assert config.webhook_url is None and config.web_listen == "127.0.0.1:8080"
    monkeypatch.setenv("KRENDZU_WEBHOOK_URL", "https://bot.example.org/telegram/webhook")
    with pytest.raises(ConfigError, match="KRENDZU_WEBHOOK_SECRET"):
        load_config(None)
    for bad in ("short", "has spaces in it 1234", "x" * 257):
        monkeypatch.setenv("KRENDZU_WEBHOOK_SECRET", bad)
        with pytest.raises(ConfigError):
            load_config(None)
    monkeypatch.setenv("KRENDZU_WEBHOOK_SECRET", SECRET)
    config = load_config(None)
    assert (config.webhook_url, config.webhook_secret) == (
        "https://bot.example.org/telegram/webhook", SECRET)
    monkeypatch.setenv("KRENDZU_WEBHOOK_URL", "http://bot.example.org/hook")
    with pytest.raises(ConfigError, match="https"):
        load_config(None)  # Telegram posts to https only
    monkeypatch.setenv("TELEGRAM_API_BASE_URL", "http://127.0.0.1:8081")
    assert load_config(None).webhook_url == "http://bot.example.org/hook"  # own Bot API
    monkeypatch.setenv("KRENDZU_WEB_LISTEN", "8080")
    with pytest.raises(ConfigError, match="host:port"):
        load_config(None)
    # The entry points say what is wrong and stop.
    env = {**os.environ, "TELEGRAM_BOT_TOKEN": "1:x", "PYTHONPATH": str(ROOT),
           "KRENDZU_WEBHOOK_URL": "https://bot.example.org/telegram/webhook",
           "KRENDZU_WEB_LISTEN": "127.0.0.1:8080", "KRENDZU_WEBHOOK_SECRET": "short"}
    for command in ([sys.executable, str(ROOT / "bot.py")], [sys.executable, "-m", "chat.web"]):
        done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 1 and "KRENDZU_WEBHOOK_SECRET" in done.stderr
    env.pop("KRENDZU_WEBHOOK_URL")
    done = subprocess.run([sys.executable, "-m", "chat.web"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "KRENDZU_WEBHOOK_URL is not set" in done.stderr


# ``python -m chat.web`` as a process -------------------------------------------------------


def start_web(base: str, fake: FakeTelegram, db: Path, log: Path,
              port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "TELEGRAM_BOT_TOKEN": fake.token, "TELEGRAM_API_BASE_URL": base,
           "KRENDZU_DB": str(db), "KRENDZU_AI_DELAY": "0", "KRENDZU_AI_WORKERS": "1",
           "KRENDZU_HARD_MS": "100", "KRENDZU_DRAW_WORKERS": "1", "LOG_LEVEL": "INFO",
           "KRENDZU_WEBHOOK_URL": f"http://127.0.0.1:{port}{PATH}",
           "KRENDZU_WEBHOOK_SECRET": SECRET, "KRENDZU_WEB_LISTEN": f"127.0.0.1:{port}",
           "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "chat.web"], cwd=db.parent, env=env,
                            stdout=log.open("ab"), stderr=subprocess.STDOUT)


def typed_moves(db: Path) -> dict[int, int]:
    """update id → how many stored moves carry it."""
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT update_id, COUNT(*) FROM moves WHERE update_id IS "
                                 "NOT NULL GROUP BY update_id").fetchall())


def type_a_move(fake: FakeTelegram, user: FakeUser, db: Path, rng: random.Random) -> int | None:
    """The human types a legal move if it is their turn; its update id. First the bot has
    answered everything and gone quiet: a move of two steps (a card and the end of the turn)
    is stored step by step, and a look in between would see a turn that is over."""
    fake.wait_until_idle_sync(quiet=0.2, timeout=30)
    found = stored_game(db)
    if found is None or found[0].status.value != "active":
        return None
    row, game = found
    if row.seats[game.current_player].user_id != user.id:
        return None
    step = rng.choice(game.legal_actions())
    if isinstance(step, Place):
        label = frame_for(game.tour.observation(None).placements).label(step.x, step.y)
        user.send(user.chat, f"{step.card.code()} {label}")
    else:
        user.send(user.chat, "pass" if isinstance(step, Pass) else "end")
    return fake.update_log[-1]["update_id"]


def test_the_web_process_killed_mid_match_loses_and_repeats_no_move(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT)
    fake.webhook_retry_cap = 1.0  # real seconds here: retry quickly while the bot is down
    base = fake.serve_http()
    db = tmp_path / "krendzu.sqlite3"
    log = tmp_path / "web.log"
    port = free_port()
    ann = fake.user(61, "Ann")
    web = start_web(base, fake, db, log, port)
    typed: list[int] = []
    rng = random.Random(9)
    try:
        fake.wait_for_sync(lambda: fake.webhook_url, timeout=30, message="setWebhook")
        ann.start_bot()
        fake.wait_for_message_sync(ann, "Krendzu", timeout=30)
        ann.send(ann.chat, "/new deal=short level=easy")
        lobby = fake.wait_for_message_sync(ann, "🤖", timeout=20)
        ann.press(lobby, data=next(b for b in lobby.buttons()
                                   if b["callback_data"].endswith(":go"))["callback_data"])
        fake.wait_for_sync(lambda: stored_game(db) is not None, timeout=20)
        for kill in range(2):
            made = 0
            deadline = time.time() + 60
            while made < 4 and time.time() < deadline:
                before = moves_stored(db)
                update_id = type_a_move(fake, ann, db, rng)
                if update_id is None:
                    time.sleep(0.05)
                    continue
                typed.append(update_id)
                made += 1
                if made == 4 - kill:  # killed while the update is on its way or at work
                    time.sleep(rng.choice([0.0, 0.01, 0.05]))
                    break
                fake.wait_for_sync(lambda b=before: moves_stored(db) > b, timeout=20)
            web.send_signal(signal.SIGKILL)
            web.wait(timeout=10)
            web = start_web(base, fake, db, log, port)
            # Every typed update reaches the restarted bot (the fake retries meanwhile).
            fake.wait_for_sync(lambda: not fake.pending_updates(), timeout=60,
                               message="every update answered 200")
        for _ in range(400):
            found = stored_game(db)
            if found is not None and found[0].status.value == "finished":
                break
            update_id = type_a_move(fake, ann, db, rng)
            if update_id is None:
                time.sleep(0.05)
                continue
            typed.append(update_id)
            fake.wait_for_sync(lambda u=update_id: u in typed_moves(db), timeout=30)
        fake.wait_for_sync(lambda: stored_game(db)[0].status.value == "finished", timeout=60)
        fake.wait_for_message_sync(ann, "🏁", timeout=30, since=0)
        counts = typed_moves(db)
        assert all(counts.get(u) == 1 for u in typed), (typed, counts)  # none lost, none twice
        _row, game = stored_game(db)
        assert game.is_over  # the stored moves replay through the rules
        assert not fake.errors
        retried = [a for a in fake.webhook_attempts() if a.status != 200]
        assert retried, "updates sent while the bot was down were delivered again"
    finally:
        web.send_signal(signal.SIGTERM)
        try:
            assert web.wait(timeout=30) == 0, "SIGTERM stops it cleanly"
        finally:
            if web.poll() is None:
                web.kill()
            fake.stop()
    text = log.read_text(errors="replace")
    assert fake.token not in text and SECRET not in text
    assert "Traceback" not in text, text[-3000:]
    assert "webhook set" in text


def test_a_web_process_started_while_the_bot_api_is_away_waits_for_it(tmp_path: Path) -> None:
    """A webhook worker started while Telegram (or the network) cannot be reached says so
    and tries again, instead of exiting for its supervisor to restart in a loop: once the
    Bot API answers it sets its webhook and serves. One started and stopped (SIGTERM) while
    it waits exits at once and cleanly."""
    fake = FakeTelegram(bot_username=BOT)
    api_port = free_port()
    base = f"http://127.0.0.1:{api_port}"  # nothing listens there yet
    db = tmp_path / "krendzu.sqlite3"
    log = tmp_path / "web.log"
    port = free_port()
    web = start_web(base, fake, db, log, port)
    try:
        deadline = time.time() + 30
        while "cannot be reached" not in log.read_text() and time.time() < deadline:
            assert web.poll() is None, log.read_text()[-2000:]
            time.sleep(0.1)
        assert "the Bot API cannot be reached" in log.read_text(), log.read_text()[-2000:]
        assert web.poll() is None, "it waits instead of exiting"
        fake.serve_http(port=api_port)
        fake.wait_for_sync(lambda: fake.webhook_url, timeout=30, message="setWebhook")
        ann = fake.user(62, "Ann")
        ann.start_bot()
        fake.wait_for_message_sync(ann, "Krendzu", timeout=30)
    finally:
        web.send_signal(signal.SIGTERM)
        try:
            assert web.wait(timeout=30) == 0
        finally:
            if web.poll() is None:
                web.kill()
            fake.stop()
    # Stopped while waiting: no Bot API at all this time.
    waiting = start_web(f"http://127.0.0.1:{free_port()}", fake, db, log, free_port())
    try:
        deadline = time.time() + 30
        while log.read_text().count("cannot be reached") < 2 and time.time() < deadline:
            time.sleep(0.1)
        stopped = time.time()
        waiting.send_signal(signal.SIGTERM)
        assert waiting.wait(timeout=10) == 0
        assert time.time() - stopped < 5
        assert "stopped before the Bot API answered" in log.read_text()
    finally:
        if waiting.poll() is None:
            waiting.kill()


async def leave_and_kick_redelivered(h: Harness, monkeypatch: pytest.MonkeyPatch,
                                     base: int) -> None:
    """Bob's ``/leave`` and then Ann's ``/kick Bob`` are each processed, and the worker
    "dies" before the ledger's own write (their answers never reach Telegram): Telegram
    sends each again. The group reads each line once, because the seat's hand-over stores
    the update id in its own transaction, as a move does."""
    fake = h.fake
    ann, bob = fake.user(base + 1, "Ann"), fake.user(base + 2, "Bob")
    group = fake.group(-1000000 - base * 10, "Echo")
    ann.start_bot()
    bob.start_bot()
    await h.settle()  # private chats are delivered in parallel with the group's
    await start_group_duel(h, group, ann, bob, "duel deal=short timer=off")
    store = h.services.store
    skipped: list[int] = []
    if hasattr(store, "answer_update"):  # PostgreSQL: the ledger's write keeps the replies
        real_answer = store.answer_update

        async def killed_before_answering(update_id: int, owner: int, notices: list[bytes],
                                          **kwargs: Any) -> list[int]:
            if update_id not in skipped:  # the process "dies" here: no ledger write
                skipped.append(update_id)
                return list(range(-len(notices), 0))
            return await real_answer(update_id, owner, notices, **kwargs)

        monkeypatch.setattr(store, "answer_update", killed_before_answering)
    else:
        real_mark = store.mark_update

        async def killed_before_marking(update_id: int) -> bool:
            if update_id not in skipped:  # the process "dies" here: no ledger write, no answer
                skipped.append(update_id)
                return False
            return await real_mark(update_id)

        monkeypatch.setattr(store, "mark_update", killed_before_marking)
    for user, command, line in ((bob, f"/leave@{BOT}", "Bob left the table"),
                                (ann, f"/kick@{BOT} Bob", "Bob was taken off the table")):
        if command.startswith("/kick"):
            bob.send(group, f"/back@{BOT}")
            await h.settle()
            assert "Bob is back" in (fake.last(group).text or ""), fake.describe()
        fake.drop_webhook(answered=True)  # processed, its answer lost: Telegram sends again
        user.send(group, command)
        update_id = fake.update_log[-1]["update_id"]
        await h.settle()
        assert update_id in skipped
        assert [a.status for a in fake.webhook_attempts(update_id)] == [None, 200]
        said = [m.text for m in fake.sent(group) if line in (m.text or "")]
        assert len(said) == 1, said
        assert await store.seen_update(update_id)


async def test_a_redelivered_leave_or_kick_is_told_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    async with running_webhook_bot(tmp_path, fake) as h:
        await leave_and_kick_redelivered(h, monkeypatch, 380)


async def test_a_redelivered_resignation_in_a_trio_is_told_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a trio a resignation hands the seat to the computer, as /leave does: redelivered
    after a crash before the ledger's write, it is told once."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(386, "Ann"), fake.user(387, "Bob")
    group = fake.group(-1003860, "Trio")
    async with running_webhook_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        ann.send(group, f"/new@{BOT} trio-lone-defender timer=off")
        await h.settle()
        bob.send(group, f"/join@{BOT}")
        await h.settle()
        ann.send(group, f"/add@{BOT} easy")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        assert await h.services.store.active_match(group.id) is not None, fake.describe()
        store = h.services.store
        real_mark = store.mark_update
        skipped: list[int] = []

        async def killed_before_marking(update_id: int) -> bool:
            if not skipped:  # the process "dies" here: no ledger write, no answer
                skipped.append(update_id)
                return False
            return await real_mark(update_id)

        monkeypatch.setattr(store, "mark_update", killed_before_marking)
        fake.drop_webhook(answered=True)
        bob.send(group, f"/resign@{BOT}")
        update_id = fake.update_log[-1]["update_id"]
        await h.settle()
        assert skipped == [update_id]
        assert [a.status for a in fake.webhook_attempts(update_id)] == [None, 200]
        said = [m.text for m in fake.sent(group) if "Bob resigned" in (m.text or "")]
        assert len(said) == 1, said
