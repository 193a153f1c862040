"""Information replies cost the bot little however often they are asked for (issue 25, 2).

A picture is drawn when its reply is about to be sent, not when it is asked for; the replay
of a tour is drawn once however many /export ask for it; a leaderboard is read once a minute;
a refused admin-only command asks Telegram who is an admin once a minute; the leaderboard
reads the page it shows plus a count, and a name is found through an index.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import chat.painter
from chat.caches import ByteLru, TtlCache
from chat.notices import Drawing
from chat.painter import Painter
from chat.ratings import SHOW_AFTER
from chat.standings import leaderboard
from krendzu import Settings, Table
from render.stats import MAX_LEADERS
from storage import Store
from storage.sqlite import SqliteStore
from tests.bot_harness import BOT, FastClock, running_bot
from tests.fakebot import FakeTelegram
from tests.storage_helpers import play_and_store, seats_for


def count_replays(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """Count the replay GIFs drawn (the painter's threads call ``chat.painter.replay_gif``)."""
    drawn: list[int | None] = []
    real = chat.painter.replay_gif
    lock = threading.Lock()

    def counting(record: Any, tour: int | None = None, **options: Any) -> bytes:
        with lock:
            drawn.append(tour)
        return real(record, tour=tour, **options)

    monkeypatch.setattr(chat.painter, "replay_gif", counting)
    return drawn


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[tuple]:
    """Count the calls of one method of ``owner`` (the object's own, wrapped in place)."""
    calls: list[tuple] = []
    real: Callable[..., Any] = getattr(owner, name)

    async def counting_async(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return await real(*args, **kwargs)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting_async if asyncio.iscoroutinefunction(real)
                        else counting)
    return calls


async def finished_match(store: Store, chat_id: int, humans: list[int], seed: int) -> int:
    """A match in ``chat_id`` played to its end through the store (fast: no bot turns)."""
    table = Table.DUEL
    stored = await store.create_match(chat_id, Settings(table=table), seats_for(table, humans))
    await play_and_store(store, stored, random.Random(seed))
    return stored.match_id


# Through the fake Bot API -----------------------------------------------------------------


async def test_twenty_exports_draw_the_replay_once(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = count_replays(monkeypatch)
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(901, "Ann")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()
        match_id = await finished_match(h.services.store, ann.id, [ann.id], seed=4)
        exports = count_calls(monkeypatch, h.services.flow, "export")
        for _ in range(20):
            ann.send(None, f"/export {match_id}")
        await h.settle()
        documents = [m for m in fake.sent(ann) if m.kind == "document"]
        animations = [m for m in fake.sent(ann) if m.kind == "animation"]
        assert documents and animations, fake.describe()
        # However many of the twenty went out, they are the same record and replays (one
        # per tour of the two)...
        assert len({m.data for m in documents}) == 1
        assert len({m.data for m in animations}) == 2
        assert all((m.data or b"").startswith(b"GIF") for m in animations)
        # ... made once.
        assert sorted(drawn) == [0, 1], drawn
        assert len(exports) == 1  # the record's JSON too
        assert not fake.errors


async def test_a_queued_replay_is_drawn_only_when_it_is_sent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While Telegram holds the chat (429), the /export reply waits undrawn."""
    drawn = count_replays(monkeypatch)
    clock = FastClock(speed=1.0)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann = fake.user(902, "Ann")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()
        match_id = await finished_match(h.services.store, ann.id, [ann.id], seed=5)
        fake.flood(ann, 3600)
        ann.send(None, f"/export {match_id}")
        await fake.wait_for(lambda: bool(fake.rate_limited(ann)), timeout=10)
        await asyncio.sleep(0.3)
        assert drawn == []  # asked for, queued behind the held record: not drawn
        assert not [m for m in fake.sent(ann) if m.kind in ("document", "animation")]
        clock.advance(3600)
        await h.settle()
        assert [m.kind for m in fake.sent(ann)][-3:] == ["document", "animation", "animation"]
        assert sorted(drawn) == [0, 1]


async def test_a_leaderboard_is_read_once_a_minute(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(911, "Ann"), fake.user(912, "Борис")
    group = fake.group(-100911, "League", members=(ann, bob))
    async with running_bot(tmp_path, fake) as h:
        for user in (ann, bob):
            user.start_bot()
        await h.settle()
        store = h.services.store
        await store.upsert_chat(group.id)
        await finished_match(store, group.id, [ann.id, bob.id], seed=6)
        reads = count_calls(monkeypatch, store, "top_players")
        for _ in range(5):
            ann.send(group, f"/top@{BOT}")
            await h.settle()
        assert len(reads) == 1, reads
        assert fake.sent(group)[-1].kind == "photo"
        tops = [m for m in fake.sent(group) if m.kind == "photo"]
        assert len({m.data for m in tops}) == 1  # one picture, drawn once, sent again
        ann.send(group, f"/top@{BOT} global")  # another scope: read once more
        await h.settle()
        assert len(reads) == 2 and reads[-1][0] is None
        # A name in any case finds its player (Cyrillic too: casefolded, not SQL lower()).
        found = count_calls(monkeypatch, store, "stats_by_name")
        bob.send(group, f"/stats@{BOT} борис")
        await h.settle()
        card = fake.sent(group)[-1]
        assert card.kind == "photo" and "Борис" in (card.caption or ""), fake.describe()
        assert found == [("борис", group.id)]
        assert not fake.errors


async def test_refused_admin_commands_ask_telegram_once(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob, cid = fake.user(921, "Ann"), fake.user(922, "Bob"), fake.user(923, "Cid")
    group = fake.group(-100921, "Guarded", members=(ann, bob, cid))
    async with running_bot(tmp_path, fake) as h:
        for user in (ann, bob, cid):
            user.start_bot()
        await h.settle()
        store = h.services.store
        await store.upsert_chat(group.id)
        await store.create_match(group.id, Settings(table=Table.DUEL),
                                 seats_for(Table.DUEL, [ann.id, bob.id]))
        for _ in range(10):
            bob.send(group, f"/kick@{BOT} Ann")
            await h.settle()
        assert "Only the creator" in (fake.sent(group)[-1].text or ""), fake.describe()
        assert len(fake.calls_to("getChatMember", group)) == 1
        for command in ("/kick Bob", "/cancel", "/settings tidy=off") * 3:
            name, _, rest = command.partition(" ")
            cid.send(group, f"{name}@{BOT} {rest}".strip())
            await h.settle()
        assert len(fake.calls_to("getChatMember", group)) == 2  # Cid's own answer, once
        assert await store.active_match(group.id) is not None  # nothing was cancelled
        chat_row = await store.get_chat(group.id)
        assert chat_row is not None and chat_row.tidy  # still the default
        assert not fake.errors


# Storage: read what is shown --------------------------------------------------------------


async def test_a_leaderboard_of_ten_thousand_reads_a_page_and_a_count(tmp_path: Path) -> None:
    path = tmp_path / "big.db"
    store = await SqliteStore.open(path)
    await store.close()
    rng = random.Random(25)
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO chats (chat_id, created_at, updated_at) VALUES (?, 0, 0)",
                         [(-1,), (-2,)])
        conn.executemany("INSERT INTO users (user_id, display_name, created_at, updated_at, "
                         "name_key) VALUES (?, ?, 0, 0, ?)",
                         [(u, f"P{u}", f"p{u}") for u in range(1, 10_001)])
        conn.executemany("INSERT INTO user_stats (user_id, chat_id, matches, wins, draws) "
                         "VALUES (?, ?, 12, ?, ?)",
                         [(u, -1 - u % 2, rng.randrange(8), rng.randrange(4))
                          for u in range(1, 10_001)])
        conn.executemany("INSERT INTO ratings (user_id, mu, sigma, rated_matches, updated_at) "
                         "VALUES (?, ?, ?, ?, 0)",
                         [(u, rng.uniform(15, 35), rng.uniform(1, 8), rng.randrange(6))
                          for u in range(1, 10_001, 3)])
    store = await SqliteStore.open(path)
    try:
        for scope, players in ((None, 10_000), (-1, 5_000)):
            page, total = await store.top_players(scope, MAX_LEADERS, rated_after=SHOW_AFTER)
            assert len(page) == MAX_LEADERS and total == players
            # The same order as ranking everyone in Python (what /top did before).
            everyone, _ = await store.top_players(scope, 20_000)
            assert len(everyone) == players
            assert leaderboard(page) == leaderboard(everyone)[:MAX_LEADERS]
            assert page[0][1] is not None and page[0][1].rated_matches >= SHOW_AFTER
        assert await store.top_players(-3, MAX_LEADERS) == ([], 0)
        assert (await store.top_players(None, 0))[1] == 10_000  # a page past the end: count
    finally:
        await store.close()
    with sqlite3.connect(path) as conn:  # the name look-up is an index search
        plan = " ".join(str(r) for r in conn.execute(
            "EXPLAIN QUERY PLAN SELECT user_id FROM user_stats s WHERE s.user_id IN "
            "(SELECT user_id FROM users WHERE name_key = 'p5') AND s.chat_id = -1"))
        assert "users_by_name" in plan and "SCAN" not in plan, plan


async def test_a_name_is_found_in_any_case_and_only_in_its_scope(tmp_path: Path) -> None:
    store = await SqliteStore.open(tmp_path / "names.db")
    try:
        await store.upsert_user(1, "Ирина")
        await store.upsert_user(2, "Ann")
        await store.upsert_user(3, "ann")  # two people of one name: the one with more wins
        for chat_id in (-5, -6):
            await store.upsert_chat(chat_id)
        await finished_match(store, -5, [1, 2], seed=1)
        await finished_match(store, -6, [3, 2], seed=2)
        await finished_match(store, -6, [3, 1], seed=3)
        found = await store.stats_by_name("ИРИНА")
        assert found is not None and found.user_id == 1 and found.matches == 2
        assert (await store.stats_by_name("ирина", -5)).matches == 1  # type: ignore[union-attr]
        assert await store.stats_by_name("Ирина", -7) is None
        assert await store.stats_by_name("Иран") is None
        anns = [await store.user_stats(u, -6) for u in (2, 3)]
        best = max((s for s in anns if s is not None), key=lambda s: (s.wins, -s.user_id))
        assert (await store.stats_by_name("ANN", -6)).wins == best.wins  # type: ignore[union-attr]
        await store.upsert_user(1, "Irina")  # a new name is found under it at once
        assert await store.stats_by_name("ирина") is None
        assert (await store.stats_by_name("IRINA")).user_id == 1  # type: ignore[union-attr]
    finally:
        await store.close()


async def test_the_newest_match_of_a_player_in_a_chat_is_read_alone(tmp_path: Path) -> None:
    """/export, /score and /board after a match read one row, not the player's history."""
    store = await SqliteStore.open(tmp_path / "history.db")
    try:
        for user_id in (1, 2):
            await store.upsert_user(user_id, f"player {user_id}")
        ids = {}
        for n, (chat_id, thread_id) in enumerate([(-5, None), (-5, 9), (-6, None),
                                                  (-5, None), (-6, None)]):
            stored = await store.create_match(chat_id, Settings(table=Table.DUEL),
                                              seats_for(Table.DUEL, [1]), thread_id=thread_id)
            await store.abandon_match(stored.match_id)
            ids[n] = stored.match_id
        newest = await store.matches_of_user(1, status=None, chat_id=-5, limit=1)
        assert [r.match_id for r in newest] == [ids[3]]
        topic = await store.matches_of_user(1, status=None, chat_id=-5, thread_id=9)
        assert [r.match_id for r in topic] == [ids[1]]
        assert len(await store.matches_of_user(1, status=None)) == 5
        assert await store.matches_of_user(2, status=None, chat_id=-5, limit=1) == []
    finally:
        await store.close()


async def test_names_stored_before_the_index_are_found(tmp_path: Path) -> None:
    """Migration 6 fills the key of every existing user with Python's casefold."""
    from storage.sqlite import connect, migrate

    path = str(tmp_path / "old.db")
    conn = await connect(path)
    await migrate(conn, target=5)
    await conn.execute("INSERT INTO users (user_id, display_name, created_at, updated_at) "
                       "VALUES (7, 'ĞÜL Straße', 0, 0)")
    await conn.execute("INSERT INTO chats (chat_id, created_at, updated_at) VALUES (-9, 0, 0)")
    await conn.execute("INSERT INTO user_stats (user_id, chat_id, matches, wins) "
                       "VALUES (7, -9, 3, 2)")
    await conn.close()
    store = await SqliteStore.open(path)
    try:
        found = await store.stats_by_name("ğül strasse")
        assert found is not None and (found.user_id, found.wins) == (7, 2)
    finally:
        await store.close()


def test_a_leaderboard_page_still_counts_the_players_not_on_it() -> None:
    """The picture gets 20 rows and the total: its note counts the rest as before."""
    from render.stats import LeaderRow, leaderboard_image

    rows = [LeaderRow(i + 1, f"P{i}", 20.0, 5, 3, 1, 1) for i in range(MAX_LEADERS)]
    page = leaderboard_image(rows, title="t", total=10_000)
    assert page.size == leaderboard_image(rows + rows[:5], title="t").size  # a note line
    assert page.size != leaderboard_image(rows, title="t").size  # no note: nobody else


# The caches and the painter on their own -------------------------------------------------


def test_ttl_cache_expires_and_stays_bounded() -> None:
    now = [0.0]
    cache: TtlCache[int, str] = TtlCache(60.0, size=3, clock=lambda: now[0])
    cache.put(1, "a")
    now[0] = 59.9
    assert cache.get(1) == "a"
    now[0] = 60.0
    assert cache.get(1) is None and len(cache) == 0
    for key in range(10):  # a flood of distinct keys keeps the newest few
        cache.put(key, str(key))
    assert len(cache) == 3 and cache.get(9) == "9" and cache.get(0) is None


def test_byte_lru_keeps_recent_pictures_within_its_budget() -> None:
    lru: ByteLru[str] = ByteLru(max_bytes=100, size=10)
    lru.put("a", b"x" * 40)
    lru.put("b", b"y" * 40)
    assert lru.get("a") == b"x" * 40  # now the most recent
    lru.put("c", b"z" * 40)  # over budget: the least recently used ("b") goes
    assert lru.get("b") is None and lru.get("a") is not None and lru.bytes == 80
    lru.put("huge", b"h" * 101)  # larger than the whole budget: not kept, nothing pushed out
    assert lru.get("huge") is None and len(lru) == 2
    for i in range(20):
        lru.put(str(i), b"")
    assert len(lru) == 10 and lru.bytes == 0


def slow_picture(counter: list[int], text: str) -> bytes:
    counter.append(1)
    threading.Event().wait(0.05)
    return text.encode()


async def test_the_painter_draws_a_keyed_picture_once_for_all_who_wait() -> None:
    painter = Painter(0)
    try:
        counter: list[int] = []
        drawing = Drawing(slow_picture, (counter, "board"), key=("k", 1))
        results = await asyncio.gather(*(painter.draw(drawing) for _ in range(20)))
        assert results == [b"board"] * 20 and len(counter) == 1
        assert await painter.draw(drawing) == b"board" and len(counter) == 1  # kept
        await painter.draw(Drawing(slow_picture, (counter, "other"), key=("k", 2)))
        assert len(counter) == 2  # another key is another picture
        await painter.draw(Drawing(slow_picture, (counter, "x")))
        await painter.draw(Drawing(slow_picture, (counter, "x")))
        assert len(counter) == 4  # no key: drawn each time, kept nowhere
    finally:
        painter.close()


def failing_picture(counter: list[int]) -> bytes:
    counter.append(1)
    raise OSError("no font")


async def test_a_failed_drawing_is_not_kept_and_a_cancelled_waiter_spares_the_others() -> None:
    painter = Painter(0)
    try:
        counter: list[int] = []
        drawing = Drawing(failing_picture, (counter,), key="broken")
        for _ in range(2):
            with pytest.raises(OSError):
                await painter.draw(drawing)
        assert len(counter) == 2 and len(painter.kept) == 0
        drawn: list[int] = []
        slow = Drawing(slow_picture, (drawn, "slow"), key="slow")
        first = asyncio.ensure_future(painter.draw(slow))
        second = asyncio.ensure_future(painter.draw(slow))
        await asyncio.sleep(0.01)
        first.cancel()
        assert await second == b"slow" and len(drawn) == 1
    finally:
        painter.close()
