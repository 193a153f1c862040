"""Small bounded caches for answers that are asked for again and again.

Information commands are cheap to send and can be expensive to answer: a replay GIF takes
a drawing process a second, a global leaderboard sums every player's statistics, an admin
check is a Bot API call. A person (or a script) repeating them must not multiply that work,
so each answer is kept briefly and the memory it takes is bounded:

- :class:`TtlCache` keeps values for ``ttl`` seconds (leaderboards, admin checks);
- :class:`ByteLru` keeps the most recently used byte strings within a byte budget (export
  records, drawn pictures).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class TtlCache(Generic[K, V]):
    """Values that expire ``ttl`` seconds after they were stored; at most ``size`` of them
    (the oldest go first), so a flood of distinct keys cannot grow it."""

    def __init__(self, ttl: float, size: int = 1024,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl = ttl
        self.size = size
        self.clock = clock
        self._items: OrderedDict[K, tuple[float, V]] = OrderedDict()

    def get(self, key: K) -> V | None:
        """The value stored under ``key`` if it has not expired, else None."""
        item = self._items.get(key)
        if item is None:
            return None
        if item[0] <= self.clock():
            del self._items[key]
            return None
        return item[1]

    def put(self, key: K, value: V) -> None:
        self._items.pop(key, None)
        self._items[key] = (self.clock() + self.ttl, value)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def drop(self, key: K) -> None:
        self._items.pop(key, None)

    def __len__(self) -> int:
        return len(self._items)


class ByteLru(Generic[K]):
    """Byte strings by key, the least recently used dropped first once they hold more than
    ``max_bytes`` in all or number more than ``size``. A value larger than the whole budget
    is not kept (it would only push everything else out)."""

    def __init__(self, max_bytes: int, size: int = 64) -> None:
        self.max_bytes = max_bytes
        self.size = size
        self.bytes = 0
        self._items: OrderedDict[K, bytes] = OrderedDict()

    def get(self, key: K) -> bytes | None:
        data = self._items.get(key)
        if data is not None:
            self._items.move_to_end(key)
        return data

    def put(self, key: K, data: bytes) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self.bytes -= len(old)
        if len(data) > self.max_bytes:
            return
        self._items[key] = data
        self.bytes += len(data)
        while self.bytes > self.max_bytes or len(self._items) > self.size:
            _, dropped = self._items.popitem(last=False)
            self.bytes -= len(dropped)

    def __len__(self) -> int:
        return len(self._items)
