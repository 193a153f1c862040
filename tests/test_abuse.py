"""Strangers and spammers, driven the way they would through the fake Bot API: guessed join
links, floods of information commands, commands sent faster than the bot answers, and an
outage of the network while moves are made."""

from __future__ import annotations

import asyncio
import itertools
import random
import sqlite3
import time
from collections import deque
from pathlib import Path

from chat.model import tour_frame
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
        moves = row.move_count
        mover.send(None, text)
        await fake.wait_for(lambda: fake.pending_updates() == [], timeout=5)
        for _ in range(100):  # fetched is not yet handled: wait for the move to be stored
            if (await store.get_match(match_id)).move_count > moves:
                break
            await asyncio.sleep(0.05)
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
    monkeypatch.setenv("KRENDZU_INFO_REPEAT_MINUTES", "0")
    config = load_config(tmp_path / "none.env")
    assert (config.user_per_minute, config.info_per_user, config.info_per_chat,
            config.info_repeat_minutes) == (25, 3, 12, 0)
    monkeypatch.delenv("KRENDZU_INFO_REPEAT_MINUTES")
    assert load_config(tmp_path / "none.env").info_repeat_minutes == 5


async def test_the_throttle_tells_once_and_forgets_idle_buckets() -> None:
    from chat.throttle import Buckets, Throttle

    throttle = Throttle(user_per_minute=100, info_per_user=2, info_per_chat=100)
    answers = [await throttle.admit(7, -1, info=True) for _ in range(5)]
    assert answers == [(True, False), (True, False), (False, True), (False, False),
                       (False, False)]
    assert await throttle.admit(7, -1, info=False) == (True, False)  # play is not info
    assert await throttle.admit(8, -1, info=True) == (True, False)  # another person
    # A group's distinct answers: one person may take half of its budget, the rest is
    # the others'.
    throttle = Throttle(user_per_minute=100, info_per_user=100, info_per_chat=4)
    assert [await throttle.new_answer(-1, 7) for _ in range(3)] == [True, True, False]
    assert [await throttle.new_answer(-1, 8) for _ in range(3)] == [True, True, False]
    assert await throttle.new_answer(-2, 7)  # another group
    buckets = Buckets(60, max_buckets=10)
    for key in range(100):
        assert buckets.has_room(key)
    assert len(buckets) <= 11  # untouched (full) buckets are dropped past the bound


async def test_one_person_cannot_hold_a_chats_updates() -> None:
    """Unit level (chat/updates.py): a person's excess is dropped, never another's; others'
    updates go before the flooder's queue, in the order they came; a seated player's go
    first; past the chat's bound the longest queue loses its newest update."""
    from telegram import Chat, Message, Update, User

    from chat.updates import ChatOrderedProcessor

    processor = ChatOrderedProcessor(64, max_per_person=3, max_per_chat=7)
    seated = {7}

    async def urgent(update: Update) -> bool:
        return update.effective_user is not None and update.effective_user.id in seated

    processor.urgent = urgent
    told: list[int] = []
    processor.on_drop = lambda update: told.append(update.update_id)
    order: list[int] = []
    release = asyncio.Event()

    async def handle(n: int) -> None:
        await release.wait()
        order.append(n)

    def update(n: int, user: int, chat: int = -5) -> Update:
        message = Message(n, None, Chat(chat, "group"), from_user=User(user, "U", False),  # type: ignore[arg-type]
                          text="x")
        return Update(n, message=message)

    async def arrive(n: int, user: int, chat: int = -5) -> asyncio.Task[None]:
        task = asyncio.create_task(processor.process_update(update(n, user, chat),
                                                            handle(n)))
        await asyncio.sleep(0.01)
        return task

    tasks = [await arrive(n, 1) for n in range(10)]  # one in progress, three waiting
    assert processor.dropped == 6 and told == [4, 5, 6, 7, 8, 9]
    tasks += [await arrive(20, 2), await arrive(21, 3), await arrive(22, 7),
              await arrive(24, 7)]
    tasks.append(await arrive(23, 4))  # the chat's bound (7 waiting): person 1's newest goes
    assert processor.dropped == 7 and told[-1] == 3
    tasks.append(await arrive(99, 1, chat=-6))  # another chat: at once
    assert order == [] and processor.busy_chats == 2
    release.set()
    await asyncio.gather(*tasks)
    # Person 1's first was in progress; then everyone else's first, in the order they came,
    # before person 1's next ones; the seated player's second one is as early as a first
    # (else it would follow 23).
    assert [n for n in order if n != 99] == [0, 20, 21, 22, 24, 23, 1, 2], order
    assert processor.busy_chats == 0 and processor.waiting(1) == 0

#: The per-user and per-chat limits of production (chat/config.py's defaults); the harness
#: lifts them for tests that play faster than people.
PRODUCTION_LIMITS = {"user_per_minute": 120.0, "info_per_user": 6.0, "info_per_chat": 12.0}
#: What a flooding stranger sends, in turn: information, moves that are not his, nonsense.
FLOOD = ("/rules@{bot}", "/score@{bot}", "/play@{bot} QC M12", "/board@{bot}", "/help@{bot}",
         "/pass@{bot}", "/moves@{bot}", "/top@{bot}")


def record_calls(h: Harness, names: tuple[str, ...], people: set[int],
                 done: list[tuple[str, int, float]]) -> None:
    """Note (method, user, time.monotonic()) when each of the flow's ``names`` returns for one
    of ``people``: the moment an update of theirs was processed."""
    flow = h.services.flow
    for name in names:
        real = getattr(flow, name)

        async def noted(*args: object, real: object = real, name: str = name,
                        **kwargs: object) -> object:
            result = await real(*args, **kwargs)  # type: ignore[operator]
            actor = next((a for a in args if hasattr(a, "user_id")), None)
            if actor is not None and actor.user_id in people:  # type: ignore[attr-defined]
                done.append((name, actor.user_id, time.monotonic()))  # type: ignore[attr-defined]
            return result

        setattr(flow, name, noted)


async def test_a_flood_from_one_person_never_drops_or_holds_back_anothers_update(
        tmp_path: Path) -> None:
    """Issue 43, 1: 200 commands from Eve in a forum group, sent faster than the bot can
    handle them, interleaved with Cid's ``/join`` in one topic's set-up, a seated player's
    ``/play`` in another topic's match and Dan's ▶ Start on his set-up: each of the three is
    processed within 2 s of its arrival, in the order they came (the Start finds Cid seated),
    and Eve alone loses updates, told once to slow down. (One chat's queue of 32 once held
    Eve's alone, and the rest, Cid's join first, were dropped.)"""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=30))
    ann, bob, cid, dan, eve = (fake.user(451 + i, name)
                               for i, name in enumerate(("Ann", "Bob", "Cid", "Dan", "Eve")))
    forum = fake.group(-1_000_004_510_000, "Busy forum", forum=True)
    async with running_bot(tmp_path, fake, **PRODUCTION_LIMITS) as h:
        for user in (ann, bob, cid, dan, eve):
            user.start_bot()
        await h.settle()
        # Topic 5: Ann and Bob's duel is being played. Topic 7: Dan's set-up for two.
        for user, text in ((ann, "/new@{bot} duel timer=off"), (bob, "/join@{bot}"),
                           (ann, "/go@{bot}"), (dan, "/new@{bot} duel")):
            user.send(forum, text.format(bot=BOT), thread_id=5 if user is not dan else 7)
            await h.settle()
        store = h.services.store
        playing = await store.active_match(forum.id, 5)
        assert playing is not None and await store.open_lobby(forum.id, 7) is not None
        lobby = next(m for m in reversed(fake.sent(forum)) if m.message_thread_id == 7
                     and any(b.get("text") == "▶ Start" for b in m.buttons()))
        mover_id, move = await move_of(h, playing.match_id, random.Random(3))
        mover = ann if mover_id == ann.id else bob
        done: list[tuple[str, int, float]] = []
        record_calls(h, ("lobby_action", "play"), {cid.id, mover.id, dan.id}, done)
        spam = itertools.cycle(FLOOD)

        def flood(n: int) -> None:
            for i in range(n):
                eve.send(forum, next(spam).format(bot=BOT), thread_id=(5, 7, None)[i % 3])

        arrived: dict[str, float] = {}
        flood(50)
        arrived["join"] = time.monotonic()
        cid.send(forum, f"/join@{BOT}", thread_id=7)
        flood(50)
        arrived["play"] = time.monotonic()
        mover.send(forum, f"/play@{BOT} {move}", thread_id=5)
        flood(50)
        arrived["start"] = time.monotonic()
        dan.press(lobby, data=lobby.button(text="▶ Start")["callback_data"])
        flood(50)
        await fake.wait_for(lambda: len(done) >= 3, timeout=15)
        await h.settle(timeout=60)
        order = [(name, user) for name, user, _ in done]
        assert order == [("lobby_action", cid.id), ("play", mover.id),
                         ("lobby_action", dan.id)], order
        waits = {what: round(at - arrived[what], 2)
                 for what, (_, _, at) in zip(("join", "play", "start"), done, strict=True)}
        assert max(waits.values()) < 2.0, waits
        # Each did what it meant: the move is stored, and the Start found Cid seated.
        assert (await store.get_match(playing.match_id)).move_count == playing.move_count + 1
        started = await store.active_match(forum.id, 7)
        assert started is not None, fake.describe()
        assert {s.user_id for s in started.seats} == {dan.id, cid.id}
        dropped = h.app.update_processor.dropped  # type: ignore[attr-defined]
        assert dropped > 0, "the flood was not faster than the bot: nothing was tested"
        slow = [m for m in fake.sent(forum) if "a lot of requests" in (m.text or "")]
        assert len(slow) == 1 and "Eve" in (slow[0].text or ""), [m.text for m in slow]


async def test_a_spammer_gets_one_answer_and_others_are_still_answered(tmp_path: Path) -> None:
    """Issue 43, 2: 40 x /rules@bot from Eve make at most 5 group messages (one answer, one
    "slow down", at most one pointer), and Bob's /score right after is answered within 2 s:
    Eve's repeats take nothing of the chat's information budget. A repeat from someone
    else while the answer is recent gets a short reply pointing to it, once; then nothing.
    (Before: 11-13 messages, the rules and both pictures up to four times.)"""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=1))
    ann, bob, cid, dan, eve = (fake.user(461 + i, name)
                               for i, name in enumerate(("Ann", "Bob", "Cid", "Dan", "Eve")))
    group = fake.group(-1004610, "Readers")
    async with running_bot(tmp_path, fake, **PRODUCTION_LIMITS,
                           info_repeat_minutes=5.0) as h:  # production's
        for user in (ann, bob, cid, dan, eve):
            user.start_bot()
        match_id = (await start_group_duel(h, group, ann, bob, "duel timer=off")).match_id
        flow = h.services.flow
        score = await flow.score(await flow.load(match_id), await flow.chat_tr(group.id))
        before = len(fake.sent(group))
        for _ in range(40):
            eve.send(group, f"/rules@{BOT}")
        asked = time.monotonic()
        bob.send(group, f"/score@{BOT}")
        await fake.wait_for(lambda: any(m.text == score for m in fake.sent(group)[before:]),
                            timeout=10)
        assert time.monotonic() - asked < 2.0, "Bob's /score waited behind Eve's flood"
        await h.settle(timeout=60)
        flood = [m for m in fake.sent(group)[before:] if m.text != score]
        assert len(flood) <= 5, [(m.kind, m.text or m.caption) for m in flood]
        rules = [m for m in flood if "Krendzu in short" in (m.text or "")]
        slow = [m for m in flood if "a lot of requests" in (m.text or "")]
        assert len(rules) == 1 and len(slow) == 1, [(m.kind, m.text or m.caption) for m in flood]
        # Someone else asks again: a pointer to the answer (a reply to it), once.
        since = len(fake.sent(group))
        cid.send(group, f"/rules@{BOT}")
        await h.settle()
        dan.send(group, f"/rules@{BOT}")
        await h.settle()
        told = fake.sent(group)[since:]
        pointed = [m for m in flood if m.reply_to == rules[0].message_id]
        assert len(told) + len(pointed) == 1, [(m.text, m.reply_to) for m in told + pointed]
        assert [m.reply_to for m in told + pointed] == [rules[0].message_id]
        assert "Cid" in (told[0].text or "") if told else True


async def test_one_persons_repeats_do_not_use_up_the_groups_information_budget(
        tmp_path: Path) -> None:
    """The group's information budget counts distinct answers: with room for two a minute,
    Eve's ten /rules take one (the rest are repeats of it), and Bob's /score the other.
    (Counted per request, Eve's first two took both and Bob was told to wait a minute.)"""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=1))
    ann, bob, eve = (fake.user(471 + i, name) for i, name in enumerate(("Ann", "Bob", "Eve")))
    group = fake.group(-1004710, "Small budget")
    async with running_bot(tmp_path, fake, user_per_minute=120.0, info_per_user=20.0,
                           info_per_chat=2.0, info_repeat_minutes=5.0) as h:
        for user in (ann, bob, eve):
            user.start_bot()
        match_id = (await start_group_duel(h, group, ann, bob, "duel timer=off")).match_id
        flow = h.services.flow
        score = await flow.score(await flow.load(match_id), await flow.chat_tr(group.id))
        for _ in range(10):
            eve.send(group, f"/rules@{BOT}")
            await asyncio.sleep(0.05)
        await h.settle()
        bob.send(group, f"/score@{BOT}")
        await h.settle()
        said = [m.text or m.caption or "" for m in fake.sent(group)]
        assert score in said, said[-3:]
        assert not [t for t in said if "a lot of requests" in t], said[-3:]


async def test_a_refusal_repeated_to_one_person_is_not_posted_again(tmp_path: Path) -> None:
    """Not only information: twenty /play@bot from Eve, who plays in no match here, get one
    "You are not playing" and at most one pointer to it; Cid, asking the same, still gets
    his own reply. (Each of the twenty was answered in the group before.)"""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=1))
    ann, bob, cid, eve = (fake.user(481 + i, name)
                          for i, name in enumerate(("Ann", "Bob", "Cid", "Eve")))
    group = fake.group(-1004810, "Kibitzers")
    async with running_bot(tmp_path, fake, **PRODUCTION_LIMITS,
                           info_repeat_minutes=5.0) as h:
        for user in (ann, bob, cid, eve):
            user.start_bot()
        await start_group_duel(h, group, ann, bob, "duel timer=off")
        before = len(fake.sent(group))
        for _ in range(20):
            eve.send(group, f"/play@{BOT} QC M12")
            await asyncio.sleep(0.02)
        await h.settle()
        to_eve = fake.sent(group)[before:]
        refusals = [m for m in to_eve if "not playing" in (m.text or "")]
        assert len(refusals) == 1 and len(to_eve) <= 2, [(m.text, m.reply_to) for m in to_eve]
        assert all(m.reply_to == refusals[0].message_id for m in to_eve if m not in refusals)
        since = len(fake.sent(group))
        cid.send(group, f"/play@{BOT} QC M12")
        await h.settle()
        assert ["not playing" in (m.text or "") for m in fake.sent(group)[since:]] == [True]


def test_recent_answers_are_named_by_what_they_show_and_forgotten_when_not_sent() -> None:
    from chat.answers import RecentAnswers, answer_key
    from chat.notices import Drawing, Send

    now = [0.0]
    answers = RecentAnswers(300, clock=lambda: now[0])
    key = answer_key(-1, None, [Send(-1, "rules"), Send(-1, "picture", photo=b"png")])
    assert key == answer_key(-1, None, [Send(-1, "rules", info="rules:2"),
                                        Send(-1, "picture", photo=b"png")])  # anyone's
    for other in (answer_key(-1, None, [Send(-1, "rules"), Send(-1, "picture", photo=b"gif")]),
                  answer_key(-1, 7, [Send(-1, "rules"), Send(-1, "picture", photo=b"png")]),
                  answer_key(-1, None, [Send(-1, "rules"), Send(-1, "picture", photo=b"png")],
                             person=5)):
        assert other is not None and other != key
    # A picture that cannot be named is never taken for a repeat.
    assert answer_key(-1, None, [Send(-1, "x", photo=Drawing(str))]) is None
    answers.remember(key)
    given = answers.get(key)
    assert given is not None and given.message_id is None  # on its way
    answers.sent(key, None)  # replaced in the queue, refused: the next request is answered
    assert answers.get(key) is None
    answers.remember(key)
    answers.sent(key, 42)
    assert answers.get(key).message_id == 42  # type: ignore[union-attr]
    now[0] = 300.0
    assert answers.get(key) is None  # no longer recent
    off = RecentAnswers(0)
    off.remember(key)
    assert off.get(key) is None


def test_information_replies_leave_a_playing_group_what_its_play_wrote() -> None:
    """A group whose match wrote twelve board posts in the last minute keeps fourteen slots
    of its nineteen for play: replies get five, not thirteen (a flood of distinct
    /score, /board, /top held its board posts back up to 20 s). Idle, a third is kept."""
    from chat.delivery import Delivery

    now = [1000.0]
    delivery = Delivery(None, None, group_limit=19, clock=lambda: now[0])  # type: ignore[arg-type]
    assert delivery.reserve_for_play(-1) == 6
    delivery._play_writes[-1] = deque(now[0] - 55 + 5 * i for i in range(12))
    assert delivery.reserve_for_play(-1) == 14
    now[0] += 30  # six of them are older than a minute now
    assert delivery.reserve_for_play(-1) == 8
    now[0] += 60
    assert delivery.reserve_for_play(-1) == 6 and -1 not in delivery._play_writes


async def test_a_restart_tells_no_one_again_what_they_were_told_before_the_stop(
        tmp_path: Path) -> None:
    """Stopped in the middle of a move's announcement (its group post waits out a 429, the
    private messages went out): after the restart the group gets its post, and nobody gets
    a private message of that move a second time (issue 43, item 3: each stored move told
    once). Before, the restart told the whole move again: its panel and its record twice."""
    fake, ann, bob, group = duel_table(441, "Paused")
    rng = random.Random(8)
    async with running_bot(tmp_path, fake) as h:
        match_id = await open_duel(h, ann, bob, group)
        store = h.services.store
        await h.settle()
        before = {u.id: len(fake.sent(u)) for u in (ann, bob)}
        fake.flood(group, 3600)  # every group write answers 429 for an hour of fast clock
        user_id, text = await move_of(h, match_id, rng)
        (ann if user_id == ann.id else bob).send(None, text)
        await fake.wait_for(lambda: fake.pending_updates() == [], timeout=5)
        for _ in range(100):
            if (await store.get_match(match_id)).move_count > 0 and all(
                    len(fake.sent(u)) > before[u.id] for u in (ann, bob)):
                break
            await asyncio.sleep(0.05)
        told = {u.id: [m.content for m in fake.sent(u)[before[u.id]:]] for u in (ann, bob)}
        assert all(told.values()), told  # each was told privately before the stop
        row = await store.get_match(match_id)
        assert row.announced_seq < row.move_count  # the group's post still owed
    fake.flood(group, 0)
    posts = photos(fake, group)
    async with running_bot(tmp_path, fake) as h:
        await h.settle()
        after = await h.services.store.get_match(match_id)
        assert after.announced_seq == after.move_count
    assert photos(fake, group) == posts + 1, fake.describe()
    for user in (ann, bob):
        again = [m.content for m in fake.sent(user)[before[user.id] + len(told[user.id]):]]
        assert again == [], (user.first_name, told[user.id], again)  # all told before
