"""Issue 40's arena through the flow (no Telegram): bad words change nothing, one arena a
person, the computer only when asked for, the games in progress linked from the post, and an
arena that carries on from its store after a restart."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from chat.computer import Thinker
from chat.flow import Actor, Flow
from chat.flow.views.webapp import AppLinks
from chat.i18n import Catalogs
from chat.notices import Send, ShowLobby
from storage import ArenaStatus, SeatKind, Store, open_store

GROUP, OTHER = -700, -800


class Clock:
    """The flow's clock, from now on (the store notes its own times with the real one)."""

    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def store() -> AsyncIterator[Store]:
    s = await open_store(":memory:")
    for uid, name in ((1, "Ann"), (2, "Bob"), (3, "Cid")):
        await s.upsert_user(uid, name, language="en", can_write_privately=True)
    await s.upsert_user(4, "Dee", language="en")  # never opened the private chat
    yield s
    await s.close()


def make_flow(store: Store, clock: Clock, app: AppLinks | None = None) -> Flow:
    return Flow(store, Catalogs(), Thinker(workers=0).decide, bot_username="kbot", clock=clock,
                app_links=app)


def actor(uid: int) -> Actor:
    return Actor(uid, {1: "Ann", 2: "Bob", 3: "Cid", 4: "Dee"}[uid])


async def test_bad_words_are_answered_and_create_nothing(store: Store) -> None:
    flow = make_flow(store, Clock())
    for words, said in ((["2m"], "from 5 minutes"), (["in=soon"], "in=10m"),
                        (["teams"], "duels"), (["tours=3"], "cannot be played"),
                        (["start"], "No arena is on here")):
        out = await flow.arenas.command(GROUP, None, actor(1), words, is_admin=False)
        assert said in (out.reply or ""), (words, out.reply)
        assert not out.notices
    assert await store.latest_arena(GROUP) is None
    out = await flow.arenas.command(GROUP, None, actor(1), [], is_admin=False)
    assert "No arena here yet" in (out.reply or "")
    # A second arena in the same group is refused while the first is not over.
    await flow.arenas.command(GROUP, None, actor(1), ["10m"], is_admin=False)
    out = await flow.arenas.command(GROUP, None, actor(2), ["10m"], is_admin=False)
    assert "already" in (out.reply or "")


async def test_one_arena_a_person_and_the_private_chat_first(store: Store) -> None:
    flow = make_flow(store, Clock())
    await flow.arenas.command(GROUP, None, actor(1), ["10m"], is_admin=False)
    await flow.arenas.command(OTHER, None, actor(2), ["10m"], is_admin=False)
    here, there = await store.latest_arena(GROUP), await store.latest_arena(OTHER)
    assert here is not None and there is not None
    assert "You are in" in ((await flow.arenas.join(here.arena_id, actor(1))).reply or "")
    assert "one at a time" in ((await flow.arenas.join(there.arena_id, actor(1))).reply or "")
    assert "already" in ((await flow.arenas.join(here.arena_id, actor(1))).reply or "")
    refused = await flow.arenas.join(here.arena_id, actor(4))
    assert "My private chat" in (refused.reply or "") and not refused.notices
    assert [e.user_id for e in await store.arena_entries(here.arena_id)] == [1]
    assert [e.user_id for e in await store.arena_entries(there.arena_id)] == []
    # Only the creator (or an admin) starts it.
    assert "Only" in ((await flow.arenas.press_start(here.arena_id, actor(2),
                                                     is_admin=False)).reply or "")
    assert "started" in ((await flow.arenas.press_start(here.arena_id, actor(2),
                                                        is_admin=True)).reply or "")
    again = await flow.arenas.command(GROUP, None, actor(1), ["start"], is_admin=False)
    assert again.reply == "The arena is on already." and not again.notices


async def test_a_lone_player_meets_the_computer_only_when_the_arena_allows_it(
        store: Store) -> None:
    clock = Clock()
    flow = make_flow(store, clock)
    await flow.arenas.command(GROUP, None, actor(1), ["10m", "deal=3/3"], is_admin=False)
    await flow.arenas.command(OTHER, None, actor(2), ["10m", "deal=3/3", "bots=on"],
                              is_admin=False)
    plain, bots = await store.latest_arena(GROUP), await store.latest_arena(OTHER)
    assert plain is not None and bots is not None
    await flow.arenas.join(plain.arena_id, actor(1))
    await flow.arenas.join(bots.arena_id, actor(2))
    await flow.arenas.command(GROUP, None, actor(1), ["start"], is_admin=False)
    await flow.arenas.command(OTHER, None, actor(2), ["start"], is_admin=False)
    clock.now += 60
    await flow.arenas.tick_all()
    assert await store.arena_games(plain.arena_id) == []
    games = await store.arena_games(bots.arena_id)
    assert len(games) == 1 and games[0].second is None and games[0].match_id is not None
    row = await store.get_match(games[0].match_id)
    assert [s.kind for s in row.seats] == [SeatKind.HUMAN, SeatKind.COMPUTER]


async def test_the_post_links_the_games_in_progress_and_a_restart_carries_on(
        store: Store) -> None:
    clock = Clock()
    app = AppLinks(b"k" * 32, "https://krendzu.example", "kbot", "play")
    flow = make_flow(store, clock, app)
    await flow.arenas.command(GROUP, None, actor(1), ["10m", "deal=3/3"], is_admin=False)
    arena = await store.latest_arena(GROUP)
    assert arena is not None
    for uid in (1, 2):
        await flow.arenas.join(arena.arena_id, actor(uid))
    started = (await flow.arenas.command(GROUP, None, actor(1), ["start"],
                                         is_admin=False)).notices
    posts = [n for n in started if isinstance(n, ShowLobby) and n.arena]
    assert posts and any("t.me/kbot/play?startapp=" in (b.url or "")
                         for row in posts[-1].keyboard or [] for b in row)
    games = await store.arena_games(arena.arena_id)
    assert len(games) == 1
    told = [n for n in started if isinstance(n, Send) and n.chat_id in (1, 2)]
    assert {n.chat_id for n in told if "Arena game" in n.text} == {1, 2}
    # Without the Mini App, no link; and a new flow on the same store (a restart) takes the
    # game's end and pairs the next one.
    again = make_flow(store, clock)
    assert games[0].match_id is not None
    await store.concede_match(games[0].match_id, 1)  # Bob (the second seat) resigns
    clock.now += 30
    await again.arenas.tick_all()
    games = await store.arena_games(arena.arena_id)
    assert [g.result for g in games] == ["first", None]
    assert (await store.get_arena(arena.arena_id)).status is ArenaStatus.RUNNING  # type: ignore[union-attr]
    post = await again.arenas.post(await store.get_arena(arena.arena_id))  # type: ignore[arg-type]
    assert not any("startapp" in (b.url or "") for row in post.keyboard or [] for b in row)
    assert "Ann beat Bob (+2)" in post.text
    # The end comes with its time, once, whichever flow ticks.
    clock.now += 11 * 60
    ended = await again.arenas.tick_all() + await flow.arenas.tick_all()
    assert len([n for n in ended if isinstance(n, Send) and "podium" in n.text]) == 1
    # The game still played is no longer counted, and its players are told so.
    assert {n.chat_id for n in ended if isinstance(n, Send)
            and "no longer counts" in n.text} == {1, 2}


async def test_a_flood_of_arena_commands_costs_one_message(store: Store) -> None:
    clock = Clock()
    flow = make_flow(store, clock)
    await flow.arenas.command(GROUP, None, actor(1), ["10m"], is_admin=False)
    arena = await store.latest_arena(GROUP)
    assert arena is not None
    await store.update_arena(arena.arena_id, message_id=55)
    shown = [(await flow.arenas.command(GROUP, None, actor(2), [], is_admin=False)).notices[0]
             for _ in range(5)]
    assert [isinstance(n, ShowLobby) and n.message_id for n in shown] == [None] + [55] * 4
    clock.now += 61
    again = (await flow.arenas.command(GROUP, None, actor(2), [], is_admin=False)).notices[0]
    assert isinstance(again, ShowLobby) and again.message_id is None


async def test_an_arena_nobody_starts_is_given_up_after_a_day(store: Store) -> None:
    clock = Clock()
    flow = make_flow(store, clock)
    await flow.arenas.command(GROUP, None, actor(1), ["10m"], is_admin=False)
    await flow.leagues.command(OTHER, None, actor(2), ["rounds=3"], is_admin=False)
    await flow.arenas.join((await store.latest_arena(GROUP)).arena_id, actor(1))  # type: ignore[union-attr]
    clock.now += 3600
    assert await flow.arenas.tick_all() == []  # nothing changed: the post is left alone
    clock.now += 23 * 3600 + 60
    ended = await flow.arenas.tick_all() + await flow.leagues.tick_all()
    assert [(await store.latest_arena(chat)).status for chat in (GROUP, OTHER)] == [  # type: ignore[union-attr]
        ArenaStatus.FINISHED, ArenaStatus.FINISHED]
    assert not [n for n in ended if isinstance(n, Send) and "podium" in n.text]
    assert len([n for n in ended if isinstance(n, ShowLobby)]) == 2
    out = await flow.arenas.command(GROUP, None, actor(1), ["10m"], is_admin=False)
    assert out.notices, "the group may make another"
