"""What a Bot API call costs the bot besides the call itself: the workers call Telegram
through python-telegram-bot's own HTTP client (httpx over httpcore), about 2 ms of CPU a
call, five calls a move in the scaled mode's job workers (issue 39's CPU a move).

httpcore asks which async library runs it several times a call (each lock, each shield
around a response's close) through ``import sniffio``. Without sniffio installed (anyio 4
no longer brings it) every one of those imports failed after searching ``sys.path``: about
a tenth of each call's CPU. sniffio is a dependency of the bot now (pyproject.toml)."""

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
