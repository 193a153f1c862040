"""Connect a command-line engine to a Krendzu bot: ``python -m engines.bridge URL -- PROGRAM``.

The token is read from ``KRENDZU_ENGINE_TOKEN`` (not the command line: other users of the
machine could read it there). The bridge follows the engine's event stream, opens the game
stream of every match it is seated in, and when it is the engine's turn hands the program the
position and posts the move it answers (with the position's ``seq``, so a late answer is
refused instead of being applied to a newer position). See ``docs/engines.md`` for the HTTP
protocol and the line protocol::

    bridge: krendzu 1                 engine: ready NAME
    bridge: position {...}            engine: move QC M12 | move pass | resign
    bridge: finish {...}              (no answer)
    bridge: quit                      (the engine exits)

One program serves every game of the engine, one position at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx

log = logging.getLogger("engines.bridge")

TOKEN_ENV = "KRENDZU_ENGINE_TOKEN"
#: Seconds the program may think about one position before the bridge gives up on it (the
#: table's own timer has the last word: a stand-in moves for a silent engine).
THINK_SECONDS = 60.0
#: A move refused as ``rate_limited`` is sent again after this pause, this many times (its
#: ``seq`` keeps it from ever landing on a newer position).
RATE_PAUSE = 1.0
RATE_RETRIES = 5
#: A stream silent for this long (no line, no keep-alive) is taken as cut.
STREAM_SILENCE = 30.0


class Program:
    """The local engine: a child process speaking the line protocol."""

    def __init__(self, argv: Sequence[str]) -> None:
        self.argv = list(argv)
        self.proc: asyncio.subprocess.Process | None = None
        self.lock = asyncio.Lock()
        self.name = ""

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        answer = await self.ask("krendzu 1", THINK_SECONDS)
        if not answer.startswith("ready"):
            raise RuntimeError(f"the engine answered {answer!r} to the greeting")
        self.name = answer[5:].strip()

    async def ask(self, line: str, timeout: float) -> str:
        proc = self.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(line.encode() + b"\n")
        await proc.stdin.drain()
        raw = await asyncio.wait_for(proc.stdout.readline(), timeout)
        if not raw:
            raise RuntimeError("the engine exited")
        return raw.decode().strip()

    async def tell(self, line: str) -> None:
        proc = self.proc
        assert proc is not None and proc.stdin is not None
        proc.stdin.write(line.encode() + b"\n")
        await proc.stdin.drain()

    async def stop(self) -> None:
        if self.proc is None or self.proc.returncode is not None:
            return
        with contextlib.suppress(Exception):
            await self.tell("quit")
            await asyncio.wait_for(self.proc.wait(), 5)
        if self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


async def lines(client: httpx.AsyncClient, url: str) -> AsyncIterator[dict[str, Any]]:
    """The JSON objects of a newline-delimited stream (keep-alive lines skipped)."""
    async with client.stream("GET", url, timeout=httpx.Timeout(10.0, read=STREAM_SILENCE)
                             ) as response:
        if response.status_code != 200:
            body = (await response.aread()).decode(errors="replace")
            raise PermissionError(f"{url}: {response.status_code} {body}")
        async for line in response.aiter_lines():
            if line.strip():
                yield json.loads(line)


class Bridge:
    def __init__(self, base_url: str, token: str, program: Program) -> None:
        self.base = base_url.rstrip("/")
        self.program = program
        self.client = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"})
        self.games: dict[int, asyncio.Task[None]] = {}
        #: Games whose ``finish`` the program was told: an event stream tells a game that
        #: ended within the last hour again on every reconnect, the program hears it once.
        self.finished: set[int] = set()

    async def run(self) -> None:
        await self.program.start()
        try:
            while True:
                try:
                    async for event in lines(self.client, f"{self.base}/stream"):
                        await self.on_event(event)
                except PermissionError:
                    raise
                except (httpx.HTTPError, ValueError) as exc:
                    log.warning("event stream cut (%s); reconnecting", exc)
                await asyncio.sleep(1.0)
        finally:
            for task in self.games.values():
                task.cancel()
            await self.program.stop()
            await self.client.aclose()

    async def on_event(self, event: dict[str, Any]) -> None:
        game_id = int(event.get("game", {}).get("id", 0))
        if event.get("type") == "gameStart":
            task = self.games.get(game_id)
            if task is None or task.done():
                self.games[game_id] = asyncio.create_task(self.play(game_id))
        elif event.get("type") == "gameFinish" and game_id not in self.finished:
            self.finished.add(game_id)
            async with self.program.lock:
                await self.program.tell("finish " + json.dumps(event["game"]))

    async def play(self, game_id: int) -> None:
        """Follow one game (reconnecting with a fresh ``gameFull``) until it is over."""
        answered = 0
        while True:
            try:
                async for state in lines(self.client, f"{self.base}/game/{game_id}/stream"):
                    if state.get("status") != "active":
                        return
                    if state.get("myTurn") and state["seq"] > answered:
                        answered = state["seq"]
                        await self.move(game_id, state)
                return
            except (httpx.HTTPError, ValueError) as exc:
                log.warning("game %s: stream cut (%s); reconnecting", game_id, exc)
                await asyncio.sleep(1.0)
            except PermissionError as exc:
                log.warning("game %s: %s", game_id, exc)
                return

    async def move(self, game_id: int, state: dict[str, Any]) -> None:
        async with self.program.lock:
            try:
                answer = await self.program.ask("position " + json.dumps(state), THINK_SECONDS)
            except TimeoutError:
                log.warning("game %s: the engine did not answer in time", game_id)
                return
        url = f"{self.base}/game/{game_id}"
        for _attempt in range(RATE_RETRIES + 1):
            if answer == "resign":
                response = await self.client.post(f"{url}/resign")
            elif answer.startswith("move "):
                response = await self.client.post(
                    f"{url}/move", json={"move": answer[5:], "seq": state["seq"]})
            else:
                log.warning("game %s: the engine answered %r", game_id, answer)
                return
            if response.status_code != 429:
                break
            await asyncio.sleep(RATE_PAUSE)  # rate_limited: the same move again shortly
        if response.status_code != 200:
            log.warning("game %s: %s", game_id, response.text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m engines.bridge",
        description="Play a command-line engine at Krendzu tables through a bot's engine "
                    f"protocol. The token is read from {TOKEN_ENV}.")
    parser.add_argument("url", help="the bot's engine API, e.g. https://bot.example.org/api/"
                                    "engine/v1")
    parser.add_argument("program", nargs=argparse.REMAINDER,
                        help="the engine's command line, after --")
    args = parser.parse_args(argv)
    program = [a for a in args.program if a != "--"] if args.program else []
    token = os.environ.get(TOKEN_ENV, "").strip()
    if not token or not program:
        parser.print_usage(sys.stderr)
        print(f"{TOKEN_ENV} and an engine program are required", file=sys.stderr)
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per request
    try:
        asyncio.run(Bridge(args.url, token, Program(program)).run())
    except PermissionError as exc:
        print(exc, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
