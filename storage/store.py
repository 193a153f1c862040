"""The store written once: :class:`Store`, every operation the bot calls (exported as
``storage.Store``), with its contract, over the thin connector of :mod:`storage.connector`.

Each method's docstring is its contract: what it returns, the errors it raises, what one
transaction holds. The class is built in parts, each under the size the package keeps: the
matches (:mod:`storage.store_matches`), the arenas (:mod:`storage.store_arenas`) and, here,
the people, lobbies, timers, ratings, statistics, engines, the pool and spectators. The
connector, the update ledger and the hooks where one backend does more are in
:mod:`storage.store_core`; the statements that are named, and the dialect differences, in
:mod:`storage.queries`. ``storage.sqlite`` and ``storage.postgres`` subclass it and keep
only what differs (:class:`storage.base.StoreBackend`, and the connector): connections,
transactions, locks, ``LISTEN``, backups and the parts only PostgreSQL has.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from krendzu import Settings
from storage import queries as q
from storage import rows
from storage.base import (
    ARENA_CHAT_BASE,
    ENGINE_COLUMNS,
    ChatRow,
    EngineExists,
    EngineRow,
    LobbyExists,
    LobbyRow,
    LobbyStatus,
    MatchRow,
    NotFound,
    PoolRow,
    RatingRow,
    StandIn,
    StatsRow,
    TimerRow,
    UserRow,
    Visibility,
    engine_display_name,
    engine_row,
    engine_user_id,
    is_pool_chat,
    name_key,
)
from storage.common import STATS_SUMS, chat_settings_dump
from storage.connector import Params, Row, Tx, UniqueViolation
from storage.store_arenas import ArenaSql
from storage.store_core import TxOp
from storage.store_matches import MatchSql

__all__ = ["Store", "TxOp"]

#: The deepest pool match's chat id (the one above the arena games').
POOL_DEEPEST = -ARENA_CHAT_BASE + 1


class Store(MatchSql, ArenaSql):
    """Durable storage of chats, users, matches, move logs and statistics: every
    operation, written once; a backend adds its connector, its dialect and
    :class:`~storage.base.StoreBackend`.

    Every method is a coroutine and every write is one transaction: it happens completely
    or not at all, also if the process dies or the calling task is cancelled midway.
    """

    # Chats and users --------------------------------------------------------------------

    async def upsert_chat(self, chat_id: int, *, language: str | None = None,
                          default_settings: Settings | None = None, tidy: bool | None = None,
                          title: str | None = None, panels_in_group: bool | None = None,
                          bot_admin: bool | None = None) -> ChatRow:
        """Create the chat or update it; ``None`` leaves a field as it is."""
        params = {"chat_id": chat_id, "language": language, "tidy": tidy, "title": title,
                  "panels": None if panels_in_group is None
                  else ("group" if panels_in_group else "private"),
                  "bot_admin": bot_admin,
                  "now": self._clock(),
                  "settings": None if default_settings is None
                  else chat_settings_dump(default_settings)}

        async def work(tx: Tx) -> ChatRow:
            row = await tx.fetchone(q.UPSERT_CHAT, params)
            assert row is not None
            return rows.chat_row(row)

        return await self._in_write(work)

    async def switch(self, name: str) -> str | None:
        """An operator's switch (``paused``: /admin pause), ``None`` when off."""
        found = await self._query("SELECT value FROM switches WHERE name = ?", (name,),
                                  lambda r: str(r["value"]))
        return found[0] if found else None

    async def set_switch(self, name: str, value: str | None) -> None:
        """Set an operator's switch (``None``: off); every process reads it from here."""
        if value is None:
            await self._modify("DELETE FROM switches WHERE name = ?", (name,))
        else:
            await self._modify(q.SET_SWITCH, (name, value, self._clock()))

    async def totals(self, since: float) -> tuple[int, int, int]:
        """Users and chats known, and matches created since ``since`` (Unix seconds): the
        owners' figures at a glance (/admin)."""
        return (await self._query(q.TOTALS, (since,), lambda r: (
            int(r["users"]), int(r["chats"]), int(r["matches"]))))[0]

    async def ping(self) -> None:
        """One trivial query, for readiness (``/readyz``): raises when the database does
        not answer."""
        await self._query("SELECT 1 AS one", (), lambda r: r["one"])

    async def get_chat(self, chat_id: int) -> ChatRow | None:
        """The chat, or ``None`` if it is not stored."""
        found = await self._query(q.GET_CHAT, (chat_id,), rows.chat_row)
        return found[0] if found else None

    async def upsert_user(self, user_id: int, display_name: str, *,
                          language: str | None = None,
                          can_write_privately: bool | None = None) -> UserRow:
        """Create the user or update it (the name always; ``None`` leaves the rest)."""
        params = {"user_id": user_id, "name": display_name, "key": name_key(display_name),
                  "language": language, "now": self._clock(),
                  "can": None if can_write_privately is None else bool(can_write_privately)}

        async def work(tx: Tx) -> UserRow:
            row = await tx.fetchone(q.UPSERT_USER, params)
            assert row is not None
            return rows.user_row(row)

        return await self._in_write(work)

    async def get_user(self, user_id: int) -> UserRow | None:
        """The user, or ``None`` if they are not stored."""
        found = await self._query(q.GET_USER, (user_id,), rows.user_row)
        return found[0] if found else None

    # Ratings and history ----------------------------------------------------------------

    async def ratings_of(self, user_ids: Sequence[int]) -> dict[int, RatingRow]:
        """Current ratings of the users that have one."""
        users, params = self.dialect.any_of("user_id", user_ids)
        found = await self._query(f"SELECT {q.RATING_COLUMNS} FROM ratings WHERE {users}",
                                  params, rows.rating_row)
        return {r.user_id: r for r in found}

    async def unrated_matches(self) -> list[MatchRow]:
        """Finished matches not rated yet, oldest first (a restart rates them)."""
        return await self._matches(
            "WHERE NOT m.rated AND (m.status = 'finished' OR (m.status = 'abandoned' "
            "AND m.conceded_by IS NOT NULL)) ORDER BY m.match_id")

    async def apply_ratings(self, match_id: int,
                            ratings: Mapping[int, tuple[float, float]]) -> bool:
        """Store the new (mu, sigma) of every rated user of a finished match, once: False if
        the match was rated already."""
        now = self._clock()

        async def work(tx: Tx) -> bool:
            if not await tx.execute(q.RATE_MATCH_ONCE, (match_id,)):
                return False  # rated already (or not finished): once only
            for user_id, (mu, sigma) in ratings.items():
                await tx.execute(q.UPSERT_RATING, (user_id, mu, sigma, now))
                await tx.execute(q.ADD_RATING_HISTORY, (match_id, user_id, mu, sigma, now))
            return True

        return await self._in_write(work)

    async def rating_history(self, user_id: int, limit: int = 100) -> list[tuple[float, float]]:
        """(mu, sigma) after each of the user's last ``limit`` rated matches, oldest first."""
        return await self._query(q.RATING_HISTORY, (user_id, max(0, limit)),
            lambda r: (r["mu"], r["sigma"]))

    async def top_players(self, chat_id: int | None = None, limit: int = 20, *,
                          rated_after: int = 3
                          ) -> tuple[list[tuple[StatsRow, RatingRow | None]], int]:
        """One page of a leaderboard and how many players it has in all. Players whose
        rating rests on at least ``rated_after`` matches come first, best conservative rating
        ``mu - 3 sigma`` first, then everyone else by wins; ties by user id. Only the
        ``limit`` rows shown leave the database (a leaderboard of thousands costs a page).
        ``chat_id``: one chat's players (``None``: everyone's); a pool match's chat (such
        as ``pool_chat_id(0)``) stands for every pool match: the "Play now" leaderboard."""
        where = "" if chat_id is None else "WHERE s.chat_id = :chat"
        if is_pool_chat(chat_id):  # every pool match's chat: the "Play now" leaderboard
            where = "WHERE s.chat_id BETWEEN :deepest AND :chat"
        # The window's count is taken over every group before LIMIT keeps the page.
        sql = f"""
            SELECT {q.STATS_COLUMNS}, r.mu, r.sigma, r.rated_matches,
                   COUNT(*) OVER () AS players
            FROM user_stats s JOIN users u ON u.user_id = s.user_id
                 LEFT JOIN ratings r ON r.user_id = s.user_id
            {where}
            GROUP BY s.user_id, u.user_id, r.user_id
            ORDER BY COALESCE(r.rated_matches, 0) >= :after DESC,
                     CASE WHEN COALESCE(r.rated_matches, 0) >= :after
                          THEN r.mu - 3 * r.sigma ELSE 0 END DESC NULLS LAST,
                     wins DESC, s.user_id ASC
            LIMIT :limit
        """

        def player(r: Row) -> tuple[StatsRow, RatingRow | None, int]:
            rating = None if r["mu"] is None else rows.rating_row(r)
            return rows.stats_row(r), rating, r["players"]

        found = await self._query(
            sql, {"chat": chat_id, "after": rated_after, "limit": max(0, limit),
                  "deepest": POOL_DEEPEST}, player)
        if not found:
            return [], await self._count_players(chat_id)
        return [(stats, rating) for stats, rating, _ in found], found[0][2]

    async def _count_players(self, chat_id: int | None) -> int:
        """Players with statistics (a page past the end still says how many there are)."""
        where, params = (("", ()) if chat_id is None else
                         (" WHERE chat_id BETWEEN ? AND ?", (POOL_DEEPEST, chat_id))
                         if is_pool_chat(chat_id) else (" WHERE chat_id = ?", (chat_id,)))
        found = await self._query("SELECT COUNT(DISTINCT user_id) AS n FROM user_stats"
                                  + where, params, lambda r: int(r["n"]))
        return found[0] if found else 0

    # Statistics -------------------------------------------------------------------------

    async def user_stats(self, user_id: int, chat_id: int | None = None) -> StatsRow | None:
        """A user's statistics in one chat, or over all chats."""
        found = await self._stats("WHERE s.user_id = ?", (user_id,), chat_id)
        return found[0] if found else None

    async def stats_by_name(self, name: str, chat_id: int | None = None) -> StatsRow | None:
        """The statistics of the player called ``name`` (compared by :func:`name_key`, an
        indexed look-up, not a scan of every player) in one chat or over all chats; of
        several players of that name, the one with the most wins."""
        # The players of that name first (users_by_name), then their rows by primary key.
        found = await self._stats("WHERE s.user_id IN (SELECT user_id FROM users WHERE "
                                  "name_key = ?)", (name_key(name),), chat_id)
        return found[0] if found else None

    async def _stats(self, where: str, params: tuple[Any, ...],
                     chat_id: int | None) -> list[StatsRow]:
        if chat_id is not None:
            where += " AND s.chat_id = ?"
            params = (*params, chat_id)
        sql = f"""
            SELECT {q.STATS_COLUMNS}
            FROM user_stats s JOIN users u ON u.user_id = s.user_id
            {where}
            GROUP BY s.user_id, u.user_id
            ORDER BY {q.STATS_ORDER}
            LIMIT 1
        """
        return await self._query(sql, params, rows.stats_row)

    # Turn timers and absent players ------------------------------------------------------

    async def set_timer(self, match_id: int, seconds: int | None) -> None:
        """Give the match a turn timer of ``seconds`` (None: remove it)."""
        if seconds is None:
            await self._modify(q.DELETE_TIMER, (match_id,))
            return
        await self._modify(q.UPSERT_TIMER, (match_id, int(seconds)))

    async def timer_of(self, match_id: int) -> TimerRow | None:
        """The match's timer, if it has one."""
        found = await self._query(q.GET_TIMER, (match_id,),
            rows.timer_row)
        return found[0] if found else None

    async def set_reminded(self, match_id: int, seq: int) -> None:
        """The reminder for move ``seq`` was sent."""
        await self._modify(q.SET_REMINDED, (match_id, seq))

    async def due_timers(self, now: float) -> list[TimerRow]:
        """Timers of active matches whose deadline passed or whose reminder is due (when a
        third of the time is left), oldest deadline first."""
        return await self._query(q.DUE_TIMERS, {"now": now}, rows.timer_row)

    async def stretch_deadlines(self, earliest: float) -> int:
        """Move every running deadline earlier than ``earliest`` to it (after an outage);
        returns how many moved."""
        return await self._modify(q.STRETCH_DEADLINES, {"t": earliest})

    async def stand_ins(self, match_id: int) -> dict[int, StandIn]:
        """Seats with a timeout or a computer stand-in, by seat."""
        found = await self._query(q.GET_STAND_INS, (match_id,), rows.stand_in)
        return {r.seat: r for r in found}

    async def arm_timer(self, match_id: int, seq: int | None, deadline: float | None) -> None:
        """Start the deadline of move ``seq`` (None, None: no person is to move)."""
        await self._in_write(lambda tx: self._arm_timer(tx, match_id, seq, deadline))

    async def set_stand_in(self, match_id: int, seat: int, *, timeouts: int,
                           computer: bool, resigned: bool = False,
                           update_id: int | None = None) -> None:
        """Record a seat's consecutive timeouts, whether the computer keeps it, and whether
        its player resigned (a trio plays on; the resigner ranks last). With ``update_id``
        (``/leave``, ``/kick``) the update is recorded in the ledger in the same transaction
        (:class:`DuplicateUpdate` if it was already, and nothing changes), so a seat handed
        over by a redelivered update is handed over, and told, once."""
        now = self._clock()

        async def work(tx: Tx) -> None:
            if update_id is not None:
                await self._remember_update(tx, update_id, now)
            await tx.execute(q.UPSERT_STAND_IN,
                (match_id, seat, max(0, timeouts), bool(computer), bool(resigned)))
            if computer:  # the seat may be the one to move
                await self._after_computer(tx, match_id, None)

        await self._in_write(work)

    async def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        """A group became a supergroup: move its matches, lobbies and statistics over."""
        now = self._clock()
        columns = ", ".join(("matches", "best_tour", *STATS_SUMS))

        async def work(tx: Tx) -> None:
            await tx.execute(q.COPY_CHAT, (new_chat_id, now, old_chat_id))
            for table in ("matches", "lobbies"):
                await tx.execute(f"UPDATE {table} SET chat_id = ? WHERE chat_id = ?",
                                 (new_chat_id, old_chat_id))
            await tx.execute(
                f"INSERT INTO user_stats (user_id, chat_id, {columns}) SELECT user_id, ?, "
                f"{columns} FROM user_stats WHERE chat_id = ? ON CONFLICT DO NOTHING",
                (new_chat_id, old_chat_id))
            await tx.execute(q.DELETE_CHAT_STATS, (old_chat_id,))

        await self._in_write(work)

    # Lobbies ----------------------------------------------------------------------------

    async def create_lobby(self, chat_id: int, creator_id: int, state: dict[str, Any], *,
                           thread_id: int | None = None) -> LobbyRow:
        """Open a lobby; :class:`LobbyExists` if the chat/topic has an open one."""
        now = self._clock()
        state_text = json.dumps(state)

        async def work(tx: Tx) -> LobbyRow:
            await tx.execute(q.ENSURE_CHAT, (chat_id, now, now))
            busy = await tx.fetchone(q.OPEN_LOBBY_ID, (chat_id, thread_id or 0))
            if busy is not None:
                raise LobbyExists(f"chat {chat_id} topic {thread_id} has lobby "
                                  f"{busy['lobby_id']}")
            try:
                row = await tx.fetchone(q.INSERT_LOBBY,
                    (chat_id, thread_id or 0, creator_id, state_text, now, now))
            except UniqueViolation as exc:  # another process opened one meanwhile
                raise LobbyExists(f"chat {chat_id} topic {thread_id} has a lobby") from exc
            assert row is not None
            return rows.lobby_row(row)

        return await self._in_write(work)

    async def _lobbies(self, where: str, params: Params) -> list[LobbyRow]:
        return await self._query(f"SELECT {q.LOBBY_COLUMNS} FROM lobbies {where}", params,
                                 rows.lobby_row)

    async def get_lobby(self, lobby_id: int) -> LobbyRow:
        """The lobby; :class:`NotFound` if there is none."""
        found = await self._lobbies("WHERE lobby_id = ?", (lobby_id,))
        if not found:
            raise NotFound(f"no lobby {lobby_id}")
        return found[0]

    async def open_lobby(self, chat_id: int, thread_id: int | None = None) -> LobbyRow | None:
        """The open lobby of a chat or forum topic."""
        found = await self._lobbies("WHERE chat_id = ? AND thread_id = ? AND status = 'open'",
                                    (chat_id, thread_id or 0))
        return found[0] if found else None

    async def lobby_of_match(self, match_id: int) -> LobbyRow | None:
        """The lobby a match was started from (its creator may cancel it)."""
        found = await self._lobbies("WHERE match_id = ?", (match_id,))
        return found[0] if found else None

    async def open_lobbies(self) -> list[LobbyRow]:
        """Every open lobby, oldest first."""
        return await self._lobbies("WHERE status = 'open' ORDER BY lobby_id", ())

    async def open_lobbies_of_chat(self, chat_id: int) -> list[LobbyRow]:
        """The open lobbies of a chat, of every forum topic of it, oldest first."""
        return await self._lobbies(
            "WHERE chat_id = ? AND status = 'open' ORDER BY lobby_id", (chat_id,))

    async def update_lobby(self, lobby_id: int, *, state: dict[str, Any] | None = None,
                           message_id: int | None = None,
                           status: LobbyStatus | None = None,
                           update_id: int | None = None) -> LobbyRow:
        """Change an open lobby (``None`` leaves a field); :class:`NotFound` if not open.
        With ``update_id`` the update is recorded in the ledger in the same transaction
        (:class:`DuplicateUpdate` if it was already, and nothing changes), so a set-up
        change re-run by a redelivered update applies once."""
        now = self._clock()
        params = {"id": lobby_id, "now": now,
                  "state": None if state is None else json.dumps(state),
                  "message_id": message_id, "status": None if status is None else status.value}

        async def work(tx: Tx) -> LobbyRow:
            if update_id is not None:
                await self._remember_update(tx, update_id, now)
            row = await tx.fetchone(q.UPDATE_LOBBY, params)
            if row is None:
                raise NotFound(f"no open lobby {lobby_id}")
            return rows.lobby_row(row)

        return await self._in_write(work)

    # Outside engines (issue 31) -----------------------------------------------------------

    async def _engines(self, where: str, params: Params) -> list[EngineRow]:
        return await self._query(f"SELECT {ENGINE_COLUMNS} FROM engines {where}", params,
                                 engine_row)

    async def get_engine(self, engine_id: int) -> EngineRow | None:
        """The engine, or ``None`` if there is none."""
        found = await self._engines("WHERE engine_id = ?", (engine_id,))
        return found[0] if found else None

    async def engine_by_name(self, name: str) -> EngineRow | None:
        """The engine called ``name``, compared case-insensitively."""
        found = await self._engines("WHERE name_key = ?", (name_key(name),))
        return found[0] if found else None

    async def engine_by_token(self, token_hash: str) -> EngineRow | None:
        """The engine whose token has this SHA-256 (hex)."""
        found = await self._engines("WHERE token_hash = ?", (token_hash,))
        return found[0] if found else None

    async def engines_of(self, owner_id: int) -> list[EngineRow]:
        """The engines a person registered, oldest first."""
        return await self._engines("WHERE owner_id = ? ORDER BY engine_id", (owner_id,))

    async def create_engine(self, owner_id: int, name: str, token_hash: str) -> EngineRow:
        """Register an engine and the user it plays under (``🤖 NAME``, never written to),
        in one write; :class:`EngineExists` if the name (case-folded) is taken."""
        now = self._clock()

        async def work(tx: Tx) -> EngineRow:
            if await tx.fetchone(q.ENGINE_NAME_TAKEN, (name_key(name),)) is not None:
                raise EngineExists(f"an engine is called {name!r} already")
            try:
                made = await tx.fetchone(q.INSERT_ENGINE,
                    (owner_id, name, name_key(name), token_hash, now))
            except UniqueViolation as exc:  # another process took the name meanwhile
                raise EngineExists(f"an engine is called {name!r} already") from exc
            assert made is not None
            engine_id = int(made["engine_id"])
            display = engine_display_name(name)
            await tx.execute(q.UPSERT_ENGINE_USER,
                (engine_user_id(engine_id), display, now, now, name_key(display)))
            row = await tx.fetchone(q.GET_ENGINE, (engine_id,))
            assert row is not None
            return engine_row(row)

        return await self._in_write(work)

    async def update_engine(self, engine_id: int, *, token_hash: str | None = None,
                            visibility: Visibility | None = None,
                            max_matches: int | None = None) -> EngineRow:
        """Change an engine (``None`` leaves a field); :class:`NotFound` if there is none.
        A new token hash makes the old token stop working at once."""
        async def work(tx: Tx) -> EngineRow:
            if token_hash is not None:  # the old token's streams close, in every process
                await self._revoke(tx, engine_id)
            await tx.execute(q.UPDATE_ENGINE,
                (token_hash, None if visibility is None else str(visibility), max_matches,
                 engine_id))
            row = await tx.fetchone(q.GET_ENGINE, (engine_id,))
            if row is None:
                raise NotFound(f"engine {engine_id}")
            return engine_row(row)

        return await self._in_write(work)

    async def delete_engine(self, engine_id: int) -> bool:
        """Forget an engine (its token stops working; the matches it played and its
        statistics stay under its user). False if there was none."""
        async def work(tx: Tx) -> bool:
            await self._revoke(tx, engine_id)  # its token's streams close, in every process
            return await tx.execute(q.DELETE_ENGINE, (engine_id,)) > 0

        return await self._in_write(work)

    # "Play now": the pool and the blocks (issue 40) ------------------------------------------

    async def join_pool(self, user_id: int, table: str, rating: int, joined_at: float) -> bool:
        """Put a person in the pool; False if they are in it already (one entry each,
        whatever the table: the second changes nothing)."""
        async def work(tx: Tx) -> bool:
            return await tx.fetchone(q.JOIN_POOL, (user_id, table, rating, joined_at)) \
                is not None

        return await self._in_write(work)

    async def leave_pool(self, user_id: int) -> bool:
        """Take a person out of the pool; False if they were not in it."""
        return await self._modify("DELETE FROM pool WHERE user_id = ?", (user_id,)) > 0

    async def pool_entry(self, user_id: int) -> PoolRow | None:
        """The person's entry in the pool, if they wait."""
        found = await self._query(f"SELECT {q.POOL_COLUMNS} FROM pool WHERE user_id = ?",
                                  (user_id,), rows.pool_row)
        return found[0] if found else None

    async def pool_entries(self) -> list[PoolRow]:
        """Everyone waiting, the oldest entry first."""
        return await self._query(f"SELECT {q.POOL_COLUMNS} FROM pool ORDER BY entry_id", (),
                                 rows.pool_row)

    async def take_from_pool(self, user_ids: Sequence[int]) -> bool:
        """Take every one of ``user_ids`` out of the pool to seat them together, in one
        write; False (and nobody taken) if any of them is no longer there, so two processes
        matching the same pool never seat one person twice."""
        users, params = self.dialect.any_of("user_id", user_ids)

        async def work(tx: Tx) -> bool:
            taken = await tx.fetchall(f"DELETE FROM pool WHERE {users} RETURNING user_id",
                                      params)
            if len(taken) != len(set(user_ids)):
                raise _NotAllWaiting  # rolls the deletion back: someone left meanwhile
            return True

        try:
            return await self._in_write(work)
        except _NotAllWaiting:
            return False

    async def offer_computer(self, user_id: int, level: str) -> bool:
        """Note the computer level offered to a waiting person; False if they were offered
        one already (or left): each wait gets one offer."""
        return await self._modify("UPDATE pool SET offered = ? WHERE user_id = ? "
                                  "AND offered IS NULL", (level, user_id)) > 0

    async def block(self, user_id: int, blocked_id: int) -> None:
        """``user_id`` never wants to meet ``blocked_id`` in the pool again (kept once)."""
        await self._modify(q.BLOCK, (user_id, blocked_id, self._clock()))

    async def blocks_among(self, user_ids: Sequence[int]) -> dict[int, set[int]]:
        """For each of ``user_ids`` with a block either way, the people they must never
        meet: whom they blocked and who blocked them."""
        if not user_ids:
            return {}
        mine, params = self.dialect.any_of("user_id", user_ids)
        theirs, more = self.dialect.any_of("blocked_id", user_ids)
        found = await self._query(
            f"SELECT user_id, blocked_id FROM blocks WHERE {mine} OR {theirs}",
            [*params, *more], lambda r: (int(r["user_id"]), int(r["blocked_id"])))
        out: dict[int, set[int]] = {}
        for user_id, blocked_id in found:  # a block works both ways
            out.setdefault(user_id, set()).add(blocked_id)
            out.setdefault(blocked_id, set()).add(user_id)
        return out

    # Spectators: a pool match's watch link (issue 40) -------------------------------------

    async def turn_watch_off(self, match_id: int, user_id: int) -> bool:
        """Close the match to spectators for good (``user_id``: the player who did); False
        if it was closed already."""
        return await self._modify(q.WATCH_OFF, (match_id, user_id, self._clock())) > 0

    async def watch_is_off(self, match_id: int) -> bool:
        """Whether a player closed the match to spectators."""
        return bool(await self._query("SELECT 1 FROM watch_off WHERE match_id = ?",
                                      (match_id,), lambda r: True))

    async def set_reactions(self, user_id: int, on: bool) -> bool:
        """Whether ``user_id`` gets (and may send) the emoji reactions of their pool matches;
        False if there is no such user."""
        return await self._modify("UPDATE users SET reactions = ? WHERE user_id = ?",
                                  (bool(on), user_id)) > 0

    async def reactions_off(self, user_ids: Sequence[int]) -> set[int]:
        """Those of ``user_ids`` who turned the reactions off (everyone else has them on)."""
        if not user_ids:
            return set()
        users, params = self.dialect.any_of("user_id", user_ids)
        return set(await self._query(
            f"SELECT user_id FROM users WHERE reactions = ? AND {users}", [False, *params],
            lambda r: int(r["user_id"])))


class _NotAllWaiting(Exception):
    """:meth:`Store.take_from_pool` found someone gone: the transaction is rolled back."""
