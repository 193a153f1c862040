"""In-process news of stored changes, for the engine protocol's streams (issue 31).

After every stored change of a match that is announced (its start, each move: the one path
is :meth:`chat.flow.broadcast.Broadcast.change`) the match's event is set, and a stream
waiting on it reads the match again at once. A stream never trusts the signal alone: it
waits at most a second and then compares the match's head with what it sent (a resignation,
a cancellation or a move made by another process reaches it that way).

Across processes (the scaled mode, on PostgreSQL) every stored change of a match is also
``NOTIFY krendzu_match, '<match id>'``-ed in the transaction that stores it; the engine
protocol has the store ``LISTEN`` on one connection of its own per process
(:meth:`storage.Store.listen`) and set the same events, so a stream served by any worker
learns of a move made on another within milliseconds. On SQLite the one-second re-read bounds
the delay. A stream cut by a killed worker resumes on reconnect with a fresh ``gameFull``.

A revoked token (``/engine token``, ``/engine delete``) wakes every stream the same way
(:meth:`Signals.wake_all`: in this process at once, in the others by ``NOTIFY
krendzu_engine``), and a stream whose token no longer works closes.
"""

from __future__ import annotations

import asyncio
import contextlib


class Signals:
    """One event per match that someone waits on, plus one for "some match changed"."""

    def __init__(self) -> None:
        self._events: dict[int, asyncio.Event] = {}
        self._any = asyncio.Event()
        #: How many times :meth:`wake_all` ran: a stream that read it before checking its
        #: token and sees it changed checks again instead of waiting (no wake is lost
        #: between its check and its wait).
        self.revocations = 0

    def changed(self, match_id: int) -> None:
        """A change of ``match_id`` was stored: wake whoever waits on it (and on any)."""
        event = self._events.pop(match_id, None)
        if event is not None:
            event.set()
        self._any.set()
        self._any = asyncio.Event()

    def wake_all(self, engine_id: int | None = None) -> None:
        """An engine's token was revoked (``/engine token`` made a new one, or ``/engine
        delete``): wake every waiting stream of this process at once, and each checks its
        token before it sends anything more (a stream of a revoked token closes). Rare
        enough that waking all (one re-read each) beats keeping events per engine;
        ``engine_id`` is taken so that it fits :meth:`storage.Store.listen`'s callback."""
        del engine_id
        self.revocations += 1
        events, self._events = self._events, {}
        for event in events.values():
            event.set()
        self._any.set()
        self._any = asyncio.Event()

    async def wait(self, match_id: int | None, timeout: float) -> bool:
        """Until ``match_id`` (``None``: any match) changes or ``timeout`` seconds pass;
        whether it changed."""
        if match_id is None:
            event = self._any
        else:
            event = self._events.setdefault(match_id, asyncio.Event())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), timeout)
            return True
        return False
