"""Hostile and careless inputs, and a hostile environment, driven through the fake Bot API.

Each test plays the attacker (or the accident) the way it would happen: a forged button, a
name made of control characters, a ``/discard`` typed in a group, a SIGKILL of the bot.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import sqlite3
import stat
import subprocess
import time
import unicodedata
from pathlib import Path

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from krendzu import Discard
from krendzu.tour import ANNOUNCE, DISCARD
from storage import MatchStatus, open_store
from tests.bot_harness import BOT, FastClock, Harness, running_bot
from tests.fakebot import CallbackQuery, Chat, FakeTelegram, FakeUser, Message
from tests.test_bot_process import start_bot

# Worker processes ------------------------------------------------------------------------


def children_of(pid: int) -> dict[int, str]:
    """Every living descendant of ``pid`` (from /proc), with its command line."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        state, ppid = stat.rpartition(")")[2].split()[:2]
        if state != "Z":
            parents[int(entry.name)] = int(ppid)
    found: dict[int, str] = {}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in found:
                found[child] = command_line(child)
                frontier.append(child)
    return found


def command_line(pid: int) -> str:
    try:
        return (Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
                .decode(errors="replace"))
    except OSError:
        return ""


def alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def test_worker_processes_exit_when_the_bot_is_killed(tmp_path: Path) -> None:
    """``python bot.py`` with a drawing and a computer worker process; after a SIGKILL of
    the bot (no clean-up runs) every process it started is gone within seconds."""
    fake = FakeTelegram(bot_username=BOT)
    base = fake.serve_http()
    db = tmp_path / "krendzu.sqlite3"
    ann = fake.user(151, "Ann")
    bot = start_bot(base, fake, db, tmp_path / "bot.log")
    workers: dict[int, str] = {}
    try:
        ann.start_bot()
        fake.wait_for_message_sync(ann, "Krendzu", timeout=30)
        ann.send(ann.chat, "/new deal=short level=easy")
        lobby = fake.wait_for_message_sync(ann, "🤖", timeout=20)
        ann.press(lobby, data=next(b["callback_data"] for b in lobby.buttons()
                                   if b["callback_data"].endswith(":go")))
        # The first panel is a drawn picture (drawing pool); a hint, or the computer's
        # first move, is thought out in the computer pool.
        fake.wait_for_message_sync(ann, where=lambda m: m.kind == "photo", timeout=30)
        ann.send(ann.chat, "/hint")

        def spawned() -> dict[int, str]:
            found = children_of(bot.pid)
            return found if sum("spawn_main" in c for c in found.values()) >= 2 else {}

        workers = fake.wait_for_sync(spawned, timeout=30)
        assert bot.poll() is None
        bot.send_signal(signal.SIGKILL)
        bot.wait(timeout=10)
        deadline = time.time() + 10
        while time.time() < deadline and any(alive(p) for p in workers):
            time.sleep(0.05)
        left = {p: c for p, c in workers.items() if alive(p)}
        assert not left, f"orphans of the killed bot: {left}"
    finally:
        if bot.poll() is None:
            bot.kill()
            bot.wait(timeout=10)
        for pid in workers:  # only what this bot started, should the test fail
            if alive(pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        fake.stop()


def test_children_of_finds_a_grandchild() -> None:
    """The /proc walk the test above relies on: a child and its child are found, and a
    killed one is no longer alive."""
    outer = subprocess.Popen(["sh", "-c", "sleep 30 & wait"])
    try:
        deadline = time.time() + 5
        found: dict[int, str] = {}
        while time.time() < deadline and not any("sleep" in c for c in found.values()):
            found = children_of(outer.pid)
            time.sleep(0.02)
        sleeper = next(p for p, c in found.items() if "sleep" in c)
        assert alive(sleeper)
        os.kill(sleeper, signal.SIGKILL)
        outer.wait(timeout=5)
        assert not alive(sleeper)
    finally:
        outer.kill()
        outer.wait()


# Chat-level hostility through the running bot ---------------------------------------------

MEMORY_DICTS = ("_locks", "_games", "_names", "_languages", "_titles", "_shown",
                "_chat_languages")


async def forged_message(h: Harness, chat_id: int, datas: list[str]) -> Message:
    """A bot message in ``chat_id`` whose buttons carry ``datas``: what an attacker's client
    would send as callback data (the fake presses only buttons a message has)."""
    rows = [[InlineKeyboardButton(str(i), callback_data=d)] for i, d in enumerate(datas)]
    sent = await h.app.bot.send_message(chat_id, "…", reply_markup=InlineKeyboardMarkup(rows))
    return h.fake.message(chat_id, sent.message_id)


def table_counts(db: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        names = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        return {n: conn.execute(f'SELECT COUNT(*) FROM "{n}"').fetchone()[0] for n in names}


def memory_sizes(h: Harness) -> dict[str, int]:
    flow = h.services.flow
    sizes = {name: len(getattr(flow, name)) for name in MEMORY_DICTS if hasattr(flow, name)}
    return sizes


async def group_match_with_a_computer(h: Harness, user: FakeUser, group: Chat,
                                      args: str = "deal=short", *,
                                      thread_id: int | None = None) -> int:
    """``user`` sets up a duel against the easy computer in the group and starts it."""
    for text in (f"/new@{BOT} {args}", f"/add@{BOT} easy", f"/go@{BOT}"):
        user.send(group, text, thread_id=thread_id)
        await h.settle()
    row = await h.services.store.active_match(group.id, thread_id)
    assert row is not None, h.fake.describe()
    return row.match_id


def answer_text(fake: FakeTelegram, query: CallbackQuery) -> str:
    found = fake.answer(query)
    assert found.answered, "every press gets an answer"
    return found.text or ""


async def test_forged_buttons_allocate_nothing_and_reveal_nothing(tmp_path: Path) -> None:
    """A stranger presses 1000 buttons with forged data (unknown lobbies and matches, other
    chats' matches, every op) in a group and in the private chat: no row, no cache entry,
    no lock is added, and a forged Rematch of a match they did not play is answered exactly
    like one of a match that does not exist."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, mal = fake.user(161, "Ann"), fake.user(166, "Mal")
    home = fake.group(-100161, "Ann's table", members=(ann,))
    lair = fake.group(-100166, "Mal's lair", members=(mal,))
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        mal.start_bot()
        await h.settle()
        running = await group_match_with_a_computer(h, ann, home)
        rng = random.Random(166)
        ops = ["join", "go", "cancel", "add:hard", "table", "level:hard", "leave"]
        moves = ["cQC", "dQC", "xQC", "pQC@0,0", "kQC:3", "pass", "end", "a1", "hint", "h",
                 "rematch", "zz"]

        def forged(n: int) -> list[str]:
            out = []
            for _ in range(n):
                kind = rng.random()
                if kind < 0.3:
                    out.append(f"v1:l:{rng.randrange(1, 10**12)}:{rng.choice(ops)}")
                elif kind < 0.6:
                    out.append(f"v1:m:{rng.randrange(1, 10**12)}:{rng.randrange(10**6)}:"
                               f"{rng.choice(moves)}")
                elif kind < 0.9:  # Ann's running match, not his
                    out.append(f"v1:m:{running}:{rng.randrange(40)}:{rng.choice(moves)}")
                else:
                    out.append(rng.choice(["v1:x", "v2:m:1:1:pass", f"v1:l:{running}:²",
                                           "v1:m:٣:1:pass", "v1:l:1:" + "a" * 40]))
            return out

        # One press from each chat first: the presser's own user row and language, the
        # chats' locks (keyed by real chats, not by button data).
        for chat_id in (mal.id, lair.id):
            warm = await forged_message(h, chat_id, forged(3))
            for button in warm.buttons():
                mal.press(warm, data=button["callback_data"])
            await h.settle()
        db = Path(h.config.database)
        rows_before, memory_before = table_counts(db), memory_sizes(h)
        queries = []
        for round_ in range(10):
            chat_id = mal.id if round_ % 2 else lair.id
            message = await forged_message(h, chat_id, forged(100))
            for i, button in enumerate(message.buttons()):
                queries.append(mal.press(message, data=button["callback_data"]))
                if i % 25 == 24:  # more at once would be dropped (chat/updates.py)
                    await h.settle()
            await h.settle()
        assert len(queries) == 1000
        assert table_counts(db) == rows_before
        assert memory_sizes(h) == memory_before
        assert all(answer_text(fake, q) for q in queries)
        # Rematch: the same neutral answer for a running match, a cancelled one and none.
        ann.send(home, f"/cancel@{BOT}")
        await h.settle()
        cancelled = running
        running = await group_match_with_a_computer(h, ann, home)
        probe = await forged_message(h, lair.id, [f"v1:m:{running}:0:rematch",
                                                  f"v1:m:{cancelled}:0:rematch",
                                                  "v1:m:987654321:0:rematch"])
        texts = set()
        for button in probe.buttons():
            query = mal.press(probe, data=button["callback_data"])
            await h.settle()
            texts.add(answer_text(fake, query))
        assert len(texts) == 1, texts
        assert await h.services.store.open_lobby(home.id) is None
        assert await h.services.store.open_lobby(lair.id) is None
        assert not fake.errors


async def test_a_press_in_a_group_does_not_open_the_private_chat(tmp_path: Path) -> None:
    """Eve never started the bot. Pressing Rematch under a group's match must not count as
    having opened the private chat: otherwise Join would seat her at once, and her hand
    would go where the bot cannot write."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, eve = fake.user(171, "Ann"), fake.user(177, "Eve")
    group = fake.group(-100171, "Open table", members=(ann, eve))
    async with running_bot(tmp_path, fake) as h:
        store = h.services.store
        ann.start_bot()
        await h.settle()
        match_id = await group_match_with_a_computer(h, ann, group)
        ann.send(group, f"/cancel@{BOT}")
        await h.settle()
        summary = await forged_message(h, group.id, [f"v1:m:{match_id}:0:rematch"])
        eve.press(summary, data=f"v1:m:{match_id}:0:rematch")
        await h.settle()
        user = await store.get_user(eve.id)
        assert user is None or not user.can_write_privately
        ann.send(group, f"/new@{BOT} deal=short")
        await h.settle()
        lobby = fake.last(group)
        assert lobby is not None and lobby.buttons()
        query = eve.press(lobby, text="Join")
        await h.settle()
        state = (await store.open_lobby(group.id)).state  # type: ignore[union-attr]
        assert eve.id not in [s.get("user_id") for s in state["seats"]], state
        assert "private chat" in answer_text(fake, query)


async def test_removing_the_bot_from_a_forum_closes_every_topic(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(181, "Ann"), fake.user(182, "Bob")
    forum = fake.group(-1001000000181, "Card club", forum=True, members=(ann, bob))
    async with running_bot(tmp_path, fake) as h:
        store, flow = h.services.store, h.services.flow
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        playing = [await group_match_with_a_computer(h, ann, forum, thread_id=5),
                   await group_match_with_a_computer(h, bob, forum, thread_id=9)]
        ann.send(forum, f"/new@{BOT}", thread_id=7)
        bob.send(forum, f"/new@{BOT}")  # the General topic
        await h.settle()
        assert len(await store.open_lobbies_of_chat(forum.id)) == 2
        assert len(await store.active_matches_of_chat(forum.id)) == 2
        fake.remove_bot(forum)
        await h.settle()
        assert await store.active_matches_of_chat(forum.id) == []
        assert await store.open_lobbies_of_chat(forum.id) == []
        for match_id in playing:
            assert (await flow.load(match_id)).row.status is not MatchStatus.ACTIVE
        assert not fake.errors


async def test_only_admins_or_the_creator_change_a_groups_language(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    boss, bob, cy = fake.user(191, "Boss"), fake.user(192, "Bob"), fake.user(193, "Cy")
    group = fake.group(-100191, "Polyglots", members=(boss, bob, cy))
    fake.set_admin(group, boss)
    async with running_bot(tmp_path, fake) as h:
        store = h.services.store

        async def language() -> str | None:
            row = await store.get_chat(group.id)
            return row.language if row else None

        boss.send(group, f"/lang@{BOT} en")
        await h.settle()
        assert await language() == "en"
        bob.send(group, f"/lang@{BOT} ru")
        await h.settle()
        assert await language() == "en", "a member may not"
        assert "Only a chat admin" in (fake.last(group).text or "")
        bob.send(group, f"/lang@{BOT}")  # asking which languages there are is fine
        await h.settle()
        assert "Languages" in (fake.last(group).text or "")
        cy.send(group, f"/new@{BOT}")
        await h.settle()
        cy.send(group, f"/lang@{BOT} ru")  # the creator, while setting up
        await h.settle()
        assert await language() == "ru"
        cy.send(group, f"/cancel@{BOT}")
        await h.settle()
        cy.send(group, f"/lang@{BOT} en")  # no longer
        await h.settle()
        assert await language() == "ru"
        assert "администратор" in (fake.last(group).text or "")
        boss.send(group, f"/lang@{BOT} en")
        await h.settle()
        assert await language() == "en"
        bob.send(bob.chat, "/lang ru")  # anyone's own private chat
        await h.settle()
        assert (await store.get_user(bob.id)).language == "ru"  # type: ignore[union-attr]


async def test_digits_other_than_ascii_get_a_polite_answer(tmp_path: Path) -> None:
    """``²`` passes ``str.isdigit`` but ``int`` refuses it; ``٣`` is read as 3 by ``int``.
    Neither is taken as a number, and neither ends in the generic apology."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(201, "Ann")
    group = fake.group(-100201, "Numbers", members=(ann,))
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()
        for text, expected in ((f"/new@{BOT} tours=٣", "whole number"),
                               (f"/new@{BOT} timer=²", "whole number"),
                               (f"/new@{BOT} exchange=²", "whole number"),
                               (f"/new@{BOT} deal=١٢/١٤", "Unknown deal"),
                               (f"/export@{BOT} ²", "no match ²"),
                               (f"/exchange@{BOT} ٣", "how many cards")):
            ann.send(group, text)
            await h.settle()
            assert expected in (fake.last(group).text or ""), (text, fake.describe())
        assert await h.services.store.open_lobby(group.id) is None
        await group_match_with_a_computer(h, ann, group)
        ann.send(group, f"/kick@{BOT} ²")
        await h.settle()
        assert "Whom?" in (fake.last(group).text or "")
        ann.send(ann.chat, "/export ٣")
        await h.settle()
        assert "no match ٣" in (fake.last(ann).text or "")
        everything = [m.text or m.caption or "" for chat in (group, ann)
                      for m in fake.sent(chat)]
        assert not any("went wrong" in t for t in everything)
        assert not fake.errors


def shows_invisible(text: str) -> bool:
    return any(unicodedata.category(ch) in ("Cf", "Cc") and ch not in "\u200c\u200d\n"
               for ch in text)


async def test_invisible_characters_are_removed_from_names(tmp_path: Path) -> None:
    """A right-to-left override in a name would turn the rest of the bot's sentence around;
    zero-width and bidi isolate characters make names look alike or empty."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(211, "\u202eAnn\u200b", last_name="\u2066Lee\u2069")
    ghost = fake.user(212, "\u200b\u202e\u2060", username="ghost_user")
    blank = fake.user(213, "\u3164\u200b")
    group = fake.group(-100211, "\u202eMirror\u202c club", members=(ann, ghost, blank))
    async with running_bot(tmp_path, fake) as h:
        store = h.services.store
        for user in (ann, ghost, blank):
            user.start_bot()
        await h.settle()
        ann.send(group, f"/new@{BOT} teams")
        await h.settle()
        lobby = fake.last(group)
        assert lobby is not None
        for user in (ghost, blank):
            user.press(lobby, text="Join")
            await h.settle()
        shown = fake.message(group, lobby.message_id).text or ""
        assert "Ann Lee" in shown and "ghost_user" in shown and "Player" in shown, shown
        assert not shows_invisible(shown)
        assert (await store.get_user(ann.id)).display_name == "Ann Lee"  # type: ignore[union-attr]
        ghost.send(group, f"/leave@{BOT}")
        await h.settle()
        assert not any(shows_invisible(m.text or m.caption or "")
                       for chat in (group, ann, ghost, blank) for m in fake.sent(chat))
        ann.send(group, f"/add@{BOT} easy")
        ann.send(group, f"/add@{BOT} easy")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        deal = [m for m in fake.sent(ann) if "Match in" in (m.text or m.caption or "")]
        assert deal and "Mirror club" in (deal[0].text or deal[0].caption or "")
        assert not any(shows_invisible(m.text or m.caption or "")
                       for chat in (group, ann, blank) for m in fake.sent(chat))


async def test_discard_in_a_group_is_refused_with_a_private_answer(tmp_path: Path) -> None:
    """At the discard step, ``/discard CARD`` typed in the group is not played (the group
    would learn the card); the answer comes privately and names no card."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(221, "Ann")
    group = fake.group(-100221, "Swappers", members=(ann,))
    async with running_bot(tmp_path, fake) as h:
        flow = h.services.flow
        ann.start_bot()
        await h.settle()
        match_id = await group_match_with_a_computer(h, ann, group, "exchange=1 deal=short")
        for _ in range(20):
            stored = await flow.load(match_id)
            game, seat = stored.game, stored.row.seat_of(ann.id)
            if game.current_player == seat and game.tour.phase == DISCARD:
                break
            if game.current_player == seat and game.tour.phase == ANNOUNCE:
                ann.send(ann.chat, "/exchange 1")
            await h.settle()
        else:
            raise AssertionError("never Ann's discard:\n" + fake.describe())
        card = game.observation(seat).tour.hand[0]
        in_group = len(fake.sent(group))
        moves = len(game.history)
        ann.send(group, f"/discard@{BOT} {card.code()}")
        await h.settle()
        assert len((await flow.load(match_id)).game.history) == moves, "not played"
        assert len(fake.sent(group)) == in_group, "the group hears nothing"
        answer = fake.last(ann).text or ""
        assert "private chat" in answer and card.pretty() not in answer, answer
        ann.send(ann.chat, f"/discard {card.code()}")  # here it is played
        await h.settle()
        assert Discard(card) in (await flow.load(match_id)).game.history[moves:]


async def test_the_database_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(231, "Ann")
    old = tmp_path / "old" / "krendzu.sqlite3"
    old.parent.mkdir()
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        ann.send(ann.chat, "/new deal=short")
        await h.settle()
        db = Path(h.config.database)
        files = [p for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()]
        assert db in files and len(files) == 3
        for path in files:
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    # A database made readable to everyone before (by an older version, or by hand).
    store = await open_store(old)
    await store.close()
    for path in old.parent.iterdir():
        path.chmod(0o644)
    store = await open_store(old)
    try:
        for path in old.parent.iterdir():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    finally:
        await store.close()
