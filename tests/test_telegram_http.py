"""Bot API calls over aiohttp (chat/telegram_http.py): the bot as every process builds it
(``chat.compose.build_application``) calls the fake Bot API over real HTTP, and what the fake
receives is what python-telegram-bot sent; a call tries no import that fails; a long poll
lasts its time; a refused connection and a silent server become python-telegram-bot's own
errors, without the token; a proxy in the environment and certifi's authorities are
honoured, as under httpx.

What a call costs in CPU is ``benchmarks/bot_api_calls.py``'s (against python-telegram-bot's
default httpx). A call must try no import that fails: under httpx, httpcore asked ``import
sniffio`` several times a call, and without sniffio installed each ask searched ``sys.path``
in vain (about a tenth of a call's CPU); the same watch stays on the client used now."""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import io
import socket
import ssl
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import NetworkError, TimedOut
from telegram.ext import Application

from chat.compose import build_application
from chat.telegram_http import AiohttpRequest
from tests.bot_harness import test_config as bot_config
from tests.fakebot import FakeTelegram


def jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (64, 48), (40, 120, 60)).save(out, "JPEG")
    return out.getvalue()


@contextlib.asynccontextmanager
async def bot_over_http(tmp_path: Path) -> AsyncIterator[tuple[FakeTelegram, Application, int]]:
    """The fake Bot API served over HTTP, one person who started the bot, and the bot built
    as every process builds it, started: (the fake, the application, the person's id)."""
    fake = FakeTelegram()
    ann = fake.user(1, "Аня")
    fake.user_starts(ann)
    base = fake.serve_http()
    try:
        app = build_application(bot_config(tmp_path, fake, api_base_url=base))
        async with app:
            yield fake, app, ann.id
    finally:
        fake.stop()


async def test_the_bots_calls_arrive_as_python_telegram_bot_sent_them(tmp_path: Path) -> None:
    async with bot_over_http(tmp_path) as (fake, app, ann):
        assert isinstance(app.bot.request, AiohttpRequest)
        keys = InlineKeyboardMarkup([[InlineKeyboardButton("♠ A1", callback_data="v1:x")]])
        sent = await app.bot.send_message(ann, "Ход: 7♥ K13 & <b>", reply_markup=keys)
        picture = jpeg()
        photo = await app.bot.send_photo(ann, picture, caption="Доска\nход 2")
        await app.bot.edit_message_caption(ann, photo.message_id, caption="закрыто")
        assert await app.bot.delete_message(ann, sent.message_id)
        messages = fake.sent(fake.chats[ann])
    assert messages[0].content == "Ход: 7♥ K13 & <b>"
    assert messages[0].button_texts() == ["♠ A1"]
    assert messages[1].kind == "photo" and messages[1].data == picture
    assert messages[1].content == "закрыто" and messages[1].edited
    assert messages[0].deleted
    assert sent.text == "Ход: 7♥ K13 & <b>"  # the answer read back


async def test_a_call_tries_no_import_that_fails(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    async with bot_over_http(tmp_path) as (fake, app, ann):
        await app.bot.send_message(ann, "warm")  # the first call's imports
        failed: list[str] = []
        real_import = builtins.__import__

        def watched(name: str, *args: Any, **kwargs: Any) -> Any:
            try:
                return real_import(name, *args, **kwargs)
            except ImportError:
                failed.append(name)
                raise

        monkeypatch.setattr(builtins, "__import__", watched)
        sent = await app.bot.send_message(ann, "a move's record")
        photo = await app.bot.send_photo(ann, jpeg(), caption="a panel")
        await app.bot.edit_message_caption(ann, photo.message_id, caption="a panel, closed")
        await app.bot.delete_message(ann, sent.message_id)
        monkeypatch.setattr(builtins, "__import__", real_import)
        methods = [c.method for c in fake.calls[-4:]]
    assert failed == [], failed
    assert methods == ["sendMessage", "sendPhoto", "editMessageCaption", "deleteMessage"]


async def test_a_long_poll_lasts_longer_than_the_default_timeouts() -> None:
    """python-telegram-bot adds a long poll's own seconds to the read timeout: the call is
    not cut at the default five seconds."""
    fake = FakeTelegram()
    base = fake.serve_http()
    try:
        async with Bot(fake.token, base_url=f"{base}/bot",
                       get_updates_request=AiohttpRequest(1)) as bot:
            started = time.monotonic()
            assert await bot.get_updates(timeout=6) == ()
            assert time.monotonic() - started >= 5.5
    finally:
        fake.stop()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_a_refused_connection_is_a_network_error_without_the_token() -> None:
    token = "123456:SECRET-token"
    request = AiohttpRequest(1)
    await request.initialize()
    try:
        with pytest.raises(NetworkError) as raised:
            await request.post(f"http://127.0.0.1:{free_port()}/bot{token}/getMe")
        assert not isinstance(raised.value, TimedOut)
        assert "SECRET" not in str(raised.value)
    finally:
        await request.shutdown()


async def test_a_server_that_never_answers_times_out() -> None:
    """A connection accepted and never answered ends at the read timeout (TimedOut, which
    delivery retries), not never."""
    silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = silent.sockets[0].getsockname()[1]
    request = AiohttpRequest(1, read_timeout=0.5)
    await request.initialize()
    try:
        started = time.monotonic()
        with pytest.raises(TimedOut):
            await request.post(f"http://127.0.0.1:{port}/bot1:x/getMe")
        assert time.monotonic() - started < 5.0
    finally:
        await request.shutdown()
        silent.close()


def answering(answer: bytes, seen: list[bytes] | None = None,
              headers: list[bytes] | None = None
              ) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    """A one-request HTTP server's handler that answers ``answer`` (a Bot API result) and
    notes each request line in ``seen`` and each header line in ``headers``."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, ssl.SSLError):
            line = await reader.readline()
            if seen is not None:
                seen.append(line)
            while (header := await reader.readline()) not in (b"\r\n", b""):
                if headers is not None:
                    headers.append(header)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         b"Content-Length: %d\r\n\r\n%s" % (len(answer), answer))
            await writer.drain()
        writer.close()

    return handle


async def test_a_proxy_in_the_environment_carries_the_calls(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where Telegram is reached through a proxy (``HTTPS_PROXY``/``HTTP_PROXY``, as httpx
    honoured them), the calls go to it."""
    seen: list[bytes] = []
    answer = b'{"ok": true, "result": {"id": 1, "is_bot": true, "first_name": "B", ' \
             b'"username": "b_bot"}}'

    headers: list[bytes] = []
    server = await asyncio.start_server(answering(answer, seen, headers), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    request = AiohttpRequest(1)
    await request.initialize()
    try:
        await request.post("http://api.telegram.invalid/bot1:x/getMe")
    finally:
        await request.shutdown()
        server.close()
    assert seen == [b"POST http://api.telegram.invalid/bot1:x/getMe HTTP/1.1\r\n"]
    # python-telegram-bot's User-Agent, which the session sends with every call.
    assert any(h.startswith(b"User-Agent: python-telegram-bot") for h in headers), headers


async def test_telegrams_certificate_is_checked_against_certifis_authorities(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """TLS is verified, against certifi's bundle (as httpx did): a certificate no authority
    there signed is refused; once certifi's bundle holds it, the same call goes through."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    answer = b'{"ok": true, "result": true}'

    server = await asyncio.start_server(answering(answer), "127.0.0.1", 0, ssl=served)
    url = f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/bot1:x/close"
    try:
        refused = AiohttpRequest(1)
        await refused.initialize()
        try:
            with pytest.raises(NetworkError, match=r"(?i)certificate"):
                await refused.post(url)
        finally:
            await refused.shutdown()
        monkeypatch.setattr("certifi.where", lambda: str(cert))
        trusted = AiohttpRequest(1)
        await trusted.initialize()
        try:
            assert await trusted.post(url) is True
        finally:
            await trusted.shutdown()
    finally:
        server.close()
