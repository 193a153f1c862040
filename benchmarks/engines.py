"""Engine protocol benchmark (issue 31): many outside engines playing at once over HTTP.

    python benchmarks/engines.py [--seats 50] [--moves 400] [--seed 1]

The real application runs against the in-process fake Telegram (as ``benchmarks/bot.py``),
serving the engine protocol on a local port. ``--seats`` groups each play a duel between a
person and an outside engine of its own; every engine is an asyncio task in this process
that follows its game stream over real HTTP (``httpx``) and answers each of its turns with
a random legal move. The people move through the flow as a typed ``/play`` does, one turn
each round-robin over the matches waiting for them, until ``--moves`` of their turns were
made. Figures (one JSON object):

- ``move_round_trip_ms``: p50/p95/max of an engine's ``POST .../move`` (request to answer:
  checks, the chat's lock, the stored move, the notices queued);
- ``human_to_engine_state_ms``: p50/p95/max from a person's move being made to the engine's
  game stream delivering the ``gameState`` that shows it is the engine's turn;
- ``engine_moves``, ``human_moves``, ``errors`` (engine answers that were not 200: expected 0).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from chat.flow import Actor
from chat.flow.engines import new_token, token_hash
from krendzu.ai import make_player
from tests.bot_harness import BOT, FastClock, running_bot
from tests.fakebot import FakeTelegram
from tests.webhook_harness import free_port


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def summary(values: list[float]) -> dict[str, float]:
    return {"p50": pct(values, 0.5), "p95": pct(values, 0.95),
            "max": round(max(values), 2) if values else 0.0, "n": len(values)}


async def engine_loop(base: str, token: str, game: int, rng: random.Random,
                      round_trips: list[float], seen: dict[int, float],
                      errors: list[str]) -> None:
    """One engine: follow the game, answer every turn with a random legal move."""
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                 timeout=httpx.Timeout(30.0, read=120.0)) as client:
        answered = 0
        async with client.stream("GET", f"{base}/game/{game}/stream") as response:
            async for line in response.aiter_lines():
                if not line.strip():
                    continue
                state = json.loads(line)
                if state["status"] != "active":
                    return
                if not state["myTurn"] or state["seq"] <= answered:
                    continue
                seen.setdefault(state["seq"], time.perf_counter())
                answered = state["seq"]
                start = time.perf_counter()
                answer = await client.post(f"{base}/game/{game}/move", json={
                    "move": rng.choice(state["legal"]), "seq": state["seq"]})
                round_trips.append((time.perf_counter() - start) * 1000)
                if answer.status_code != 200:
                    errors.append(answer.text)


async def run(seats: int, moves: int, seed: int) -> dict[str, Any]:
    port = free_port()
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=1))
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        async with running_bot(Path(tmp), fake, web_listen=f"127.0.0.1:{port}",
                               public_url=f"http://127.0.0.1:{port}",
                               group_limit=20, user_per_minute=1e6) as h:
            store, flow = h.services.store, h.services.flow
            base = f"http://127.0.0.1:{port}/api/engine/v1"
            games: list[tuple[int, int, int]] = []  # (match, person, engine seat's user)
            tokens: dict[int, str] = {}
            for i in range(seats):
                person = fake.user(1000 + i, f"P{i}")
                group = fake.group(-1009000 - i, f"G{i}")
                person.start_bot()
                token = new_token()
                engine = await store.create_engine(person.id, f"Bench{i}", token_hash(token))
                await h.settle()
                person.send(group, f"/new@{BOT} duel deal=short")
                await h.settle()
                person.send(group, f"/add@{BOT} @Bench{i}")
                await h.settle()
                person.send(group, f"/go@{BOT}")
                await h.settle()
                row = await store.active_match(group.id)
                assert row is not None, fake.describe()
                games.append((row.match_id, person.id, engine.user_id))
                tokens[row.match_id] = token
            round_trips: list[float] = []
            errors: list[str] = []
            seen: dict[int, dict[int, float]] = {g: {} for g, _p, _e in games}
            tasks = [asyncio.create_task(engine_loop(base, tokens[g], g, random.Random(g),
                                                     round_trips, seen[g], errors))
                     for g, _p, _e in games]
            player = make_player("random")
            made: dict[int, dict[int, float]] = {g: {} for g, _p, _e in games}
            human_moves = 0
            deadline = time.perf_counter() + 600
            while human_moves < moves and time.perf_counter() < deadline:
                progressed = False
                for game, person, _engine in games:
                    stored = await flow.load(game)
                    seat = stored.row.seat_of(person)
                    if (stored.row.status.value != "active" or stored.game.is_over
                            or stored.game.current_player != seat):
                        continue
                    actions = player.decide(stored.game.observation(seat), rng)
                    before = stored.next_seq
                    outcome = await flow.play(game, Actor(person, f"P{person}"), actions,
                                              expected_seq=before)
                    h.services.delivery.run(outcome.notices)
                    after = (await flow.load(game)).next_seq
                    if after > before:
                        made[game][after] = time.perf_counter()
                        human_moves += 1
                        progressed = True
                if not progressed:
                    await asyncio.sleep(0.01)
            delays = [(seen[g][seq] - t) * 1000 for g in made for seq, t in made[g].items()
                      if seq in seen[g]]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    return {"benchmark": "engines", "seats": seats, "human_moves": human_moves,
            "engine_moves": len(round_trips), "errors": len(errors),
            "move_round_trip_ms": summary(round_trips),
            "human_to_engine_state_ms": summary(delays)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seats", type=int, default=50)
    parser.add_argument("--moves", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(json.dumps(asyncio.run(run(args.seats, args.moves, args.seed)), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
