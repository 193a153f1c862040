"""The shared SQL of matches (:mod:`storage.store`'s first part): made, read, played,
finished, and what was posted and told of them.

Written once over the connector (:mod:`storage.store_core`); where PostgreSQL does more in
the same transaction (its match lock, ``NOTIFY``, the scaled mode's jobs) a hook says so.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from krendzu import Match, Outcome, PlayerAction, Settings, match_outcome
from krendzu.stats import seat_statistics
from storage import queries as q
from storage import rows
from storage.base import (
    ActiveMatchExists,
    MatchClosed,
    MatchRow,
    MatchStatus,
    MovedBy,
    MoveRow,
    NotFound,
    OperatingFigures,
    RequestRows,
    SeatKind,
    SeatSpec,
    SequenceConflict,
    StandIn,
    StoredMatch,
    TimerRow,
    arena_game_of,
    normalize_action,
    rebuild_game,
)
from storage.common import (
    MAX_SEED,
    at,
    check_new_match,
    new_seats,
    panel_lines_dump,
    panel_lines_load,
    settings_json,
    stats_params,
)
from storage.connector import Tx, UniqueViolation
from storage.model import UNKNOWN_MOVER, PanelMessage
from storage.store_core import Also, SqlCore


class MatchSql(SqlCore):
    """The matches' operations of :class:`storage.store.Store`, written once, each with its
    contract."""

    # Matches: readers ---------------------------------------------------------------------

    async def get_match(self, match_id: int) -> MatchRow:
        """The match row; :class:`NotFound` if there is none."""
        found = await self._matches("WHERE m.match_id = ?", (match_id,))
        if not found:
            raise NotFound(f"no match {match_id}")
        return found[0]

    async def active_match(self, chat_id: int, thread_id: int | None = None) -> MatchRow | None:
        """The active match of a chat, or of one forum topic of it."""
        found = await self._matches(
            "WHERE m.chat_id = ? AND m.thread_id = ? AND m.status = 'active'",
            (chat_id, thread_id or 0))
        return found[0] if found else None

    async def matches_of_user(
        self, user_id: int, *, status: MatchStatus | None = MatchStatus.ACTIVE,
        chat_id: int | None = None, thread_id: int | None = None, limit: int | None = None
    ) -> list[MatchRow]:
        """Matches the user is seated in (``status=None``: all), newest first; with
        ``chat_id`` only those of that chat and forum topic (``thread_id``), at most
        ``limit`` of them (a long-time player's whole history is not read for one)."""
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
        """Every unfinished match, oldest first: what a restart resumes."""
        return await self._matches("WHERE m.status = 'active' ORDER BY m.match_id")

    async def active_matches_of_chat(self, chat_id: int) -> list[MatchRow]:
        """The active matches of a chat, of every forum topic of it, oldest first (what a
        chat that removed the bot leaves to close)."""
        return await self._matches(
            "WHERE m.chat_id = ? AND m.status = 'active' ORDER BY m.match_id", (chat_id,))

    async def count_active_matches(self, *, chat_id: int | None = None,
                                   user_id: int | None = None) -> int:
        """How many active matches a chat has (every forum topic of it counted), or a user is
        seated in: the caps on matches per chat and per person count without reading rows."""
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

    async def operating_figures(self) -> OperatingFigures:
        """Open set-ups, running matches, and their moves stored but not yet announced
        (how many, the oldest one's time): read at each metrics scrape, so one statement."""
        return (await self._query(q.OPERATING_FIGURES, (), lambda r: OperatingFigures(
            int(r["lobbies"]), int(r["matches"]), int(r["waiting"]),
            None if r["oldest"] is None else float(r["oldest"]), int(r["pool"]))))[0]

    async def unannounced_matches(self) -> list[MatchRow]:
        """Finished matches whose last moves were stored but not all announced (the bot
        stopped before the final post went out), oldest first."""
        return await self._matches(
            "WHERE m.status = 'finished' AND m.announced_seq < (SELECT "
            "COALESCE(MAX(v.seq), 0) FROM moves v WHERE v.match_id = m.match_id) "
            "ORDER BY m.match_id")

    async def recent_matches(self, chat_id: int, thread_id: int | None = None,
                             limit: int = 10) -> list[MatchRow]:
        """The chat's (topic's) newest matches, newest first."""
        return await self._matches(
            "WHERE m.chat_id = ? AND m.thread_id = ? ORDER BY m.match_id DESC LIMIT ?",
            (chat_id, thread_id or 0, max(0, limit)))

    # Matches: made, played, finished ---------------------------------------------------------

    async def create_match(self, chat_id: int, settings: Settings, seats: Sequence[SeatSpec],
                           *, thread_id: int | None = None, seed: int | None = None,
                           board_message_id: int | None = None,
                           lobby_id: int | None = None) -> StoredMatch:
        """Start a match (status active) and deal it with the engine.

        Raises :class:`ActiveMatchExists` if the chat/topic already has an active match,
        :class:`NotFound` for a human seat whose user is not stored. A missing seed is drawn
        at random; it is stored, so the deal replays exactly. With ``lobby_id`` that open
        lobby is marked started in the same transaction (:class:`NotFound` if not open).
        """
        if seed is None:
            seed = secrets.randbelow(MAX_SEED)
        check_new_match(seed, thread_id)
        seat_rows = new_seats(seats)
        game = Match([s.label for s in seat_rows], settings, seed=seed)  # validates them
        now = self._clock()
        settings_text = json.dumps(settings_json(settings))

        async def work(tx: Tx) -> StoredMatch:
            await tx.execute(q.ENSURE_CHAT, (chat_id, now, now))
            humans = [s.user_id for s in seat_rows if s.user_id is not None]
            if humans:
                users, params = self.dialect.any_of("user_id", humans)
                found = {r["user_id"]
                         for r in await tx.fetchall(f"SELECT user_id FROM users WHERE {users}",
                                                    params)}
                missing = [u for u in humans if u not in found]
                if missing:
                    raise NotFound(f"users {missing} are not stored: upsert_user first")
            busy = await tx.fetchone(q.ACTIVE_MATCH_ID, (chat_id, thread_id or 0))
            if busy is not None:
                raise ActiveMatchExists(
                    f"chat {chat_id} topic {thread_id} already plays match {busy['match_id']}")
            try:
                inserted = await tx.fetchone(q.INSERT_MATCH,
                    (chat_id, thread_id or 0, settings.table.value, settings_text, seed,
                     board_message_id, now))
            except UniqueViolation as exc:  # another process started one meanwhile
                raise ActiveMatchExists(f"chat {chat_id} topic {thread_id} already plays "
                                        "a match") from exc
            assert inserted is not None
            match_id = int(inserted["match_id"])
            if lobby_id is not None and not await tx.execute(
                    q.START_LOBBY, (match_id, now, lobby_id)):
                raise NotFound(f"no open lobby {lobby_id}")
            await tx.executemany(q.INSERT_SEATS,
                [(match_id, s.seat, s.kind.value, s.user_id, s.level, s.label)
                 for s in seat_rows])
            await self._notify(tx, match_id)
            if seat_rows[game.current_player].kind is SeatKind.COMPUTER:
                await self._after_computer(tx, match_id, 1)  # commits with the match
            row = MatchRow(match_id=match_id, chat_id=chat_id, thread_id=thread_id,
                           settings=settings, seed=seed, status=MatchStatus.ACTIVE,
                           seats=seat_rows, move_count=0, board_message_id=board_message_id,
                           created_at=at(now), finished_at=None, totals=None)
            return StoredMatch(row, (), game)

        return await self._in_write(work)

    async def load_match(self, match_id: int) -> StoredMatch:
        """Row, move log and the engine state rebuilt from them, read consistently."""
        row, moves = await self._match_and_moves(match_id)
        game = rebuild_game(row, [m.action for m in moves])
        return StoredMatch(row, tuple(moves), game)

    async def _match_and_moves(self, match_id: int) -> tuple[MatchRow, list[MoveRow]]:
        """A match's row and its move log, from one snapshot (two queries in one read;
        PostgreSQL makes it one statement with arrays)."""

        async def op(tx: Tx) -> tuple[MatchRow, list[MoveRow]]:
            row = await self._get_match(tx, match_id)
            moves = await tx.fetchall(q.GET_MOVES, (match_id,))
            return row, [rows.move_row(r) for r in moves]

        return await self._in_read(op)

    async def match_head(self, match_id: int) -> tuple[MatchRow, int]:
        """The match's row and the number of its last stored move (0 before any): enough to
        tell whether a kept :class:`StoredMatch` is still the current one."""
        # The row's move count is the last stored move's number (the log has no gaps), and
        # both come from one statement, so they agree.
        row = await self.get_match(match_id)
        return row, row.move_count

    async def match_state(
        self, match_id: int
    ) -> tuple[MatchRow, TimerRow | None, dict[int, StandIn]]:
        """:meth:`match_head`'s row (its ``move_count`` the last stored move's number) with
        the match's turn timer and stand-ins: what a move checks and times, read together.
        A move reads them once per request, in one transaction: one round trip in the
        scaled mode instead of three."""
        async def work(tx: Tx) -> tuple[MatchRow, TimerRow | None, dict[int, StandIn]]:
            row = await self._get_match(tx, match_id)
            timer = await tx.fetchone(q.GET_TIMER, (match_id,))
            stand_ins = [rows.stand_in(r) for r in await tx.fetchall(q.GET_STAND_INS,
                                                                       (match_id,))]
            return (row, rows.timer_row(timer) if timer is not None else None,
                    {s.seat: s for s in stand_ins})

        return await self._in_read(work)

    async def request_rows(self, user_id: int, chat_id: int, thread_id: int | None = None, *,
                           kept: Callable[[int], int | None] = lambda match_id: None,
                           update_id: int | None = None) -> RequestRows:
        """What a request of ``user_id`` in ``chat_id`` (forum topic ``thread_id``) reads
        before it acts, in one read transaction (one snapshot): the user's row and, in a
        group (``chat_id`` < 0), the chat's row and its active match with the match's turn
        timer and stand-ins (:meth:`match_state`'s). The match's log is read and the match
        rebuilt (``stored``) only when ``kept(match_id)``, the number of moves the caller
        holds of it, is not its move count. A request used to read these in four calls
        (a transaction each in the scaled mode). With ``update_id``, the update ledger's
        state of that update comes along (``update``, as :meth:`update_state` answers it):
        the webhook's read of its ledger, a transaction of its own before."""
        ledger: tuple[bool, int | None] | None = None

        async def work(tx: Tx) -> tuple[RequestRows, list[MoveRow] | None]:
            nonlocal ledger
            if update_id is not None:
                ledger = await self._update_state_in(tx, update_id)
            found = await tx.fetchone(q.GET_USER, (user_id,))
            user = rows.user_row(found) if found is not None else None
            if chat_id >= 0:
                return RequestRows(user), None
            found = await tx.fetchone(q.GET_CHAT, (chat_id,))
            chat = rows.chat_row(found) if found is not None else None
            active = await self._match_rows(
                tx, "WHERE m.chat_id = ? AND m.thread_id = ? AND m.status = 'active'",
                (chat_id, thread_id or 0))
            if not active:
                return RequestRows(user, chat), None
            row = active[0]
            timer = await tx.fetchone(q.GET_TIMER, (row.match_id,))
            stand_ins = [rows.stand_in(r) for r in await tx.fetchall(q.GET_STAND_INS,
                                                                       (row.match_id,))]
            moves = None
            if kept(row.match_id) != row.move_count:
                moves = await tx.fetchall(q.GET_MOVES, (row.match_id,))
            read = RequestRows(user, chat, row,
                               rows.timer_row(timer) if timer is not None else None,
                               {s.seat: s for s in stand_ins})
            return read, None if moves is None else [rows.move_row(m) for m in moves]

        read, log = await self._in_read(work)
        read = replace(read, update=ledger)
        if log is None or read.match is None:
            return read
        game = rebuild_game(read.match, [m.action for m in log])
        return replace(read, stored=StoredMatch(read.match, tuple(log), game))

    async def append_move(self, match_id: int, expected_seq: int, action: PlayerAction | str,
                          *, update_id: int | None = None,
                          final: Match | None = None, by: MovedBy = UNKNOWN_MOVER,
                          arm: tuple[int | None, float | None] | None = None) -> MoveRow:
        """Append one move atomically, if and only if it gets number ``expected_seq``,
        with who made it and through which door (``by``, read back in :class:`MoveRow`).

        ``expected_seq`` is ``len(game.history) + 1`` of the caller's state before the move.
        A stale number raises :class:`SequenceConflict`; an ``update_id`` seen before raises
        :class:`DuplicateUpdate`; a closed match raises :class:`MatchClosed`. In each case
        nothing is written. When the move ends the match, pass the engine state after it as
        ``final``: the match is closed and statistics recorded in the same transaction.
        """
        return (await self.append_moves(match_id, [(expected_seq, action)],
                                        update_id=update_id, final=final, by=by, arm=arm))[0]

    #: Whether :meth:`append_moves` stores a move's steps in one transaction (it does: a
    #: webhook worker may be killed between two of them). Where it is ``False`` (a test sets
    #: it), the flow stores them one :meth:`append_move` after another: a refused one raises,
    #: those before it stay.
    appends_atomically = True

    async def append_moves(self, match_id: int,
                           moves: Sequence[tuple[int, PlayerAction | str]], *,
                           update_id: int | None = None,
                           final: Match | None = None,
                           by: MovedBy = UNKNOWN_MOVER,
                           arm: tuple[int | None, float | None] | None = None
                           ) -> list[MoveRow]:
        """:meth:`append_move` for the steps of one move (a card and "end" typed together),
        ``(expected_seq, action)`` each, numbered one after another, in one transaction: all
        of them are stored, or none (a process killed in between would otherwise leave the
        turn half made, and the update that made it recorded). A refused step raises as
        :meth:`append_move` does and nothing is written. ``update_id`` goes with the first
        step, ``final`` and ``by.then`` with the last, ``by`` (who made it and through which
        door) with every one. ``arm``: the turn timer's next ``(seq, deadline)``, armed in
        the same transaction (as ``arm_timer``): a move is written once."""
        texts = move_steps(moves, final)
        if not texts:
            return []
        now = self._clock()
        notify, notify_params = self._notify_column(match_id)

        async def work(tx: Tx) -> list[MoveRow]:
            # Writers of this match queue here until COMMIT or ROLLBACK (PostgreSQL; SQLite
            # has one writer), so the statements after it see everything they committed.
            await self._lock_match(tx, match_id)
            if update_id is not None:
                await self._remember_update(tx, update_id, now)
            first = texts[0][0]
            r = await tx.fetchone(
                "SELECT status, (SELECT COALESCE(MAX(seq), 0) FROM moves WHERE match_id = ?) "
                f"AS last_seq{notify} FROM matches WHERE match_id = ?",
                (match_id, *notify_params, match_id))
            if r is None:
                raise NotFound(f"no match {match_id}")
            if r["status"] != MatchStatus.ACTIVE:
                raise MatchClosed(f"match {match_id} is {r['status']}")
            if r["last_seq"] + 1 != first:
                raise SequenceConflict(match_id, first, r["last_seq"] + 1)
            stored: list[MoveRow] = []
            for i, (seq, text) in enumerate(texts):
                mark = update_id if i == 0 else None
                step_by = by if i == len(texts) - 1 or by.then is None else \
                    MovedBy(by.user_id, by.door)
                try:
                    await tx.execute(q.INSERT_MOVE, (match_id, seq, text, mark, now,
                                                     by.user_id, by.door.value, step_by.then))
                except UniqueViolation as exc:  # a writer that skipped the lock won
                    raise SequenceConflict(match_id, seq, seq + 1) from exc
                stored.append(MoveRow(match_id, seq, text, mark, at(now), step_by))
            if final is not None:
                await self._close_finished(tx, match_id, final, now)
            await self._after_append(tx, match_id, texts[-1][0])  # commits with the moves
            if arm is not None:
                await self._arm_timer(tx, match_id, *arm)
            return stored

        return await self._in_write(work)

    def _notify_column(self, match_id: int) -> tuple[str, tuple[str, ...]]:
        """:meth:`append_moves`' hook (a backend overrides it as those of
        :class:`~storage.store_core.SqlCore`): a column to add to the append's first read
        that tells the other processes of the match's change at COMMIT (no round trip of
        its own), and its parameters; none where no other process listens."""
        del match_id
        return "", ()

    async def _arm_timer(self, tx: Tx, match_id: int, seq: int | None,
                         deadline: float | None) -> None:
        """Arm the match's turn timer for move ``seq`` inside the caller's transaction."""
        row = await tx.fetchone(q.ARM_TIMER, (seq, deadline, match_id))
        if row is not None and seq is not None and deadline is not None:
            await self._after_arm(tx, match_id, seq, deadline, int(row["seconds"]))

    async def _close_finished(self, tx: Tx, match_id: int, game: Match, now: float) -> None:
        """Final status, totals and per-user statistics: inside the caller's transaction.

        The statistics are the engine's (:func:`krendzu.stats.seat_statistics` of the
        outcome with the seats that resigned): this only adds them up."""
        row = await self._get_match(tx, match_id)
        if tuple(row.labels) != game.players:
            raise ValueError(f"that game is not match {match_id} (players differ)")
        resigned = {r["seat"] for r in await tx.fetchall(q.RESIGNED_SEATS, (match_id,))}
        gained = seat_statistics(game, match_outcome(game, resigned))
        await tx.execute(q.FINISH_MATCH, (now, json.dumps(list(game.totals())), match_id))
        stats_chat = await self._stats_chat(tx, row.chat_id)
        params = [stats_params(seat.user_id, stats_chat, gained[seat.seat])
                  for seat in row.seats if seat.user_id is not None]
        if params:
            await tx.executemany(self.dialect.add_stats(), params)

    @staticmethod
    async def _stats_chat(tx: Tx, chat_id: int) -> int:
        """The chat whose statistics a match counts in: an arena game's group (its /top),
        else (or when the group is not known any more) the match's own chat."""
        game_id = arena_game_of(chat_id)
        if game_id is None:
            return chat_id
        group = await tx.fetchone("SELECT a.chat_id FROM arena_games g JOIN arenas a ON "
                                  "a.arena_id = g.arena_id JOIN chats c ON c.chat_id = "
                                  "a.chat_id WHERE g.game_id = ?", (game_id,))
        return int(group["chat_id"]) if group is not None else chat_id

    async def abandon_match(self, match_id: int) -> bool:
        """Close an unfinished match without statistics. False if it was closed already."""
        now = self._clock()

        async def work(tx: Tx) -> bool:
            if await tx.execute(q.ABANDON_MATCH, (now, match_id)):
                await self._notify(tx, match_id)
                return True
            if await tx.fetchone(q.MATCH_EXISTS, (match_id,)):
                return False
            raise NotFound(f"no match {match_id}")

        return await self._in_write(work)

    async def concede_match(self, match_id: int, seat: int) -> bool:
        """``seat`` resigned a duel or team match: it ends now, lost by that side and won by
        the other (statistics too). False if the match was not active."""
        now = self._clock()

        async def work(tx: Tx) -> bool:
            row = await self._get_match(tx, match_id)
            if not await tx.execute(q.CONCEDE_MATCH, (now, seat, match_id)):
                return False
            # The engine's outcome of a concession (the points so far decide nothing, so
            # none are read): the conceding side loses, every other side wins.
            outcome = Outcome.of_totals(row.table, [0] * row.table.players, conceded=seat)
            stats_chat = await self._stats_chat(tx, row.chat_id)
            params = [(s.user_id, stats_chat, int(outcome.won(s.seat)))
                      for s in row.seats if s.user_id is not None]
            if params:
                await tx.executemany(q.ADD_CONCESSION_STATS, params)
            await self._notify(tx, match_id)
            return True

        return await self._in_write(work)

    async def set_board_message(self, match_id: int, message_id: int | None,
                                caption: str | None = None) -> int | None:
        """Remember the group message that shows the board (and its caption); returns the
        id it replaces."""
        async def work(tx: Tx) -> int | None:
            old = await tx.fetchone("SELECT board_message_id FROM matches WHERE match_id = ?"
                                    f"{self.dialect.row_lock}", (match_id,))
            if old is None:
                raise NotFound(f"no match {match_id}")
            await tx.execute(q.SET_BOARD_MESSAGE, (message_id, caption, match_id))
            previous: int | None = old["board_message_id"]
            return previous

        return await self._in_write(work)

    async def post_board(self, match_id: int, message_id: int, caption: str, *,
                         notes: Mapping[str, int] | None = None,
                         announced: int | None = None,
                         also: Also | None = None) -> tuple[int | None, bool]:
        """:meth:`set_board_message` for a new board post, and whether the match's chat
        keeps one live board (``/settings tidy``): what the post's sender needs to delete
        the old one. Both are done in one transaction, with ``notes`` (:meth:`note_told`'s
        keys and their move numbers: what the post tells), so that the post is remembered
        as told together with its message or not at all; ``announced``: the match's
        marker (:meth:`set_announced`) moved in the same write, when the post is the last
        of its announcement's records; ``also``: the caller's own write in it last (the
        scaled mode's board job's end, :meth:`_also`)."""
        async def work(tx: Tx) -> tuple[int | None, bool]:
            old = await tx.fetchone(q.BOARD_AND_TIDY + self.dialect.row_lock, (match_id,))
            if old is None:
                raise NotFound(f"no match {match_id}")
            await self._note_told(tx, match_id, notes, announced)
            await tx.execute(q.SET_BOARD_MESSAGE, (message_id, caption, match_id))
            if also is not None:
                await self._also(tx, also)
            tidy = old["tidy"]
            return old["board_message_id"], tidy is None or bool(tidy)

        return await self._in_write(work)

    # Panels, the board post, what was told ------------------------------------------------

    async def get_panel(self, match_id: int, user_id: int) -> PanelMessage | None:
        """The player's panel message (:class:`PanelMessage`)."""
        found = await self._query(q.GET_PANEL, (match_id, user_id), rows.panel)
        return found[0] if found else None

    async def set_panel(self, match_id: int, user_id: int, panel: PanelMessage | None, *,
                        notes: Mapping[str, int] | None = None,
                        announced: int | None = None,
                        lines: Mapping[int, Sequence[str] | None] | None = None,
                        also: Also | None = None) -> PanelMessage | None:
        """Remember (or, with ``None``, forget) the player's panel message; returns the one
        it replaces (in the same write, so two senders cannot both miss the old one).
        ``notes``: :meth:`note_told`'s keys of the match noted in the same write (a new
        panel's announcement: told with the panel it became, one transaction);
        ``announced``: the match's marker moved in it too (:meth:`post_board`'s); ``lines``:
        :meth:`set_panel_lines`'s, in it too (what the new panel shows, or none for a
        panel dropped); ``also``: the caller's own write, last in it (the scaled mode's
        announcement job's end, riding with its marker: :mod:`chat.markers`)."""
        async def work(tx: Tx) -> PanelMessage | None:
            # Two senders must not both read the same old panel (a missing row cannot be
            # locked with FOR UPDATE, so PostgreSQL takes the match's lock).
            await self._lock_match(tx, match_id)
            await self._note_told(tx, match_id, notes, announced)
            await self._set_panel_lines(tx, match_id, lines or {})
            old = await tx.fetchone(q.GET_PANEL, (match_id, user_id))
            if panel is None:
                await tx.execute(q.DELETE_PANEL, (match_id, user_id))
            else:
                await tx.execute(q.UPSERT_PANEL, (match_id, user_id, panel.message_id,
                                                  bool(panel.is_photo), panel.in_group))
            if also is not None:
                await self._also(tx, also)
            return rows.panel(old) if old else None

        return await self._in_write(work)

    async def get_panel_lines(self, match_id: int, user_id: int) -> list[str]:
        """The move lines the player's newest panel shows ([] when none)."""
        found = await self._query(q.GET_PANEL_LINES,
            (match_id, user_id), lambda r: panel_lines_load(r["lines"]))
        return found[0] if found else []

    async def set_panel_lines(self, match_id: int,
                              lines: Mapping[int, Sequence[str] | None]) -> None:
        """Remember (or, with ``None``, forget) the lines each player's panel shows, by user
        id, in one write (one move changes several players' panels)."""
        if not lines:
            return

        async def work(tx: Tx) -> None:
            await self._set_panel_lines(tx, match_id, lines)

        await self._in_write(work)

    async def _set_panel_lines(self, tx: Tx, match_id: int,
                               lines: Mapping[int, Sequence[str] | None]) -> None:
        """:meth:`set_panel_lines` within ``tx``."""
        gone = [user_id for user_id, shown in lines.items() if shown is None]
        kept = [(match_id, user_id, panel_lines_dump(shown))
                for user_id, shown in lines.items() if shown is not None]
        if gone:
            users, params = self.dialect.any_of("user_id", gone)
            await tx.execute(f"DELETE FROM panel_lines WHERE match_id = ? AND {users}",
                             (match_id, *params))
        if kept:
            await tx.executemany(q.UPSERT_PANEL_LINES, kept)

    async def board_message(self, match_id: int) -> tuple[int, str] | None:
        """The group's newest board post of the match: (message id, caption)."""
        found = await self._query(q.BOARD_MESSAGE, (match_id,),
            lambda r: (int(r["board_message_id"]), str(r["board_caption"] or "")))
        return found[0] if found else None

    async def set_announced(self, match_id: int, seq: int, *, also: Also | None = None) -> None:
        """Record that moves up to ``seq`` were announced (never lowers the marker);
        ``also``: the caller's own write in the same transaction (the scaled mode's
        announcement job's end goes with its marker: one commit where there were two)."""
        if also is None:
            await self._modify(self.dialect.set_announced(), (seq, match_id))
            return

        async def work(tx: Tx) -> None:
            await tx.execute(self.dialect.set_announced(), (seq, match_id))
            await self._also(tx, also)

        await self._in_write(work)

    async def told(self, match_id: int) -> dict[str, int]:
        """What of the match's announcements was delivered (:data:`chat.notices.Told`
        keys, each with its move number, ``board``'s the last move the group's board post
        shows): a restart, or an announcement job run again, skips what is here."""
        found = await self._query(q.GET_TOLD, (match_id,),
                                  lambda r: (str(r["key"]), int(r["seq"])))
        return dict(found)

    async def note_told(self, match_id: int, key: str, seq: int = 0, *,
                        announced: int | None = None, also: Also | None = None) -> None:
        """Note a delivered notice of the match's announcements (a key's move number
        never goes down); ``announced``: the match's marker moved in the same write
        (:meth:`post_board`'s), and ``also``, the caller's own write, last in it."""
        if announced is None and also is None:
            await self._modify(self.dialect.note_told(), (match_id, key, seq))
            return

        async def work(tx: Tx) -> None:
            await self._note_told(tx, match_id, {key: seq}, announced)
            if also is not None:
                await self._also(tx, also)

        await self._in_write(work)

    async def _note_told(self, tx: Tx, match_id: int, notes: Mapping[str, int] | None,
                         announced: int | None = None) -> None:
        """:meth:`note_told` of each of ``notes`` (key → move number) within ``tx``, and
        the marker moved to ``announced`` (:meth:`set_announced`) when given."""
        if notes:
            await tx.executemany(self.dialect.note_told(),
                                 [(match_id, key, seq) for key, seq in notes.items()])
        if announced is not None:
            await tx.execute(self.dialect.set_announced(), (announced, match_id))


def check_final(final: Match | None, expected_seq: int, text: str) -> None:
    """``append_move(final=...)`` must be the state right after this very move."""
    if final is None:
        return
    if not final.is_over:
        raise ValueError("final must be the state of a match that is over")
    if len(final.history) != expected_seq or str(final.history[-1]) != text:
        raise ValueError("final must be the state right after this move")


def move_steps(moves: Sequence[tuple[int, Any]], final: Match | None) -> list[tuple[int, str]]:
    """The steps of one move for ``append_moves``, checked: their texts, numbered one after
    another, and ``final`` (if any) the state right after the last of them."""
    texts = [(seq, normalize_action(action)) for seq, action in moves]
    for i, (seq, _) in enumerate(texts):
        if i and seq != texts[i - 1][0] + 1:
            raise ValueError("the steps of one move are numbered one after another")
    if texts:
        check_final(final, texts[-1][0], texts[-1][1])
    return texts
