"""The SQL both backends share, and where their dialects differ.

Every statement is written once, in SQLite's parameter style (``?``, ``:name``; the
PostgreSQL connector translates it: :func:`storage.connector.format_style`), in the SQL the
two databases agree on: ``ON CONFLICT ... DO UPDATE`` upserts, ``RETURNING``, ``TRUE`` and
``FALSE`` for the flag columns (SQLite stores them as 1 and 0, PostgreSQL as booleans; a bare
``WHERE resigned`` or ``NOT m.rated`` reads either). Where the dialects really differ, a
:class:`Dialect` says so, and the statements built from it are named here too:

- a two-argument maximum: SQLite's scalar ``MAX(a, b)``, PostgreSQL's ``GREATEST(a, b)``;
- a match's seats as one JSON column: ``json_group_array`` (text) and ``json_agg`` (decoded
  by psycopg), read alike by :func:`storage.rows.match_row`;
- a list parameter: SQLite has no arrays (``IN (?, ?, ...)``), PostgreSQL takes one
  (``= ANY(?)``, one statement to prepare whatever the list's length);
- a row lock: ``FOR UPDATE`` in PostgreSQL, nothing in SQLite (one writer at a time).

What only one backend has stays in its driver module: SQLite's group commit, pragmas and
file backup; PostgreSQL's advisory locks, ``LISTEN``/``NOTIFY``, the jobs' hooks, the flood
windows and the webhook workers' reply outbox.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from storage.base import ENGINE_COLUMNS
from storage.common import STATS_SUMS
from storage.connector import marks


@dataclass(frozen=True)
class Dialect:
    """What one database spells its own way (see the module's docstring)."""

    name: str
    #: The two-argument maximum function.
    greatest: str
    #: The seats of match ``m`` as one JSON array of objects named by column.
    seats_json: str
    #: Whether a list travels as one array parameter (``= ANY(?)``).
    arrays: bool
    #: What locks the rows a read found until COMMIT (SQLite's one writer needs nothing).
    row_lock: str

    def any_of(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column`` is one of ``values``: the condition and its parameters. An empty list
        matches nothing (SQLite reads ``IN ()`` as an empty set)."""
        if self.arrays:
            return f"{column} = ANY(?)", [list(values)]
        return f"{column} IN ({marks(len(values))})", list(values)

    def match_columns(self) -> str:
        """A match row of ``matches m`` with its move count and its seats: one query."""
        return MATCH_COLUMNS.format(seats=self.seats_json)

    def note_told(self) -> str:
        """Note what was told of a match (a key's sequence number only grows)."""
        return ("INSERT INTO told (match_id, key, seq) VALUES (?, ?, ?) ON CONFLICT "
                f"(match_id, key) DO UPDATE SET seq = {self.greatest}(told.seq, excluded.seq)")

    def set_announced(self) -> str:
        return (f"UPDATE matches SET announced_seq = {self.greatest}(announced_seq, ?) "
                "WHERE match_id = ?")

    def add_stats(self) -> str:
        """Add one finished match to a player's row (named parameters:
        :func:`storage.common.stats_params`)."""
        return f"""
            INSERT INTO user_stats (user_id, chat_id, matches, best_tour, {", ".join(STATS_SUMS)})
            VALUES (:user_id, :chat_id, 1, :best_tour, {", ".join(":" + c for c in STATS_SUMS)})
            ON CONFLICT (user_id, chat_id) DO UPDATE SET
                matches = user_stats.matches + 1,
                best_tour = {self.greatest}(user_stats.best_tour, excluded.best_tour),
                {", ".join(f"{c} = user_stats.{c} + excluded.{c}" for c in STATS_SUMS)}
        """


SQLITE = Dialect(
    name="sqlite",
    greatest="MAX",
    seats_json="""(SELECT json_group_array(json_object('seat', st.seat, 'kind', st.kind,
                                         'user_id', st.user_id, 'level', st.level,
                                         'label', st.label))
     FROM seats st WHERE st.match_id = m.match_id)""",
    arrays=False,
    row_lock="",
)

POSTGRES = Dialect(
    name="postgres",
    greatest="GREATEST",
    seats_json="""(SELECT json_agg(json_build_object('seat', st.seat, 'kind', st.kind,
                                       'user_id', st.user_id, 'level', st.level,
                                       'label', st.label) ORDER BY st.seat)
     FROM seats st WHERE st.match_id = m.match_id)""",
    arrays=True,
    row_lock=" FOR UPDATE",
)


# Columns: every row type is built from named columns (storage.rows) -----------------------

MATCH_COLUMNS = """
    m.match_id, m.chat_id, m.thread_id, m.table_kind, m.settings, m.seed, m.status,
    m.board_message_id, m.created_at, m.finished_at, m.totals,
    (SELECT COALESCE(MAX(v.seq), 0) FROM moves v WHERE v.match_id = m.match_id)
        AS move_count,
    m.announced_seq, m.conceded_by,
    {seats} AS seats
"""
MOVE_COLUMNS = "match_id, seq, action, update_id, created_at, mover, door, then_card"
CHAT_COLUMNS = ("chat_id, language, default_settings, created_at, updated_at, tidy, title, "
                "panels, bot_admin")
USER_COLUMNS = "user_id, display_name, language, can_write_privately, created_at, updated_at"
TIMER_COLUMNS = "t.match_id, t.seconds, t.seq, t.deadline, t.reminded"
LOBBY_COLUMNS = ("lobby_id, chat_id, thread_id, creator_id, state, message_id, status, "
                 "match_id, created_at, updated_at")
RATING_COLUMNS = "user_id, mu, sigma, rated_matches"
#: A player's statistics summed over the chats of ``user_stats s`` (joined to ``users u``),
#: one column per :class:`storage.base.StatsRow` field; grouped by ``s.user_id, u.user_id``.
STATS_COLUMNS = """
    s.user_id, u.display_name, SUM(s.matches) AS matches, SUM(s.wins) AS wins,
    SUM(s.draws) AS draws, SUM(s.points_scored) AS points_scored,
    SUM(s.points_conceded) AS points_conceded, SUM(s.tours_attacked) AS tours_attacked,
    SUM(s.tours_defended) AS tours_defended, MAX(s.best_tour) AS best_tour,
    SUM(s.suit_combos) AS suit_combos, SUM(s.progression_combos) AS progression_combos,
    SUM(s.own_goals_conceded) AS own_goals_conceded
"""
STATS_ORDER = "wins DESC, draws DESC, points_scored DESC, matches ASC, s.user_id ASC"


# Named queries --------------------------------------------------------------------------

GET_CHAT = f"SELECT {CHAT_COLUMNS} FROM chats WHERE chat_id = ?"
GET_USER = f"SELECT {USER_COLUMNS} FROM users WHERE user_id = ?"
GET_ENGINE = f"SELECT {ENGINE_COLUMNS} FROM engines WHERE engine_id = ?"
GET_LOBBY = f"SELECT {LOBBY_COLUMNS} FROM lobbies WHERE lobby_id = ?"
#: A chat row that a match or lobby needs, made if it is missing.
ENSURE_CHAT = ("INSERT INTO chats (chat_id, created_at, updated_at) VALUES (?, ?, ?) "
               "ON CONFLICT (chat_id) DO NOTHING")
UPSERT_CHAT = f"""
    INSERT INTO chats (chat_id, language, default_settings, created_at, updated_at, tidy,
                       title, panels, bot_admin)
    VALUES (:chat_id, :language, :settings, :now, :now, COALESCE(:tidy, TRUE), :title,
            :panels, :bot_admin)
    ON CONFLICT (chat_id) DO UPDATE SET
        language = COALESCE(excluded.language, chats.language),
        default_settings = COALESCE(excluded.default_settings, chats.default_settings),
        tidy = COALESCE(:tidy, chats.tidy),
        title = COALESCE(excluded.title, chats.title),
        panels = COALESCE(excluded.panels, chats.panels),
        bot_admin = COALESCE(excluded.bot_admin, chats.bot_admin),
        updated_at = excluded.updated_at
    RETURNING {CHAT_COLUMNS}
"""
UPSERT_USER = f"""
    INSERT INTO users (user_id, display_name, language, can_write_privately, created_at,
                       updated_at, name_key)
    VALUES (:user_id, :name, :language, COALESCE(:can, FALSE), :now, :now, :key)
    ON CONFLICT (user_id) DO UPDATE SET
        display_name = excluded.display_name,
        name_key = excluded.name_key,
        language = COALESCE(:language, users.language),
        can_write_privately = COALESCE(:can, users.can_write_privately),
        updated_at = excluded.updated_at
    RETURNING {USER_COLUMNS}
"""
GET_PANEL = ("SELECT message_id, is_photo, in_chat FROM panel_messages "
             "WHERE match_id = ? AND user_id = ?")
#: Added to a match's update id inside the write that uses it; no row: a redelivery.
REMEMBER_UPDATE = ("INSERT INTO processed_updates (update_id, processed_at) VALUES (?, ?) "
                   "ON CONFLICT (update_id) DO NOTHING")
FORGET_UPDATES = "DELETE FROM processed_updates WHERE processed_at < ?"
LAST_SEQ = "SELECT COALESCE(MAX(seq), 0) AS last FROM moves WHERE match_id = ?"


# Named queries: people, ratings, timers, lobbies, engines, the ledger (storage/store.py) -

RATE_MATCH_ONCE = ("UPDATE matches SET rated = TRUE WHERE match_id = ? AND NOT rated AND "
                   "(status = 'finished' OR conceded_by IS NOT NULL)")
UPSERT_RATING = ("INSERT INTO ratings (user_id, mu, sigma, rated_matches, updated_at) "
                 "VALUES (?, ?, ?, 1, ?) ON CONFLICT (user_id) DO UPDATE SET "
                 "mu = excluded.mu, sigma = excluded.sigma, "
                 "rated_matches = ratings.rated_matches + 1, "
                 "updated_at = excluded.updated_at")
ADD_RATING_HISTORY = ("INSERT INTO rating_history (match_id, user_id, mu, sigma, rated_at) "
                      "VALUES (?, ?, ?, ?, ?)")
RATING_HISTORY = ("SELECT mu, sigma FROM (SELECT mu, sigma, rated_at, match_id FROM rating_history "
                  "WHERE user_id = ? ORDER BY rated_at DESC, match_id DESC LIMIT ?) AS h "
                  "ORDER BY rated_at, match_id")
DELETE_TIMER = "DELETE FROM turn_timers WHERE match_id = ?"
UPSERT_TIMER = ("INSERT INTO turn_timers (match_id, seconds) VALUES (?, ?) "
                "ON CONFLICT (match_id) DO UPDATE SET seconds = excluded.seconds")
GET_TIMER = f"SELECT {TIMER_COLUMNS} FROM turn_timers t WHERE match_id = ?"
SET_REMINDED = "UPDATE turn_timers SET reminded = TRUE WHERE match_id = ? AND seq = ?"
DUE_TIMERS = (f"SELECT {TIMER_COLUMNS} FROM turn_timers t JOIN matches m "
              "ON m.match_id = t.match_id WHERE m.status = 'active' "
              "AND t.deadline IS NOT NULL AND (t.deadline <= :now OR "
              "(NOT t.reminded AND t.deadline - t.seconds / 3.0 <= :now)) "
              "ORDER BY t.deadline")
STRETCH_DEADLINES = ("UPDATE turn_timers SET deadline = :t WHERE deadline IS NOT NULL "
                     "AND deadline < :t")
GET_STAND_INS = "SELECT seat, timeouts, computer, resigned FROM stand_ins WHERE match_id = ?"
ARM_TIMER = ("UPDATE turn_timers SET seq = ?, deadline = ?, reminded = FALSE "
             "WHERE match_id = ? RETURNING seconds")
UPSERT_STAND_IN = ("INSERT INTO stand_ins (match_id, seat, timeouts, computer, resigned) "
                   "VALUES (?, ?, ?, ?, ?) ON CONFLICT (match_id, seat) DO UPDATE SET "
                   "timeouts = excluded.timeouts, computer = excluded.computer, "
                   "resigned = stand_ins.resigned OR excluded.resigned")
COPY_CHAT = ("INSERT INTO chats (chat_id, language, default_settings, created_at, "
             "updated_at, tidy, title, panels) SELECT ?, language, default_settings, "
             "created_at, ?, tidy, title, panels FROM chats WHERE chat_id = ? "
             "ON CONFLICT (chat_id) DO NOTHING")
DELETE_CHAT_STATS = "DELETE FROM user_stats WHERE chat_id = ?"
OPEN_LOBBY_ID = ("SELECT lobby_id FROM lobbies WHERE chat_id = ? AND thread_id = ? "
                 "AND status = 'open'")
INSERT_LOBBY = ("INSERT INTO lobbies (chat_id, thread_id, creator_id, state, created_at, "
                f"updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING {LOBBY_COLUMNS}")
UPDATE_LOBBY = f"""
    UPDATE lobbies SET updated_at = :now,
        state = COALESCE(:state, state),
        message_id = COALESCE(:message_id, message_id),
        status = COALESCE(:status, status)
    WHERE lobby_id = :id AND status = 'open'
    RETURNING {LOBBY_COLUMNS}
"""
SEEN_UPDATE = "SELECT 1 AS seen FROM processed_updates WHERE update_id = ?"
ENGINE_NAME_TAKEN = "SELECT 1 AS taken FROM engines WHERE name_key = ?"
INSERT_ENGINE = ("INSERT INTO engines (owner_id, name, name_key, token_hash, created_at) "
                 "VALUES (?, ?, ?, ?, ?) RETURNING engine_id")
UPSERT_ENGINE_USER = ("INSERT INTO users (user_id, display_name, can_write_privately, created_at, "
                      "updated_at, name_key) VALUES (?, ?, FALSE, ?, ?, ?) ON CONFLICT (user_id) "
                      "DO UPDATE SET display_name = excluded.display_name, "
                      "name_key = excluded.name_key")
UPDATE_ENGINE = ("UPDATE engines SET token_hash = COALESCE(?, token_hash), "
                 "visibility = COALESCE(?, visibility), "
                 "max_matches = COALESCE(?, max_matches) WHERE engine_id = ?")
DELETE_ENGINE = "DELETE FROM engines WHERE engine_id = ?"


# Named queries: matches, panels, what was told (storage/store_matches.py) ----------------

ACTIVE_MATCH_ID = ("SELECT match_id FROM matches WHERE chat_id = ? AND thread_id = ? "
                   "AND status = 'active'")
INSERT_MATCH = ("INSERT INTO matches (chat_id, thread_id, table_kind, settings, seed, "
                "status, board_message_id, created_at) "
                "VALUES (?, ?, ?, ?, ?, 'active', ?, ?) RETURNING match_id")
START_LOBBY = ("UPDATE lobbies SET status = 'started', match_id = ?, updated_at = ? "
               "WHERE lobby_id = ? AND status = 'open'")
INSERT_SEATS = ("INSERT INTO seats (match_id, seat, kind, user_id, level, label) "
                "VALUES (?, ?, ?, ?, ?, ?)")
GET_MOVES = f"SELECT {MOVE_COLUMNS} FROM moves WHERE match_id = ? ORDER BY seq"
INSERT_MOVE = ("INSERT INTO moves (match_id, seq, action, update_id, created_at, mover, door, "
               "then_card) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
RESIGNED_SEATS = "SELECT seat FROM stand_ins WHERE match_id = ? AND resigned"
FINISH_MATCH = ("UPDATE matches SET status = 'finished', finished_at = ?, totals = ? "
                "WHERE match_id = ? AND status = 'active'")
ABANDON_MATCH = ("UPDATE matches SET status = 'abandoned', finished_at = ? "
                 "WHERE match_id = ? AND status = 'active'")
MATCH_EXISTS = "SELECT 1 AS here FROM matches WHERE match_id = ?"
CONCEDE_MATCH = ("UPDATE matches SET status = 'abandoned', finished_at = ?, conceded_by = ? "
                 "WHERE match_id = ? AND status = 'active'")
ADD_CONCESSION_STATS = ("INSERT INTO user_stats (user_id, chat_id, matches, wins) "
                        "VALUES (?, ?, 1, ?) ON CONFLICT (user_id, chat_id) DO UPDATE SET "
                        "matches = user_stats.matches + 1, "
                        "wins = user_stats.wins + excluded.wins")
SET_BOARD_MESSAGE = "UPDATE matches SET board_message_id = ?, board_caption = ? WHERE match_id = ?"
#: The board post a new one replaces and whether its chat keeps one live board (no chat row:
#: the default, on); the match's row locked by the dialect's row lock added after it.
BOARD_AND_TIDY = ("SELECT m.board_message_id, (SELECT c.tidy FROM chats c "
                  "WHERE c.chat_id = m.chat_id) AS tidy FROM matches m WHERE m.match_id = ?")
DELETE_PANEL = "DELETE FROM panel_messages WHERE match_id = ? AND user_id = ?"
UPSERT_PANEL = ("INSERT INTO panel_messages (match_id, user_id, message_id, is_photo, "
                "in_chat) VALUES (?, ?, ?, ?, ?) ON CONFLICT (match_id, user_id) DO UPDATE "
                "SET message_id = excluded.message_id, is_photo = excluded.is_photo, "
                "in_chat = excluded.in_chat")
GET_PANEL_LINES = "SELECT lines FROM panel_lines WHERE match_id = ? AND user_id = ?"
UPSERT_PANEL_LINES = ("INSERT INTO panel_lines (match_id, user_id, lines) VALUES (?, ?, ?) "
                      "ON CONFLICT (match_id, user_id) DO UPDATE SET lines = excluded.lines")
BOARD_MESSAGE = ("SELECT board_message_id, board_caption FROM matches WHERE match_id = ? "
                 "AND board_message_id IS NOT NULL")
GET_TOLD = "SELECT key, seq FROM told WHERE match_id = ?"

#: An operator's figures in one statement (Store.operating_figures): open set-ups, running
#: matches, people waiting in the Play now pool, and the moves of running matches stored
#: after the last announced one.
OPERATING_FIGURES = """
SELECT (SELECT COUNT(*) FROM lobbies WHERE status = 'open') AS lobbies,
       (SELECT COUNT(*) FROM matches WHERE status = 'active') AS matches,
       (SELECT COUNT(*) FROM pool) AS pool,
       COUNT(v.seq) AS waiting, MIN(v.created_at) AS oldest
  FROM matches m JOIN moves v ON v.match_id = m.match_id AND v.seq > m.announced_seq
 WHERE m.status = 'active'
"""

#: "Play now" (issue 40): a person enters the pool once (a second entry changes nothing).
JOIN_POOL = ("INSERT INTO pool (user_id, table_kind, rating, joined_at) VALUES (?, ?, ?, ?) "
             "ON CONFLICT (user_id) DO NOTHING RETURNING entry_id")
POOL_COLUMNS = "entry_id, user_id, table_kind, rating, joined_at, offered"
BLOCK = ("INSERT INTO blocks (user_id, blocked_id, created_at) VALUES (?, ?, ?) "
         "ON CONFLICT (user_id, blocked_id) DO NOTHING")
#: Spectators (issue 40): a pool match's watch link turned off, once (the first player kept).
WATCH_OFF = ("INSERT INTO watch_off (match_id, user_id, created_at) VALUES (?, ?, ?) "
             "ON CONFLICT (match_id) DO NOTHING")

#: An operator's switch set (Store.set_switch), the same statement in both databases.
SET_SWITCH = ("INSERT INTO switches (name, value, updated_at) VALUES (?, ?, ?) "
              "ON CONFLICT (name) DO UPDATE SET value = excluded.value, "
              "updated_at = excluded.updated_at")

#: The owners' figures at a glance (Store.totals): people and chats known, matches since.
TOTALS = """
SELECT (SELECT COUNT(*) FROM users) AS users, (SELECT COUNT(*) FROM chats) AS chats,
       (SELECT COUNT(*) FROM matches WHERE created_at >= ?) AS matches
"""
