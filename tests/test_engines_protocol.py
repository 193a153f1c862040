"""The engine protocol under attack and under the microscope (issue 31): an engine driven
by hand over real HTTP (stolen and wrong tokens, another engine's game, illegal, stale,
doubled and malformed moves, a flood), an engine that never answers (the stand-in moves at
its timer), and a whole match with the exchange whose every stream line is replayed against
the stored record: no line carries a card its seat may not see."""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest

import chat.engines_api as engines_api
from chat.throttle import Buckets
from krendzu.viewjson import view_to_json
from storage import MatchStatus, rebuild_game
from tests.bot_harness import BOT, FastClock, Harness, running_bot
from tests.fakebot import Chat, FakeTelegram, FakeUser
from tests.test_engines_e2e import engine_config, register
from tests.webhook_harness import free_port

CARD = re.compile(r"(?<![A-Za-z0-9])(?:[6-9TJQKA]|10)[CDHS](?![A-Za-z0-9])")


class Engine:
    """An engine played by the test over HTTP."""

    def __init__(self, port: int, token: str) -> None:
        self.base = f"http://127.0.0.1:{port}/api/engine/v1"
        self.client = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                        timeout=10.0)
        self.lines: list[dict[str, Any]] = []
        self.changed = asyncio.Event()

    async def follow(self, game_id: int) -> None:
        async with self.client.stream("GET", f"{self.base}/game/{game_id}/stream",
                                      timeout=httpx.Timeout(10.0, read=60.0)) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line.strip():
                    self.lines.append(json.loads(line))
                    self.changed.set()

    async def state(self, predicate: Any, seconds: float = 20.0) -> dict[str, Any]:
        """The newest state once it satisfies ``predicate``."""
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while loop.time() < end:
            if self.lines and predicate(self.lines[-1]):
                return self.lines[-1]
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), max(0.01, end - loop.time()))
            except TimeoutError:
                break
        raise AssertionError(f"no such state; last: {self.lines[-1:]}")

    async def move(self, game_id: int, move: Any, seq: Any) -> httpx.Response:
        return await self.client.post(f"{self.base}/game/{game_id}/move",
                                      json={"move": move, "seq": seq})


@asynccontextmanager
async def engine_match(tmp_path: Path, args: str = "duel deal=short", *,
                       speed: float = 30.0, computers: int = 0, **changes: object
                       ) -> AsyncIterator[tuple[Harness, FakeUser, Chat, Engine, int, str]]:
    """A group duel between Ann and her engine "Hx" (followed on its game stream); also the
    token of Bob's engine "Other"."""
    port = free_port()
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=speed))
    ann = fake.user(61, "Ann")
    bob = fake.user(62, "Bob")
    group = fake.group(-100761, "Hostile")
    async with running_bot(tmp_path, fake, **engine_config(port), **changes) as h:
        for user in (ann, bob):
            user.start_bot()
        await h.settle()
        token = await register(h, ann, "Hx")
        other = await register(h, bob, "Other")
        ann.send(group, f"/new@{BOT} {args}")
        await h.settle()
        ann.send(group, f"/add@{BOT} @Hx")
        await h.settle()
        for _ in range(computers):
            ann.send(group, f"/add@{BOT} easy")
            await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        row = await h.services.store.active_match(group.id)
        assert row is not None, fake.describe()
        engine = Engine(port, token)
        follower = asyncio.create_task(engine.follow(row.match_id))
        try:
            yield h, ann, group, engine, row.match_id, other
        finally:
            follower.cancel()
            await engine.client.aclose()


async def test_hostile_engines_get_clear_errors_and_nothing_is_stored_twice(
        tmp_path: Path) -> None:
    async with engine_match(tmp_path) as (h, ann, group, engine, game, other):
        store = h.services.store
        full = await engine.state(lambda s: s["type"] == "gameFull")
        assert full["id"] == game and full["table"] == "duel" and full["seat"] == 1
        assert full["players"] == ["Ann", "🤖 Hx"]
        # Wrong and stolen tokens, other people's games.
        async with httpx.AsyncClient() as stranger:
            for header in ({"Authorization": "Bearer stolen"}, {}):
                answer = await stranger.post(f"{engine.base}/game/{game}/move",
                                             json={"move": "pass", "seq": 1}, headers=header)
                assert answer.status_code == 401 and answer.json()["code"] == "bad_token"
            thief = {"Authorization": f"Bearer {other}"}
            for path in (f"game/{game}/stream", f"game/{game}/move", f"game/{game}/resign"):
                method = "GET" if path.endswith("stream") else "POST"
                answer = await stranger.request(method, f"{engine.base}/{path}", headers=thief,
                                                json={"move": "pass", "seq": 1})
                assert answer.status_code == 404 and answer.json()["code"] == "unknown_game"
        for bad_id in ("999", "abc", "-1"):
            answer = await engine.move(bad_id, "pass", 1)  # type: ignore[arg-type]
            assert answer.json()["code"] == "unknown_game"
        # Whose turn: the engine waits for Ann's move if she opens.
        if not full["myTurn"]:
            answer = await engine.move(game, "pass", full["seq"])
            assert answer.status_code == 409 and answer.json()["code"] == "not_your_turn"
            await play_until_engine_turn(h, ann, engine)
        state = await engine.state(lambda s: s["myTurn"])
        seq = state["seq"]
        before = len((await store.load_match(game)).moves)
        for body in ({"move": "QC M12"}, {"move": 5, "seq": seq}, {"seq": seq},
                     {"move": "pass", "seq": True}):
            answer = await engine.client.post(f"{engine.base}/game/{game}/move", json=body)
            assert answer.status_code == 400 and answer.json()["code"] == "malformed", body
        answer = await engine.client.post(f"{engine.base}/game/{game}/move", content=b"{nope")
        assert answer.json()["code"] == "malformed"
        for stale in (seq - 1, seq + 1, 0):
            answer = await engine.move(game, state["legal"][0], stale)
            assert answer.status_code == 409 and answer.json()["code"] == "stale"
        not_held = next(c for c in ("AS", "AH", "AD", "AC", "KS", "KH")
                        if c not in state["hand"])
        # Two illegal moves (a third in this turn would bring the stand-in: see
        # test_illegal_moves_bring_the_stand_in_at_once).
        for words in (f"{not_held} M13", "hello world"):
            answer = await engine.move(game, words, seq)
            assert answer.status_code in (400, 422), words
            assert answer.json()["code"] == "illegal_move"
            assert answer.json()["message"]
        assert len((await store.load_match(game)).moves) == before  # nothing stored
        # The same move sent twice at once, then once more: stored once.
        answers = await asyncio.gather(*(engine.move(game, state["legal"][0], seq)
                                         for _ in range(2)))
        assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
        again = await engine.move(game, state["legal"][0], seq)  # doubled
        assert again.status_code == 409 and again.json()["code"] in ("stale", "not_your_turn")
        after = (await store.load_match(game)).moves
        assert len(after) > before
        assert len({m.seq for m in after}) == len(after)
        # A flood of requests: refused with rate_limited, the bot unharmed.
        api = h.app.bot_data["engine_server"][2]
        api.buckets = Buckets(30)
        codes = [(await engine.move(game, "pass", 0)).json()["code"] for _ in range(60)]
        assert "rate_limited" in codes and codes.count("rate_limited") >= 25
        assert (await store.get_match(game)).status is MatchStatus.ACTIVE
        del group


async def test_an_engine_move_in_the_scaled_mode_is_accepted(tmp_path: Path,
                                                            pg_url: str) -> None:
    """On PostgreSQL with announcement jobs a move's notices are the job's: the engine's
    legal move is answered 200 (not ``stale``) and stored once."""
    from chat.flow import Actor

    async with engine_match(tmp_path, database=pg_url, jobs=True) as (
            h, ann, _group, engine, game, _other):
        flow = h.services.flow
        await engine.state(lambda s: s["type"] == "gameFull")
        for _ in range(4):  # Ann's turn first, if she opens (through the flow: no worker
            stored = await flow.load(game)  # here announces her move to her panel)
            if stored.game.current_player != 0:
                break
            await flow.play(game, Actor(ann.id, "Ann", "en"), [stored.game.legal_actions()[0]])
        state = await engine.state(lambda s: s["myTurn"])
        before = len((await h.services.store.load_match(game)).moves)
        answer = await engine.move(game, state["legal"][0], state["seq"])
        assert answer.status_code == 200, answer.text
        assert answer.json()["ok"] is True
        assert len((await h.services.store.load_match(game)).moves) == before + 1


async def play_until_engine_turn(h: Harness, ann: FakeUser, engine: Engine) -> None:
    from tests.bot_harness import panel, play_step_with_buttons

    rng = random.Random(5)
    for _ in range(20):
        if engine.lines and engine.lines[-1]["myTurn"]:
            return
        if panel(h.fake, ann) is not None:
            await play_step_with_buttons(h, ann, rng)
        else:
            await asyncio.sleep(0.05)


async def test_illegal_moves_bring_the_stand_in_at_once(tmp_path: Path) -> None:
    """An engine that only sends illegal moves: the third in one turn makes the stand-in
    move for it at once (the timer is 15 minutes of the table's time), the group is told, and
    it counts as a timeout; nothing illegal is stored."""
    async with engine_match(tmp_path, "duel deal=short timer=900") as (
            h, ann, group, engine, game, _other):
        store = h.services.store
        await play_until_engine_turn(h, ann, engine)
        waiting = await engine.state(lambda s: s["myTurn"])
        before = len((await store.load_match(game)).moves)
        not_held = next(c for c in ("AS", "AH", "AD", "AC", "KS", "KH")
                        if c not in waiting["hand"])
        answers = [await engine.move(game, words, waiting["seq"])
                   for words in ("QC ZZ99", "x" * 500, f"{not_held} M13")]
        assert [a.json()["code"] for a in answers] == ["illegal_move"] * 3
        assert "computer moved for you" not in answers[1].json()["message"]
        assert "computer moved for you" in answers[2].json()["message"]
        # 10 real seconds are 300 of the table's (FastClock at 30x): a third of the timer.
        await engine.state(lambda s: s["seq"] > waiting["seq"], seconds=10)
        stored = await store.load_match(game)
        assert len(stored.moves) > before
        assert len({m.seq for m in stored.moves}) == len(stored.moves)
        assert (await store.stand_ins(game))[1].timeouts == 1
        assert any("sent only illegal moves" in (m.text or "") for m in h.fake.sent(group))
        # The deadline never came: the stand-in moved at the third illegal move.
        timer = await store.timer_of(game)
        assert timer is not None and timer.seconds == 900


async def test_an_engine_that_never_answers_is_played_for_at_its_timer(
        tmp_path: Path) -> None:
    async with engine_match(tmp_path, "duel deal=short timer=30", speed=60.0,
                            timer_tick=0.05) as (h, ann, group, engine, game, _other):
        store = h.services.store
        await play_until_engine_turn(h, ann, engine)
        waiting = await engine.state(lambda s: s["myTurn"])
        assert waiting["deadline"] is not None
        # The engine stays silent: within its 30 s (half a real second here) the stand-in
        # moves for it, and the group is told.
        moved = await engine.state(lambda s: s["seq"] > waiting["seq"], seconds=15)
        assert moved["moves"] >= waiting["moves"] + 1
        stand_ins = await store.stand_ins(game)
        assert stand_ins[1].timeouts >= 1
        assert any("ran out of time" in (m.text or "") for m in h.fake.sent(group))
        # A late answer for the old position is refused, never applied to the new one.
        late = await engine.move(game, waiting["legal"][0], waiting["seq"])
        assert late.json()["code"] in ("stale", "game_over")
        # Cut off and back: a fresh stream starts with a gameFull of the current position.
        again = Engine(int(engine.base.split(":")[2].split("/")[0]),
                       engine.client.headers["authorization"].split()[1])
        follower = asyncio.create_task(again.follow(game))
        try:
            full = await again.state(lambda s: True)
            current = await store.load_match(game)
            # (the stand-ins may have moved on meanwhile: Ann is silent too)
            assert full["type"] == "gameFull"
            assert waiting["seq"] < full["seq"] <= current.next_seq
        finally:
            follower.cancel()
            await again.client.aclose()


@pytest.mark.parametrize(("args", "computers"), [
    ("duel deal=short exchange=2", 0), ("trio-lone-attacker tours=6 exchange=1", 1),
    ("teams tours=2 exchange=1", 2)])
async def test_no_stream_line_shows_a_card_the_seat_may_not_see(
        tmp_path: Path, args: str, computers: int) -> None:
    """A whole match with the exchange (a duel, a trio, teams): the engine plays random legal
    moves, Ann her panel, computers the other seats; every line the engine received is
    compared with the record replayed to its move."""
    async with engine_match(tmp_path, args, computers=computers) as (
            h, ann, group, engine, game, _other):
        from tests.bot_harness import panel, play_step_with_buttons

        rng = random.Random(11)
        loop = asyncio.get_running_loop()
        end = loop.time() + 120
        answered = 0
        while loop.time() < end:
            row = await h.services.store.get_match(game)
            if row.status is not MatchStatus.ACTIVE:
                break
            last = engine.lines[-1] if engine.lines else None
            if last and last["myTurn"] and last["seq"] > answered:
                answered = last["seq"]
                answer = await engine.move(game, rng.choice(last["legal"]), last["seq"])
                assert answer.status_code == 200, answer.text
            elif panel(h.fake, ann) is not None:
                await play_step_with_buttons(h, ann, rng)
            else:
                await asyncio.sleep(0.02)
        await engine.state(lambda s: s["status"] != "active")
        stored = await h.services.store.load_match(game)
        actions = [m.action for m in stored.moves]
        seat = engine.lines[0]["seat"]
        kinds = {line["type"] for line in engine.lines}
        assert kinds == {"gameFull", "gameState"}
        assert any(line["phase"] != "play" for line in engine.lines)  # the exchange was seen
        for line in engine.lines:
            then = rebuild_game(stored.row, actions[: line["moves"]])
            view = then.observation(seat)
            assert line["view"] == view_to_json(replace(view, players=tuple(
                f"p{i + 1}" for i in range(len(view.players)))))
            assert line["hand"] == [c.code() for c in view.tour.hand]
            visible = ({c.code() for c in view.tour.hand}
                       | {c.code() for c, _x, _y in view.tour.placements}
                       | {c.code() for c, _x, _y in view.tour.pending}
                       | {c.code() for c in view.tour.own_discards}
                       | {c.code() for c in view.tour.own_draws})
            assert line["view"]["players"] == [f"p{i + 1}" for i in range(len(view.players))]
            text = json.dumps({k: v for k, v in line.items() if k != "players"})
            shown = set(CARD.findall(text))
            assert shown <= visible, (shown - visible, line["moves"])
        del group


async def test_an_engine_that_disconnects_mid_turn_is_played_for_by_its_deadline(
        tmp_path: Path) -> None:
    """The engine's stream is cut while it is to move and it stays away: the stand-in moves
    for it by the deadline its state announced (the table never waits longer, give or take
    the ticker's period), once; its answer after the timer is refused and stores nothing;
    on reconnecting it gets a fresh gameFull of the position as it now is."""
    async with engine_match(tmp_path, "duel deal=short timer=30", speed=60.0,
                            timer_tick=0.05) as (h, ann, group, engine, game, _other):
        store = h.services.store
        await play_until_engine_turn(h, ann, engine)
        waiting = await engine.state(lambda s: s["myTurn"])
        follower = next(t for t in asyncio.all_tasks() if t.get_coro().__qualname__
                        == "Engine.follow")
        follower.cancel()  # the engine goes away in the middle of its turn
        clock = h.fake.clock
        loop = asyncio.get_running_loop()
        end = loop.time() + 15
        while len((await store.load_match(game)).moves) < waiting["moves"] + 1:
            assert loop.time() < end, "the stand-in never moved"
            await asyncio.sleep(0.01)
        # Moved by the deadline, plus the ticker's period and a little scheduling (table
        # seconds: the clock runs 60 times faster than real ones).
        assert clock() <= waiting["deadline"] + 60 * 0.5, (clock(), waiting["deadline"])
        assert (await store.stand_ins(game))[1].timeouts == 1
        stored = await store.load_match(game)
        late = await engine.move(game, waiting["legal"][0], waiting["seq"])
        assert late.status_code == 409 and late.json()["code"] in ("stale", "game_over")
        after = await store.load_match(game)
        assert [m.seq for m in after.moves[: len(stored.moves)]] == [m.seq for m in stored.moves]
        assert len({m.seq for m in after.moves}) == len(after.moves)
        again = Engine(int(engine.base.split(":")[2].split("/")[0]),
                       engine.client.headers["authorization"].split()[1])
        task = asyncio.create_task(again.follow(game))
        try:
            full = await again.state(lambda s: True)
            assert full["type"] == "gameFull" and full["seq"] > waiting["seq"]
        finally:
            task.cancel()
            await again.client.aclose()
        del ann, group


async def test_an_engine_is_told_seats_and_names_never_a_telegram_id(tmp_path: Path) -> None:
    """``players`` are the display names by seat; the complete ``view`` names the seats as
    the exported record does (``p1``, ``p2``), never ``u<Telegram id>``."""
    async with engine_match(tmp_path) as (_h, ann, _group, engine, _game, _other):
        full = await engine.state(lambda s: s["type"] == "gameFull")
        assert full["players"] == ["Ann", "🤖 Hx"]
        assert full["view"]["players"] == ["p1", "p2"]
        raw = json.dumps(engine.lines)
        assert f'"u{ann.id}"' not in raw and not re.search(r'"u-?[0-9]+"', raw), raw[:300]


async def follow_events(engine: Engine, lines: list[dict[str, Any]]) -> None:
    """The engine's event stream, to its end."""
    async with engine.client.stream("GET", f"{engine.base}/stream",
                                    timeout=httpx.Timeout(10.0, read=60.0)) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():
            if line.strip():
                lines.append(json.loads(line))


async def test_a_new_token_or_a_deletion_closes_the_old_tokens_streams_at_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``/engine token Hx`` in Ann's private chat: the event stream and the game stream the
    old token opened close at once (streams re-read only every 30 s here: only the
    revocation itself can close them in time), nothing more reaches them while the match
    goes on, and the old token gets 401. ``/engine delete Hx`` closes the new token's."""
    monkeypatch.setattr(engines_api, "RECHECK", 30.0)
    async with engine_match(tmp_path) as (h, ann, _group, engine, game, _other):
        await engine.state(lambda s: s["type"] == "gameFull")
        follower = next(t for t in asyncio.all_tasks() if t.get_coro().__qualname__
                        == "Engine.follow")
        events: list[dict[str, Any]] = []
        listener = asyncio.create_task(follow_events(engine, events))
        loop = asyncio.get_running_loop()
        while not events:
            await asyncio.sleep(0.02)
        assert events == [{"type": "gameStart", "game": {"id": game}}]
        seen = len(engine.lines)
        ann.send(ann.chat, "/engine token Hx")
        sent = time.perf_counter()
        await asyncio.wait_for(asyncio.gather(follower, listener), 5)
        assert time.perf_counter() - sent < 3.0
        await h.settle()
        reply = h.fake.last(ann.chat).text or ""
        assert "the old one stops working now" in reply
        new = reply.rsplit("\n", 1)[-1].strip()
        for path in ("stream", f"game/{game}/stream"):
            gone = await engine.client.get(f"{engine.base}/{path}")
            assert gone.status_code == 401 and gone.json()["code"] == "bad_token"
        renewed = Engine(int(engine.base.split(":")[2].split("/")[0]), new)
        task = asyncio.create_task(renewed.follow(game))
        try:
            # The match goes on (a move by the new token, or Ann's): the closed streams get
            # nothing of it.
            full = await renewed.state(lambda s: s["type"] == "gameFull")
            if full["myTurn"]:
                answer = await renewed.move(game, full["legal"][0], full["seq"])
                assert answer.status_code == 200, answer.text
            else:
                from tests.bot_harness import play_step_with_buttons
                await play_step_with_buttons(h, ann, random.Random(2))
            await renewed.state(lambda s: s["seq"] > full["seq"])
            assert len(engine.lines) == seen and len(events) == 1
            ann.send(ann.chat, "/engine delete Hx")
            start = loop.time()
            await asyncio.wait_for(task, 5)
            assert loop.time() - start < 3.0
            gone = await renewed.client.get(f"{renewed.base}/game/{game}/stream")
            assert gone.status_code == 401
        finally:
            task.cancel()
            await renewed.client.aclose()


async def test_an_event_stream_opened_after_the_game_ended_gets_its_game_finish(
        tmp_path: Path) -> None:
    """The engine resigns and only then connects its event stream (it was away when the
    match ended, or its stream was cut): the stream starts with the match's ``gameFinish``.
    A match that ended more than an hour ago is not told again. The last state has no turn,
    no deadline and no legal step, in the view neither."""
    async with engine_match(tmp_path) as (h, ann, _group, engine, game, _other):
        await engine.state(lambda s: s["type"] == "gameFull")
        await play_until_engine_turn(h, ann, engine)
        await engine.state(lambda s: s["myTurn"])  # it resigns on its turn, legal steps shown
        answer = await engine.client.post(f"{engine.base}/game/{game}/resign")
        assert answer.status_code == 200, answer.text
        final = await engine.state(lambda s: s["status"] != "active")
        # No one's turn any more: no deadline, no legal step (in the view neither).
        assert final["deadline"] is None and final["turn"] is None and final["legal"] == []
        assert final["view"]["tour"]["legal"] == []
        await h.settle()
        row = await h.services.store.get_match(game)
        events: list[dict[str, Any]] = []
        listener = asyncio.create_task(follow_events(engine, events))
        try:
            loop = asyncio.get_running_loop()
            end = loop.time() + 3
            while not events and loop.time() < end:
                await asyncio.sleep(0.02)
            assert events == [{"type": "gameFinish", "game": {
                "id": game, "status": row.status.value, "seat": 1,
                "totals": list(row.totals) if row.totals else None, "concededBy": 1}}]
        finally:
            listener.cancel()
        h.fake.clock.advance(engines_api.FINISHED_WINDOW + 60)
        later: list[dict[str, Any]] = []
        listener = asyncio.create_task(follow_events(engine, later))
        try:
            await asyncio.sleep(1.5)
            assert later == []
        finally:
            listener.cancel()
