"""What a Bot API call costs the bot besides the call itself: every call goes over aiohttp
(chat/telegram_http.py), five calls a move in the scaled mode's job workers (issue 39's CPU a
move; ``benchmarks/bot_api_calls.py`` measures a call's CPU against python-telegram-bot's
default httpx).

A call must try no import that fails: under python-telegram-bot's httpx, httpcore asked
``import sniffio`` several times a call, and without sniffio installed each ask searched
``sys.path`` in vain (about a tenth of a call's CPU). The same watch stays on the client the
bot uses now."""

from __future__ import annotations

import builtins
import io
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from chat.compose import build_application
from tests.bot_harness import test_config as bot_config
from tests.fakebot import FakeTelegram


def jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (32, 32), (40, 120, 60)).save(out, "JPEG")
    return out.getvalue()


async def test_a_bot_api_call_over_http_tries_no_import_that_fails(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = FakeTelegram()
    ann = fake.user(1, "Ann")
    fake.user_starts(ann)
    base = fake.serve_http()
    try:
        # The bot as the workers build it: PTB's own HTTP client to the API's address.
        app = build_application(bot_config(tmp_path, fake, api_base_url=base))
        async with app:
            await app.bot.send_message(ann.id, "warm")  # the first call's imports
            failed: list[str] = []
            real_import = builtins.__import__

            def watched(name: str, *args: Any, **kwargs: Any) -> Any:
                try:
                    return real_import(name, *args, **kwargs)
                except ImportError:
                    failed.append(name)
                    raise

            monkeypatch.setattr(builtins, "__import__", watched)
            sent = await app.bot.send_message(ann.id, "a move's record")
            photo = await app.bot.send_photo(ann.id, jpeg(), caption="a panel")
            await app.bot.edit_message_caption(ann.id, photo.message_id,
                                               caption="a panel, closed")
            await app.bot.delete_message(ann.id, sent.message_id)
            monkeypatch.setattr(builtins, "__import__", real_import)
        assert failed == [], failed
        assert [c.method for c in fake.calls[-4:]] == [
            "sendMessage", "sendPhoto", "editMessageCaption", "deleteMessage"]
    finally:
        fake.stop()
