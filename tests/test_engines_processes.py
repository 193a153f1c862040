"""The engine protocol across processes (issue 31, the scaled mode): two worker processes
serve the API over one database (a SQLite file, or PostgreSQL); a person's moves are stored
by a third (this test's own flow). A game stream served by a worker learns of them: on
PostgreSQL by ``LISTEN``/``NOTIFY`` (the workers re-read only every 30 s here, so nothing
else could bring the news in time), on SQLite by re-reading every second. A worker killed
with SIGKILL cuts its stream; the engine reconnects to the other and starts with a fresh
``gameFull`` of the current position."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from chat.computer import Thinker
from chat.flow import Actor, Flow
from chat.flow.engines import new_token, token_hash
from chat.i18n import Catalogs
from krendzu.tables import Settings, Table
from storage import MatchStatus, SeatSpec, is_postgres, open_store
from tests.helpers import stop_process
from tests.webhook_harness import free_port

ROOT = Path(__file__).resolve().parent.parent
ANN = Actor(1, "Ann", "en")


@contextmanager
def worker(target: str, recheck: float) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "engine_worker.py"), target,
                             str(port), str(recheck)], cwd=ROOT, stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == b"ready"
        yield proc, f"http://127.0.0.1:{port}/api/engine/v1"
    finally:
        stop_process(proc)


class Follower:
    """The engine's game stream on one worker: every line, with when it arrived."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.lines: list[tuple[float, dict[str, Any]]] = []
        self.changed = asyncio.Event()
        self.task = asyncio.create_task(self._follow(client, url))

    async def _follow(self, client: httpx.AsyncClient, url: str) -> None:
        async with client.stream("GET", url, timeout=httpx.Timeout(10.0, read=60.0)) as answer:
            assert answer.status_code == 200
            async for line in answer.aiter_lines():
                if line.strip():
                    self.lines.append((time.perf_counter(), json.loads(line)))
                    self.changed.set()

    async def line(self, moves: int, seconds: float = 10.0) -> tuple[float, dict[str, Any]]:
        """The first line showing ``moves`` stored moves."""
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            for at, line in self.lines:
                if line["moves"] >= moves:
                    return at, line
            self.changed.clear()
            if self.task.done():
                raise AssertionError(f"the stream ended: {self.task.exception()!r}")
            try:
                await asyncio.wait_for(self.changed.wait(), end - time.perf_counter())
            except TimeoutError:
                break
        seen = [line["moves"] for _, line in self.lines]
        raise AssertionError(f"no line with {moves} moves: {seen}")


async def person_moves(flow: Flow, match_id: int, rng: random.Random) -> int:
    """Ann makes one legal move in this process; the stored moves afterwards."""
    stored = await flow.load(match_id)
    outcome = await flow.play(match_id, ANN, [rng.choice(stored.game.legal_actions())])
    assert outcome.reply and outcome.reply.startswith("✓"), outcome.reply
    return len((await flow.load(match_id)).game.history)


async def test_a_stream_on_one_worker_learns_of_moves_stored_by_another_process(
        store_target: str) -> None:
    postgres = is_postgres(store_target)
    store = await open_store(store_target)
    thinker = Thinker(workers=0)
    flow = Flow(store, Catalogs(), thinker.decide, bot_username="kbot")
    try:
        await flow.see_user(ANN, private=True)
        token = new_token()
        engine = await store.create_engine(ANN.user_id, "Robo", token_hash(token))
        stored = await store.create_match(-100, Settings(Table.DUEL), [
            SeatSpec.human(ANN.user_id), SeatSpec.human(engine.user_id)], seed=11)
        game = stored.match_id
        rng = random.Random(3)
        # On PostgreSQL the workers re-read only every 30 s: the news must come by NOTIFY.
        recheck = 30.0 if postgres else 1.0
        with worker(store_target, recheck) as (first, url1), \
                worker(store_target, recheck) as (_second, url2):
            client = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"})
            try:
                stream = Follower(client, f"{url1}/game/{game}/stream")
                _, full = await stream.line(0)
                assert full["type"] == "gameFull"
                delays: list[float] = []
                moves = 0
                for turn in range(8):
                    state = (await flow.load(game)).game
                    if state.current_player == 0:
                        moves = await person_moves(flow, game, rng)
                        made = time.perf_counter()
                        at, line = await stream.line(moves)
                        delays.append(at - made)
                    else:
                        _, line = await stream.line(moves)
                        assert line["myTurn"]
                        # Any worker takes the move, the stream's or the other.
                        answer = await client.post(
                            f"{(url1, url2)[turn % 2]}/game/{game}/move",
                            json={"move": line["legal"][0], "seq": line["seq"]})
                        assert answer.status_code == 200, answer.text
                        moves = answer.json()["seq"] - 1
                        await stream.line(moves)
                assert delays
                # NOTIFY: at once; SQLite: within the one-second re-read.
                assert max(delays) < (1.0 if postgres else 1.6), delays
                # The first worker is killed: its stream is cut. The engine reconnects to the
                # other and starts with a fresh gameFull of the current position.
                first.send_signal(signal.SIGKILL)
                first.wait(10)
                await asyncio.wait_for(asyncio.gather(stream.task, return_exceptions=True), 10)
                again = Follower(client, f"{url2}/game/{game}/stream")
                _, full = await again.line(moves)
                assert full["type"] == "gameFull" and again.lines[0][1] is full
                current = await store.load_match(game)
                assert full["seq"] == current.next_seq
                assert full["hand"] == [c.code() for c in
                                        current.game.observation(1).tour.hand]
                if current.game.current_player == 0:
                    moves = await person_moves(flow, game, rng)
                    made = time.perf_counter()
                    at, _line = await again.line(moves)
                    assert at - made < (1.0 if postgres else 1.6)
                again.task.cancel()
            finally:
                await client.aclose()
        assert (await store.get_match(game)).status is MatchStatus.ACTIVE
    finally:
        thinker.close()
        await store.close()


class Opened:
    """A stream opened with a token on one worker: its lines, and when it ended."""

    def __init__(self, client: httpx.AsyncClient, url: str) -> None:
        self.lines: list[dict[str, Any]] = []
        self.first = asyncio.Event()
        self.ended_at: float | None = None
        self.task = asyncio.create_task(self._follow(client, url))

    async def _follow(self, client: httpx.AsyncClient, url: str) -> None:
        try:
            async with client.stream("GET", url,
                                     timeout=httpx.Timeout(10.0, read=90.0)) as answer:
                assert answer.status_code == 200, await answer.aread()
                async for line in answer.aiter_lines():
                    if line.strip():
                        self.lines.append(json.loads(line))
                        self.first.set()
        finally:
            self.ended_at = time.perf_counter()


async def open_streams(token: str, urls: list[str], game: int
                       ) -> tuple[httpx.AsyncClient, list[Opened]]:
    """The event stream and the game stream on each worker, each past its first line."""
    client = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"})
    streams = [Opened(client, f"{url}/{path}") for url in urls
               for path in ("stream", f"game/{game}/stream")]
    await asyncio.wait_for(asyncio.gather(*(s.first.wait() for s in streams)), 10)
    return client, streams


async def test_a_new_token_or_a_deletion_closes_the_old_tokens_streams_on_every_worker(
        store_target: str) -> None:
    """``/engine token`` and ``/engine delete``, handled by this process (as a webhook
    worker handles them), close the event and game streams the old token opened on two other
    worker processes at once: on PostgreSQL by NOTIFY (the workers re-read only every 30 s
    here), on SQLite by the one-second re-read. Nothing more is sent on them, though the
    match goes on; the old token then gets 401, the new one works."""
    postgres = is_postgres(store_target)
    store = await open_store(store_target)
    thinker = Thinker(workers=0)
    flow = Flow(store, Catalogs(), thinker.decide, bot_username="kbot",
                engine_api_url="http://127.0.0.1/api/engine/v1")
    try:
        await flow.see_user(ANN, private=True)
        old = new_token()
        engine = await store.create_engine(ANN.user_id, "Robo", token_hash(old))
        stored = await store.create_match(-100, Settings(Table.DUEL), [
            SeatSpec.human(ANN.user_id), SeatSpec.human(engine.user_id)], seed=11)
        game = stored.match_id
        limit = 1.0 if postgres else 2.0
        with worker(store_target, 30.0 if postgres else 1.0) as (_first, url1), \
                worker(store_target, 30.0 if postgres else 1.0) as (_second, url2):
            client, streams = await open_streams(old, [url1, url2], game)
            try:
                answer = await flow.engine_command(ANN, ["token", "Robo"], private=True)
                revoked = time.perf_counter()
                new = answer.text.rsplit("\n", 1)[-1].strip()
                assert answer.secret and len(new) >= 32 and new != old
                await asyncio.wait_for(asyncio.gather(*(s.task for s in streams),
                                                      return_exceptions=True), 10)
                late = [s.ended_at - revoked for s in streams if s.ended_at is not None]
                assert len(late) == 4 and max(late) < limit, late
                seen = [len(s.lines) for s in streams]
                if (await flow.load(game)).game.current_player == 0:
                    await person_moves(flow, game, random.Random(3))
                    await asyncio.sleep(0.5)
                assert [len(s.lines) for s in streams] == seen  # closed: nothing more
                for url in (url1, url2):
                    for path in ("stream", f"game/{game}/stream", f"game/{game}/move"):
                        method = "POST" if path.endswith("move") else "GET"
                        gone = await client.request(method, f"{url}/{path}",
                                                    json={"move": "pass", "seq": 1})
                        assert gone.status_code == 401 and gone.json()["code"] == "bad_token"
            finally:
                await client.aclose()
            # The new token works, until the engine is deleted: its streams close too.
            client, streams = await open_streams(new, [url1, url2], game)
            try:
                assert all(s.ended_at is None for s in streams)
                answer = await flow.engine_command(ANN, ["delete", "Robo"], private=True)
                deleted = time.perf_counter()
                assert "deleted" in answer.text
                await asyncio.wait_for(asyncio.gather(*(s.task for s in streams),
                                                      return_exceptions=True), 10)
                late = [s.ended_at - deleted for s in streams if s.ended_at is not None]
                assert len(late) == 4 and max(late) < limit, late
                gone = await client.get(f"{url2}/game/{game}/stream")
                assert gone.status_code == 401
            finally:
                await client.aclose()
    finally:
        thinker.close()
        await store.close()
