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
(:meth:`ChatRateLimiter.share`, :mod:`storage.pg_windows`), at about one transaction for
several calls rather than one a call (issue 39):

- the bot-wide rate: a process leases a block of calls of it in one transaction
  (:meth:`~storage.pg_windows.FloodWindows.lease`) and spends them in memory. A quiet bot's
  lease serves a few seconds (:data:`LEASE_HOLD`), while such leases hold at most a third of
  the rate; a busy bot's serves a fifth of a second (:data:`LEASE_SHORT_HOLD`). Unused calls
  expire, and the next lease gives them back and dates the used ones when they ended. A
  group write's claim of its window renews the lease in the same transaction once half of
  it is spent (:meth:`ChatRateLimiter.renewing`), so that a move's calls cost the windows
  about one transaction, its board post's claim;
- a 429's pause is a row: a process reads the bot's and the chat's when it leases, and a
  group's pause fills the group's shared window, which every write to the group claims a
  slot of (:class:`chat.gates.SharedGate`); a process holding a lease learns of another's
  pause of a private chat only by its own 429, which pauses it as well;
- each chat is paced to about one write a second (:data:`CHAT_RATE`, short bursts of
  :data:`CHAT_BURST`) in each process's memory: one process never writes faster to a chat,
  and two write to one person at once seldom enough that Telegram (which asks to "avoid"
  more, and does not limit private chats strictly) has not minded. A shared per-chat pace
  cost a transaction a write.

Per-group pacing (about 20 messages and edits a minute) is delivery's
:class:`chat.gates.GroupGate`, which can coalesce board posts while it waits; this class
only enforces the pauses Telegram asks for.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiolimiter import AsyncLimiter
from telegram.error import RetryAfter
from telegram.ext import BaseRateLimiter

from storage.pg_windows import FloodWindows, Lease, LeaseAsk

log = logging.getLogger(__name__)

T = TypeVar("T")

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
#: Shared windows only: seconds a quiet bot's lease of calls lasts, and the share of the
#: bot-wide rate such leases may hold together (the rest is left to busy processes' short
#: leases, so that a lease nobody spends never starves another process for long).
LEASE_HOLD = 5.0
LEASE_LONG_SHARE = 1 / 3
#: ... a busy bot's lease: seconds it lasts.
LEASE_SHORT_HOLD = 0.2
#: Fewest calls a lease asks for; it asks for more from what the process called lately.
LEASE_MIN = 10
#: Seconds after a lease's end by which a call begun before it has reached Telegram.
LEASE_LEAD = 0.2

JSON = bool | dict[str, Any] | list[dict[str, Any]]


@dataclass
class Held:
    """A lease of bot-wide calls this process spends (:meth:`FloodWindows.lease`)."""

    recorded: float  # the time the shared window keeps for each of its calls
    calls: int
    left: int
    start: float
    until: float
    #: When its calls that are over ended (the window keeps them so once given back).
    ends: list[float] = field(default_factory=list)
    under_way: int = 0


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
        #: Shared windows: the lease of bot-wide calls spent now, one lease at a time.
        self.held: Held | None = None
        self._leasing = asyncio.Lock()
        self._waiting = 0  # calls waiting for the lease
        #: Shared windows: when this process's calls began lately (what a lease asks for).
        self._begun: deque[float] = deque()
        #: Shared windows: each chat's pace in this process (GCRA's ``tat``).
        self._chat_tat: dict[int | str, float] = {}

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
        """Wait out the pauses this process knows of (the shared ones: :meth:`_spend`)."""
        while (wait := self.paused_for(chat_id)) > 0:
            await asyncio.sleep(min(wait, NAP))

    async def _sleep_until(self, moment: float) -> None:
        """Sleep until ``moment`` of the clock (in naps: it may run faster than real time)."""
        while (left := moment - self.clock()) > 0:
            await asyncio.sleep(min(left, NAP))

    def _pace_chat(self, chat_id: int | str) -> float:
        """The slot of ``chat_id``'s pace for one more write, in this process (the clock
        time it may go; a GCRA: the theoretical arrival time of its next write)."""
        now = self.clock()
        interval = 1.0 / CHAT_RATE
        tolerance = max(0, CHAT_BURST - 1) * interval
        if len(self._chat_tat) > 4096:  # forget the chats whose pace is back to a burst
            self._chat_tat = {c: t for c, t in self._chat_tat.items() if t > now - tolerance}
        slot = max(self._chat_tat.get(chat_id, 0.0), now - tolerance)
        self._chat_tat[chat_id] = slot + interval
        return slot

    def _wants(self, now: float) -> tuple[tuple[int, float], tuple[int, float], int]:
        """What to lease: a quiet bot's lease and a busy one's (``(calls, seconds)``), as
        this process called lately (twice as many) and at least for every call
        waiting now, and the share quiet leases may hold."""
        while self._begun and self._begun[0] <= now - LEASE_HOLD:
            self._begun.popleft()
        per_second = (len(self._begun) + 1) / LEASE_HOLD
        cap = max(1, int(self.overall_rate * LEASE_LONG_SHARE))
        waiting = self._waiting + 1
        long = min(cap, max(LEASE_MIN, waiting, math.ceil(2 * per_second * LEASE_HOLD)))
        short = max(waiting, math.ceil(1.5 * per_second * LEASE_SHORT_HOLD))
        return (long, LEASE_HOLD), (short, LEASE_SHORT_HOLD), cap

    async def _spend(self, chat_id: int | str | None) -> Held | None:
        """One call of the lease held, leasing anew when it is spent or over (one
        transaction for many calls); ``None``: none now (a pause, or the bot's rate is
        spent by every process: this waited for the window, the caller looks again)."""
        assert self.windows is not None
        self._waiting += 1
        try:
            await self._leasing.acquire()
        finally:
            self._waiting -= 1
        try:
            held, now = self.held, self.clock()
            if held is None or held.left <= 0 or now > held.until:
                lease = await self.windows.lease(self._ask(
                    now, chat_id if isinstance(chat_id, int) else None))
                held = self._install(lease, chat_id, now)
                if held is None:
                    if lease.calls <= 0 and not (lease.bot_paused or lease.chat_paused):
                        await self._sleep_until(now + lease.wait)
                    return None
            held.left -= 1
            held.under_way += 1
            self._begun.append(now)
            return held
        finally:
            self._leasing.release()

    def _ask(self, now: float, chat_id: int | None) -> LeaseAsk:
        """The next lease to ask for, giving back the one held (see :meth:`_spend`)."""
        held = self.held
        give_back = None if held is None else (held.recorded, held.calls)
        used = [] if held is None else [*held.ends, *[held.recorded] * held.under_way]
        long, short, cap = self._wants(now)
        return LeaseAsk(now, self.overall_rate, long, short, cap, LEASE_LEAD, chat_id,
                        give_back, used)

    def _install(self, lease: Lease, chat_id: int | str | None, now: float) -> Held | None:
        """Hold ``lease`` (the one before was given back), and remember its pauses."""
        self.held = None
        if lease.bot_paused:  # paused by another process: remember it here
            self.all_paused_until = max(self.all_paused_until, lease.bot_paused)
        if lease.chat_paused and chat_id is not None:
            self.paused[chat_id] = max(self.paused.get(chat_id, 0.0), lease.chat_paused)
        if lease.calls <= 0:
            return None
        self.held = Held(lease.recorded, lease.calls, lease.calls, now, lease.until)
        return self.held

    async def renewing(self, work: Callable[[LeaseAsk | None], Awaitable[tuple[T, Lease | None]]]
                       ) -> T:
        """Run ``work``, a transaction of the shared windows (a group write's claim), and
        let it renew this process's lease of bot-wide calls on the way when that is due
        (half of it spent or of its time gone): the group's board post then costs the
        windows one transaction for its claim and the calls of the moves after it."""
        if self.windows is None or self.overall_rate <= 0 or self._leasing.locked():
            return (await work(None))[0]
        async with self._leasing:
            held, now = self.held, self.clock()
            if held is not None and held.left * 2 > held.calls and \
                    (held.until - now) * 2 > held.until - held.start:
                return (await work(None))[0]
            result, lease = await work(self._ask(now, None))
            if lease is not None:
                self._install(lease, None, now)
            return result

    async def _shared_call(self, chat_id: int | str | None, endpoint: str,
                           callback: Callable[..., Coroutine[Any, Any, JSON]],
                           args: Any, kwargs: dict[str, Any]) -> JSON:
        """Shared windows: wait out the pauses this process knows of, the chat's pace
        (writes only) and a call of the bot-wide lease, then call; the call's end is
        noted for the lease's return (see the module docstring)."""
        if chat_id is not None and is_write(endpoint):
            await self.wait_until_free(chat_id)
            await self._sleep_until(self._pace_chat(chat_id))
        while True:
            await self.wait_until_free(chat_id)
            if self.overall_rate <= 0:
                return await callback(*args, **kwargs)
            held = await self._spend(chat_id)
            if held is not None:
                break
        try:
            return await callback(*args, **kwargs)
        finally:
            held.under_way -= 1
            held.ends.append(self.clock())

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
                    return await self._shared_call(chat_id, endpoint, callback, args,
                                                   kwargs)
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
