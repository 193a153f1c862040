"""Telegram's flood windows kept in PostgreSQL, shared by every process of the scaled mode.

One process keeps its windows in memory (:mod:`chat.ratelimit`, :class:`chat.delivery.GroupGate`);
with several processes writing for the same bot, to the same groups, each would count only its
own writes and together they would go past Telegram's limits. Here the windows are rows that
every process updates in one short transaction each (the row lock serialises them):

- ``flood_chats``: per chat, and for the whole bot under chat ``0``, the pacing slot of a
  GCRA ("generic cell rate algorithm", the leaky bucket as a single number: the theoretical
  arrival time ``tat`` of the next request) and the end of a pause a 429 asked for;
- ``flood_groups``: per group, the times of its writes (new messages and edits) in the last
  window, for its ~20 a minute.

Times are the callers' clock (epoch seconds; a test's clock may run faster than real time),
so every process of one bot must use the same clock, which NTP gives real machines. Nothing
here sleeps: each call answers how long its caller must wait.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from storage.postgres import Conn, PostgresStore

#: The row of ``flood_chats`` that stands for the whole bot (never a chat id).
BOT = 0


def window_wait(sent: Sequence[float], limit: int, reserve: int, window: float,
                now: float) -> float:
    """Seconds until one more write fits a group's window of writes ``sent`` (sorted): at
    most ``limit`` in any ``window`` seconds, ``reserve`` of them left to others (one may
    always go out); 0 if it fits now."""
    recent = [t for t in sent if t > now - window]
    allowed = max(1, limit - reserve)
    if len(recent) < allowed:
        return 0.0
    return recent[len(recent) - allowed] + window - now


class FloodWindows:
    """The shared windows on a :class:`~storage.postgres.PostgresStore`'s pool."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    async def paused_until(self, chat_id: int | None, now: float) -> float:
        """Until when requests to ``chat_id`` (or every request) must wait: the later of
        the chat's pause and the whole bot's; ``0`` if neither is paused after ``now``."""
        chats = [BOT] if chat_id is None else [BOT, chat_id]

        async def work(conn: Conn) -> float:
            cur = await conn.execute(
                "SELECT COALESCE(MAX(paused_until), 0) AS until FROM flood_chats "
                "WHERE chat_id = ANY(%s) AND paused_until > %s", (chats, now))
            row = await cur.fetchone()
            return float(row["until"]) if row else 0.0

        return await self._store._guard(work)

    async def pause(self, chat_id: int | None, until: float, *,
                    group_limit: int = 0, window: float = 60.0, now: float = 0.0) -> None:
        """Telegram said 429: no request to ``chat_id`` (to anyone, for ``None``) before
        ``until``. For a group (``group_limit`` > 0) its window is full as well: it is
        refilled with ``group_limit`` writes spread over the window ending at ``until``, so
        the first slot opens when the pause ends and the next ones one by one (the same rule
        as :meth:`chat.delivery.GroupGate.saturate`)."""
        key = BOT if chat_id is None else chat_id

        async def work(conn: Conn) -> None:
            await conn.execute(
                "INSERT INTO flood_chats (chat_id, paused_until) VALUES (%s, %s) "
                "ON CONFLICT (chat_id) DO UPDATE SET paused_until = "
                "GREATEST(flood_chats.paused_until, excluded.paused_until)", (key, until))
            if chat_id is not None and group_limit > 0:
                start = until - window
                step = window / group_limit
                sent = [start + i * step for i in range(group_limit)]
                await conn.execute(
                    "INSERT INTO flood_groups (chat_id, sent) VALUES (%s, %s) "
                    "ON CONFLICT (chat_id) DO UPDATE SET sent = excluded.sent",
                    (chat_id, sent))

        await self._store._write(work)

    async def reserve(self, chat_id: int, rate: float, burst: int, now: float) -> float:
        """Take the next slot of ``chat_id``'s pace (``rate`` a second, ``burst`` at once
        after a quiet spell; :data:`BOT` is the whole bot's): when it may be used, the
        caller waits until then. Every caller gets a slot of its own, so callers in every
        process line up at ``1 / rate`` intervals."""
        interval = 1.0 / rate
        tolerance = max(0, burst - 1) * interval

        async def work(conn: Conn) -> float:
            cur = await conn.execute(
                "INSERT INTO flood_chats AS f (chat_id, tat) VALUES (%(c)s, %(first)s) "
                "ON CONFLICT (chat_id) DO UPDATE SET tat = "
                "GREATEST(f.tat, %(earliest)s) + %(t)s RETURNING f.tat - %(t)s AS slot",
                {"c": chat_id, "first": now - tolerance + interval,
                 "earliest": now - tolerance, "t": interval})
            row = await cur.fetchone()
            assert row is not None
            return float(row["slot"])

        return await self._store._write(work)

    async def claim_group(self, chat_id: int, limit: int, reserve: int, window: float,
                          now: float) -> tuple[float, float | None, list[float]]:
        """Take a slot of the group's window if one is free: ``(0, slot, window)`` then,
        with the slot's time for :meth:`written`; else ``(seconds to wait, None, window)``.
        At most ``limit`` writes in any ``window`` seconds, of which ``reserve`` are left to
        others (at least one may always go out). ``window`` is the group's writes as read
        (with the new slot): until the wait it gives is over, asking again is pointless
        (writes only ever leave a window by time), so a caller waits without a query."""

        async def work(conn: Conn) -> tuple[float, float | None, list[float]]:
            await conn.execute("INSERT INTO flood_groups (chat_id) VALUES (%s) "
                               "ON CONFLICT (chat_id) DO NOTHING", (chat_id,))
            cur = await conn.execute(
                "SELECT sent FROM flood_groups WHERE chat_id = %s FOR UPDATE", (chat_id,))
            row = await cur.fetchone()
            assert row is not None
            sent = sorted(t for t in row["sent"] if t > now - window)
            wait = window_wait(sent, limit, reserve, window, now)
            if wait > 0:
                return wait, None, sent
            sent.append(now)
            await conn.execute("UPDATE flood_groups SET sent = %s WHERE chat_id = %s",
                               (sent, chat_id))
            return 0.0, now, sent

        return await self._store._write(work)

    async def written(self, chat_id: int, slot: float, now: float) -> None:
        """The write of ``slot`` is done: date it ``now`` (Telegram counts a write when it
        arrives, which may be well after its slot was taken; see
        :meth:`chat.delivery.GroupGate.written`)."""
        if now <= slot:
            return
        await self._store._change(
            "UPDATE flood_groups SET sent = array_replace(sent, %s::float8, %s::float8) "
            "WHERE chat_id = %s", (slot, now, chat_id))

    async def group_sent(self, chat_id: int) -> Sequence[float]:
        """The group's recorded writes (for tests and diagnostics)."""
        rows: list[Any] = await self._store._select(
            "SELECT sent FROM flood_groups WHERE chat_id = %s", (chat_id,), lambda r: r["sent"])
        return list(rows[0]) if rows else []
