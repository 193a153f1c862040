"""The real application in webhook mode, in-process: uvicorn on 127.0.0.1 (a free port) in the
test's event loop, and the fake Bot API posting updates to it from its own threads, the way
Telegram does (tests/fakebot/webhook.py)."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from chat.compose_scaled import running
from tests.bot_harness import Harness, test_config
from tests.fakebot import FakeTelegram

SECRET = "test-webhook-secret_0123456789"
PATH = "/telegram/webhook"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@asynccontextmanager
async def running_webhook_bot(tmp_path: Path, fake: FakeTelegram,
                              **changes: object) -> AsyncIterator[Harness]:
    """:func:`tests.bot_harness.running_bot`, but Telegram posts the updates: ``h.settle()``
    waits until every update was answered 2xx (a failed one is retried by the fake)."""
    port = free_port()
    config = test_config(tmp_path, fake, webhook_url=f"http://127.0.0.1:{port}{PATH}",
                         webhook_secret=SECRET, web_listen=f"127.0.0.1:{port}", **changes)
    async with running(config, request=fake.request(), clock=fake.clock) as bot:
        yield Harness(fake, bot.application, config)
