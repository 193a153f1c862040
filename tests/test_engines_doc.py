"""``docs/engines.md``'s example session is what an engine really gets: the test reads the
session out of the document and replays it against the arena the document names (a seeded
match with the normal level, which decides without chance), request by request, comparing
every answer and every stream line.

The session is written as a terminal shows it: ``$ curl ...`` commands, the two streams run in
the background (``&``) so that their lines appear among the answers, and ``kill %N`` ends a
background job. A line of the document may shorten the real one with ``…`` (each piece
between them must appear in order, the first at the start and the last at the end); the
token and the ``deadline`` times (the clock's) are the only values not compared. Before each
command the test waits until the streams have sent the lines the document shows above it, as
an engine waits for its turn. A stream may merge two quick changes into one state (the
document says so), so a shown ``gameState`` may be skipped; nothing else may be, and no line
the document does not show may come.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from chat.arena import arena, parse

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "engines.md"
ELLIPSIS = "…"
DEADLINE = re.compile(r'"deadline": -?[0-9]+(?:\.[0-9]+)?')
#: How long a stream may take to send the lines the document shows before a command.
PATIENCE = 20.0


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def code_blocks(text: str) -> list[list[str]]:
    return [block.strip("\n").splitlines()
            for block in re.findall(r"^```[a-z]*\n(.*?)^```$", text, re.M | re.S)]


def same(shown: str, sent: str) -> bool:
    """Whether a line the document shows (perhaps shortened with ``…``) is the line sent."""
    shown, sent = DEADLINE.sub('"deadline": T', shown), DEADLINE.sub('"deadline": T', sent)
    parts = shown.split(ELLIPSIS)
    if len(parts) == 1:
        return shown == sent
    if not sent.startswith(parts[0]) or not sent.endswith(parts[-1]):
        return False
    at, end = len(parts[0]), len(sent) - len(parts[-1])
    for part in parts[1:-1]:
        found = sent.find(part, at, end)
        if found < 0:
            return False
        at = found + len(part)
    return at <= end


@dataclass
class Stream:
    """A background stream of the session: the lines the document shows for it, each with
    the index of the command it must have arrived before."""

    kind: str  # "events" or "game"
    shown: list[tuple[str, int]] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    seen: int = 0  # shown lines consumed (matched, or skipped gameState lines)
    errors: list[str] = field(default_factory=list)
    task: asyncio.Task[None] | None = None

    def take(self, line: str) -> None:
        self.sent.append(line)
        for j in range(self.seen, len(self.shown)):
            if same(self.shown[j][0], line):
                self.seen = j + 1
                return
            if '"type": "gameState"' not in self.shown[j][0]:
                break  # only a state may be merged into a newer one
        self.errors.append(f"a line the document does not show here: {line[:400]}")

    def due(self, command: int) -> int:
        return sum(1 for _text, before in self.shown if before <= command)


@dataclass
class Command:
    words: list[str]
    background: bool = False
    answer: str | None = None
    job: int | None = None


def read_session(block: list[str]) -> tuple[list[Command], list[Stream]]:
    commands: list[Command] = []
    streams: list[Stream] = []
    live: dict[str, int | None] = {"events": None, "game": None}
    waiting: Command | None = None
    for line in block:
        if line.startswith("$ "):
            words = shlex.split(line[2:])
            if words[0] == "export":
                continue
            command = Command(words)
            if words[0] == "kill":
                command.job = int(words[1].lstrip("%")) - 1
                live = {k: (None if v == command.job else v) for k, v in live.items()}
            elif words[-1] == "&":
                command.words, command.background = words[:-1], True
                kind = "game" if "/game/" in words[-2] else "events"
                streams.append(Stream(kind))
                command.job = live[kind] = len(streams) - 1
            else:
                waiting = command
            commands.append(command)
        elif line.startswith("{"):
            if waiting is not None:
                waiting.answer, waiting = line, None
                continue
            kind = "game" if '"type": "game' in line and (
                '"gameFull"' in line or '"gameState"' in line) else "events"
            job = live[kind]
            assert job is not None, f"no background {kind} stream for {line[:80]}"
            streams[job].shown.append((line, len(commands)))
        else:
            assert not line.strip(), f"a line the test cannot replay: {line!r}"
    assert all(c.answer is not None for c in commands if c.words[0] == "curl"
               and not c.background), "a command without its answer"
    return commands, streams


def request_of(words: list[str], token: str, base: str) -> tuple[str, str, dict[str, str],
                                                                 str | None]:
    """curl's words as (method, url, headers, body)."""
    method, url, headers, body = "GET", "", {}, None
    i = 1
    while i < len(words):
        word = words[i]
        if word == "-H":
            name, _, value = words[i + 1].partition(": ")
            headers[name] = value.replace("$T", token)
            i += 2
        elif word == "-d":
            method, body = "POST", words[i + 1]
            i += 2
        elif word == "-X":
            method = words[i + 1]
            i += 2
        elif word.startswith("-"):
            i += 1
        else:
            url = word.replace("$B", base)
            i += 1
    return method, url, headers, body


async def follow(client: httpx.AsyncClient, stream: Stream, url: str,
                 headers: dict[str, str]) -> None:
    async with client.stream("GET", url, headers=headers) as answer:
        async for line in answer.aiter_lines():
            if line.strip():
                stream.take(line)


async def caught_up(streams: list[Stream], command: int) -> None:
    """Until every stream sent the lines the document shows before ``command``."""
    loop = asyncio.get_running_loop()
    end = loop.time() + PATIENCE
    while True:
        for stream in streams:
            assert not stream.errors, (stream.errors, stream.sent[-3:])
        late = [s for s in streams if s.seen < s.due(command)]
        if not late:
            return
        if loop.time() > end:
            first = late[0]
            raise AssertionError(f"the {first.kind} stream never sent "
                                 f"{first.shown[first.seen][0][:300]}; it sent "
                                 f"{[line[:300] for line in first.sent[-3:]]}")
        await asyncio.sleep(0.02)


async def test_the_example_session_of_the_docs_replays_line_for_line() -> None:
    text = section(DOC.read_text(encoding="utf-8"), "An example session")
    blocks = code_blocks(text)
    command_line = next(line for block in blocks for line in block
                        if line.startswith("$ python -m chat.arena"))
    session = next(block for block in blocks if any(line.startswith("$ curl")
                                                    for line in block))
    commands, streams = read_session(session)
    assert len(commands) > 20 and {s.kind for s in streams} == {"events", "game"}
    opts, _args = parse(shlex.split(command_line)[4:])
    opts.listen, opts.ai_workers = "127.0.0.1:0", 0
    ready: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()
    running = asyncio.create_task(arena(opts, ready=lambda url, token: ready.set_result(
        (url, token))))
    try:
        base, token = await asyncio.wait_for(ready, 30)
        async with httpx.AsyncClient(timeout=httpx.Timeout(10.0, read=60.0)) as client:
            for index, command in enumerate(commands):
                await caught_up(streams, index)
                if command.words[0] == "kill":
                    assert command.job is not None
                    task = streams[command.job].task
                    assert task is not None
                    task.cancel()
                    continue
                method, url, headers, body = request_of(command.words, token, base)
                if command.background:
                    assert command.job is not None
                    stream = streams[command.job]
                    stream.task = asyncio.create_task(follow(client, stream, url, headers))
                    continue
                async with client.stream(method, url, headers=headers,
                                         content=body) as answer:
                    lines = [line async for line in answer.aiter_lines() if line.strip()]
                assert command.answer is not None and len(lines) == 1, (command.words, lines)
                assert same(command.answer, lines[0]), (
                    f"\n$ {shlex.join(command.words)}\nshown: {command.answer}\n"
                    f"sent:  {lines[0]}")
            await caught_up(streams, len(commands))
            await asyncio.sleep(0.5)  # nothing the document does not show comes later
            for stream in streams:
                assert not stream.errors, stream.errors
                assert stream.seen == len(stream.shown)
            for stream in streams:
                if stream.task is not None:
                    stream.task.cancel()
    finally:
        running.cancel()
        with contextlib.suppress(BaseException):
            await running


async def test_the_bridge_tells_its_program_of_a_finished_game_once() -> None:
    """The event stream tells a game that ended within the hour again after every reconnect;
    the bridge passes the program one ``finish`` per game."""
    from engines.bridge import Bridge, Program

    told: list[str] = []

    class Listener(Program):
        async def tell(self, line: str) -> None:
            told.append(line)

    bridge = Bridge("http://127.0.0.1:9/api/engine/v1", "token", Listener(["unused"]))
    try:
        finish = {"type": "gameFinish", "game": {"id": 7, "status": "finished", "seat": 0,
                                                 "totals": [3, 1], "concededBy": None}}
        for _reconnect in range(3):
            await bridge.on_event(finish)
        await bridge.on_event({**finish, "game": {**finish["game"], "id": 8}})
        assert [json.loads(line.split(" ", 1)[1])["id"] for line in told] == [7, 8]
    finally:
        await bridge.client.aclose()
