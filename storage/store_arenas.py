"""The arenas of groups (issue 40), written once for both backends: the arena, its players
and its games. The pairing and the standings are :mod:`tournaments.arena`'s (pure); this
keeps what they read, so that any process (the polling bot, a webhook worker) can tick an
arena and a restart loses nothing.

Who is free to be paired is decided here, in one write: a player is busy while a game of
theirs has no result, and :meth:`ArenaSql.start_arena_game` refuses a player who is, under
the arena row's lock (``FOR UPDATE`` in PostgreSQL; SQLite has one writer), so two processes
ticking the same arena never seat one person twice (tests/test_arena_scaled.py races them).
One person sits in one unfinished arena at a time (:meth:`ArenaSql.join_arena`).
"""

from __future__ import annotations

from storage.base import (
    ArenaEntry,
    ArenaGameRow,
    ArenaRow,
    ArenaStatus,
    arena_game_of,
)
from storage.connector import Row, Tx
from storage.store_core import SqlCore

ARENA_COLUMNS = ("arena_id, chat_id, thread_id, creator, minutes, match_args, bots, status, "
                 "starts_at, ends_at, message_id, created_at, kind, rounds, round, "
                 "round_ends_at")
ENTRY_COLUMNS = "arena_id, user_id, rating, joined_at, paused, waiting_since"
GAME_COLUMNS = ("game_id, arena_id, first_id, second_id, match_id, started_at, result, "
                "finished_at, round")
#: Arenas not over: people join, the ticker starts and ends them.
OPEN = "status <> 'finished'"


def arena_row(r: Row) -> ArenaRow:
    return ArenaRow(int(r["arena_id"]), int(r["chat_id"]), r["thread_id"], int(r["creator"]),
                    int(r["minutes"]), str(r["match_args"]), bool(r["bots"]),
                    ArenaStatus(r["status"]), r["starts_at"], r["ends_at"], r["message_id"],
                    float(r["created_at"]), str(r["kind"]), int(r["rounds"]), int(r["round"]),
                    r["round_ends_at"])


def entry_row(r: Row) -> ArenaEntry:
    return ArenaEntry(int(r["arena_id"]), int(r["user_id"]), int(r["rating"]),
                      float(r["joined_at"]), bool(r["paused"]), float(r["waiting_since"]))


def game_row(r: Row) -> ArenaGameRow:
    return ArenaGameRow(int(r["game_id"]), int(r["arena_id"]), int(r["first_id"]),
                        None if r["second_id"] is None else int(r["second_id"]),
                        None if r["match_id"] is None else int(r["match_id"]),
                        float(r["started_at"]), r["result"], r["finished_at"], int(r["round"]))


class ArenaSql(SqlCore):
    """:class:`storage.store.Store`'s arena operations, each with its contract."""

    async def create_arena(self, chat_id: int, thread_id: int | None, creator: int, *,
                           minutes: int, match_args: str, bots: bool,
                           starts_at: float | None, kind: str = "arena",
                           rounds: int = 0) -> ArenaRow | None:
        """A new arena (or Swiss league: ``kind`` ``swiss``, ``rounds`` rounds) in its lobby;
        ``None`` if the chat has one not over yet."""
        now = self._clock()

        async def work(tx: Tx) -> ArenaRow | None:
            # The chat's row locked: two /arena at once make one arena.
            await tx.fetchone(f"SELECT chat_id FROM chats WHERE chat_id = ?"
                              f"{self.dialect.row_lock}", (chat_id,))
            if await tx.fetchone(f"SELECT arena_id FROM arenas WHERE chat_id = ? AND {OPEN}",
                                 (chat_id,)):
                return None
            row = await tx.fetchone(
                "INSERT INTO arenas (chat_id, thread_id, creator, minutes, match_args, bots, "
                "status, starts_at, created_at, kind, rounds, round) "
                "VALUES (?, ?, ?, ?, ?, ?, 'lobby', ?, ?, ?, ?, 0) "
                f"RETURNING {ARENA_COLUMNS}",
                (chat_id, thread_id, creator, minutes, match_args, bots, starts_at, now, kind,
                 rounds))
            assert row is not None
            return arena_row(row)

        return await self._in_write(work)

    async def get_arena(self, arena_id: int) -> ArenaRow | None:
        """The arena, if it exists."""
        found = await self._query(f"SELECT {ARENA_COLUMNS} FROM arenas WHERE arena_id = ?",
                                  (arena_id,), arena_row)
        return found[0] if found else None

    async def latest_arena(self, chat_id: int) -> ArenaRow | None:
        """The chat's newest arena, over or not (``/arena`` shows it)."""
        found = await self._query(f"SELECT {ARENA_COLUMNS} FROM arenas WHERE chat_id = ? "
                                  "ORDER BY arena_id DESC LIMIT 1", (chat_id,), arena_row)
        return found[0] if found else None

    async def open_arenas(self) -> list[ArenaRow]:
        """Every arena not over yet: what the ticker starts, pairs and ends."""
        return await self._query(f"SELECT {ARENA_COLUMNS} FROM arenas WHERE {OPEN} "
                                 "ORDER BY arena_id", (), arena_row)

    async def update_arena(self, arena_id: int, *, status: ArenaStatus | None = None,
                           starts_at: float | None = None, ends_at: float | None = None,
                           message_id: int | None = None, was: ArenaStatus | None = None,
                           round: int | None = None, round_ends_at: float | None = None,
                           was_round: int | None = None) -> bool:
        """Set what is given; with ``was`` (``was_round``), only if the status (round) is
        that, so one process alone starts or ends it (or a round). False if nothing
        changed."""
        sets = [(name, value) for name, value in (
            ("status", None if status is None else status.value), ("starts_at", starts_at),
            ("ends_at", ends_at), ("message_id", message_id), ("round", round),
            ("round_ends_at", round_ends_at)) if value is not None]
        if not sets:
            return False
        condition = ("" if was is None else " AND status = ?") + \
            ("" if was_round is None else " AND round = ?")
        params = [value for _, value in sets] + [arena_id] + ([was.value] if was else []) + \
            ([was_round] if was_round is not None else [])
        return await self._modify(
            f"UPDATE arenas SET {', '.join(f'{name} = ?' for name, _ in sets)} "
            f"WHERE arena_id = ?{condition}", params) > 0

    async def join_arena(self, arena_id: int, user_id: int, rating: int) -> str:
        """Seat a person: ``joined``, ``back`` (from a pause), ``already`` (playing in it),
        or ``elsewhere`` (in another arena not over: one at a time)."""
        now = self._clock()

        async def work(tx: Tx) -> str:
            # The person's row locked: two joins at once seat them in one arena.
            await tx.fetchone(f"SELECT user_id FROM users WHERE user_id = ?"
                              f"{self.dialect.row_lock}", (user_id,))
            found = await tx.fetchone(
                "SELECT p.arena_id, p.paused FROM arena_players p JOIN arenas a "
                f"ON a.arena_id = p.arena_id WHERE p.user_id = ? AND a.{OPEN} "
                "ORDER BY p.arena_id DESC LIMIT 1", (user_id,))
            if found is not None and int(found["arena_id"]) != arena_id:
                return "elsewhere"
            if found is not None:
                if not found["paused"]:
                    return "already"
                await tx.execute("UPDATE arena_players SET paused = ?, waiting_since = ? "
                                 "WHERE arena_id = ? AND user_id = ?",
                                 (False, now, arena_id, user_id))
                return "back"
            await tx.execute(f"INSERT INTO arena_players ({ENTRY_COLUMNS}) "
                             "VALUES (?, ?, ?, ?, ?, ?)",
                             (arena_id, user_id, rating, now, False, now))
            return "joined"

        return await self._in_write(work)

    async def pause_arena(self, arena_id: int, user_id: int) -> bool:
        """Pause a player (no new game; their points stay); False if not playing in it."""
        return await self._modify("UPDATE arena_players SET paused = ? WHERE arena_id = ? "
                                  "AND user_id = ? AND NOT paused",
                                  (True, arena_id, user_id)) > 0

    async def arena_entries(self, arena_id: int) -> list[ArenaEntry]:
        """The arena's players, in joining order."""
        return await self._query(f"SELECT {ENTRY_COLUMNS} FROM arena_players "
                                 "WHERE arena_id = ? ORDER BY joined_at, user_id",
                                 (arena_id,), entry_row)

    async def arena_games(self, arena_id: int) -> list[ArenaGameRow]:
        """The arena's games, in the order they started."""
        return await self._query(f"SELECT {GAME_COLUMNS} FROM arena_games WHERE arena_id = ? "
                                 "ORDER BY game_id", (arena_id,), game_row)

    async def start_arena_game(self, arena_id: int, first: int, second: int | None, *,
                               round: int = 0, bye: bool = False) -> int | None:
        """Note a game (``second``: ``None`` for a computer; with ``bye``, a league round's
        bye, its result set at once) and return its number; ``None`` if either player has a
        game of this arena without a result (seated elsewhere)."""
        now = self._clock()
        people = [first] if second is None else [first, second]

        async def work(tx: Tx) -> int | None:
            # The arena's row locked (PostgreSQL; SQLite writes one at a time): a second
            # process's check below waits for this game, so it sees the players busy.
            await tx.fetchone(f"SELECT arena_id FROM arenas WHERE arena_id = ?"
                              f"{self.dialect.row_lock}", (arena_id,))
            for user_id in people:
                if await tx.fetchone(
                        "SELECT game_id FROM arena_games WHERE arena_id = ? AND result IS NULL "
                        "AND (first_id = ? OR second_id = ?)", (arena_id, user_id, user_id)):
                    return None  # busy: another process paired them first
            row = await tx.fetchone(
                "INSERT INTO arena_games (arena_id, first_id, second_id, started_at, round, "
                "result, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING game_id",
                (arena_id, first, second, now, round, "bye" if bye else None,
                 now if bye else None))
            assert row is not None
            return int(row["game_id"])

        return await self._in_write(work)

    async def set_arena_game_match(self, game_id: int, match_id: int | None) -> None:
        """The match a game is; ``None``: it could not be made (the game is void)."""
        if match_id is None:  # the match could not be made: the game never was
            await self._modify("UPDATE arena_games SET result = 'void', finished_at = ? "
                               "WHERE game_id = ? AND result IS NULL",
                               (self._clock(), game_id))
            return
        await self._modify("UPDATE arena_games SET match_id = ? WHERE game_id = ?",
                           (match_id, game_id))

    async def finish_arena_game(self, game_id: int, result: str) -> bool:
        """Set a game's result once (``first``, ``second``, ``draw``, ``void``); its players
        wait again from now. False if it had one."""
        now = self._clock()

        async def work(tx: Tx) -> bool:
            done = await tx.execute("UPDATE arena_games SET result = ?, finished_at = ? "
                                    "WHERE game_id = ? AND result IS NULL",
                                    (result, now, game_id))
            if done:  # back in the queue, from now
                found = await tx.fetchone(f"SELECT {GAME_COLUMNS} FROM arena_games "
                                          "WHERE game_id = ?", (game_id,))
                assert found is not None
                game = game_row(found)
                for user_id in (game.first, game.second):
                    if user_id is not None:
                        await tx.execute("UPDATE arena_players SET waiting_since = ? "
                                         "WHERE arena_id = ? AND user_id = ?",
                                         (now, game.arena_id, user_id))
            return bool(done)

        return await self._in_write(work)

    async def adjudicate_arena_game(self, game_id: int) -> bool:
        """Note that a league game missed its round's deadline (its time kept in
        ``finished_at`` until the result comes): True once, whichever process asks."""
        return await self._modify("UPDATE arena_games SET finished_at = ? WHERE game_id = ? "
                                  "AND result IS NULL AND finished_at IS NULL",
                                  (self._clock(), game_id)) > 0

    async def arena_of_game_chat(self, chat_id: int) -> ArenaRow | None:
        """The arena whose game's reserved chat ``chat_id`` is, or ``None``."""
        game_id = arena_game_of(chat_id)
        if game_id is None:
            return None
        found = await self._query(
            f"SELECT {', '.join('a.' + c.strip() for c in ARENA_COLUMNS.split(','))} "
            "FROM arena_games g JOIN arenas a ON a.arena_id = g.arena_id "
            "WHERE g.game_id = ?", (game_id,), arena_row)
        return found[0] if found else None
