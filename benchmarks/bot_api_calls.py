"""A Bot API call's CPU in the caller: the bot's client (aiohttp, chat/telegram_http.py)
against python-telegram-bot's default (httpx), to the fake Bot API over HTTP on 127.0.0.1.

``python benchmarks/bot_api_calls.py [--calls N] [--rounds R]`` prints one JSON object: for
each client and each of a move's kinds of call (``sendMessage``, ``sendPhoto`` of a board-sized
JPEG, ``editMessageCaption``, ``deleteMessage``), the median over R rounds of the calling
thread's CPU a call (``time.thread_time``: the fake serves from threads of its own, so its
work is not counted), the clients alternating round by round so that the machine's noise
falls on both; and the ratio aiohttp / httpx. Issue 39 counts five such calls a move in the
scaled mode's job workers.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import io
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image
from telegram import Bot
from telegram.request import BaseRequest, HTTPXRequest

from chat.telegram_http import AiohttpRequest
from tests.fakebot import FakeTelegram

CLIENTS = ("httpx", "aiohttp")
KINDS = ("sendMessage", "sendPhoto", "editMessageCaption", "deleteMessage")


def board_jpeg() -> bytes:
    """A noisy picture about as large as a board post (80–120 KB)."""
    out = io.BytesIO()
    Image.effect_noise((420, 420), 50).convert("RGB").save(out, "JPEG", quality=85)
    return out.getvalue()


def client(kind: str) -> BaseRequest:
    return HTTPXRequest(connection_pool_size=8) if kind == "httpx" else AiohttpRequest(8)


async def one_round(bot: Bot, chat_id: int, photo: bytes, calls: int,
                    tag: str) -> dict[str, float]:
    """Milliseconds of CPU a call of each kind, ``calls`` of each."""
    spent: dict[str, float] = {}
    started = time.thread_time()
    sent = [await bot.send_message(chat_id, f"a move {tag} {n}") for n in range(calls)]
    spent["sendMessage"] = time.thread_time() - started
    started = time.thread_time()
    photos = [await bot.send_photo(chat_id, photo, caption=f"board {tag} {n}")
              for n in range(calls)]
    spent["sendPhoto"] = time.thread_time() - started
    started = time.thread_time()
    for n, message in enumerate(photos):
        await bot.edit_message_caption(chat_id, message.message_id, caption=f"closed {n}")
    spent["editMessageCaption"] = time.thread_time() - started
    started = time.thread_time()
    for message in sent:
        await bot.delete_message(chat_id, message.message_id)
    spent["deleteMessage"] = time.thread_time() - started
    return {k: v / calls * 1000 for k, v in spent.items()}


async def measure(calls: int, rounds: int) -> dict[str, object]:
    fake = FakeTelegram()
    ann = fake.user(1, "Ann")
    fake.user_starts(ann)
    base = fake.serve_http()
    photo = board_jpeg()
    samples: dict[str, dict[str, list[float]]] = {c: {k: [] for k in KINDS} for c in CLIENTS}
    try:
        bots = {c: Bot(fake.token, base_url=f"{base}/bot", request=client(c)) for c in CLIENTS}
        for bot in bots.values():
            await bot.initialize()
        for c, bot in bots.items():  # warm: imports, connections
            await one_round(bot, ann.id, photo, 5, f"warm {c}")
        for r in range(rounds):
            for c in CLIENTS if r % 2 == 0 else reversed(CLIENTS):
                for kind, ms in (await one_round(bots[c], ann.id, photo, calls,
                                                 f"{c} {r}")).items():
                    samples[c][kind].append(ms)
        for bot in bots.values():
            await bot.shutdown()
    finally:
        fake.stop()
    medians = {c: {k: round(statistics.median(v), 3) for k, v in by.items()}
               for c, by in samples.items()}
    move = {c: round(sum(by.values()) + by["sendPhoto"], 3) for c, by in medians.items()}
    return {
        "cpu_ms_per_call": medians,
        # A scaled move's five calls: two sendPhoto, sendMessage, editMessageCaption,
        # deleteMessage.
        "cpu_ms_per_move_of_five_calls": move,
        "ratio_aiohttp_to_httpx": round(move["aiohttp"] / move["httpx"], 3),
        "photo_bytes": len(photo),
        "calls_per_kind_and_round": calls,
        "rounds": rounds,
        "sniffio_installed": importlib.util.find_spec("sniffio") is not None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args.calls, args.rounds))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
