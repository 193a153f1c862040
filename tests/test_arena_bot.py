"""Issue 40, an arena in a group, driven through the fake Bot API as a group would use it:
``/arena``, Join / Pause / Start on the one arena post, games paired continuously and played
each in the players' private chats, a streak that doubles, a pause, a join mid-way through
the post's private-chat link, the end with the podium and the full table. The standings are
checked against a hand computation of the games' results, and the group never goes above
its window."""

from __future__ import annotations

import random
import re
from pathlib import Path

from krendzu import Card
from storage import ArenaStatus, MatchStatus
from tests.bot_harness import BOT, FastClock, play_out_with_buttons, running_bot
from tests.fakebot import FakeTelegram
from tests.fakebot.model import FakeUser, Message

HAND = re.compile(r"Your hand \(\d+ cards?\): (.+)")
GAMES = "tours=2 deal=3/3 exchange=0 timer=off"


def arena_post(fake: FakeTelegram, group: object) -> Message:
    posts = [m for m in fake.sent(group) if "🏟 Arena" in (m.text or "")]  # type: ignore[arg-type]
    assert posts, fake.describe()
    return posts[-1]


def arena_button(message: Message, marker: str) -> dict:
    return next(b for b in message.buttons() if marker in b["text"])


def hand_scores(results: list[tuple[int, int | None, str]], players: list[int]
                ) -> dict[int, int]:
    """The arena's points written out again: 2 a win, 1 a draw, and after two wins in a
    row every further win 4, until a game that is not a win."""
    score = {p: 0 for p in players}
    run = {p: 0 for p in players}
    for first, second, result in results:
        for me, other_won in ((first, result == "second"), (second, result == "first")):
            if me is None:
                continue
            if result == "draw":
                score[me] += 1
                run[me] = 0
            elif other_won:
                run[me] = 0
            else:
                score[me] += 4 if run[me] >= 2 else 2
                run[me] += 1
    return score


async def play_round(h: object, arena_id: int, people: dict[int, FakeUser],
                     winner_first: int) -> int:
    """End the arena games running now: whoever is not ``winner_first`` (when playing), or
    else the higher id, resigns in their private chat. How many games ended."""
    store = h.services.store  # type: ignore[attr-defined]
    running = [g for g in await store.arena_games(arena_id)
               if g.result is None and g.match_id is not None]
    for game in running:
        ids = [game.first, game.second]
        loser = max(i for i in ids if i != winner_first) if winner_first in ids else max(ids)
        people[loser].send(people[loser].chat, "/resign")
        await h.settle()  # type: ignore[attr-defined]
        assert (await store.get_match(game.match_id)).status is not MatchStatus.ACTIVE
    return len(running)


async def test_an_arena_of_six_for_twenty_minutes_with_pauses_joins_and_a_streak(
        tmp_path: Path) -> None:
    clock = FastClock(speed=1.0)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    names = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay"]
    users = [fake.user(5001 + i, name, username=f"{name.lower()}_handle")
             for i, name in enumerate(names)]
    ann, bob, _cid, dan, eve, fay = users
    group = fake.group(-5100, "Arena club", members=users)
    # Telegram's 30 calls a second overall, paced as in production (the harness lifts it).
    async with running_bot(tmp_path, fake, timer_tick=0.05, panels_in_group=True,
                           overall_rate=30.0) as h:
        store = h.services.store
        for user in users[:5]:  # Fay has never opened the private chat
            user.start_bot()
        await h.settle()
        ann.send(group, f"/arena@{BOT} 20m {GAMES}")
        await h.settle()
        post = arena_post(fake, group)
        assert "20 min" in (post.text or "") and "Nobody has joined yet" in (post.text or "")
        arena = await store.latest_arena(group.id)
        assert arena is not None and arena.status is ArenaStatus.LOBBY
        for user in users[:5]:
            user.press(post, data=arena_button(post, "Join")["callback_data"])
            await h.settle()
        # Fay cannot be written to: she is sent to the private chat, not seated.
        fay.press(post, data=arena_button(post, "Join")["callback_data"])
        await h.settle()
        assert [e.user_id for e in await store.arena_entries(arena.arena_id)] == \
            [u.id for u in users[:5]]
        # Only the creator (or an admin) starts it.
        bob.press(post, data=arena_button(post, "Start")["callback_data"])
        await h.settle()
        assert (await store.get_arena(arena.arena_id)).status is ArenaStatus.LOBBY  # type: ignore[union-attr]
        ann.press(post, data=arena_button(post, "Start")["callback_data"])
        await h.settle()
        assert (await store.get_arena(arena.arena_id)).status is ArenaStatus.RUNNING  # type: ignore[union-attr]
        people = {u.id: u for u in users}
        # Round 1: five waiting, two duels; Ann wins whatever she plays.
        games = await store.arena_games(arena.arena_id)
        assert len(games) == 2 and all(g.second is not None for g in games)
        assert await play_round(h, arena.arena_id, people, ann.id) == 2
        clock.advance(60)
        await h.settle()
        # Eve pauses; Fay opens the private chat through the post's link, which joins her.
        eve.press(post, data=arena_button(post, "Pause")["callback_data"])
        await h.settle()
        link = arena_button(arena_post(fake, group), "private chat")["url"]
        payload = re.search(r"start=(a\d+)", link)
        assert payload is not None
        fay.start_bot(payload.group(1))
        await h.settle()
        assert fay.id in [e.user_id for e in await store.arena_entries(arena.arena_id)]
        # More rounds: Ann keeps winning (a streak: her third win counts 4).
        for _ in range(4):
            clock.advance(60)
            await h.settle()
            await play_round(h, arena.arena_id, people, ann.id)
        # One game played out with the panels' buttons, as people play.
        clock.advance(60)
        await h.settle()
        running = [g for g in await store.arena_games(arena.arena_id)
                   if g.result is None and g.match_id is not None]
        assert running, fake.describe()
        game = running[0]
        # Where this game's messages begin for each player: at their newest "Arena game".
        begun = {u: len([x for x in fake.sent(people[u]) if (x.text or "").startswith(
            "🏟 Arena game:")]) - 1 for u in (game.first, game.second) if u is not None}
        await play_out_with_buttons(h, [people[game.first], people[game.second]],  # type: ignore[index]
                                    game.match_id, random.Random(5))  # type: ignore[arg-type]
        # The leak scan: each player of that game was shown only hands within their own deal.
        assert game.match_id is not None
        played = await h.services.flow.games.load(game.match_id)
        for user_id in (game.first, game.second):
            seat = played.row.seat_of(user_id)
            assert seat is not None and user_id is not None
            dealt = [{Card(c) for c in tour.initial_hands[seat]} for tour in played.game.tours]
            seen = [x.text or x.caption or "" for x in fake.sent(people[user_id])]
            starts = [i for i, x in enumerate(seen) if x.startswith("🏟 Arena game:")]
            begin = starts[begun[user_id]]
            end = next((i for i in starts if i > begin), len(seen))
            hands = [{Card.parse(c) for c in m.group(1).split()}
                     for m in (HAND.search(x) for x in seen[begin:end]) if m]
            assert hands and all(any(hand <= mine for mine in dealt) for hand in hands)
        await play_round(h, arena.arena_id, people, ann.id)
        # The end: twenty minutes after the start.
        clock.advance(20 * 60)
        for _ in range(40):
            await h.settle()
            if (await store.get_arena(arena.arena_id)).status is ArenaStatus.FINISHED:  # type: ignore[union-attr]
                break
        await h.settle()  # the podium is drawn and sent after the arena is marked over
        ended = await store.get_arena(arena.arena_id)
        assert ended is not None and ended.status is ArenaStatus.FINISHED
        games = await store.arena_games(arena.arena_id)
        results = [(g.first, g.second, g.result) for g in sorted(
            (g for g in games if g.result not in (None, "void")),
            key=lambda g: (g.finished_at or 0.0, g.game_id))]
        assert len(results) >= 6
        # Nobody met the same opponent twice in a row while others were free, and Eve
        # played no game after her pause.
        entries = await store.arena_entries(arena.arena_id)
        expected = hand_scores(results, [e.user_id for e in entries])  # type: ignore[arg-type]
        assert expected[ann.id] == max(expected.values())
        ann_games = [r for r in results if ann.id in (r[0], r[1])]
        assert len(ann_games) >= 3 and expected[ann.id] > 2 * len(ann_games), \
            "Ann's streak doubled her later wins"
        final = [m for m in fake.sent(group) if "The arena is over. The podium" in
                 (m.caption or m.text or "")]
        assert len(final) == 1 and final[0].kind == "photo", fake.describe()
        full = arena_post(fake, group).text or ""
        for user_id, points in expected.items():
            line = next(x for x in full.splitlines() if people[user_id].first_name in x
                        and "—" in x)
            assert f"— {points} (" in line, (line, points)
        ranked = [x for x in full.splitlines() if re.match(r"\d+\. ", x)]
        assert ranked[0].startswith("1. Ann")
        assert not arena_post(fake, group).buttons(), "an arena over has no buttons"
        # Every arena game counts in the group's statistics and in the ratings.
        for user_id in {p for r in results for p in r[:2] if p is not None}:
            stats = await store.user_stats(user_id, group.id)
            assert stats is not None and stats.matches >= 1
        assert set(await store.ratings_of([ann.id, bob.id])) == {ann.id, bob.id}
        # The group saw one post and its edits, the podium, no board; never above its window.
        assert not fake.rate_limited(group)
        assert fake.max_sends_in_window(group, edits=True) <= 20
        assert not [m for m in fake.sent(group) if m.kind == "photo" and "podium" not in
                    (m.caption or "")]
        # The group never saw a card; nothing was sent to a game's own chat; no username
        # reached anyone.
        assert not [m for m in fake.sent(group) if any(
            suit in (m.text or m.caption or "") for suit in "♠♥♦♣")]
        game_chats = {(await store.get_match(g.match_id)).chat_id for g in games if g.match_id}
        assert not [c for c in fake.calls if c.chat_id in game_chats]
        for user in users:
            for message in fake.sent(user):
                text = message.text or message.caption or ""
                assert not any(f"{n.lower()}_handle" in text for n in names)
        # /arena shows the table at any time, also once the arena is over.
        dan.send(group, f"/arena@{BOT}")
        await h.settle()
        assert "1. Ann" in (arena_post(fake, group).text or "")
        # /history keeps the arena's result: its podium.
        dan.send(group, f"/history@{BOT}")
        await h.settle()
        history = fake.last(group).text or ""  # type: ignore[union-attr]
        assert "🏟 Arena of" in history and "(over)" in history, history
        assert f"🥇 Ann {expected[ann.id]}" in history, history
