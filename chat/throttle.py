"""Per-user and per-chat limits, checked once per update before any handler runs.

Without them one person could delay every board post in a group (40 x ``/rules@bot`` took a
group's whole message allowance for minutes) or keep the bot busy for everyone. Each user and
each chat has a leaky bucket (``aiolimiter.AsyncLimiter``, the library PTB's own rate limiter
uses), and information replies (/rules, /help, /stats, /top, /history, /export, /board,
/score, /moves) have tighter ones. Over a limit, the sender is told politely once, then
ignored until the bucket has room again. Moves and buttons of honest players never come near
the limits.

A group's information budget counts distinct answers, not requests (issue 43): an
information command is counted against its sender's buckets when it arrives
(:meth:`Throttle.admit`), but against the group's only when it makes a new answer
(:meth:`Throttle.new_answer`, asked by ``chat/handlers/replies.py``); a repeat of a recent
answer gets a pointer to it or nothing (:mod:`chat.answers`), and one person's new answers
may take at most half of the group's budget. So one person repeating a command, or asking for
everything in turn, uses up their own budget, never the group's.
"""

from __future__ import annotations

import time
from collections.abc import Hashable

from aiolimiter import AsyncLimiter

#: Commands whose answers are information, not play: they wait behind play in delivery too.
INFO_COMMANDS = frozenset({"rules", "help", "stats", "top", "history", "export", "board",
                           "score", "moves",
                           # Not information, but a queue toggled by one person: the same
                           # few a minute keep anyone from churning the shared pool.
                           "playnow"})
#: Buckets kept before idle (full) ones are forgotten.
MAX_BUCKETS = 4096
#: A refused user is told at most once in this many seconds.
WARN_EVERY = 60.0


class Buckets:
    """One leaky bucket per key, created on first use, idle ones dropped past a bound."""

    def __init__(self, per_minute: float, *, max_buckets: int = MAX_BUCKETS) -> None:
        self.per_minute = per_minute
        self.max_buckets = max_buckets
        self._buckets: dict[Hashable, AsyncLimiter] = {}

    def _bucket(self, key: Hashable) -> AsyncLimiter:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_buckets:
                for old, limiter in list(self._buckets.items()):
                    if limiter.has_capacity(limiter.max_rate):
                        del self._buckets[old]  # full again: nothing to remember
            bucket = self._buckets[key] = AsyncLimiter(self.per_minute, 60.0)
        return bucket

    def has_room(self, key: Hashable) -> bool:
        return self.per_minute <= 0 or self._bucket(key).has_capacity()

    async def take(self, key: Hashable) -> None:
        if self.per_minute > 0:
            await self._bucket(key).acquire()  # has_room was checked: returns at once

    def __len__(self) -> int:
        return len(self._buckets)


class Throttle:
    """Decides whether an update is served; see the module docstring."""

    def __init__(self, *, user_per_minute: float = 120, info_per_user: float = 6,
                 info_per_chat: float = 12) -> None:
        self.updates = Buckets(user_per_minute)
        self.info_users = Buckets(info_per_user)
        self.info_chats = Buckets(info_per_chat)
        #: One person's share of a group's distinct answers (by (chat, user)): at most half
        #: of them, so the others always have the rest.
        self.info_shares = Buckets(info_per_chat / 2)
        #: Users told to slow down, and when (told once a minute at most).
        self.warned: dict[int, float] = {}
        self.refused = 0

    async def admit(self, user_id: int, chat_id: int, *, info: bool) -> tuple[bool, bool]:
        """(serve it, tell the sender to slow down): an update within the limits is counted
        and served; one over them is dropped, and the sender told the first time in a
        minute. A group's information budget is not counted here (:meth:`new_answer`)."""
        buckets = [(self.updates, user_id)]
        if info:
            buckets.append((self.info_users, user_id))
            if chat_id > 0:  # a private chat's budget is its one person's
                buckets.append((self.info_chats, chat_id))
        if all(b.has_room(k) for b, k in buckets):
            for b, k in buckets:
                await b.take(k)
            return True, False
        self.refused += 1
        return False, self.warn_once(user_id)

    async def new_answer(self, chat_id: int, user_id: int) -> bool:
        """Whether a group may get one more distinct information answer this minute, asked
        by ``user_id`` (and count it): within the group's budget, and within half of it for
        one person, so one person never uses it up for the others. Repeats of a recent
        answer are never counted (:mod:`chat.answers`)."""
        share = (chat_id, user_id)
        if not (self.info_chats.has_room(chat_id) and self.info_shares.has_room(share)):
            self.refused += 1
            return False
        await self.info_chats.take(chat_id)
        await self.info_shares.take(share)
        return True

    def warn_once(self, user_id: int) -> bool:
        """Whether to tell ``user_id`` to slow down now: the first time in a minute, however
        their updates were refused (here, or dropped while waiting: chat/updates.py)."""
        now = time.monotonic()
        if now - self.warned.get(user_id, -WARN_EVERY) < WARN_EVERY:
            return False
        if len(self.warned) > MAX_BUCKETS:
            self.warned = {u: t for u, t in self.warned.items() if now - t < WARN_EVERY}
        self.warned[user_id] = now
        return True
