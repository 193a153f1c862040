"""Strangers and spammers, driven the way they would through the fake Bot API: guessed join
links, floods of information commands, commands sent faster than the bot answers, and an
outage of the network while moves are made."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from pathlib import Path

from chat.describe import tour_frame
from krendzu import Pass, Place
from storage import SeatKind
from tests.bot_harness import BOT, FastClock, Harness, running_bot, start_group_duel
from tests.fakebot import Chat, FakeTelegram, FakeUser


async def move_of(h: Harness, match_id: int, rng: random.Random) -> tuple[int, str]:
    """(the user to move, a legal move typed as text) in the match."""
    stored = await h.services.flow.load(match_id)
    game = stored.game
    user_id = stored.row.seats[game.current_player].user_id
    assert user_id is not None
    places = [a for a in game.legal_actions() if isinstance(a, Place)]
    if places:
        step = rng.choice(places)
        return user_id, f"{step.card.code()} {tour_frame(game).label(step.x, step.y)}"
    return user_id, "pass" if Pass() in game.legal_actions() else "end"


async def test_a_stranger_cannot_take_a_seat_through_a_guessed_or_forwarded_link(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(401, "Ann")
    bob = fake.user(402, "Bob")  # a member who never started the bot
    mal = fake.user(403, "Mallory")  # in no group at all
    group = fake.group(-1004010, "Secret Club")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        ann.send(group, f"/new@{BOT} trio-lone-defender")
        await h.settle()
        lobby = fake.sent(group)[-1]
        query = bob.press(lobby, data=lobby.button(text="Join")["callback_data"])
        await h.settle()
        link = fake.callbacks[query.id].url
        assert link is not None
        row = await h.services.store.open_lobby(group.id)
        assert row is not None
        # Mallory tries sequential ids, the id alone, a wrong key, and Bob's own link.
        for payload in [f"j{row.lobby_id}", f"j{row.lobby_id - 1}", f"j{row.lobby_id + 1}",
                        f"j{row.lobby_id}_AAAAAAAAAAAAAAAAAAAAAA", "j", "j-1_x",
                        link.split("?start=", 1)[1]]:
            mal.start_bot(payload)
            await h.settle()
        row = await h.services.store.open_lobby(group.id)
        assert row is not None
        assert mal.id not in [s.get("user_id") for s in row.state["seats"]]
        assert mal.id not in row.state["invited"]
        said = " ".join(m.text or m.caption or "" for m in fake.sent(mal))
        assert "Secret Club" not in said and "not valid" in said
        assert not [m for m in fake.sent(mal) if m.kind == "photo"]  # no hand, no board
        # Bob, who pressed Join, is seated by the very same link.
        bob.start_bot(link.split("?start=", 1)[1])
        await h.settle()
        row = await h.services.store.open_lobby(group.id)
        assert row is not None and bob.id in [s.get("user_id") for s in row.state["seats"]]


async def test_a_flood_of_information_commands_does_not_hold_back_the_board(
        tmp_path: Path) -> None:
    """40 x /rules@bot (and others) from a non-player: they get a polite word once, the
    group's next board post goes out at once, and the group is not filled with replies."""
    clock = FastClock(speed=30)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann = fake.user(411, "Ann")
    bob = fake.user(412, "Bob")
    eve = fake.user(413, "Eve")
    group = fake.group(-1004110, "Players")
    async with running_bot(tmp_path, fake, user_per_minute=120.0, info_per_user=6.0,
                           info_per_chat=12.0) as h:  # the production defaults
        for user in (ann, bob, eve):
            user.start_bot()
        match_id = (await start_group_duel(h, group, ann, bob)).match_id
        before = len(fake.sent(group))
        for i in range(40):
            eve.send(group, f"/{['rules', 'help', 'top', 'history'][i % 4]}@{BOT}")
        await asyncio.sleep(0.5)  # the replies are queued or on their way
        user_id, text = await move_of(h, match_id, random.Random(1))
        posts = len([m for m in fake.sent(group) if m.kind == "photo" and "Next" in
                     (m.caption or "")])
        moved_at = clock()
        (ann if user_id == ann.id else bob).send(None, text)
        await fake.wait_for(lambda: len([m for m in fake.sent(group) if m.kind == "photo"
                                         and "Next" in (m.caption or "")]) > posts, timeout=10)
        assert clock() - moved_at < 10, "the board post did not wait behind the replies"
        await h.settle()
        replies = fake.sent(group)[before:]
        slow = [m for m in replies if "a lot of requests" in (m.text or "")]
        assert len(slow) == 1, [m.text for m in slow]
        assert len(replies) <= 6 * 3 + 2, len(replies)  # 6 commands' replies, the warning,
        assert fake.max_sends_in_window(group, 60, edits=True) <= 19  # the board post


async def test_commands_sent_at_once_are_handled_in_order(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(421, "Ann")
    group = fake.group(-1004210, "Quick")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()
        ann.send(group, f"/new@{BOT} teams")
        for level in ("easy", "normal", "hard"):
            ann.send(group, f"/add@{BOT} {level}")  # no waiting between them
        await h.settle()
        row = await h.services.store.open_lobby(group.id)
        assert row is not None
        kinds = [(s["kind"], s.get("level")) for s in row.state["seats"]]
        assert kinds == [("human", None), ("computer", "easy"), ("computer", "normal"),
                         ("computer", "hard")], kinds


def duel_table(first_id: int, title: str) -> tuple[FakeTelegram, FakeUser, FakeUser, Chat]:
    """A fake Telegram (fast clock) with Ann (``first_id``), Bob (the next id) and a group."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=60))
    return (fake, fake.user(first_id, "Ann"), fake.user(first_id + 1, "Bob"),
            fake.group(-(1_000_000 + first_id * 10), title))


async def open_duel(h: Harness, ann: FakeUser, bob: FakeUser, group: Chat) -> int:
    """Both start the bot and play a duel in the group: its match id."""
    ann.start_bot()
    bob.start_bot()
    return (await start_group_duel(h, group, ann, bob)).match_id


def photos(fake: FakeTelegram, group: Chat) -> int:
    """Pictures the group was sent (board posts)."""
    return len([m for m in fake.sent(group) if m.kind == "photo"])


async def test_moves_made_during_an_outage_are_announced_when_it_ends(tmp_path: Path) -> None:
    """The outbox marker moves only past what was delivered: the next player is told after
    the network comes back, and after a restart if it never came back before."""
    fake, ann, bob, group = duel_table(431, "Outage")
    rng = random.Random(4)
    async with running_bot(tmp_path, fake) as h:
        match_id = await open_duel(h, ann, bob, group)
        store = h.services.store
        announced = (await store.get_match(match_id)).announced_seq
        fake.outage = True
        user_id, text = await move_of(h, match_id, rng)
        mover = ann if user_id == ann.id else bob
        mover.send(None, text)
        await fake.wait_for(lambda: fake.pending_updates() == [], timeout=5)
        await asyncio.sleep(0.5)  # tries and back-off (seconds of the fast clock)
        row = await store.get_match(match_id)
        assert row.move_count > announced
        assert row.announced_seq == announced, "the marker moved though nothing was sent"
        posts = photos(fake, group)
        fake.outage = False
        await h.settle(timeout=60)
        assert photos(fake, group) > posts
        assert (await store.get_match(match_id)).announced_seq == row.move_count
        # A second outage outlasts every try: the restart announces the move.
        user_id, text = await move_of(h, match_id, rng)
        mover = ann if user_id == ann.id else bob
        h.services.delivery.max_attempts = 2
        fake.outage = True
        mover.send(None, text)
        await fake.wait_for(lambda: fake.pending_updates() == [], timeout=5)
        await h.services.delivery.idle()
        row = await store.get_match(match_id)
        assert row.announced_seq < row.move_count
    fake.outage = False
    posts = photos(fake, group)
    async with running_bot(tmp_path, fake) as h:
        await h.settle()
        after = await h.services.store.get_match(match_id)
        assert after.announced_seq == after.move_count
        assert photos(fake, group) > posts
        assert all(s.kind is SeatKind.HUMAN for s in after.seats)


async def test_a_board_posted_before_a_crash_is_not_posted_again(tmp_path: Path) -> None:
    """The bot dies after a move's board was posted but before the announcement was marked
    done (the scaled mode: a job worker killed there; procrastinate runs the job again). The
    announcement runs again, and the group's board, already there, is not posted twice."""
    fake, ann, bob, group = duel_table(441, "Crash")
    rng = random.Random(5)
    async with running_bot(tmp_path, fake) as h:
        match_id = await open_duel(h, ann, bob, group)
        user_id, text = await move_of(h, match_id, rng)
        (ann if user_id == ann.id else bob).send(None, text)
        await h.settle()
        row = await h.services.store.get_match(match_id)
        assert row.announced_seq == row.move_count
        database = h.config.database
    # As if the process had died between the post and the marker: the marker one move back.
    with sqlite3.connect(database) as conn:
        conn.execute("UPDATE matches SET announced_seq = announced_seq - 1 WHERE match_id = ?",
                     (match_id,))
    posted = photos(fake, group)
    async with running_bot(tmp_path, fake) as h:
        await h.settle()
        row = await h.services.store.get_match(match_id)
        assert row.announced_seq == row.move_count, "announced again"
    assert photos(fake, group) == posted, \
        "the board that was there already was posted again"


def test_the_limits_are_configured_from_the_environment(monkeypatch, tmp_path: Path) -> None:
    from chat.config import load_config

    monkeypatch.setenv("KRENDZU_USER_PER_MINUTE", "25")
    monkeypatch.setenv("KRENDZU_INFO_PER_USER", "3")
    monkeypatch.setenv("KRENDZU_INFO_PER_CHAT", "²")  # not a number: the default
    config = load_config(tmp_path / "none.env")
    assert (config.user_per_minute, config.info_per_user, config.info_per_chat) == (25, 3, 12)


async def test_the_throttle_tells_once_and_forgets_idle_buckets() -> None:
    from chat.throttle import Buckets, Throttle

    throttle = Throttle(user_per_minute=100, info_per_user=2, info_per_chat=100)
    answers = [await throttle.admit(7, -1, info=True) for _ in range(5)]
    assert answers == [(True, False), (True, False), (False, True), (False, False),
                       (False, False)]
    assert await throttle.admit(7, -1, info=False) == (True, False)  # play is not info
    assert await throttle.admit(8, -1, info=True) == (True, False)  # another person
    buckets = Buckets(60, max_buckets=10)
    for key in range(100):
        assert buckets.has_room(key)
    assert len(buckets) <= 11  # untouched (full) buckets are dropped past the bound


async def test_one_chat_cannot_hold_every_update_slot() -> None:
    from telegram import Chat, Message, Update

    from chat.updates import ChatOrderedProcessor

    processor = ChatOrderedProcessor(8, max_waiting=3)
    order: list[int] = []
    release = asyncio.Event()

    async def handle(n: int) -> None:
        await release.wait()
        order.append(n)

    def update(n: int, chat: int) -> Update:
        message = Message(n, None, Chat(chat, "group"), text="x")  # type: ignore[arg-type]
        return Update(n, message=message)

    tasks = [asyncio.create_task(processor.process_update(update(n, -5), handle(n)))
             for n in range(10)]
    other = asyncio.create_task(processor.process_update(update(99, -6), handle(99)))
    await asyncio.sleep(0.05)
    assert processor.dropped == 6  # one in progress, three waiting, the rest dropped
    release.set()
    await asyncio.gather(*tasks, other)
    assert [n for n in order if n != 99] == [0, 1, 2, 3]  # in the order they came
    assert processor.busy_chats == 0
