"""Outside engines end to end (issue 31): an engine in another process (the command-line
bridge running a built-in level) registers in the private chat, is invited by name in a
group and plays whole matches with people through the fake Bot API (a duel, a trio, a 2v2
teams table, each with the exchange); its statistics and rating appear (/stats, /top).
(``tests/test_engines_protocol.py`` replays every line an engine received against the
record: none carries a card its seat may not see.)"""

from __future__ import annotations

import asyncio
import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from krendzu import Announce
from storage import MatchStatus
from tests.bot_harness import BOT, FastClock, Harness, panel, play_step_with_buttons, running_bot
from tests.fakebot import Chat, FakeTelegram, FakeUser
from tests.helpers import stop_process
from tests.webhook_harness import free_port

ROOT = Path(__file__).resolve().parent.parent
TOKEN = re.compile(r"^[A-Za-z0-9_-]{32}$", re.MULTILINE)


def engine_config(port: int) -> dict[str, object]:
    return {"web_listen": f"127.0.0.1:{port}", "public_url": f"http://127.0.0.1:{port}"}


async def register(h: Harness, owner: FakeUser, name: str) -> str:
    """``/engine new NAME`` in the private chat; the token it shows once."""
    owner.send(owner.chat, f"/engine new {name}")
    await h.settle()
    text = h.fake.last(owner.chat).text or ""
    found = TOKEN.search(text)
    assert found is not None, text
    return found.group(0)


@contextmanager
def bridge(port: int, token: str, level: str = "easy") -> Iterator[subprocess.Popen[bytes]]:
    """The bridge and a built-in level, in processes of their own."""
    env = {**os.environ, "KRENDZU_ENGINE_TOKEN": token}
    proc = subprocess.Popen(
        [sys.executable, "-m", "engines.bridge", f"http://127.0.0.1:{port}/api/engine/v1",
         "--", sys.executable, "-m", "engines.builtin", level],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        yield proc
    finally:
        stop_process(proc)


async def play_until_over(h: Harness, group: Chat, people: list[FakeUser],
                          seconds: float = 120.0) -> None:
    """People press their panels' buttons whenever it is their turn; the engine answers
    over HTTP. Until the group hears the match end."""
    rng = random.Random(3)
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while loop.time() < end:
        if any("🏁" in (m.text or m.caption or "") for m in h.fake.sent(group)):
            return
        for user in people:
            if panel(h.fake, user) is not None and await play_step_with_buttons(h, user, rng):
                break
        else:
            await asyncio.sleep(0.05)
    raise AssertionError("the match did not end:\n" + h.fake.describe())


@pytest.mark.parametrize(("args", "people", "computers"), [
    ("duel deal=short exchange=2", 1, 0),
    ("trio-lone-attacker exchange=1", 2, 0),
    ("teams exchange=1", 2, 1)], ids=["duel", "trio", "teams"])
async def test_an_engine_in_another_process_plays_a_whole_match_with_people(
        tmp_path: Path, args: str, people: int, computers: int) -> None:
    """A duel, a trio and a 2v2 teams table, each with the exchange: the engine is the
    bridge running the easy level in processes of their own; people press their panels."""
    port = free_port()
    # Fast enough that the group's flood window (60 s) never holds the board posts back.
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=30))
    ann = fake.user(31, "Ann")
    bob = fake.user(32, "Bob")
    players = [ann, bob][:people]
    group = fake.group(-100731, "Engines")
    async with running_bot(tmp_path, fake, **engine_config(port)) as h:
        for user in players:
            user.start_bot()
        await h.settle()
        token = await register(h, ann, "Robo")
        ann.send(group, f"/engine@{BOT} new Other")  # never in a group
        await h.settle()
        assert not TOKEN.search(fake.last(group).text or "")
        with bridge(port, token) as proc:
            ann.send(group, f"/new@{BOT} {args}")
            await h.settle()
            ann.send(group, f"/add@{BOT} @robo")
            await h.settle()
            assert "🤖 Robo" in (fake.last(group).text or ""), fake.describe()
            for user in players[1:]:
                user.send(group, f"/join@{BOT}")
                await h.settle()
            for _ in range(computers):
                ann.send(group, f"/add@{BOT} easy")
                await h.settle()
            ann.send(group, f"/go@{BOT}")
            await h.settle()
            row = await h.services.store.active_match(group.id)
            assert row is not None, fake.describe()
            assert len([s for s in row.seats if s.user_id is not None]) == people + 1
            await play_until_over(h, group, players, seconds=240)
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        store = h.services.store
        engine = await store.engine_by_name("Robo")
        assert engine is not None
        finished = await store.matches_of_user(engine.user_id, status=MatchStatus.FINISHED)
        assert [m.match_id for m in finished] == [row.match_id]
        played = await store.load_match(row.match_id)
        seat = played.row.seat_of(engine.user_id)
        assert any(isinstance(a, Announce) for a in played.game.history)  # the exchange
        # The engine made its own moves: the stand-in never had to.
        stand_ins = await store.stand_ins(row.match_id)
        assert seat not in stand_ins or not stand_ins[seat].timeouts, stand_ins
        stats = await store.user_stats(engine.user_id)
        assert stats is not None and stats.matches == 1
        assert stats.display_name == "🤖 Robo"
        ratings = await store.ratings_of([engine.user_id])
        assert ratings[engine.user_id].rated_matches == 1
        # Nothing was sent to the engine through Telegram.
        assert not fake.errors, fake.errors
        for command in ("/stats@{bot} Robo", "/top@{bot}"):
            ann.send(group, command.format(bot=BOT))
            await h.settle()
            card = fake.last(group)
            assert card is not None and card.photo is not None, fake.describe()
        assert "🤖 Robo" in (fake.sent(group)[-2].caption or ""), fake.sent(group)[-2]
        rows, _total = await h.services.standings.leaders_of(group.id)
        assert any(r.name == "🤖 Robo" for r in rows), rows


async def test_engine_commands_in_private(tmp_path: Path) -> None:
    port = free_port()
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(41, "Ann")
    bob = fake.user(42, "Bob")
    async with running_bot(tmp_path, fake, **engine_config(port)) as h:
        for user in (ann, bob):
            user.start_bot()
        await h.settle()
        first = await register(h, ann, "Alpha")
        ann.send(ann.chat, "/engine new alpha")  # her own name again (or the update replayed)
        await h.settle()
        again = fake.last(ann.chat).text or ""
        assert "Alpha is yours already" in again and "/engine token Alpha" in again
        assert not TOKEN.search(again)
        bob.send(bob.chat, "/engine new ALPHA")  # someone else's
        await h.settle()
        assert "taken" in (fake.last(bob.chat).text or "")
        ann.send(ann.chat, "/engine new easy")
        await h.settle()
        assert not TOKEN.search(fake.last(ann.chat).text or "")
        ann.send(ann.chat, "/engine list")
        await h.settle()
        assert "Alpha" in (fake.last(ann.chat).text or "")
        url = f"http://127.0.0.1:{port}/api/engine/v1/stream"
        async with httpx.AsyncClient() as client:
            async with client.stream("GET", url, headers={"Authorization": f"Bearer {first}"}
                                     ) as response:
                assert response.status_code == 200
            ann.send(ann.chat, "/engine token Alpha")
            await h.settle()
            second = TOKEN.search(fake.last(ann.chat).text or "")
            assert second is not None and second.group(0) != first
            for header in (f"Bearer {first}", "Bearer " + "x" * 32, "Bearer", f"Basic {first}"):
                answer = await client.get(url, headers={"Authorization": header})
                assert answer.status_code == 401 and answer.json()["code"] == "bad_token"
            bob.send(bob.chat, "/engine token Alpha")  # not his
            await h.settle()
            assert not TOKEN.search(fake.last(bob.chat).text or "")
            ann.send(ann.chat, "/engine set Alpha owner")
            await h.settle()
            ann.send(ann.chat, "/engine set Alpha max=1")
            await h.settle()
            engine = await h.services.store.engine_by_name("alpha")
            assert engine is not None and engine.max_matches == 1
            assert engine.visibility.value == "owner"
            ann.send(ann.chat, "/engine delete Alpha")
            await h.settle()
            answer = await client.get(url, headers={"Authorization": f"Bearer {second.group(0)}"})
            assert answer.status_code == 401


async def test_without_a_public_url_engine_explains(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(51, "Ann")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()
        ann.send(ann.chat, "/engine new Robo")
        await h.settle()
        text = fake.last(ann.chat).text or ""
        assert "KRENDZU_PUBLIC_URL" in text and not TOKEN.search(text)
        assert await h.services.store.engine_by_name("Robo") is None


async def test_who_may_seat_an_engine_and_how_often(tmp_path: Path) -> None:
    port = free_port()
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(71, "Ann")
    bob = fake.user(72, "Bob")
    groups = [fake.group(-100771 - i, f"G{i}") for i in range(3)]
    async with running_bot(tmp_path, fake, **engine_config(port)) as h:
        for user in (ann, bob):
            user.start_bot()
        await h.settle()
        await register(h, ann, "Solo")
        store = h.services.store

        async def add(user: FakeUser, group: Chat, words: str) -> str:
            user.send(group, f"/add@{BOT} {words}")
            await h.settle()
            return h.fake.last(group).text or ""

        bob.send(groups[0], f"/new@{BOT} duel")
        await h.settle()
        assert "No engine" in await add(bob, groups[0], "@Nobody")
        ann.send(ann.chat, "/engine set Solo owner")
        await h.settle()
        assert "Only the owner" in await add(bob, groups[0], "@Solo")
        ann.send(ann.chat, "/engine set Solo off")
        await h.settle()
        assert "no invitations" in await add(bob, groups[0], "@Solo")
        ann.send(ann.chat, "/engine set Solo open")
        await h.settle()
        ann.send(ann.chat, "/engine set Solo max=1")
        await h.settle()
        assert "🤖 Solo" in await add(bob, groups[0], "@SOLO")
        assert "seated already" in await add(bob, groups[0], "@Solo")
        bob.send(groups[0], f"/go@{BOT}")
        await h.settle()
        first = await store.active_match(groups[0].id)
        assert first is not None
        timer = await store.timer_of(first.match_id)
        assert timer is not None  # a match with an engine is always timed
        ann.send(groups[1], f"/new@{BOT} duel")
        await h.settle()
        assert "as many as its owner allows" in await add(ann, groups[1], "@Solo")
        # A private duel with an engine: the engine takes the computer's seat, 30 s timer.
        ann.send(ann.chat, "/engine set Solo max=2")
        await h.settle()
        ann.send(ann.chat, "/new")
        await h.settle()
        ann.send(ann.chat, "/add @Solo")
        await h.settle()
        ann.send(ann.chat, "/go")
        await h.settle()
        duel = await store.active_match(ann.id)
        assert duel is not None, h.fake.describe()
        engine = await store.engine_by_name("Solo")
        assert engine is not None and duel.seat_of(engine.user_id) is not None
        private_timer = await store.timer_of(duel.match_id)
        assert private_timer is not None and private_timer.seconds == 30


async def test_the_lobby_offers_the_creators_engines_as_buttons(tmp_path: Path) -> None:
    port = free_port()
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(81, "Ann")
    group = fake.group(-100781, "Buttons")
    async with running_bot(tmp_path, fake, **engine_config(port)) as h:
        ann.start_bot()
        await h.settle()
        await register(h, ann, "Knopf")
        await register(h, ann, "Hidden")
        ann.send(ann.chat, "/engine set Hidden off")
        await h.settle()
        ann.send(group, f"/new@{BOT} duel")
        await h.settle()
        lobby = fake.last(group)
        assert lobby is not None
        ann.press(lobby, data=lobby.button(text="🤖 Add computer")["callback_data"])
        await h.settle()
        lobby = fake.message(group, lobby.message_id)
        labels = [b.get("text", "") for b in lobby.buttons()]
        assert "+ 🤖 Knopf" in labels and not any("Hidden" in t for t in labels), labels
        ann.press(lobby, data=lobby.button(text="+ 🤖 Knopf")["callback_data"])
        await h.settle()
        assert "🤖 Knopf" in (fake.message(group, lobby.message_id).text or "")
