"""Webhook mode's program: ``python -m chat.web`` (or ``python bot.py`` with
``KRENDZU_WEBHOOK_URL`` set), a webhook worker, any number of them behind a balancer.

Telegram posts every update to that URL instead of the bot polling for it. The worker is
built by the composition root (:func:`chat.compose_scaled.running`: the same application as
polling, its ``post_init`` and the job queue with the turn timers, then the web server and
the webhook), and serves:

- ``POST <the URL's path>`` (``/telegram/webhook`` in the docs' examples): one update,
  checked, processed and answered by :class:`chat.webhook.WebhookReceiver` (its docstring:
  the secret, processing inside the request, redelivered updates, the reply outbox, order).
- ``GET /healthz``: 200 ``ok`` (for the balancer).
- the engine protocol (chat/engines_api.py) and the Mini App (chat/miniapp/), when public.

This module only runs it: the signals, the exit status, the configuration's checks.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import time
from collections.abc import Callable

from telegram.error import InvalidToken
from telegram.request import BaseRequest

from chat.botapi import StoppedBeforeStart
from chat.compose_scaled import running
from chat.config import HOW_TO_GET_A_TOKEN, Config, ConfigError, load_config
from chat.eventloop import run
from chat.logs import configure as configure_logging

log = logging.getLogger(__name__)


async def run_webhook(config: Config, *, request: BaseRequest | None = None,
                      clock: Callable[[], float] = time.time,
                      stop: asyncio.Event | None = None) -> None:
    """Run the bot in webhook mode until SIGTERM or SIGINT (or ``stop`` is set)."""
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    try:
        async with running(config, request=request, clock=clock, stop=stop) as bot:
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait({bot.serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if stop.is_set():
                log.info("stopping: requests in progress finish first")
    except StoppedBeforeStart:
        log.info("stopped before the Bot API answered")
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


def serve(config: Config) -> int:
    """Run webhook mode in this process until SIGTERM (logging set up by the caller)."""
    try:
        run(run_webhook(config))
    except InvalidToken:
        log.error("Telegram rejected the bot token (TELEGRAM_BOT_TOKEN): check it with "
                  "@BotFather (/mybots → API Token).")
        return 1
    return 0


def main() -> int:
    """``python -m chat.web``: a webhook worker (any number of them behind a balancer)."""
    try:
        config = load_config()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    if not config.token:
        print(HOW_TO_GET_A_TOKEN, file=sys.stderr)
        return 78  # EX_CONFIG, as bot.py
    if not config.webhook_url:
        print("KRENDZU_WEBHOOK_URL is not set: `python bot.py` polls for updates instead.",
              file=sys.stderr)
        return 1
    configure_logging(config.log_level, config.token, config.webhook_secret,
                      log_format=config.log_format)
    return serve(config)


if __name__ == "__main__":
    sys.exit(main())
