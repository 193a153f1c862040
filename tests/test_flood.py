"""A flood wait in one chat never stalls the others, and every seated player is reachable.

Driven through the real python-telegram-bot stack against the fake Bot API, which counts new
messages *and* edits per group in any 60 s window and answers 429 with ``retry_after`` as
Telegram does.
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path

from telegram.error import RetryAfter

from chat.model import tour_frame
from chat.ratelimit import ChatRateLimiter
from krendzu import Pass, Place
from storage import MatchStatus
from tests.bot_harness import BOT, FastClock, Harness, running_bot, start_group_duel
from tests.fakebot import FakeClock, FakeTelegram, FakeUser


async def typed_move(h: Harness, user: FakeUser, match_id: int, rng: random.Random) -> bool:
    """The user types a legal move in their private chat; False if it is not their turn."""
    stored = await h.services.flow.load(match_id)
    game = stored.game
    if game.is_over or stored.row.seats[game.current_player].user_id != user.id:
        return False
    places = [a for a in game.legal_actions() if isinstance(a, Place)]
    if places:
        step = rng.choice(places)
        user.send(None, f"{step.card.code()} {tour_frame(game).label(step.x, step.y)}")
    else:
        user.send(None, "pass" if Pass() in game.legal_actions() else "end")
    return True


async def test_a_computer_table_at_full_speed_never_meets_a_429(tmp_path: Path) -> None:
    """Three computers and a quick person in one group for three minutes of the clock: the
    group's gate counts posts and lobby edits, so Telegram never has to say 429."""
    clock = FastClock(speed=12)  # 60 s of the clock = 5 real seconds
    # The bot-wide 30/s is the limiter's (unit-tested below); here only the group counts.
    fake = FakeTelegram(bot_username=BOT, clock=clock, global_limit=None)
    ann = fake.user(301, "Ann")
    group = fake.group(-1003010, "Fast table")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()
        rng = random.Random(5)
        start = clock()
        moves = matches = 0
        while clock() - start < 180:
            row = await h.services.store.active_match(group.id)
            if row is None:  # set up the next match: a lobby post and three edits
                ann.send(group, f"/new@{BOT} teams")
                await h.settle()
                for level in ("easy", "easy", "normal"):
                    ann.send(group, f"/add@{BOT} {level}")
                    await h.settle()
                ann.send(group, f"/go@{BOT}")
                await h.settle()
                matches += 1
                continue
            if await typed_move(h, ann, row.match_id, rng):
                moves += 1
            await asyncio.sleep(0.02)
        await h.settle(timeout=120)
    assert clock() - start >= 180, "three minutes of play"
    assert moves >= 5 and matches >= 1
    writes = fake.max_sends_in_window(group, 60, edits=True)
    assert 10 <= writes <= 19, writes  # busy, and under Telegram's 20 with a margin
    assert fake.rate_limited() == [], [(c.method, c.chat_id) for c in fake.rate_limited()]


async def test_a_429_in_one_group_pauses_only_that_group(tmp_path: Path) -> None:
    clock = FastClock(speed=10)  # a 59 s flood wait lasts 5.9 real seconds
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann = fake.user(311, "Ann")
    bob = fake.user(312, "Bob")
    cid = fake.user(313, "Cid")
    group = fake.group(-1003110, "Busy")
    other = fake.group(-1003111, "Quiet")
    async with running_bot(tmp_path, fake) as h:
        for user in (ann, bob, cid):
            user.start_bot()
        row = await start_group_duel(h, group, ann, bob)
        posts_before = len([m for m in fake.sent(group) if m.kind == "photo"])
        fake.flood(group, 59)
        paused_at = clock()
        rng = random.Random(3)
        mover = ann if await typed_move(h, ann, row.match_id, rng) else bob
        if mover is bob:
            assert await typed_move(h, bob, row.match_id, rng)
        await asyncio.sleep(0.3)  # the board post meets the 429; its chat is paused
        assert fake.rate_limited(group), "the forced 429 was met"
        # Meanwhile, other chats are answered at once.
        waits = []
        for user, chat in ((cid, None), (cid, other), (mover, None)):
            since = fake.mark()
            began = time.monotonic()
            user.send(chat, "/help" if chat is None else f"/help@{BOT}")
            await fake.wait_for_message(user if chat is None else chat, "/new", since=since,
                                        timeout=5)
            waits.append(time.monotonic() - began)
        assert max(waits) < 1.0, waits
        # The group's board post goes out right after the 59 s.
        post = await fake.wait_for(
            lambda: len([m for m in fake.sent(group) if m.kind == "photo"]) > posts_before,
            timeout=20)
        assert post
        sent = [c for c in fake.calls_to("sendPhoto", group, ok=True)][-1]
        assert paused_at + 59 <= sent.time <= paused_at + 59 + 10, sent.time - paused_at
        await h.settle()


async def test_the_limiter_pauses_a_chat_and_not_the_bot() -> None:
    """Unit level: a 429 for chat A pauses A's next request for retry_after; B's goes on."""
    clock = FakeClock(1000.0)
    limiter = ChatRateLimiter(0, clock=clock)
    calls: list[int] = []
    first = True

    async def send(chat: int) -> dict:
        nonlocal first
        if chat == -1 and first:
            first = False
            raise RetryAfter(30)
        calls.append(chat)
        return {"ok": True}

    async def request(chat: int) -> object:
        return await limiter.process_request(send, (chat,), {}, "sendMessage",
                                             {"chat_id": chat}, None)

    task_a = asyncio.create_task(request(-1))
    await asyncio.sleep(0.05)
    assert limiter.paused_for(-1) == 30 and limiter.paused_for(-2) == 0
    await request(-2)  # another chat: at once
    assert calls == [-2] and not task_a.done()
    clock.advance(30)
    await asyncio.wait_for(task_a, 2)
    assert calls == [-2, -1]
    assert limiter.paused == {}  # expired pauses are forgotten


async def test_a_creator_who_never_started_the_bot_is_seated_through_the_link(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    dan = fake.user(321, "Dan")  # never opened the bot's private chat
    eve = fake.user(322, "Eve")
    group = fake.group(-1003210, "Newcomers")
    async with running_bot(tmp_path, fake) as h:
        eve.start_bot()
        dan.send(group, f"/new@{BOT} duel")
        await h.settle()
        lobby = fake.sent(group)[-1]
        links = [b["url"] for b in lobby.buttons() if "url" in b]
        assert links and links[0].startswith(f"https://t.me/{BOT}?start=j"), lobby.buttons()
        assert "Waiting for Dan" in (lobby.text or "")
        eve.press(lobby, data=lobby.button(text="Join")["callback_data"])
        await h.settle()
        dan.start_bot(links[0].split("?start=", 1)[1])
        await h.settle()
        assert "Newcomers" in (fake.sent(dan)[-1].text or ""), fake.sent(dan)[-1].text
        dan.press(lobby, data=lobby.button(text="▶ Start")["callback_data"])
        await h.settle()
        assert await h.services.store.active_match(group.id) is not None
        hands = [m for m in fake.sent(dan) if m.kind == "photo"]
        assert hands, "Dan received his hand at the deal"
        assert not [c for c in fake.calls_to(chat=dan, ok=False) if c.status == 403]


async def test_a_player_who_blocks_the_bot_is_reported_once_and_gets_the_panel_back(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(331, "Ann")
    bob = fake.user(332, "Bob")
    group = fake.group(-1003310, "Blockers")
    async with running_bot(tmp_path, fake, timer_tick=3600.0) as h:
        ann.start_bot()
        bob.start_bot()
        row = await start_group_duel(h, group, ann, bob, "duel timer=off")
        rng = random.Random(9)
        # Whoever does not move first blocks the bot, then the other player moves twice.
        game = (await h.services.flow.load(row.match_id)).game
        mover = ann if row.seats[game.current_player].user_id == ann.id else bob
        blocker = bob if mover is ann else ann
        blocker.block_bot()
        await h.settle()
        told = [m for m in fake.sent(group) if "cannot write to" in (m.text or "")]
        assert len(told) == 1 and blocker.first_name in (told[0].text or "")
        for _ in range(6):
            for user in (ann, bob):
                if user is not blocker:
                    await typed_move(h, user, row.match_id, rng)
            await h.settle()
            stored = await h.services.flow.load(row.match_id)
            if stored.row.seats[stored.game.current_player].user_id == blocker.id:
                break
        told = [m for m in fake.sent(group) if "cannot write to" in (m.text or "")]
        assert len(told) == 1, [m.text for m in told]  # once, however many sends failed
        stored = await h.services.flow.load(row.match_id)
        assert stored.row.seats[stored.game.current_player].user_id == blocker.id
        since = fake.mark()
        blocker.start_bot()  # presses Start (Restart) again: no /hand needed
        await h.settle()
        panel = await fake.wait_for_message(blocker, since=since,
                                            where=lambda m: any(
                                                b.get("callback_data", "").startswith("v1:m:")
                                                for b in m.buttons()))
        assert panel is not None
        assert await h.services.store.get_match(row.match_id)
        assert (await h.services.store.get_match(row.match_id)).status is MatchStatus.ACTIVE


async def test_after_a_restart_one_429_teaches_the_gate_and_no_second_one_follows(
        tmp_path: Path) -> None:
    """A new process cannot know what the old one wrote in the last minute: Telegram's first
    429 tells it the window is full, and the gate then paces the group so no second 429
    comes."""
    clock = FastClock(speed=20)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann = fake.user(341, "Ann")
    group = fake.group(-1003410, "Restarted")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()
        # The previous process's burst, just before this one started.
        now = clock()
        fake.chat(group).send_times.extend(now - 30 + i * 0.5 for i in range(19))
        ann.send(group, f"/new@{BOT} duel")
        await h.settle()
        ann.send(group, f"/add@{BOT} easy")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        rng = random.Random(2)
        start = clock()
        while clock() - start < 150:
            row = await h.services.store.active_match(group.id)
            if row is None:
                break
            await typed_move(h, ann, row.match_id, rng)
            await asyncio.sleep(0.05)
        await h.settle(timeout=60)
    assert len(fake.rate_limited(group)) == 1, [(c.method, c.time - start)
                                                 for c in fake.rate_limited(group)]


async def test_a_restarted_bot_counts_the_moves_it_posted_before_and_meets_no_429(
        tmp_path: Path) -> None:
    """A restart in the middle of a quick group match: the new process starts each group's
    window from the moves the old one stored (and posted) in the last minute, so it paces
    the group from its first post on and Telegram never answers 429 (without the seeding the
    old posts plus the new ones overflow the 20 a minute at once: a group frozen for up to a
    minute right after the restart)."""
    clock = FastClock(speed=20)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann = fake.user(351, "Ann")
    group = fake.group(-1003510, "Restarted quickly")
    rng = random.Random(4)

    async def play(h: Harness, seconds: float, moves: int) -> int:
        made, start = 0, clock()
        while clock() - start < seconds and made < moves:
            row = await h.services.store.active_match(group.id)
            if row is None:
                break
            made += await typed_move(h, ann, row.match_id, rng)
            await asyncio.sleep(0.05)
        return made

    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()
        ann.send(group, f"/new@{BOT} duel timer=off")
        await h.settle()
        ann.send(group, f"/add@{BOT} easy")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        await play(h, seconds=40, moves=7)
        await h.settle(timeout=60)
    before = len(fake.calls)
    old_writes = fake.max_sends_in_window(group, edits=True)
    assert old_writes >= 12, old_writes  # the old process nearly filled the window
    async with running_bot(tmp_path, fake) as h:  # the same database: a restart
        made = await play(h, seconds=90, moves=20)
        await h.settle(timeout=90)
        last = (await h.services.store.matches_of_user(ann.id, status=None, limit=1))[0]
        stored, announced = last.move_count, last.announced_seq
    assert made >= 8, made
    # Every move announced: the paced group got fewer, newer boards (a queued board post is
    # replaced by a newer one), never a 429.
    new_posts = [c for c in fake.calls[before:] if c.chat_id == group.id and c.ok
                 and c.method == "sendPhoto"]
    assert new_posts and announced == stored, (announced, stored, fake.describe())
    assert fake.rate_limited(group) == [], [(c.method, c.time) for c in fake.rate_limited(group)]
    assert fake.max_sends_in_window(group, edits=True) <= 20
