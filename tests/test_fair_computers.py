"""Computer players are shared fairly (issue 25, item 3).

A match nobody plays any more is cancelled (not played on by computers for nobody); active
matches are capped per person and per chat; decisions are thought out without the chat's
lock and dropped if the position moved on meanwhile; a person's requests overtake
computer-only work in the :class:`Thinker`.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from chat.computer import Thinker, decide_turn
from chat.flow import Actor, Flow
from chat.i18n import Catalogs
from krendzu import Action
from krendzu.tour import ANNOUNCE
from storage import MatchStatus, open_store
from tests.bot_harness import BOT, FastClock, running_bot
from tests.fakebot import FakeTelegram

CANCELLED = "Nobody plays at this table any more"
CANCELLED_RU = "За этим столом больше никто не играет"


def texts(fake: FakeTelegram, chat: object) -> list[str]:
    return [m.text or m.caption or "" for m in fake.sent(chat)]  # type: ignore[arg-type]


# Unattended matches end ------------------------------------------------------------------


async def test_the_attackers_unattended_hard_match_ends_and_the_group_is_told(
        tmp_path: Path) -> None:
    """``/new teams tours=60``, three ``/add hard``, ``/go``, ``/leave``: today's recipe for
    computers that play for nobody, forever. The match is cancelled at once and the group is
    told in its own language; no computer thinks for it any more."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    eve = fake.user(2501, "Eve", language_code="ru")  # the group speaks its creator's language
    group = fake.group(-1002500, "Victims")
    async with running_bot(tmp_path, fake) as h:
        store = h.services.store
        eve.start_bot()
        await h.settle()
        eve.send(group, f"/new@{BOT} teams tours=60")
        await h.settle()
        for _ in range(3):
            eve.send(group, f"/add@{BOT} hard")
            await h.settle()
        eve.send(group, f"/go@{BOT}")
        await h.settle()
        row = await store.active_match(group.id)
        assert row is not None and row.settings.tour_count == 60, fake.describe()
        eve.send(group, f"/leave@{BOT}")
        await h.settle()
        assert (await store.get_match(row.match_id)).status is MatchStatus.ABANDONED
        assert await store.active_match(group.id) is None
        assert any(CANCELLED_RU in t for t in texts(fake, group)), fake.describe()
        assert any(CANCELLED_RU in t for t in texts(fake, eve))  # the player hears it too
        # Nothing plays on: no computer is scheduled or thinking, and no move is added.
        moves = (await store.get_match(row.match_id)).move_count
        await asyncio.sleep(0.3)
        await h.settle()
        assert (await store.get_match(row.match_id)).move_count == moves
        assert h.services.pacer.pending == 0
        assert h.services.thinker.running == 0 and h.services.thinker.queued == 0


async def test_a_match_ends_when_its_last_present_player_is_kicked_or_leaves(
        tmp_path: Path) -> None:
    """One absent player of two: the computer keeps the seat and the match goes on. The
    last present one leaving: nobody plays, so it ends."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(2511, "Ann"), fake.user(2512, "Bob")
    group = fake.group(-1002510, "Walkouts")
    async with running_bot(tmp_path, fake) as h:
        store = h.services.store
        for user in (ann, bob):
            user.start_bot()
        ann.send(group, f"/new@{BOT} teams")
        await h.settle()
        bob.send(group, f"/join@{BOT}")
        await h.settle()
        for _ in range(2):
            ann.send(group, f"/add@{BOT} easy")
            await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        row = await store.active_match(group.id)
        assert row is not None
        ann.send(group, f"/kick@{BOT} Bob")
        await h.settle()
        assert any("Bob was taken off" in t for t in texts(fake, group))
        assert (await store.get_match(row.match_id)).status is MatchStatus.ACTIVE
        assert not any(CANCELLED in t for t in texts(fake, group))
        ann.send(group, f"/leave@{BOT}")
        await h.settle()
        assert (await store.get_match(row.match_id)).status is MatchStatus.ABANDONED
        assert any(CANCELLED in t for t in texts(fake, group)), fake.describe()
        assert h.services.pacer.pending == 0


async def test_two_timeouts_of_the_only_player_cancel_the_match(tmp_path: Path) -> None:
    """The first timeout: the computer moves for the player. The second would hand the seat
    over with nobody left playing: the match is cancelled instead."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=60))
    ann = fake.user(2521, "Ann")
    group = fake.group(-1002520, "Sleepers")
    async with running_bot(tmp_path, fake, timer_tick=0.05) as h:
        store = h.services.store
        ann.start_bot()
        ann.send(group, f"/new@{BOT} duel timer=60 deal=short")
        await h.settle()
        ann.send(group, f"/add@{BOT} easy")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        row = await store.active_match(group.id)
        assert row is not None
        await fake.wait_for_message(group, "ran out of time", timeout=10)
        await fake.wait_for_message(group, CANCELLED, timeout=10)
        assert (await store.get_match(row.match_id)).status is MatchStatus.ABANDONED
        said = texts(fake, group)
        assert len([t for t in said if "ran out of time:" in t]) == 1
        assert not any("keeps the seat" in t for t in said)


# Caps --------------------------------------------------------------------------------------


async def test_matches_are_capped_per_person_and_per_chat(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(2531, "Ann"), fake.user(2532, "Bob")
    cid, dee = fake.user(2533, "Cid"), fake.user(2534, "Dee")
    g1, g2, g3 = (fake.group(-1002531, "One"), fake.group(-1002532, "Two"),
                  fake.group(-1002533, "Three"))
    forum = fake.group(-1001000002539, "Club", forum=True)
    async with running_bot(tmp_path, fake, max_matches_per_user=1,
                           max_matches_per_chat=2) as h:
        store = h.services.store
        for user in (ann, bob, cid, dee):
            user.start_bot()
        await h.settle()
        # Ann takes a seat at Cid's table first, then starts a match of her own.
        cid.send(g3, f"/new@{BOT} duel")
        await h.settle()
        ann.send(g3, f"/join@{BOT}")
        await h.settle()
        ann.send(g1, f"/new@{BOT} duel")
        await h.settle()
        ann.send(g1, f"/add@{BOT} easy")
        await h.settle()
        ann.send(g1, f"/go@{BOT}")
        await h.settle()
        assert await store.active_match(g1.id) is not None
        # At her cap: /new (in a group or privately) is refused politely, and nothing opens.
        ann.send(g2, f"/new@{BOT}")
        await h.settle()
        assert "You are already playing 1 match" in texts(fake, g2)[-1], fake.describe()
        assert await store.open_lobby(g2.id) is None
        ann.send(None, "/new")
        await h.settle()
        assert "You are already playing 1 match" in texts(fake, ann)[-1]
        assert await store.open_lobby(ann.id) is None
        # Join is refused too (the answer to her press), and she is not seated.
        bob.send(g2, f"/new@{BOT} duel")
        await h.settle()
        lobby = fake.sent(g2)[-1]
        query = ann.press(lobby, text="Join")
        await h.settle()
        assert "You are already playing 1 match" in (fake.answer(query).text or "")
        open_lobby = await store.open_lobby(g2.id)
        assert open_lobby is not None
        assert [s["user_id"] for s in open_lobby.state["seats"]] == [bob.id]
        # Start of the table she sat at before: refused, saying who is at the cap.
        cid.send(g3, f"/go@{BOT}")
        await h.settle()
        assert "Ann is already playing 1 match" in texts(fake, g3)[-1], fake.describe()
        assert await store.active_match(g3.id) is None
        # Per chat, the topics of a forum counted together.
        for user, topic in ((bob, 5), (cid, 7)):
            user.send(forum, f"/new@{BOT} duel", thread_id=topic)
            await h.settle()
            user.send(forum, f"/add@{BOT} easy", thread_id=topic)
            await h.settle()
            user.send(forum, f"/go@{BOT}", thread_id=topic)
            await h.settle()
            assert await store.active_match(forum.id, topic) is not None, fake.describe()
        dee.send(forum, f"/new@{BOT}", thread_id=9)
        await h.settle()
        refusal = fake.sent(forum)[-1]
        assert "This chat already has 2 matches being played" in (refusal.text or "")
        assert refusal.message_thread_id == 9
        assert await store.open_lobby(forum.id, 9) is None
        # When Ann's match is over, she may join again.
        ann.send(g1, f"/resign@{BOT}")
        await h.settle()
        assert await store.active_match(g1.id) is None
        query = ann.press(lobby, text="Join")
        await h.settle()
        assert fake.answer(query).text == "You are seated.", fake.describe()


# Decisions without the chat's lock ----------------------------------------------------------


class GatedDecide:
    """A decide function that waits until released: the position can move on meanwhile."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.calls: list[tuple[str, bool]] = []

    async def __call__(self, level: str, view: Any, seed: int, *,
                       urgent: bool = False) -> list[Action]:
        self.calls.append((level, urgent))
        self.started.set()
        await self.release.wait()
        return decide_turn(level, view, seed, 50.0)


ANN, BOB = Actor(1, "Ann", "en"), Actor(2, "Bob", "en")


@pytest.fixture
async def gated_flow() -> AsyncIterator[tuple[Flow, GatedDecide]]:
    store = await open_store(":memory:")
    gate = GatedDecide()
    yield Flow(store, Catalogs(), gate, bot_username="kbot"), gate
    gate.release.set()
    await store.close()


async def start_duel(flow: Flow, *args: str) -> tuple[int, dict[int, Actor]]:
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(-100, None, ANN, ["duel", *args], title="Duel")
    await flow.lobby_action(-100, None, BOB, "join")
    started = await flow.lobby_action(-100, None, ANN, "go")
    assert started.reply == "The match has started."
    row = await flow.store.active_match(-100)
    assert row is not None
    return row.match_id, {ANN.user_id: ANN, BOB.user_id: BOB}


async def test_a_timed_out_turn_thought_out_while_the_player_moved_is_dropped(
        gated_flow: tuple[Flow, GatedDecide]) -> None:
    flow, gate = gated_flow
    match_id, people = await start_duel(flow, "timer=60")
    stored = await flow.load(match_id)
    assert stored.game.tour.phase != ANNOUNCE
    seat, seq = stored.game.current_player, stored.next_seq
    mover = people[stored.row.seats[seat].user_id]  # type: ignore[index]
    timing_out = asyncio.create_task(flow.ticker.timeout(match_id, seq))
    await asyncio.wait_for(gate.started.wait(), 5)
    assert gate.calls == [("normal", True)]  # a person's turn: urgent
    # The chat's lock is free while the computer thinks: the player's move lands first.
    step = stored.game.legal_actions()[0]
    moved = await asyncio.wait_for(flow.play(match_id, mover, [step]), 5)
    assert moved.reply and moved.reply.startswith("✓"), moved.reply
    gate.release.set()
    assert await asyncio.wait_for(timing_out, 5) == []  # dropped: no "ran out of time"
    after = await flow.store.load_match(match_id)
    assert after.game.history == [step]  # the player's move only, once
    stand_in = (await flow.store.stand_ins(match_id)).get(seat)
    assert stand_in is None or (stand_in.timeouts == 0 and not stand_in.computer)


async def test_a_stand_in_move_thought_out_while_the_player_came_back_is_dropped(
        gated_flow: tuple[Flow, GatedDecide]) -> None:
    flow, gate = gated_flow
    match_id, people = await start_duel(flow)
    stored = await flow.load(match_id)
    seat, seq = stored.game.current_player, stored.next_seq
    mover = people[stored.row.seats[seat].user_id]  # type: ignore[index]
    await flow.ticker.hand_over(stored, seat, "left")
    assert (await flow.load(match_id)).row.status is MatchStatus.ACTIVE  # the other plays on
    thinking = asyncio.create_task(flow.computer_turn(match_id, seq))
    await asyncio.wait_for(gate.started.wait(), 5)
    assert gate.calls == [("normal", True)]  # the other person watches: urgent
    await asyncio.wait_for(flow.ticker.back(mover, [await flow.load(match_id)]), 5)
    step = (await flow.load(match_id)).game.legal_actions()[0]
    moved = await asyncio.wait_for(flow.play(match_id, mover, [step]), 5)
    assert moved.reply and moved.reply.startswith("✓"), moved.reply
    gate.release.set()
    outcome = await asyncio.wait_for(thinking, 5)
    assert outcome.notices == []
    assert len((await flow.store.load_match(match_id)).moves) == 1


async def test_two_decisions_for_one_computer_move_store_it_once(
        gated_flow: tuple[Flow, GatedDecide]) -> None:
    """The same computer move asked for twice (a restart's wake-up and the pacer): both
    think, the first is stored, the second finds the move made and is dropped."""
    flow, gate = gated_flow
    await flow.see_user(ANN, private=True)
    await flow.new_lobby(-200, None, ANN, ["duel"], title="Solo")
    await flow.lobby_action(-200, None, ANN, "add:easy")
    await flow.lobby_action(-200, None, ANN, "go")
    row = await flow.store.active_match(-200)
    assert row is not None
    stored = await flow.load(row.match_id)
    if stored.row.seats[stored.game.current_player].user_id is not None:
        step = stored.game.legal_actions()[0]
        await flow.play(row.match_id, ANN, [step])
        stored = await flow.load(row.match_id)
    seq, before = stored.next_seq, len(stored.game.history)
    seat = stored.game.current_player
    assert stored.row.seats[seat].user_id is None
    expected = decide_turn("easy", stored.game.observation(seat),
                           random.Random(f"{row.seed}:{seq}").randrange(2**32), 50.0)
    first = asyncio.create_task(flow.computer_turn(row.match_id, seq))
    second = asyncio.create_task(flow.computer_turn(row.match_id, seq))
    await asyncio.wait_for(gate.started.wait(), 5)
    await asyncio.sleep(0.01)
    assert len(gate.calls) == 2  # both think at once: no lock is held while thinking
    gate.release.set()
    outcomes = await asyncio.wait_for(asyncio.gather(first, second), 5)
    assert sum(1 for o in outcomes if o.notices) == 1
    after = await flow.store.load_match(row.match_id)
    assert after.game.history[before:] == expected  # the computer's turn, stored once


async def test_a_hint_is_urgent(gated_flow: tuple[Flow, GatedDecide]) -> None:
    flow, gate = gated_flow
    match_id, _ = await start_duel(flow)
    stored = await flow.load(match_id)
    seat = stored.game.current_player
    gate.release.set()
    notice = await flow.hint_notice(stored, seat, stored.row.seats[seat].user_id or 0)
    assert gate.calls == [("normal", True)] and "Suggestion" in notice.text


# The Thinker's priority -------------------------------------------------------------------


class SlowWork:
    """A fake decision that takes ``seconds`` of a worker thread and notes when it started."""

    def __init__(self, seconds: float = 0.05) -> None:
        self.seconds = seconds
        self.started: list[str] = []
        self._lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0

    def __call__(self, level: str, view: Any, seed: int, budget_ms: float) -> list[Action]:
        with self._lock:
            self.started.append(level)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        time.sleep(self.seconds)
        with self._lock:
            self.in_flight -= 1
        return []


async def test_urgent_requests_overtake_queued_background_ones() -> None:
    work = SlowWork()
    thinker = Thinker(workers=0, work=work)
    try:
        background = [asyncio.create_task(thinker.decide(f"bg{i}", None, 0))
                      for i in range(4)]
        await asyncio.sleep(0.01)
        assert thinker.queued == 3  # background work keeps one worker free
        urgent = [asyncio.create_task(thinker.decide(f"u{i}", None, 0, urgent=True))
                  for i in range(3)]
        await asyncio.gather(*background, *urgent)
    finally:
        thinker.close()
    order = work.started
    assert order[0] == "bg0"
    # Every urgent request started before the background ones that were queued before it.
    last_urgent = max(order.index(f"u{i}") for i in range(3))
    assert all(order.index(f"bg{i}") > last_urgent for i in (1, 2, 3)), order
    assert work.most_in_flight <= thinker.slots
    assert thinker.running == 0 and thinker.queued == 0


async def test_a_cancelled_request_gives_its_place_back() -> None:
    work = SlowWork(0.05)
    thinker = Thinker(workers=0, work=work)
    try:
        first = asyncio.create_task(thinker.decide("a", None, 0, urgent=True))
        second = asyncio.create_task(thinker.decide("b", None, 0, urgent=True))
        waiting = asyncio.create_task(thinker.decide("c", None, 0, urgent=True))
        await asyncio.sleep(0.01)
        assert thinker.running == 2 and thinker.queued == 1
        waiting.cancel()
        await asyncio.gather(first, second)
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert await thinker.decide("d", None, 0) == []
    finally:
        thinker.close()
    assert work.started == ["a", "b", "d"]
    assert thinker.running == 0 and thinker.queued == 0


async def test_background_work_uses_every_worker_but_one() -> None:
    work = SlowWork(0.03)
    thinker = Thinker(workers=0, work=work)
    try:
        await asyncio.gather(*(thinker.decide("bg", None, seed) for seed in range(4)))
    finally:
        thinker.close()
    assert thinker.slots == 2 and work.most_in_flight == 1


def test_the_caps_are_configured_from_the_environment(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from chat.config import load_config

    monkeypatch.delenv("KRENDZU_MAX_MATCHES_PER_USER", raising=False)
    monkeypatch.delenv("KRENDZU_MAX_MATCHES_PER_CHAT", raising=False)
    config = load_config(None)
    assert (config.max_matches_per_user, config.max_matches_per_chat) == (3, 5)
    (tmp_path / ".env").write_text("KRENDZU_MAX_MATCHES_PER_CHAT=8\n", encoding="utf-8")
    monkeypatch.setenv("KRENDZU_MAX_MATCHES_PER_USER", "1")
    config = load_config(tmp_path / ".env")
    assert (config.max_matches_per_user, config.max_matches_per_chat) == (1, 8)
