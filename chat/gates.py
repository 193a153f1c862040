"""A group's window of Telegram's flood limit, as delivery's worker uses it: at most
``limit`` new messages *and edits* in any 60 seconds (Telegram counts both against about 20
a group). :class:`GroupGate` is one process's (the embedded mode; seeded after a restart from
the writes the store noted, :meth:`GroupGate.seed`); :class:`SharedGate` is the scaled mode's,
kept in PostgreSQL for every process (:mod:`storage.pg_windows`)."""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from storage.pg_windows import BoardLook, FloodWindows, Lease, LeaseAsk, Renewal, window_wait

log = logging.getLogger(__name__)

T = TypeVar("T")
Claimed = tuple[float, float | None, list[float]]


class Renewing(Protocol):
    """:meth:`chat.ratelimit.ChatRateLimiter.renewing`: runs a transaction of the shared
    windows that may renew the process's lease of bot-wide calls on the way."""

    async def __call__(self, work: Callable[[LeaseAsk | None],
                                            Awaitable[tuple[T, Lease | None]]]) -> T: ...


async def no_lease(work: Callable[[LeaseAsk | None], Awaitable[tuple[T, Lease | None]]]
                   ) -> T:
    """A :class:`Renewing` for gates without a rate limiter's lease: ``work`` alone."""
    return (await work(None))[0]

WINDOW = 60.0
#: Seconds a slot taken by :meth:`SharedGate.wait` waits for its write: the board job posts
#: right after asking. Older, it is left as a write that did not happen (the window keeps it
#: until it ends) and the write claims a slot of its own, dated then.
READY_FOR = 5.0
#: Seconds after its claim by which a shared group write has reached Telegram, as a rule:
#: the window records it then (:meth:`storage.pg_windows.FloodWindows.claim_group`), so that
#: its claim is its only statement; a write that ends later is re-dated when it does. The
#: group's window is that much longer for the writes (19 in 62 s rather than 60).
ARRIVES_WITHIN = 2.0


class Gate(Protocol):
    """A group's window as delivery's worker uses it."""

    async def claim(self, reserve: int = 0) -> float:
        """Take a slot and return 0, or return the seconds until one may be free."""

    async def wait(self, look: BoardLook | None = None) -> float:
        """The seconds until a slot may be free (0: now). A shared gate takes the slot that
        is free now for the play write that follows, and takes ``look`` in the same
        statement when it asks the database (:meth:`SharedGate.wait`)."""
        ...

    async def done(self) -> None:
        """The write of the slot taken last is done (see :meth:`GroupGate.written`)."""
        ...


class GroupGate:
    """Sliding-window limit of new messages and edits per group chat (one process's)."""

    def __init__(self, limit: int, window: float = WINDOW,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self.sent: deque[float] = deque()

    def wait_time(self, reserve: int = 0) -> float:
        """Seconds until a write may go out, leaving ``reserve`` slots of the window free
        (information replies leave room for play)."""
        now = self.clock()
        while self.sent and self.sent[0] <= now - self.window:
            self.sent.popleft()
        allowed = max(1, self.limit - reserve)
        if len(self.sent) < allowed:
            return 0.0
        return self.sent[len(self.sent) - allowed] + self.window - now

    def take(self) -> None:
        self.sent.append(self.clock())

    async def wait(self, look: BoardLook | None = None) -> float:
        return self.wait_time()  # nothing asked of a store: ``look`` is not taken

    async def claim(self, reserve: int = 0) -> float:
        wait = self.wait_time(reserve)
        if wait <= 0:
            self.take()
        return wait

    async def done(self) -> None:
        self.written()

    def saturate(self, retry_after: float) -> None:
        """Telegram said 429 for ``retry_after``: its window is full (writes this gate never
        saw, e.g. of the process before a restart). Assume ``limit`` writes spread over the
        window ending then, so the first slot opens when the pause ends and the next ones
        one by one, instead of a burst that would meet another 429."""
        # The refused write itself is sent again when the pause ends (the rate limiter
        # retries it without a slot), so the first slot of this gate opens one step later.
        step = self.window / self.limit
        start = self.clock() + retry_after - self.window + step
        self.sent = deque(start + i * step for i in range(self.limit))

    def seed(self, times: list[float]) -> None:
        """Writes made before this gate existed (a restart: the moves the process before
        posted), dated by ``times``, so the window holds them as Telegram's does."""
        self.sent = deque(sorted([*times, *self.sent])[-self.limit:])


    def written(self) -> None:
        """The write taken last is done: date it now. Telegram counts it when it arrives,
        which may be well after the slot was taken (a picture drawn, the bot-wide rate), and
        a window of slot times alone could then hold 20 arrivals."""
        if self.sent:
            self.sent[-1] = max(self.sent[-1], self.clock())


class SharedGate:
    """A group's window kept in the database, shared by every process writing to the group
    (:class:`storage.pg_windows.FloodWindows`). Telegram's 429 fills it there
    (:meth:`chat.ratelimit.ChatRateLimiter.share`). A write costs one statement, its claim,
    which dates it :data:`ARRIVES_WITHIN` ahead; :meth:`done` re-dates it only when it ended
    later than that."""

    def __init__(self, windows: FloodWindows, chat_id: int, limit: int,
                 window: float = WINDOW, clock: Callable[[], float] = time.time,
                 renewing: Renewing = no_lease) -> None:
        self.windows = windows
        #: The rate limiter's: a claim renews its lease of bot-wide calls when due.
        self.renewing = renewing
        self.chat_id = chat_id
        self.limit = limit
        self.window = window
        self.clock = clock
        self.slot: float | None = None
        #: A slot :meth:`wait` took for the play write that follows it, not yet claimed.
        self.ready: float | None = None
        #: The group's writes as last read: while they say the window is full, it is (a
        #: write leaves the window only by time), and the database is not asked again.
        self.known: list[float] = []

    async def wait(self, look: BoardLook | None = None) -> float:
        """The seconds until the group's window lets a write out; when it lets one out now,
        that slot is taken at once for the play write that follows (the scaled mode's board
        job asks, then posts): one statement instead of a look and a claim. A slot taken
        and not used stays in the window as a write (the group writes one less in it).
        ``look`` (the board job's look at its match's newest post) is taken by the same
        statement when one is made; while a slot taken before still waits, none is, and
        ``look`` is handed nothing."""
        if self.ready is not None and self._age(self.ready) <= READY_FOR:
            return 0.0
        self.ready = None
        wait, slot, self.known = await self._claim(0, look)
        self.ready = slot
        return wait

    async def _claim(self, reserve: int, look: BoardLook | None = None) -> Claimed:
        """A slot of the window (one transaction), renewing the lease of bot-wide calls
        with it when due (the write itself spends one of them next)."""

        async def work(ask: LeaseAsk | None) -> tuple[Claimed, Lease | None]:
            leased: list[Lease] = []
            claimed = await self.windows.claim_group(
                self.chat_id, self.limit, reserve, self.window, self.clock(),
                ARRIVES_WITHIN, None if ask is None else Renewal(ask, leased.append), look)
            return claimed, leased[0] if leased else None

        return await self.renewing(work)

    def _age(self, slot: float) -> float:
        """Seconds since the slot dated ``slot`` was claimed."""
        return self.clock() + ARRIVES_WITHIN - slot

    async def claim(self, reserve: int = 0) -> float:
        if self.ready is not None and reserve == 0:
            ready, self.ready = self.ready, None
            if self._age(ready) <= READY_FOR:
                self.slot = ready  # taken by wait() just before, for this play write
                return 0.0
        wait = window_wait(self.known, self.limit, reserve, self.window, self.clock())
        if wait > 0:
            return wait
        wait, slot, self.known = await self._claim(reserve)
        if slot is not None:
            self.slot = slot
        return wait

    async def done(self) -> None:
        slot, self.slot = self.slot, None
        if slot is not None and self.clock() > slot:  # else it is dated late enough
            try:
                await self.windows.written(self.chat_id, slot, self.clock())
            except Exception:  # the slot keeps its earlier time: a little less margin
                log.warning("group %s: the write's time could not be stored", self.chat_id,
                            exc_info=True)
