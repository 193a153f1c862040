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

import httpx

from chat.miniapp.initdata import sign
from storage import MatchRow
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
