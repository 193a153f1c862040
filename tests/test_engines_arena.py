"""The engine arena (``python -m chat.arena``, issue 31): an engine pitted against the
built-in levels through the engine protocol, on duplicate deals.

The normal level decides without chance, so played through the bridge and HTTP against
itself in-process it must reproduce every game move for move: each deal's two matches
mirror each other and the score is exactly zero (``benchmarks/engines_arena.py`` measures
the random easy level over many deals the same way). An engine connected by hand (the
author's own HTTP client, here random legal moves) gets its score too."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from chat.arena import ArenaOptions, arena

ROOT = Path(__file__).resolve().parent.parent


async def test_the_normal_level_through_the_bridge_plays_exactly_as_at_home() -> None:
    opts = ArenaOptions(level="normal", deals=3, parallel=3, ai_workers=0,
                        program=[sys.executable, "-m", "engines.builtin", "normal"])
    result = await arena(opts)
    assert result["matches"] == 6 and result["not_finished"] == 0
    assert result["stand_in_moves"] == 0  # the engine made every move itself
    assert result["score_mean"] == 0.0 and result["score_sd"] == 0.0, result
    wins, _draws, losses = result["wins_draws_losses"]
    assert wins == losses


async def random_engine(url: str, token: str, games: int, stop: asyncio.Event) -> None:
    """An author's own engine: follows its events, answers each turn with a legal move."""
    rng = random.Random(1)
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(10, read=60)) as client:

        async def play(game: int) -> None:
            async with client.stream("GET", f"{url}/game/{game}/stream") as answer:
                async for line in answer.aiter_lines():
                    if not line.strip():
                        continue
                    state: dict[str, Any] = json.loads(line)
                    if state["status"] != "active":
                        return
                    if state["myTurn"]:
                        await client.post(f"{url}/game/{game}/move", json={
                            "move": rng.choice(state["legal"]), "seq": state["seq"]})

        tasks: list[asyncio.Task[None]] = []
        async with client.stream("GET", f"{url}/stream") as events:
            async for line in events.aiter_lines():
                if line.strip() and json.loads(line)["type"] == "gameStart":
                    tasks.append(asyncio.create_task(play(json.loads(line)["game"]["id"])))
                if stop.is_set() or len(tasks) >= games:
                    break
        await asyncio.gather(*tasks)


async def test_an_engine_connected_by_hand_gets_its_score() -> None:
    opts = ArenaOptions(level="easy", deals=1, parallel=2, ai_workers=0)
    stop = asyncio.Event()
    engines: list[asyncio.Task[None]] = []

    def ready(url: str, token: str) -> None:
        engines.append(asyncio.create_task(random_engine(url, token, 2, stop)))

    result = await asyncio.wait_for(arena(opts, ready=ready), 120)
    stop.set()
    await asyncio.gather(*engines, return_exceptions=True)
    assert result["matches"] == 2 and result["not_finished"] == 0
    assert result["engine"] == "(connected by hand)"
    assert sum(result["wins_draws_losses"]) == 2
    low, high = result["score_ci95"]
    assert low <= result["score_mean"] <= high


def test_the_arena_command_prints_a_score() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "chat.arena", "--level", "easy", "--deals", "1", "--json",
         "--ai-workers", "0", "--", sys.executable, "-m", "engines.builtin", "easy"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["level"] == "easy" and result["matches"] == 2
    assert result["not_finished"] == 0 and result["stand_in_moves"] == 0
