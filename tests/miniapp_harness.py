"""The Mini App's test helpers: a bot with its web server public, and ``initData`` signed by
the test token the way Telegram signs it (chat/miniapp/initdata.py)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from chat.miniapp.initdata import sign
from storage import MatchRow, StoredMatch, is_pool_chat
from tests.bot_harness import BOT, FastClock, Harness, running_bot, start_group_duel
from tests.fakebot import Chat, FakeTelegram, FakeUser, Message
from tests.webhook_harness import free_port

PUBLIC = "https://krendzu.example"
APP_NAME = "play"
#: Every card code a JSON answer may carry (``QC``, ``TD``: krendzu.cards).
CARD = re.compile(r"(?<![A-Za-z0-9])([6789TJQKA][SCDH])(?![A-Za-z0-9])")


def init_data(fake: FakeTelegram, user: FakeUser | int, *, age: float = 0.0,
              language: str | None = None, token: str | None = None,
              start_param: str | None = None) -> str:
    """``initData`` for ``user``, ``age`` seconds old, signed with ``token`` (the bot's)."""
    user_id = user if isinstance(user, int) else user.id
    name = f"User{user_id}" if isinstance(user, int) else user.first_name
    code = language or (None if isinstance(user, int) else user.language_code) or "en"
    fields = {"query_id": "AAHdF6IQAAAAAN0XohDhrOrc",
              "user": json.dumps({"id": user_id, "first_name": name, "language_code": code},
                                 separators=(",", ":"), ensure_ascii=False),
              "auth_date": str(int(time.time() - age))}
    if start_param:
        fields["start_param"] = start_param
    return sign(token or fake.token, fields)


def play_token(message: Message | None) -> str:
    """The match token of a board post's "▶ Play" Mini App link."""
    assert message is not None
    for button in message.buttons():
        url = button.get("url", "")
        if url.startswith(f"https://t.me/{BOT}/{APP_NAME}?startapp="):
            return url.rsplit("=", 1)[1]
    raise AssertionError(f"no ▶ Play link under {message.text!r}: {message.buttons()}")


@dataclass
class AppBot:
    h: Harness
    base: str
    http: httpx.AsyncClient

    async def get(self, path: str, init: str | None, **params: object) -> httpx.Response:
        headers = {} if init is None else {"X-Telegram-Init-Data": init}
        return await self.http.get(self.base + path, headers=headers, params=params)

    async def post(self, path: str, init: str | None, body: object) -> httpx.Response:
        headers = {} if init is None else {"X-Telegram-Init-Data": init}
        return await self.http.post(self.base + path, headers=headers, json=body)


@asynccontextmanager
async def app_bot(tmp_path: Path, fake: FakeTelegram, **changes: object
                  ) -> AsyncIterator[AppBot]:
    port = free_port()
    settings: dict[str, object] = {"web_listen": f"127.0.0.1:{port}", "public_url": PUBLIC,
                                   "miniapp_name": APP_NAME}
    settings.update(changes)
    async with running_bot(tmp_path, fake, **settings) as h, httpx.AsyncClient(
            timeout=30) as http:
        yield AppBot(h, f"http://127.0.0.1:{port}", http)


def new_fake(speed: float = 30.0) -> FakeTelegram:
    return FakeTelegram(bot_username=BOT, clock=FastClock(speed=speed))


async def group_duel(h: Harness, group: Chat, a: FakeUser, b: FakeUser,
                     args: str = "duel exchange=0") -> MatchRow:
    for user in (a, b):
        user.start_bot()
    await h.settle()
    return await start_group_duel(h, group, a, b, args)


#: Quick pool matches (as tests/test_playnow.py plays them): two short tours, no exchange, no
#: turn timer, no computer offer.
POOL = {"pool_match": "tours=2 deal=3/3 exchange=0 timer=off",
        "pool_computer_seconds": 3600.0}


def start_message(fake: FakeTelegram, user: FakeUser) -> Message:
    """The pool's "Opponent found" message to ``user``."""
    return next(m for m in fake.sent(user) if "Opponent found" in (m.text or ""))


def watch_token(message: Message) -> str:
    """The match token of the watch link a pool player shares (📤: Telegram's share dialog
    with the direct Mini App link), checked to be that link."""
    share = next(b["url"] for b in message.buttons() if b["text"] == "📤 Share the watch link")
    split = urlsplit(share)
    assert (split.netloc, split.path) == ("t.me", "/share/url"), share
    link = parse_qs(split.query)["url"][0]
    prefix = f"https://t.me/{BOT}/{APP_NAME}?startapp="
    assert link.startswith(prefix), link
    return link.removeprefix(prefix)


async def pool_duel(a: AppBot, ann: FakeUser, bob: FakeUser) -> MatchRow:
    for user in (ann, bob):
        user.start_bot()
    await a.h.settle()
    for user in (ann, bob):
        user.send(user.chat, "/playnow")
        await a.h.settle()
    rows = await a.h.services.store.matches_of_user(ann.id)
    assert len(rows) == 1 and is_pool_chat(rows[0].chat_id)
    return rows[0]


def hidden_from(stored: StoredMatch, seat: int | None) -> set[str]:
    """Every card ``seat`` may not see now, from the game state: the other hands' unplayed
    cards and their discards, less the seat's own cards (one given away in the exchange may
    be drawn by another: its old holder knows it, and only that one) and the board."""
    tour = stored.game.tour
    out: set[str] = set()
    for other in range(len(stored.row.seats)):
        if other != seat:
            theirs = tour.observation(other)
            out |= {c.code() for c in (*theirs.hand, *theirs.own_discards)}
    if seat is not None:  # its own cards: held, given away, drawn
        mine = tour.observation(seat)
        out -= {c.code() for c in (*mine.hand, *mine.own_discards, *mine.own_draws)}
    # A card given away and drawn by the other player may be on the board since: public.
    return out - {c.code() for c, _x, _y in tour.observation(None).placements}


def assert_secret(answer: Any, stored: StoredMatch, seat: int | None) -> None:
    found = set(CARD.findall(json.dumps(answer, ensure_ascii=False)))
    leaked = found & hidden_from(stored, seat)
    assert not leaked, f"seat {seat} was shown {leaked}: " + "; ".join(
        where for where in paths(answer) if any(card in where for card in leaked))


def paths(value: Any, at: str = "") -> list[str]:
    """Every leaf of a JSON answer as ``path=value`` (to say where a card was)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in paths(v, f"{at}.{k}")]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in paths(v, f"{at}[{i}]")]
    return [f"{at}={value}"]
