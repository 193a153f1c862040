"""Issue 40, a Swiss league over days, driven through the fake Bot API: seven people join the
league's post, three rounds are paired by score with a bye each round and never the same
pairing twice, each game is played in the players' private chats, one game misses its
round's deadline and the normal computer finishes it for the absent player (and the results
say so), and the final table's Buchholz and Sonneborn–Berger are checked by hand."""

from __future__ import annotations

import random
import re
from pathlib import Path

from storage import ArenaStatus, MatchStatus
from tests.bot_harness import BOT, FastClock, play_step_with_buttons, running_bot
from tests.fakebot import FakeTelegram
from tests.fakebot.model import Message

GAMES = "tours=2 deal=3/3 exchange=0 timer=off"
DAY = 24 * 3600.0


def league_post(fake: FakeTelegram, group: object) -> Message:
    posts = [m for m in fake.sent(group) if (m.text or "").startswith("🏆 Swiss league")]  # type: ignore[arg-type]
    assert posts, fake.describe()
    return posts[-1]


def by_hand(rounds: list[list[tuple[int, int | None, str]]], players: list[int]
            ) -> dict[int, tuple[float, float, float]]:
    """(points, Buchholz, Sonneborn–Berger) as docs/tournaments.md defines them, with a bye
    counted as a win against a virtual opponent of S + ½ (n − R) points."""
    n = len(rounds)
    points = {p: 0.0 for p in players}
    met: dict[int, list[tuple[int | None, float, float]]] = {p: [] for p in players}
    for number, games in enumerate(rounds, start=1):
        games = [g for g in games if g[2] != "void"]  # no result: as if not played
        for first, second, result in games:
            if result == "bye":
                virtual = points[first] + 0.5 * (n - number)
                met[first].append((None, 1.0, virtual))
                continue
            assert second is not None
            mine = {"first": 1.0, "second": 0.0, "draw": 0.5}[result]
            met[first].append((second, mine, 0.0))
            met[second].append((first, 1.0 - mine, 0.0))
        for first, second, result in games:
            if result == "bye":
                points[first] += 1.0
            else:
                assert second is not None
                mine = {"first": 1.0, "second": 0.0, "draw": 0.5}[result]
                points[first] += mine
                points[second] += 1.0 - mine
    out = {}
    for p in players:
        bh = sum(points[o] if o is not None else v for o, _, v in met[p])
        sb = sum((points[o] if o is not None else v) * s for o, s, v in met[p])
        out[p] = (points[p], bh, sb)
    return out


def figure(text: str) -> float:
    """2, 2½, 4¼ → a number."""
    whole = text.rstrip("¼½¾")
    return (float(whole) if whole else 0.0) + {"¼": 0.25, "½": 0.5, "¾": 0.75}.get(
        text[-1], 0.0)


async def test_a_swiss_league_of_seven_over_three_rounds_with_a_missed_deadline(
        tmp_path: Path) -> None:
    clock = FastClock(speed=1.0)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    names = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus"]
    users = [fake.user(6001 + i, name) for i, name in enumerate(names)]
    people = {u.id: u for u in users}
    group = fake.group(-6100, "League club", members=users)
    # Telegram's 30 calls a second overall, paced as in production (the harness lifts it).
    async with running_bot(tmp_path, fake, timer_tick=0.05, panels_in_group=True,
                           overall_rate=30.0) as h:
        store = h.services.store
        for user in users:
            user.start_bot()
        await h.settle()
        users[0].send(group, f"/swiss@{BOT} rounds=3 days=3 {GAMES}")
        await h.settle()
        post = league_post(fake, group)
        assert "3 rounds" in (post.text or "") and "every 24 h" in (post.text or "")
        join = next(b for b in post.buttons() if "Join" in b["text"])["callback_data"]
        for user in users:
            user.press(post, data=join)
            await h.settle()
        assert "7 players so far" in (league_post(fake, group).text or "")
        users[1].send(group, f"/swiss@{BOT} start")  # not the creator, not an admin
        await h.settle()
        assert "Only the league's creator" in (fake.last(group).text or "")  # type: ignore[union-attr]
        users[0].send(group, f"/swiss@{BOT} start")
        await h.settle()
        league = await store.latest_arena(group.id)
        assert league is not None and league.kind == "swiss" and league.round == 1
        rng = random.Random(11)
        rounds: list[list[tuple[int, int | None, str]]] = []
        for number in (1, 2, 3):
            games = [g for g in await store.arena_games(league.arena_id) if g.round == number]
            assert len(games) == 4 and len([g for g in games if g.result == "bye"]) == 1
            pairings = [m for m in fake.sent(group) if f"Round {number} of 3: the pairings"
                        in (m.text or "")]
            assert len(pairings) == 1, "one post of pairings a round"
            boards = [g for g in games if g.result != "bye"]
            for game in boards:
                assert game.second is not None
                told = [m for m in fake.sent(people[game.second])
                        if f"League round {number} of 3: you play" in (m.text or "")]
                assert len(told) == 1
            missed = boards[0] if number == 2 else None
            deserted = boards[0] if number == 3 else None
            for game in boards:
                if game is missed or game is deserted:
                    continue
                loser = people[max(game.first, game.second or 0)]
                loser.send(loser.chat, "/resign")
                await h.settle()
            if missed is not None:
                # Nobody plays the first board of round 2: its deadline passes, and the
                # computer finishes it for the player it waits for.
                assert missed.match_id is not None
                # With a quarter of the round left, its two players are reminded, once.
                clock.advance(0.8 * DAY)
                for _ in range(5):
                    await h.settle()
                for user_id in (missed.first, missed.second):
                    reminders = [m for m in fake.sent(people[user_id or 0])
                                 if "⏰ League round 2" in (m.text or "")]
                    assert len(reminders) == 1, fake.describe()
                assert not [m for u in users if u.id not in (missed.first, missed.second)
                            for m in fake.sent(u) if "⏰" in (m.text or "")]
                clock.advance(0.2 * DAY + 60)
                for _ in range(20):
                    await h.settle()
                    if any("deadline passed" in (m.text or "") for u in (missed.first,
                           missed.second) for m in fake.sent(people[u or 0])):
                        break
                stored = await h.services.flow.games.load(missed.match_id)
                stand_ins = await store.stand_ins(missed.match_id)
                assert any(s.computer for s in stand_ins.values()), fake.describe()
                present = next(stored.row.seats[s].user_id for s in (0, 1) if s not in
                               stand_ins)
                for _ in range(300):
                    if (await store.get_match(missed.match_id)).status is not \
                            MatchStatus.ACTIVE:
                        break
                    if not await play_step_with_buttons(h, people[present or 0], rng):
                        await h.settle()
                else:
                    raise AssertionError("the adjudicated game did not end")
            if deserted is not None:
                # Round 3's first board: both players are gone. The deadline hands the
                # absent side to the computer and puts the game on the clock; the other
                # side's timeouts hand it over too, and a game nobody plays has no result.
                assert deserted.match_id is not None
                clock.advance(DAY + 60)
                for _ in range(60):
                    await h.settle()
                    if (await store.get_match(deserted.match_id)).status is not \
                            MatchStatus.ACTIVE:
                        break
                    clock.advance(100)  # a turn timer's 90 s
                assert (await store.get_match(deserted.match_id)).status is not \
                    MatchStatus.ACTIVE, fake.describe()
            for _ in range(40):
                await h.settle()
                if any(f"Round {number} of 3: the results" in (m.text or "")
                       for m in fake.sent(group)):
                    break
            finished = [g for g in await store.arena_games(league.arena_id)
                        if g.round == number]
            rounds.append([(g.first, g.second, str(g.result)) for g in finished])
            results = next(m.text or "" for m in fake.sent(group)
                           if f"Round {number} of 3: the results" in (m.text or ""))
            if number == 2:
                assert "(finished by the computer)" in results, results
            if number == 3:
                assert "no result (both absent)" in results, results
                assert [r for _, _, r in rounds[-1]].count("void") == 1, rounds[-1]
        ended = await store.get_arena(league.arena_id)
        assert ended is not None and ended.status is ArenaStatus.FINISHED
        # No pairing twice; each bye to a different player.
        pairs = [frozenset((a, b)) for games in rounds for a, b, r in games if r != "bye"]
        assert len(pairs) == len(set(pairs)) == 9  # the void one among them: never again
        byes = [a for games in rounds for a, _, r in games if r == "bye"]
        assert len(set(byes)) == 3
        # The final table, against the hand computation.
        expected = by_hand(rounds, [u.id for u in users])
        final = next(m.text or "" for m in fake.sent(group)
                     if "The league is over. The final table" in (m.text or ""))
        pattern = re.compile(r"\d+\. (\w+) — ([\d¼½¾]+) \(Buchholz ([\d¼½¾]+), SB ([\d¼½¾]+)\)")
        shown = {m.group(1): tuple(figure(x) for x in m.groups()[1:])
                 for m in pattern.finditer(final)}
        assert len(shown) == 7, final
        for user in users:
            assert shown[user.first_name] == expected[user.id], (user.first_name, final)
        order = [m.group(1) for m in pattern.finditer(final)]
        ranked = sorted(users, key=lambda u: (-expected[u.id][0], -expected[u.id][1],
                                               -expected[u.id][2]))
        assert [expected[u.id] for u in ranked] == [expected[people_by(users, n)]
                                                    for n in order]
        # The group saw only posts of the league: never a board, never a card.
        assert not [m for m in fake.sent(group) if m.kind == "photo"]
        assert not [m for m in fake.sent(group) if any(
            suit in (m.text or "") for suit in "♠♥♦♣")]
        assert not fake.rate_limited(group)
        users[3].send(group, f"/history@{BOT}")
        await h.settle()
        history = fake.last(group).text or ""  # type: ignore[union-attr]
        assert "🏆 Swiss league of" in history and "(over)" in history, history
        assert f"🥇 {order[0]}" in history, history


def people_by(users: list, name: str) -> int:
    return next(u.id for u in users if u.first_name == name)
