"""Telegram's flood limits, paid for only by the chat that caused them.

python-telegram-bot's ``AIORateLimiter`` answers any ``429 Too Many Requests`` by halting
*every* request of the bot for its ``retry_after`` (its documentation says so), so one busy
group froze every other chat for up to a minute. :class:`ChatRateLimiter` implements PTB's
extension point for exactly this, :class:`telegram.ext.BaseRateLimiter`:

- a 429 for a request to one chat pauses that chat alone for its ``retry_after``; the request
  is retried when the pause is over, and other chats go on at once;
- only the bot-wide rate (about 30 requests a second, an ``aiolimiter.AsyncLimiter``, the
  same leaky bucket PTB uses) is shared by all chats, and a 429 for a request that names no
  chat (the bot-wide limit) pauses everything.

With several processes on one PostgreSQL database (the scaled mode) the windows are shared
(:meth:`ChatRateLimiter.share`, :mod:`storage.pg_windows`): a 429's pause is a row every
process reads before it writes to that chat (a 429 that named no chat pauses every process),
the bot-wide rate is one pacing slot all processes take turns on, and each chat is paced to
about one write a second (:data:`CHAT_RATE`, short bursts of :data:`CHAT_BURST`), which one
process alone never needed: its chat's writes queue behind each other in delivery.

Per-group pacing (about 20 messages and edits a minute) is delivery's
:class:`chat.gates.GroupGate`, which can coalesce board posts while it waits; this class
only enforces the pauses Telegram asks for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from aiolimiter import AsyncLimiter
from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

from storage.pg_windows import BOT, FloodWindows

log = logging.getLogger(__name__)

#: Longest single nap while paused: the clock may be a test's, running faster than real time.
NAP = 0.2
#: A request is tried at most this many times more after 429 answers.
MAX_RETRIES = 3
#: Shared windows only: writes a second to one chat (Telegram: "avoid sending more than one
#: message per second in a particular chat"), and how many may go at once after a quiet spell.
CHAT_RATE = 1.0
CHAT_BURST = 3
#: Shared windows only: the bot-wide slots are strictly spaced (a burst on top of the rate
#: would go past Telegram's 30 in a second).
BOT_BURST = 1

JSON = bool | dict[str, Any] | list[dict[str, Any]]


def retry_seconds(exc: RetryAfter) -> float:
    """``retry_after`` in seconds (PTB gives a ``timedelta`` or a number, by version)."""
    wait = getattr(exc, "_retry_after", None)  # a timedelta; the property warns in 22.2+
    if wait is None:
        wait = exc.retry_after
    return wait.total_seconds() if hasattr(wait, "total_seconds") else float(wait)


def is_write(endpoint: str) -> bool:
    """Whether a Bot API method writes into a chat (what Telegram's per-chat limits count)."""
    name = endpoint.lower()
    return name.startswith(("send", "edit", "copy", "forward")) and name != "sendchataction"


class ChatRateLimiter(BaseRateLimiter[int]):
    """Per-chat pauses after a 429 and one bot-wide rate; see the module docstring."""

    def __init__(self, overall_max_rate: float = 30.0, *, max_retries: int = MAX_RETRIES,
                 clock: Callable[[], float] = time.time) -> None:
        self.overall = AsyncLimiter(overall_max_rate, 1.0) if overall_max_rate > 0 else None
        self.max_retries = max_retries
        self.clock = clock
        #: chat id → clock time until which Telegram asked us not to write there.
        self.paused: dict[int | str, float] = {}
        #: Clock time until which every request waits (a 429 that named no chat).
        self.all_paused_until = 0.0
        #: Told of every pause of one chat: (chat id, seconds). Delivery's group gate learns
        #: from it that Telegram's window is full (after a restart it cannot know).
        self.on_pause: Callable[[int | str, float], None] | None = None
        #: Set by the application: told of each 429 and the seconds it asked (metrics).
        self.on_flood_wait: Callable[[float], None] | None = None
        #: The windows every process shares (:meth:`share`); ``None``: this process's own.
        self.windows: FloodWindows | None = None
        self.overall_rate = overall_max_rate
        self.group_limit = 0

    def share(self, windows: FloodWindows, *, group_limit: int) -> None:
        """Keep the pauses and the bot-wide rate in ``windows`` (the scaled mode's
        PostgreSQL), shared with every other process of the bot; a 429 for a group fills
        the group's shared window (``group_limit`` writes) too."""
        self.windows = windows
        self.group_limit = group_limit

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    def pause(self, chat_id: int | str | None, seconds: float) -> None:
        """Hold requests to ``chat_id`` (every request, for ``None``) for ``seconds``."""
        until = self.clock() + seconds
        if chat_id is None:
            self.all_paused_until = max(self.all_paused_until, until)
        else:
            self.paused[chat_id] = max(self.paused.get(chat_id, 0.0), until)
            if self.on_pause is not None:
                self.on_pause(chat_id, seconds)

    def paused_for(self, chat_id: int | str | None) -> float:
        """Seconds (of the clock) until ``chat_id`` may be written to again; 0 if now."""
        now = self.clock()
        until = self.all_paused_until
        if chat_id is not None:
            mine = self.paused.get(chat_id)
            if mine is not None and mine <= now:
                del self.paused[chat_id]  # the table holds only chats paused right now
            elif mine is not None:
                until = max(until, mine)
        return max(0.0, until - now)

    async def wait_until_free(self, chat_id: int | str | None) -> None:
        """Wait out the pauses this process knows of (the shared ones: :meth:`_take_slots`)."""
        while (wait := self.paused_for(chat_id)) > 0:
            await asyncio.sleep(min(wait, NAP))

    async def _sleep_until(self, moment: float) -> None:
        """Sleep until ``moment`` of the clock (in naps: it may run faster than real time)."""
        while (left := moment - self.clock()) > 0:
            await asyncio.sleep(min(left, NAP))

    async def _take_slots(self, chat_id: int | str | None, endpoint: str) -> None:
        """Shared windows: wait out the pauses every process was told of, then for the
        chat's pace (writes only) and the bot's rate. One statement does all of it when
        nothing has to wait (:meth:`~storage.pg_windows.FloodWindows.take`)."""
        assert self.windows is not None
        overall = (self.overall_rate, BOT_BURST) if self.overall_rate > 0 else None
        if isinstance(chat_id, str):  # an @channel name: no row of its own, the bot's rate
            await self.wait_until_free(chat_id)
            if overall is not None:
                await self._sleep_until(await self.windows.reserve(
                    BOT, overall[0], overall[1], self.clock()))
            return
        pace = (CHAT_RATE, CHAT_BURST) if chat_id is not None and is_write(endpoint) else None
        while True:
            await self.wait_until_free(chat_id)
            taken = await self.windows.take(chat_id, self.clock(), pace=pace, overall=overall)
            if taken.paused_until <= self.clock():
                break
            # Paused by another process: remember it here, nap, and ask again.
            if chat_id is None:
                self.all_paused_until = max(self.all_paused_until, taken.paused_until)
            else:
                self.paused[chat_id] = max(self.paused.get(chat_id, 0.0), taken.paused_until)
        if taken.chat_slot is not None:
            await self._sleep_until(taken.chat_slot)
        bot_slot = taken.bot_slot
        if overall is not None and bot_slot is None:  # the chat's pace made it wait
            bot_slot = await self.windows.reserve(BOT, overall[0], overall[1], self.clock())
        if bot_slot is not None:
            await self._sleep_until(bot_slot)

    async def _record_pause(self, chat_id: int | str | None, seconds: float) -> None:
        """A 429: pause here, and for every process when the windows are shared."""
        if self.on_flood_wait is not None:
            self.on_flood_wait(seconds)
        self.pause(chat_id, seconds)
        if self.windows is not None and not isinstance(chat_id, str):
            now = self.clock()
            limit = self.group_limit if chat_id is not None and chat_id < 0 else 0
            await self.windows.pause(chat_id, now + seconds, group_limit=limit, now=now)

    async def process_request(
        self,
        callback: Callable[..., Coroutine[Any, Any, JSON]],
        args: Any,
        kwargs: dict[str, Any],
        endpoint: str,
        data: dict[str, Any],
        rate_limit_args: int | None,
    ) -> JSON:
        chat_id: int | str | None = data.get("chat_id")
        with contextlib.suppress(ValueError, TypeError):
            chat_id = int(chat_id)  # type: ignore[arg-type]
        retries = self.max_retries if rate_limit_args is None else rate_limit_args
        for attempt in range(retries + 1):
            try:
                if self.windows is not None:
                    await self._take_slots(chat_id, endpoint)
                    return await callback(*args, **kwargs)
                await self.wait_until_free(chat_id)
                if self.overall is None:
                    return await callback(*args, **kwargs)
                async with self.overall:
                    return await callback(*args, **kwargs)
            except RetryAfter as exc:
                seconds = retry_seconds(exc)
                await self._record_pause(chat_id, seconds)
                if chat_id is None:
                    log.warning("flood control: %s asked the whole bot to wait %.0f s",
                                endpoint, seconds)
                else:
                    log.warning("flood control: chat %s waits %.0f s (%s)", chat_id, seconds,
                                endpoint)
                if attempt == retries:
                    raise
        raise AssertionError("unreachable")  # the loop returns or raises
