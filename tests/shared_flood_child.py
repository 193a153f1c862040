"""Child process of the shared flood test: one bot process that writes into one group.

Usage: python tests/shared_flood_child.py DATABASE_URL API_BASE TOKEN START SPEED GROUP COUNT
TAG.
It builds the bot's application as chat/compose.py does (its rate limiter, against the fake Bot
API served over HTTP at API_BASE), a PostgreSQL store and delivery with the shared windows
(``share_windows``), sends COUNT group messages "TAG n" and prints ``done`` once all went
out. Its clock is the test's :class:`tests.bot_harness.FastClock` (same START and SPEED), so
every process and the fake count the same minutes.
"""

from __future__ import annotations

import asyncio
import sys

from chat.compose import build_application, share_windows
from chat.config import Config
from chat.delivery import Delivery
from chat.notices import Send
from chat.ratelimit import ChatRateLimiter
from storage.postgres import PostgresStore
from tests.bot_harness import FastClock


async def main(url: str, base: str, token: str, start: float, speed: float, group: int,
               count: int, tag: str) -> None:
    clock = FastClock(speed)
    clock.start = start
    config = Config(token=token, database=url, log_level="WARNING",
                    api_base_url=base, overall_rate=30.0)
    app = build_application(config, clock=clock)
    await app.initialize()
    store = await PostgresStore.open(url, clock=clock)
    limiter = app.bot.rate_limiter
    assert isinstance(limiter, ChatRateLimiter)
    delivery = Delivery(app.bot, store, group_limit=config.group_limit, clock=clock,
                        limiter=limiter)
    share_windows(store, limiter, delivery, config.group_limit)
    try:
        print("ready", flush=True)
        task = delivery.run([Send(group, f"{tag} {n}", group=True) for n in range(count)])
        assert task is not None
        results = await task
        print("done" if all(r is True for r in results) else f"failed {results}", flush=True)
    finally:
        await delivery.close()
        await store.close()
        await app.shutdown()


if __name__ == "__main__":
    url, base, token, start, speed, group, count, tag = sys.argv[1:9]
    asyncio.run(main(url, base, token, float(start), float(speed), int(group), int(count),
                     tag))
