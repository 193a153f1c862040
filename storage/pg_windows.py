"""Telegram's flood windows kept in PostgreSQL, shared by every process of the scaled mode.

One process keeps its windows in memory (:mod:`chat.ratelimit`, :class:`chat.gates.GroupGate`);
with several processes writing for the same bot, to the same groups, each would count only its
own writes and together they would go past Telegram's limits. Here the windows are rows that
every process updates in one short transaction each (the row lock serialises them), and a
process asks as seldom as it can (issue 39: a move paid 7 of them, one a Bot API call):

- ``flood_chats``: per chat, and for the whole bot under chat ``0``, the end of a pause a 429
  asked for (its column ``tat``, a GCRA's pacing slot per request, is what the rate limiter
  took for every call before it leased blocks; nothing reads it now);
- ``flood_groups``: per group, the times of its writes (new messages and edits) in the last
  window, for its ~20 a minute; and under chat ``0`` (:data:`BOT`) the bot-wide calls a
  process leased (:meth:`FloodWindows.lease`): a block of the ~30 a second it spends in
  memory, each dated by the last moment it may arrive.

A time kept in either window is never earlier than the call it stands for reaches Telegram
(a group's write is dated when its slot is claimed plus a lead, and re-dated only when it
came later, :meth:`FloodWindows.written`; a leased call by the end of its lease). That is
what makes the count safe: a call arrives after it was claimed and before its recorded time,
so the last claim of any calls Telegram sees within one window found all the others still
in the window it counted.

Times are the callers' clock (epoch seconds; a test's clock may run faster than real time),
so every process of one bot must use the same clock, which NTP gives real machines. Nothing
here sleeps: each call answers how long its caller must wait.
"""
from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, TypeVar

from psycopg import AsyncConnection
from psycopg.rows import DictRow

T = TypeVar("T")
R = TypeVar("R")
#: A connection of the store's pool (as :data:`storage.postgres.Conn`).
Conn = AsyncConnection[DictRow]
Params = Sequence[Any] | Mapping[str, Any]

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


class LeaseAsk(NamedTuple):
    """What a process asks of :meth:`FloodWindows.lease` (see there)."""

    now: float
    rate: float
    long: tuple[int, float]
    short: tuple[int, float]
    long_cap: int
    lead: float
    chat_id: int | None = None
    returned: tuple[float, int] | None = None
    used: Sequence[float] = ()


class Renewal(NamedTuple):
    """A lease asked for with a group's claim (:meth:`FloodWindows.claim_group`), and who
    is handed it."""

    ask: LeaseAsk
    leased: Callable[[Lease], None]


class BoardLook(NamedTuple):
    """A look at a match's newest board post taken with a group's claim
    (:meth:`FloodWindows.claim_group`), and who is handed it: ``(message id, caption)``, or
    ``None`` when the match has none."""

    match_id: int
    seen: Callable[[tuple[int, str] | None], None]


class Lease(NamedTuple):
    """What :meth:`FloodWindows.lease` answered: the ends of the pauses on (0: none) of the
    whole bot and of the chat, how many calls were leased (``calls``, 0 under a pause or
    when none fits now), the last moment they may be made (``until``), the time the window
    keeps for each (``recorded``), and, with none leased, the seconds until one may be."""

    bot_paused: float
    chat_paused: float
    calls: int
    until: float
    recorded: float
    wait: float


#: :meth:`FloodWindows.lease`'s first statement: the pauses that hold the call (the bot's,
#: the chat's) and the bot's leased calls still in the window, row locked until the lease is
#: written (``FOR UPDATE``: a second leaser reads the first's calls).
_LEASED = """
SELECT (SELECT COALESCE(MAX(paused_until), 0) FROM flood_chats
        WHERE chat_id = 0 AND paused_until > %(now)s) AS bot,
       (SELECT COALESCE(MAX(paused_until), 0) FROM flood_chats
        WHERE chat_id = %(chat)s AND paused_until > %(now)s) AS chat,
       ARRAY(SELECT t FROM unnest(sent) AS t WHERE t > %(since)s ORDER BY t) AS recent
FROM flood_groups WHERE chat_id = 0 FOR UPDATE
"""


#: :meth:`FloodWindows.claim_group`'s statement: the group's row locked (``FOR UPDATE`` reads
#: the newest version after waiting for another writer), its writes still in the window, and
#: the new write added when it fits; ``took`` says whether it did. No row: none is made here.
#: With the newest board post of match ``m`` (none when ``m`` is NULL: :class:`BoardLook`).
_CLAIM = """
WITH old AS (
    SELECT ARRAY(SELECT t FROM unnest(sent) AS t WHERE t > %(since)s ORDER BY t) AS recent
    FROM flood_groups WHERE chat_id = %(c)s FOR UPDATE),
upd AS (
    UPDATE flood_groups AS g SET sent = old.recent || %(at)s::float8 FROM old
    WHERE g.chat_id = %(c)s AND cardinality(old.recent) < %(allowed)s
    RETURNING 1)
SELECT old.recent, EXISTS (SELECT 1 FROM upd) AS took, b.board_message_id, b.board_caption
FROM old LEFT JOIN matches AS b ON b.match_id = %(m)s
"""


class Transactions(Protocol):
    """What the windows borrow of the store that owns them (a
    :class:`~storage.postgres.PostgresStore`, which builds them): its ways of running work on
    its pool. Named here, so that this module needs nothing of the store's and the store's
    module and this one do not import each other."""

    async def _guard(self, work: Callable[[Conn], Awaitable[T]]) -> T: ...

    async def _write(self, op: Callable[[Conn], Awaitable[T]]) -> T: ...

    async def _change(self, sql: str, params: Params) -> int: ...

    async def _select(self, sql: str, params: Params,
                      map_row: Callable[[dict[str, Any]], R]) -> list[R]: ...


async def _fetch_one(conn: Conn, sql: str, params: Params) -> dict[str, Any] | None:
    cur = await conn.execute(sql, params)
    return await cur.fetchone()


async def _window_row(conn: Conn, sql: str, params: dict[str, Any], chat_id: int
                      ) -> dict[str, Any]:
    """``sql``'s row on the window of ``chat_id`` in ``flood_groups``, the row made first
    when the window has none (its first write, or the bot's first lease)."""
    row = await _fetch_one(conn, sql, params)
    if row is None:
        await conn.execute("INSERT INTO flood_groups (chat_id) VALUES (%s) "
                           "ON CONFLICT (chat_id) DO NOTHING", (chat_id,))
        row = await _fetch_one(conn, sql, params)
        assert row is not None
    return row


async def _claim(conn: Conn, chat_id: int, limit: int, reserve: int, window: float,
                 now: float, lead: float, look: BoardLook | None = None
                 ) -> tuple[float, float | None, list[float]]:
    """:meth:`FloodWindows.claim_group`'s statement, on ``conn``."""
    params = {"c": chat_id, "since": now - window, "now": now, "at": now + lead,
              "allowed": max(1, limit - reserve),
              "m": look.match_id if look is not None else None}
    row = await _window_row(conn, _CLAIM, params, chat_id)
    if look is not None:
        posted = row["board_message_id"]
        look.seen(None if posted is None else (int(posted), str(row["board_caption"] or "")))
    recent = [float(t) for t in row["recent"]]
    if row["took"]:
        return 0.0, now + lead, [*recent, now + lead]
    return window_wait(recent, limit, reserve, window, now), None, recent


async def _lease(conn: Conn, ask: LeaseAsk) -> Lease:
    """:meth:`FloodWindows.lease`'s transaction, on ``conn``."""
    now, long, short, lead = ask.now, ask.long, ask.short, ask.lead
    chat_id, returned, used = ask.chat_id, ask.returned, ask.used
    limit = max(1, int(ask.rate))
    long_cap = ask.long_cap
    params = {"chat": BOT if chat_id is None else chat_id, "now": now,
              "since": now - 1.0}
    row = await _window_row(conn, _LEASED, params, BOT)
    recent = [float(t) for t in row["recent"]]
    changed = False
    if returned is not None:
        recorded, calls = returned
        for _ in range(calls):
            if recorded not in recent:
                break
            recent.remove(recorded)
            changed = True
        recent += [t for t in used if t > now - 1.0]
    bot, chat = float(row["bot"]), float(row["chat"])
    count, seconds = 0, 0.0
    if not bot and not chat:
        ahead = sum(1 for t in recent if t > now)  # leased, not yet made (as far as known)
        if ahead + long[0] <= long_cap and len(recent) + long[0] <= limit:
            count, seconds = long
        else:
            count, seconds = min(short[0], limit - len(recent)), short[1]
    until = now + seconds
    if count > 0:
        recent += [until + lead] * count
    if count > 0 or changed:
        await conn.execute("UPDATE flood_groups SET sent = %s WHERE chat_id = %s",
                           (sorted(recent), BOT))
    if count > 0:
        return Lease(0.0, 0.0, count, until, until + lead, 0.0)
    wait = max(bot, chat) - now if bot or chat else window_wait(
        sorted(recent), limit, 0, 1.0, now)
    return Lease(bot, chat, 0, 0.0, 0.0, wait)


class FloodWindows:
    """The shared windows on a :class:`~storage.postgres.PostgresStore`'s pool."""

    def __init__(self, store: Transactions) -> None:
        self._store = store

    async def pause(self, chat_id: int | None, until: float, *,
                    group_limit: int = 0, window: float = 60.0, now: float = 0.0) -> None:
        """Telegram said 429: no request to ``chat_id`` (to anyone, for ``None``) before
        ``until``. For a group (``group_limit`` > 0) its window is full as well: it is
        refilled with ``group_limit`` writes spread over the window ending at ``until``, so
        the first slot opens when the pause ends and the next ones one by one (the same rule
        as :meth:`chat.gates.GroupGate.saturate`)."""
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

    async def lease(self, ask: LeaseAsk) -> Lease:
        """Lease calls of the bot-wide rate (at most ``ask.rate`` in any second, every
        process together) for this process to spend in memory, in one transaction. Unless
        the bot or ``ask.chat_id`` is paused: ``ask.long`` (``(calls, seconds)``: that many
        usable for that long) when the bot's leased calls not yet made stay within
        ``ask.long_cap`` with them (a quiet bot: one lease serves several moves); else as
        many of ``ask.short``'s as fit (a busy bot: a lease holds little of the budget,
        briefly). Each is recorded as a call arriving at the lease's end plus ``ask.lead``
        (a call begun just before the end arrives a little later). The caller's lease
        before (``ask.returned``: its recorded time and calls) is given back in the same
        transaction: its calls are kept at the times they ended (``ask.used``; one still
        under way at the recorded time), the unused ones are no more, so a busy bot loses
        little of its budget to leases."""

        async def work(conn: Conn) -> Lease:
            return await _lease(conn, ask)

        return await self._store._write(work)

    async def claim_group(self, chat_id: int, limit: int, reserve: int, window: float,
                          now: float, lead: float = 0.0, renew: Renewal | None = None,
                          look: BoardLook | None = None
                          ) -> tuple[float, float | None, list[float]]:
        """Take a slot of the group's window if one is free: ``(0, slot, window)`` then,
        with the slot's time for :meth:`written`; else ``(seconds to wait, None, window)``.
        At most ``limit`` writes in any ``window`` seconds, of which ``reserve`` are left to
        others (at least one may always go out). ``window`` is the group's writes as read
        (with the new slot): until the wait it gives is over, asking again is pointless
        (writes only ever leave a window by time), so a caller waits without a query.
        The write is dated ``lead`` seconds after ``now``: by then it has reached Telegram,
        unless :meth:`written` re-dates it later (one statement per write, not two).
        With ``renew``, the claim also leases bot-wide calls (:meth:`lease`) in the same
        transaction and hands the lease to ``renew.leased``: a group write's claim renews
        its process's lease on the way. With ``look``, the same statement reads the
        match's newest board post and hands it to ``look.seen`` (a board job's look before
        its post, :meth:`chat.gates.SharedGate.wait`: a read of its own where it was one)."""
        if renew is not None:

            async def both(conn: Conn) -> tuple[float, float | None, list[float]]:
                claimed = await _claim(conn, chat_id, limit, reserve, window, now, lead,
                                       look)
                renew.leased(await _lease(conn, renew.ask))
                return claimed

            return await self._store._write(both)

        async def work(conn: Conn) -> tuple[float, float | None, list[float]]:
            # One statement, no transaction block: a round trip per write, not five.
            return await _claim(conn, chat_id, limit, reserve, window, now, lead, look)

        return await self._store._guard(work)

    async def written(self, chat_id: int, slot: float, now: float) -> None:
        """The write of ``slot`` is done: date it ``now`` if that is later than the slot's
        time (Telegram counts a write when it arrives, which may be well after its slot was
        taken; see :meth:`chat.gates.GroupGate.written`); a write done by its slot's time
        costs no statement."""
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
