"""The operator's doors of a running bot (issue 41): ``/metrics`` after a scripted match
moved by the right amounts, and ``/readyz`` following the database (PostgreSQL, which can
really go away and come back)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from chat import healthcheck
from krendzu import Match, Pass, Place
from krendzu.coords import frame_for
from tests.bot_harness import (
    BOT,
    FastClock,
    open_button,
    running_bot,
    start_group_duel,
    start_private_match,
)
from tests.fakebot import FakeTelegram
from tests.pg import PgServer
from tests.webhook_harness import free_port


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def decided(text: str) -> bool:
    return any(s.name == "krendzu_computer_decision_seconds_count" and s.value >= 1
               for family in text_string_to_metric_families(text) for s in family.samples)


def typed_move(game: Match) -> str:
    """A legal step of the player to move, as a person types it."""
    step = next((a for a in game.legal_actions() if isinstance(a, Place)), None)
    if step is not None:
        frame = frame_for(game.tour.observation(None).placements)
        return f"{step.card.code()} {frame.label(step.x, step.y)}"
    return "pass" if any(isinstance(a, Pass) for a in game.legal_actions()) else "end"


def listening_port(h: object) -> int:
    server = h.app.bot_data["engine_server"][0]  # type: ignore[attr-defined]
    return int(server.port)


async def test_metrics_count_a_scripted_private_match(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ann starts a match against the computer with a command and a button, then plays a
    few turns by typed moves; the counters read what she did, the computer's decisions
    are timed, a 429 met is counted with its seconds, and the store's figures show one
    running match."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(71, "Ann")
    async with running_bot(tmp_path, fake, metrics=True, web_listen=f"127.0.0.1:{free_port()}",
                           ai_delay=0.0) as h:
        port = listening_port(h)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as web:
            assert (await web.get("/readyz")).text == "ready"
            # The image's HEALTHCHECK asks the same door.
            monkeypatch.setenv("KRENDZU_WEB_LISTEN", f"0.0.0.0:{port}")
            assert await asyncio.to_thread(healthcheck.main) == 0
            before = samples((await web.get("/metrics")).text)
            ann.start_bot()  # /start: a command
            await h.settle()
            match_id = await start_private_match(h, ann)  # /new, then ▶ Start: a button
            typed = 0
            flow = h.services.flow
            while typed < 3 or not decided((await web.get("/metrics")).text):
                # Ann's legal moves, typed, until the computer has decided at least once.
                assert typed < 30, fake.describe()
                stored = await flow.load(match_id)
                game = stored.game
                if game.current_player == stored.row.seat_of(71):
                    ann.send(ann.chat, typed_move(game))
                else:
                    ann.send(ann.chat, "pass")  # out of turn: politely refused
                typed += 1
                await h.settle()
            fake.flood(ann, 3)  # Telegram: "retry after 3" for Ann's chat
            ann.send(ann.chat, "/score")
            await h.settle(timeout=60)
            text = (await web.get("/metrics")).text
        after = samples(text)
    for key in ("command", "button", "message"):
        assert (("krendzu_updates_total", (("kind", key),)) in after), key

    def grew(name: str, labels: tuple[tuple[str, str], ...] = ()) -> float:
        return after.get((name, labels), 0.0) - before.get((name, labels), 0.0)

    assert grew("krendzu_updates_total", (("kind", "command"),)) == 3  # /start /new /score
    assert grew("krendzu_updates_total", (("kind", "button"),)) == 1
    assert grew("krendzu_updates_total", (("kind", "message"),)) == typed
    assert grew("krendzu_update_seconds_count") == 3 + 1 + typed
    decisions = after.get(("krendzu_computer_decision_seconds_count", (("level", "easy"),)), 0)
    assert decisions >= 1
    assert grew("krendzu_flood_waits_total") >= 1
    assert grew("krendzu_flood_wait_seconds_total") >= 3
    assert after[("krendzu_active", (("what", "matches"),))] == 1
    assert after[("process_resident_memory_bytes", ())] > 10_000_000
    assert "71" not in "".join(f"{labels}" for (_, labels) in after)


async def test_readyz_follows_the_database(tmp_path: Path, pg_server: PgServer) -> None:
    """A bot on its own PostgreSQL database: ready; the database refuses connections and
    its sessions are ended (as when it goes away): 503 "store unreachable"; allowed again:
    ready once more, without a restart."""
    name = pg_server.new_database()
    url = pg_server.url(name)
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    port = free_port()
    async with (running_bot(tmp_path, fake, database=url, metrics=True,
                            web_listen=f"127.0.0.1:{port}"),
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as web):
            assert (await web.get("/readyz")).status_code == 200
            await asyncio.to_thread(
                pg_server._admin, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
            await asyncio.to_thread(
                pg_server._admin, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                f"WHERE datname = '{name}' AND pid <> pg_backend_pid()")
            answer = await web.get("/readyz")
            for _ in range(20):
                if answer.status_code == 503:
                    break
                await asyncio.sleep(0.25)
                answer = await web.get("/readyz")
            assert (answer.status_code, answer.text) == (503, "store unreachable")
            await asyncio.to_thread(
                pg_server._admin, f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
            for _ in range(40):
                answer = await web.get("/readyz")
                if answer.status_code == 200:
                    break
                await asyncio.sleep(0.25)
            assert (answer.status_code, answer.text) == (200, "ready")
    await asyncio.to_thread(pg_server.drop_database, name)


async def test_moves_and_their_board_posts_are_counted_in_a_group(tmp_path: Path) -> None:
    """Three typed moves in a group duel: krendzu_moves_total grows by the steps stored, and
    every board post of them is timed from its move's commit."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(1, "Ann"), fake.user(2, "Bob")
    group = fake.group(-1001, "Table")
    port = free_port()
    async with (running_bot(tmp_path, fake, metrics=True, web_listen=f"127.0.0.1:{port}") as h,
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as web):
        for person in (ann, bob):
            person.start_bot()
        await h.settle()
        row = await start_group_duel(h, group, ann, bob)
        before = samples((await web.get("/metrics")).text)
        posts_before = len([m for m in fake.sent(group) if m.kind == "photo"])
        for _ in range(3):
            stored = await h.services.flow.load(row.match_id)
            mover = {1: ann, 2: bob}[stored.row.seats[stored.game.current_player].user_id or 0]
            step = typed_move(stored.game)
            mover.send(group, f"/{step}@{BOT}" if step in ("pass", "end")
                       else f"/play@{BOT} {step}")
            await h.settle()
        after = samples((await web.get("/metrics")).text)
        stored = await h.services.flow.load(row.match_id)
        posts = len([m for m in fake.sent(group) if m.kind == "photo"]) - posts_before
    moved = stored.row.move_count - row.move_count
    assert moved >= 3
    grew = {name: after.get((name, ()), 0) - before.get((name, ()), 0)
            for name in ("krendzu_moves_total", "krendzu_board_post_seconds_count")}
    assert grew["krendzu_moves_total"] == moved
    assert posts >= 1 and grew["krendzu_board_post_seconds_count"] == posts
    assert after[("krendzu_board_post_seconds_sum", ())] < 60 * posts


async def test_ephemeral_messages_not_sent_are_counted_by_reason(tmp_path: Path) -> None:
    """A group played in the group (issue 42). Its window full for ten minutes (as a 429
    leaves it): the press's panel would wait longer than an answer may, and is not sent
    (``busy``). The window free again, Telegram refuses the panel, come too late after the
    press (``refused``). Each is counted once under its reason, and no label names a person
    or a chat. (The start's panels, pushed where the bot is no administrator, are refused
    too: counted before.)"""
    clock = FastClock()
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    fake.ephemeral_window = 90.0
    ann, bob = fake.user(4261, "Ann"), fake.user(4262, "Bob")
    group = fake.group(-1004261, "Friends", members=[ann, bob])
    port = free_port()
    async with (running_bot(tmp_path, fake, metrics=True, web_listen=f"127.0.0.1:{port}",
                            panels_in_group=True) as h,
                httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as web):
        row = await start_group_duel(h, group, ann, bob, "duel tours=2 deal=short timer=off")
        await h.settle()
        before = samples((await web.get("/metrics")).text)
        stored = await h.services.flow.load(row.match_id)
        mover = ann if stored.row.seats[stored.game.current_player].user_id == ann.id else bob
        found = open_button(fake, group)
        assert found is not None
        h.services.delivery.flood_wait(group.id, 600)  # what a 429's retry_after does
        query = mover.press(found[0], data=found[1]["callback_data"])
        await h.settle()
        assert "busy" in (fake.answer(query).text or ""), fake.answer(query)
        busy = samples((await web.get("/metrics")).text)
        clock.advance(700)
        fake.ephemeral_window = -1.0  # the panel comes too late: Telegram refuses it
        mover.press(found[0], data=found[1]["callback_data"])
        await h.settle()
        assert not fake.ephemeral(group, mover)
        after = samples((await web.get("/metrics")).text)

    def grew(since: dict, until: dict, reason: str) -> float:
        key = ("krendzu_ephemeral_refused_total", (("reason", reason),))
        return until[key] - since[key]

    assert (grew(before, busy, "busy"), grew(before, busy, "refused")) == (1, 0)
    assert (grew(busy, after, "busy"), grew(busy, after, "refused")) == (0, 1)
    labels = "".join(f"{labels}" for (_, labels) in after)
    assert "4261" not in labels and "4262" not in labels and "1004261" not in labels
