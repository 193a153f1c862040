"""The store written once: :class:`SqlStore`, the methods of :class:`storage.base.Store`
whose SQL both backends share, over the thin connector of :mod:`storage.connector`.

A backend (``storage.sqlite``, ``storage.postgres``) subclasses it and supplies the four ways
in (``_query``, ``_modify``, ``_in_read``, ``_in_write``), its :class:`~storage.queries.Dialect`
and, where it has more to do inside the same transaction, the hooks below, which do nothing
here: PostgreSQL locks a match across processes (``_lock_match``), tells other processes of a
change (``_notify``) and defers the scaled mode's jobs with a move (``_after_*``). SQLite's
single writer needs none of them.
"""

from __future__ import annotations

import abc
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from krendzu import Settings
from storage import queries as q
from storage import rows
from storage.base import (
    ENGINE_COLUMNS,
    ChatRow,
    DuplicateUpdate,
    EngineRow,
    LobbyExists,
    LobbyRow,
    LobbyStatus,
    MatchRow,
    MatchStatus,
    NotFound,
    RatingRow,
    StandIn,
    StatsRow,
    Store,
    TimerRow,
    UserRow,
    engine_row,
    name_key,
)
from storage.common import PRUNE_EVERY, chat_settings_dump, panel_lines_dump, panel_lines_load
from storage.connector import Params, Row, Tx, UniqueViolation

T = TypeVar("T")
R = TypeVar("R")
#: Work inside one transaction the connector opened (it commits or rolls back after).
TxOp = Callable[[Tx], Awaitable[T]]


class SqlStore(Store):
    """:class:`Store`'s shared SQL; a backend adds its connector and dialect."""

    #: How this backend's database spells what the two spell differently.
    dialect: q.Dialect
    _clock: Callable[[], float]
    _update_ttl: float
    #: Update ids remembered since the ledger was last pruned (:meth:`_remember_update`).
    _inserts_since_prune: int

    # The connector: four ways in -----------------------------------------------------------

    @abc.abstractmethod
    async def _query(self, sql: str, params: Params,
                     map_row: Callable[[Row], R]) -> list[R]:
        """One query as one read (one snapshot), each row mapped by ``map_row``."""

    @abc.abstractmethod
    async def _modify(self, sql: str, params: Params) -> int:
        """One statement as one write; how many rows it changed."""

    @abc.abstractmethod
    async def _in_read(self, op: TxOp[T]) -> T:
        """``op`` in one read transaction, so that its queries agree."""

    @abc.abstractmethod
    async def _in_write(self, op: TxOp[T]) -> T:
        """``op`` in one write transaction, committed before this returns; an exception
        rolls all of it back."""

    # Hooks: what one backend does more inside the same transaction ---------------------------

    async def _lock_match(self, tx: Tx, match_id: int) -> None:
        """Order this write after every other of the match under way (any process)."""

    # Chats and users --------------------------------------------------------------------

    async def upsert_chat(self, chat_id: int, *, language: str | None = None,
                          default_settings: Settings | None = None, tidy: bool | None = None,
                          title: str | None = None) -> ChatRow:
        params = {"chat_id": chat_id, "language": language, "tidy": tidy, "title": title,
                  "now": self._clock(),
                  "settings": None if default_settings is None
                  else chat_settings_dump(default_settings)}

        async def work(tx: Tx) -> ChatRow:
            row = await tx.fetchone(q.UPSERT_CHAT, params)
            assert row is not None
            return rows.chat_row(row)

        return await self._in_write(work)

    async def get_chat(self, chat_id: int) -> ChatRow | None:
        found = await self._query(q.GET_CHAT, (chat_id,), rows.chat_row)
        return found[0] if found else None

    async def upsert_user(self, user_id: int, display_name: str, *,
                          language: str | None = None,
                          can_write_privately: bool | None = None) -> UserRow:
        params = {"user_id": user_id, "name": display_name, "key": name_key(display_name),
                  "language": language, "now": self._clock(),
                  "can": None if can_write_privately is None else bool(can_write_privately)}

        async def work(tx: Tx) -> UserRow:
            row = await tx.fetchone(q.UPSERT_USER, params)
            assert row is not None
            return rows.user_row(row)

        return await self._in_write(work)

    async def get_user(self, user_id: int) -> UserRow | None:
        found = await self._query(q.GET_USER, (user_id,), rows.user_row)
        return found[0] if found else None

    # Matches: readers ---------------------------------------------------------------------

    async def _match_rows(self, tx: Tx, where: str, params: Params) -> list[MatchRow]:
        """The matches ``where`` picks, with their seats, inside the caller's transaction."""
        found = await tx.fetchall(
            f"SELECT {self.dialect.match_columns()} FROM matches m {where}", params)
        return [rows.match_row(r) for r in found]

    async def _matches(self, where: str, params: Params = ()) -> list[MatchRow]:
        """The matches ``where`` picks, with their seats and move counts: one query."""
        return await self._query(
            f"SELECT {self.dialect.match_columns()} FROM matches m {where}", params,
            rows.match_row)

    async def _get_match(self, tx: Tx, match_id: int) -> MatchRow:
        found = await self._match_rows(tx, "WHERE m.match_id = ?", (match_id,))
        if not found:
            raise NotFound(f"no match {match_id}")
        return found[0]

    async def get_match(self, match_id: int) -> MatchRow:
        found = await self._matches("WHERE m.match_id = ?", (match_id,))
        if not found:
            raise NotFound(f"no match {match_id}")
        return found[0]

    async def active_match(self, chat_id: int, thread_id: int | None = None) -> MatchRow | None:
        found = await self._matches(
            "WHERE m.chat_id = ? AND m.thread_id = ? AND m.status = 'active'",
            (chat_id, thread_id or 0))
        return found[0] if found else None

    async def matches_of_user(
        self, user_id: int, *, status: MatchStatus | None = MatchStatus.ACTIVE,
        chat_id: int | None = None, thread_id: int | None = None, limit: int | None = None
    ) -> list[MatchRow]:
        where = "WHERE m.match_id IN (SELECT match_id FROM seats WHERE user_id = ?)"
        params: tuple[Any, ...] = (user_id,)
        if status is not None:
            where += " AND m.status = ?"
            params += (status.value,)
        if chat_id is not None:
            where += " AND m.chat_id = ? AND m.thread_id = ?"
            params += (chat_id, thread_id or 0)
        where += " ORDER BY m.match_id DESC"
        if limit is not None:
            where += " LIMIT ?"
            params += (max(0, limit),)
        return await self._matches(where, params)

    async def active_matches(self) -> list[MatchRow]:
        return await self._matches("WHERE m.status = 'active' ORDER BY m.match_id")

    async def active_matches_of_chat(self, chat_id: int) -> list[MatchRow]:
        return await self._matches(
            "WHERE m.chat_id = ? AND m.status = 'active' ORDER BY m.match_id", (chat_id,))

    async def count_active_matches(self, *, chat_id: int | None = None,
                                   user_id: int | None = None) -> int:
        if (chat_id is None) == (user_id is None):
            raise ValueError("count the matches of a chat or of a user")
        if chat_id is not None:
            sql = "SELECT COUNT(*) AS n FROM matches WHERE chat_id = ? AND status = 'active'"
            params: tuple[Any, ...] = (chat_id,)
        else:
            sql = ("SELECT COUNT(DISTINCT m.match_id) AS n FROM seats s JOIN matches m"
                   " ON m.match_id = s.match_id WHERE s.user_id = ? AND m.status = 'active'")
            params = (user_id,)
        return (await self._query(sql, params, lambda r: int(r["n"])))[0]

    async def unannounced_matches(self) -> list[MatchRow]:
        return await self._matches(
            "WHERE m.status = 'finished' AND m.announced_seq < (SELECT "
            "COALESCE(MAX(v.seq), 0) FROM moves v WHERE v.match_id = m.match_id) "
            "ORDER BY m.match_id")

    async def recent_matches(self, chat_id: int, thread_id: int | None = None,
                             limit: int = 10) -> list[MatchRow]:
        return await self._matches(
            "WHERE m.chat_id = ? AND m.thread_id = ? ORDER BY m.match_id DESC LIMIT ?",
            (chat_id, thread_id or 0, max(0, limit)))

    # Panels, the board post, what was told ------------------------------------------------

    async def get_panel(self, match_id: int, user_id: int) -> tuple[int, bool] | None:
        found = await self._query(q.GET_PANEL, (match_id, user_id), rows.panel)
        return found[0] if found else None

    async def set_panel(self, match_id: int, user_id: int,
                        panel: tuple[int, bool] | None) -> tuple[int, bool] | None:
        async def work(tx: Tx) -> tuple[int, bool] | None:
            # Two senders must not both read the same old panel (a missing row cannot be
            # locked with FOR UPDATE, so PostgreSQL takes the match's lock).
            await self._lock_match(tx, match_id)
            old = await tx.fetchone(q.GET_PANEL, (match_id, user_id))
            if panel is None:
                await tx.execute(
                    "DELETE FROM panel_messages WHERE match_id = ? AND user_id = ?",
                    (match_id, user_id))
            else:
                await tx.execute(
                    "INSERT INTO panel_messages (match_id, user_id, message_id, is_photo) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (match_id, user_id) DO UPDATE SET "
                    "message_id = excluded.message_id, is_photo = excluded.is_photo",
                    (match_id, user_id, panel[0], bool(panel[1])))
            return rows.panel(old) if old else None

        return await self._in_write(work)

    async def get_panel_lines(self, match_id: int, user_id: int) -> list[str]:
        found = await self._query(
            "SELECT lines FROM panel_lines WHERE match_id = ? AND user_id = ?",
            (match_id, user_id), lambda r: panel_lines_load(r["lines"]))
        return found[0] if found else []

    async def set_panel_lines(self, match_id: int,
                              lines: Mapping[int, Sequence[str] | None]) -> None:
        if not lines:
            return
        gone = [user_id for user_id, shown in lines.items() if shown is None]
        kept = [(match_id, user_id, panel_lines_dump(shown))
                for user_id, shown in lines.items() if shown is not None]

        async def work(tx: Tx) -> None:
            if gone:
                users, params = self.dialect.any_of("user_id", gone)
                await tx.execute(f"DELETE FROM panel_lines WHERE match_id = ? AND {users}",
                                 (match_id, *params))
            if kept:
                await tx.executemany(
                    "INSERT INTO panel_lines (match_id, user_id, lines) VALUES (?, ?, ?) "
                    "ON CONFLICT (match_id, user_id) DO UPDATE SET lines = excluded.lines",
                    kept)

        await self._in_write(work)

    async def board_message(self, match_id: int) -> tuple[int, str] | None:
        found = await self._query(
            "SELECT board_message_id, board_caption FROM matches WHERE match_id = ? "
            "AND board_message_id IS NOT NULL", (match_id,),
            lambda r: (int(r["board_message_id"]), str(r["board_caption"] or "")))
        return found[0] if found else None

    async def set_announced(self, match_id: int, seq: int) -> None:
        await self._modify(self.dialect.set_announced(), (seq, match_id))

    async def told(self, match_id: int) -> dict[str, int]:
        found = await self._query("SELECT key, seq FROM told WHERE match_id = ?", (match_id,),
                                  lambda r: (str(r["key"]), int(r["seq"])))
        return dict(found)

    async def note_told(self, match_id: int, key: str, seq: int = 0) -> None:
        await self._modify(self.dialect.note_told(), (match_id, key, seq))

    # Ratings and history ----------------------------------------------------------------

    async def ratings_of(self, user_ids: Sequence[int]) -> dict[int, RatingRow]:
        users, params = self.dialect.any_of("user_id", user_ids)
        found = await self._query(f"SELECT {q.RATING_COLUMNS} FROM ratings WHERE {users}",
                                  params, rows.rating_row)
        return {r.user_id: r for r in found}

    async def unrated_matches(self) -> list[MatchRow]:
        return await self._matches(
            "WHERE NOT m.rated AND (m.status = 'finished' OR (m.status = 'abandoned' "
            "AND m.conceded_by IS NOT NULL)) ORDER BY m.match_id")

    async def apply_ratings(self, match_id: int,
                            ratings: Mapping[int, tuple[float, float]]) -> bool:
        now = self._clock()

        async def work(tx: Tx) -> bool:
            if not await tx.execute(
                    "UPDATE matches SET rated = TRUE WHERE match_id = ? AND NOT rated AND "
                    "(status = 'finished' OR conceded_by IS NOT NULL)", (match_id,)):
                return False  # rated already (or not finished): once only
            for user_id, (mu, sigma) in ratings.items():
                await tx.execute(
                    "INSERT INTO ratings (user_id, mu, sigma, rated_matches, updated_at) "
                    "VALUES (?, ?, ?, 1, ?) ON CONFLICT (user_id) DO UPDATE SET "
                    "mu = excluded.mu, sigma = excluded.sigma, "
                    "rated_matches = ratings.rated_matches + 1, "
                    "updated_at = excluded.updated_at", (user_id, mu, sigma, now))
                await tx.execute(
                    "INSERT INTO rating_history (match_id, user_id, mu, sigma, rated_at) "
                    "VALUES (?, ?, ?, ?, ?)", (match_id, user_id, mu, sigma, now))
            return True

        return await self._in_write(work)

    async def rating_history(self, user_id: int, limit: int = 100) -> list[tuple[float, float]]:
        return await self._query(
            "SELECT mu, sigma FROM (SELECT mu, sigma, rated_at, match_id FROM rating_history "
            "WHERE user_id = ? ORDER BY rated_at DESC, match_id DESC LIMIT ?) AS h "
            "ORDER BY rated_at, match_id", (user_id, max(0, limit)),
            lambda r: (r["mu"], r["sigma"]))

    async def top_players(self, chat_id: int | None = None, limit: int = 20, *,
                          rated_after: int = 3
                          ) -> tuple[list[tuple[StatsRow, RatingRow | None]], int]:
        where = "" if chat_id is None else "WHERE s.chat_id = :chat"
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
            sql, {"chat": chat_id, "after": rated_after, "limit": max(0, limit)}, player)
        if not found:
            return [], await self._count_players(chat_id)
        return [(stats, rating) for stats, rating, _ in found], found[0][2]

    async def _count_players(self, chat_id: int | None) -> int:
        """Players with statistics (a page past the end still says how many there are)."""
        sql = ("SELECT COUNT(DISTINCT user_id) AS n FROM user_stats"
               + (" WHERE chat_id = ?" if chat_id is not None else ""))
        found = await self._query(sql, () if chat_id is None else (chat_id,),
                                  lambda r: int(r["n"]))
        return found[0] if found else 0

    # Statistics -------------------------------------------------------------------------

    async def user_stats(self, user_id: int, chat_id: int | None = None) -> StatsRow | None:
        found = await self._stats("WHERE s.user_id = ?", (user_id,), chat_id)
        return found[0] if found else None

    async def stats_by_name(self, name: str, chat_id: int | None = None) -> StatsRow | None:
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
        if seconds is None:
            await self._modify("DELETE FROM turn_timers WHERE match_id = ?", (match_id,))
            return
        await self._modify(
            "INSERT INTO turn_timers (match_id, seconds) VALUES (?, ?) "
            "ON CONFLICT (match_id) DO UPDATE SET seconds = excluded.seconds",
            (match_id, int(seconds)))

    async def timer_of(self, match_id: int) -> TimerRow | None:
        found = await self._query(
            f"SELECT {q.TIMER_COLUMNS} FROM turn_timers t WHERE match_id = ?", (match_id,),
            rows.timer_row)
        return found[0] if found else None

    async def set_reminded(self, match_id: int, seq: int) -> None:
        await self._modify(
            "UPDATE turn_timers SET reminded = TRUE WHERE match_id = ? AND seq = ?",
            (match_id, seq))

    async def due_timers(self, now: float) -> list[TimerRow]:
        return await self._query(
            f"SELECT {q.TIMER_COLUMNS} FROM turn_timers t JOIN matches m "
            "ON m.match_id = t.match_id WHERE m.status = 'active' "
            "AND t.deadline IS NOT NULL AND (t.deadline <= :now OR "
            "(NOT t.reminded AND t.deadline - t.seconds / 3.0 <= :now)) "
            "ORDER BY t.deadline", {"now": now}, rows.timer_row)

    async def stretch_deadlines(self, earliest: float) -> int:
        return await self._modify(
            "UPDATE turn_timers SET deadline = :t WHERE deadline IS NOT NULL "
            "AND deadline < :t", {"t": earliest})

    async def stand_ins(self, match_id: int) -> dict[int, StandIn]:
        found = await self._query(
            "SELECT seat, timeouts, computer, resigned FROM stand_ins WHERE match_id = ?",
            (match_id,), rows.stand_in)
        return {r.seat: r for r in found}

    # Lobbies ----------------------------------------------------------------------------

    async def create_lobby(self, chat_id: int, creator_id: int, state: dict[str, Any], *,
                           thread_id: int | None = None) -> LobbyRow:
        now = self._clock()
        state_text = json.dumps(state)

        async def work(tx: Tx) -> LobbyRow:
            await tx.execute(q.ENSURE_CHAT, (chat_id, now, now))
            busy = await tx.fetchone(
                "SELECT lobby_id FROM lobbies WHERE chat_id = ? AND thread_id = ? "
                "AND status = 'open'", (chat_id, thread_id or 0))
            if busy is not None:
                raise LobbyExists(f"chat {chat_id} topic {thread_id} has lobby "
                                  f"{busy['lobby_id']}")
            try:
                row = await tx.fetchone(
                    "INSERT INTO lobbies (chat_id, thread_id, creator_id, state, created_at, "
                    f"updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING {q.LOBBY_COLUMNS}",
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
        found = await self._lobbies("WHERE lobby_id = ?", (lobby_id,))
        if not found:
            raise NotFound(f"no lobby {lobby_id}")
        return found[0]

    async def open_lobby(self, chat_id: int, thread_id: int | None = None) -> LobbyRow | None:
        found = await self._lobbies("WHERE chat_id = ? AND thread_id = ? AND status = 'open'",
                                    (chat_id, thread_id or 0))
        return found[0] if found else None

    async def lobby_of_match(self, match_id: int) -> LobbyRow | None:
        found = await self._lobbies("WHERE match_id = ?", (match_id,))
        return found[0] if found else None

    async def open_lobbies(self) -> list[LobbyRow]:
        return await self._lobbies("WHERE status = 'open' ORDER BY lobby_id", ())

    async def open_lobbies_of_chat(self, chat_id: int) -> list[LobbyRow]:
        return await self._lobbies(
            "WHERE chat_id = ? AND status = 'open' ORDER BY lobby_id", (chat_id,))

    async def update_lobby(self, lobby_id: int, *, state: dict[str, Any] | None = None,
                           message_id: int | None = None,
                           status: LobbyStatus | None = None,
                           update_id: int | None = None) -> LobbyRow:
        now = self._clock()
        params = {"id": lobby_id, "now": now,
                  "state": None if state is None else json.dumps(state),
                  "message_id": message_id, "status": None if status is None else status.value}

        async def work(tx: Tx) -> LobbyRow:
            if update_id is not None:
                await self._remember_update(tx, update_id, now)
            row = await tx.fetchone(f"""
                UPDATE lobbies SET updated_at = :now,
                    state = COALESCE(:state, state),
                    message_id = COALESCE(:message_id, message_id),
                    status = COALESCE(:status, status)
                WHERE lobby_id = :id AND status = 'open'
                RETURNING {q.LOBBY_COLUMNS}""", params)
            if row is None:
                raise NotFound(f"no open lobby {lobby_id}")
            return rows.lobby_row(row)

        return await self._in_write(work)

    # The update ledger ------------------------------------------------------------------

    async def _remember_update(self, tx: Tx, update_id: int, now: float) -> None:
        """Add an update id inside the caller's write (``append_move``): DuplicateUpdate if
        it is there already (committed by any process; PostgreSQL waits for one still in
        flight). Every PRUNE_EVERY insertions, forget ids past the TTL."""
        if not await tx.execute(q.REMEMBER_UPDATE, (update_id, now)):
            raise DuplicateUpdate(update_id)
        self._inserts_since_prune += 1
        if self._inserts_since_prune >= PRUNE_EVERY:
            self._inserts_since_prune = 0
            await self._forget_updates(tx, now - self._update_ttl)

    async def _forget_updates(self, tx: Tx, before: float) -> int:
        """Forget the update ids processed before ``before``; how many."""
        return await tx.execute(q.FORGET_UPDATES, (before,))

    async def prune_updates(self, older_than_seconds: float) -> int:
        before = self._clock() - older_than_seconds
        return await self._in_write(lambda tx: self._forget_updates(tx, before))

    async def seen_update(self, update_id: int) -> bool:
        return bool(await self._query(
            "SELECT 1 AS seen FROM processed_updates WHERE update_id = ?", (update_id,),
            lambda r: r))

    # Outside engines (issue 31) -----------------------------------------------------------

    async def _engines(self, where: str, params: Params) -> list[EngineRow]:
        return await self._query(f"SELECT {ENGINE_COLUMNS} FROM engines {where}", params,
                                 engine_row)

    async def get_engine(self, engine_id: int) -> EngineRow | None:
        found = await self._engines("WHERE engine_id = ?", (engine_id,))
        return found[0] if found else None

    async def engine_by_name(self, name: str) -> EngineRow | None:
        found = await self._engines("WHERE name_key = ?", (name_key(name),))
        return found[0] if found else None

    async def engine_by_token(self, token_hash: str) -> EngineRow | None:
        found = await self._engines("WHERE token_hash = ?", (token_hash,))
        return found[0] if found else None

    async def engines_of(self, owner_id: int) -> list[EngineRow]:
        return await self._engines("WHERE owner_id = ? ORDER BY engine_id", (owner_id,))
