"""The Bot API at start: a worker waits for Telegram to answer instead of dying in a loop.

Used by the composition root (chat/compose_scaled.py) for the webhook worker and the job worker,
whose programs (chat/web.py, ``python -m chat.jobs``) end quietly on :class:`StoppedBeforeStart`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from telegram.error import BadRequest, NetworkError
from telegram.ext import Application

log = logging.getLogger(__name__)


class StoppedBeforeStart(Exception):
    """Asked to stop while waiting for the Bot API to answer (nothing was started)."""


async def reach_bot_api(application: Application, *, stop: asyncio.Event | None = None,
                        first_wait: float = 1.0, longest_wait: float = 30.0) -> bool:
    """Initialise ``application`` (its ``getMe``) as soon as the Bot API answers.

    A worker started while Telegram or the network is away waits for it, saying so at each
    try (waits doubling up to ``longest_wait``), instead of exiting and being restarted in a
    loop by its supervisor. A token Telegram rejects (``InvalidToken``) or a request it
    refuses is raised at once: waiting would not change the answer. ``False`` if ``stop``
    was set first (SIGTERM while waiting)."""
    wait = first_wait
    while True:
        try:
            await application.initialize()
            return True
        except BadRequest:
            raise
        except NetworkError as exc:  # TimedOut too; InvalidToken is not a NetworkError
            log.warning("the Bot API cannot be reached (%s: %s); trying again in %.0f s",
                        type(exc).__name__, exc, wait)
        if stop is None:
            await asyncio.sleep(wait)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)
            if stop.is_set():
                return False
        wait = min(longest_wait, wait * 2)
