"""Numbered SQLite schema migrations.

Each migration is a tuple of statements applied in one transaction together with its row in
``schema_version``; a failure leaves the database at the previous version. Never edit a
migration that has shipped: add the next number. Timestamps are Unix seconds (REAL); a
thread id of 0 means "no forum topic" so that the partial unique index can see it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from storage.base import SchemaTooNew, StorageError


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    statements: tuple[str, ...]


class Plan:
    """What ``migrate`` does, whatever the backend: which step follows the version a
    database is at, up to ``target`` (default: the newest of ``migrations``). Each backend's
    ``migrate`` reads the version inside the transaction that applies the step (under
    PostgreSQL's migration lock), so two processes migrating at once apply it once."""

    def __init__(self, migrations: Sequence[Migration], target: int | None) -> None:
        self.latest = migrations[-1].version if migrations else 0
        self.want = self.latest if target is None else target
        if self.want > self.latest:
            raise ValueError(f"no migration {self.want}: the newest is {self.latest}")
        self._steps = {m.version: m for m in migrations}

    def after(self, version: int) -> Migration | None:
        """The step to apply to a database at ``version``; ``None``: it is where it should
        be. A database newer than the migrations raises :class:`SchemaTooNew` (and is left
        untouched)."""
        if version > self.latest:
            raise SchemaTooNew(version, self.latest)
        if version >= self.want:
            return None
        step = self._steps.get(version + 1)
        if step is None:
            raise StorageError(f"migration {version + 1} is missing")
        return step


def require_latest(version: int, latest: int, where: str) -> None:
    """``open(upgrade=False)``: the schema must already be the newest (nothing is written)."""
    if version > latest:
        raise SchemaTooNew(version, latest)
    if version < latest:
        raise StorageError(f"{where} is at schema version {version}, not {latest}: "
                           "migrate it first")


VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    version    INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at REAL NOT NULL
)
"""

_V1 = (
    """
    CREATE TABLE chats (
        chat_id          INTEGER PRIMARY KEY,
        language         TEXT,
        default_settings TEXT,  -- JSON: {"table": ..., **Settings.to_json()}
        created_at       REAL NOT NULL,
        updated_at       REAL NOT NULL
    )
    """,
    """
    CREATE TABLE users (
        user_id             INTEGER PRIMARY KEY,
        display_name        TEXT NOT NULL,
        language            TEXT,
        can_write_privately INTEGER NOT NULL DEFAULT 0 CHECK (can_write_privately IN (0, 1)),
        created_at          REAL NOT NULL,
        updated_at          REAL NOT NULL
    )
    """,
    """
    CREATE TABLE matches (
        match_id         INTEGER PRIMARY KEY AUTOINCREMENT,
        chat_id          INTEGER NOT NULL REFERENCES chats (chat_id),
        thread_id        INTEGER NOT NULL DEFAULT 0,
        table_kind       TEXT NOT NULL CHECK (table_kind IN
                             ('duel', 'trio-lone-attacker', 'trio-lone-defender', 'teams')),
        settings         TEXT NOT NULL,  -- JSON: Settings.to_json()
        seed             INTEGER NOT NULL,
        status           TEXT NOT NULL DEFAULT 'active'
                             CHECK (status IN ('active', 'finished', 'abandoned')),
        board_message_id INTEGER,
        created_at       REAL NOT NULL,
        finished_at      REAL
    )
    """,
    # At most one active match per chat and forum topic.
    """
    CREATE UNIQUE INDEX matches_one_active_per_topic
        ON matches (chat_id, thread_id) WHERE status = 'active'
    """,
    """
    CREATE TABLE seats (
        match_id INTEGER NOT NULL REFERENCES matches (match_id),
        seat     INTEGER NOT NULL CHECK (seat BETWEEN 0 AND 3),
        kind     TEXT NOT NULL CHECK (kind IN ('human', 'computer')),
        user_id  INTEGER REFERENCES users (user_id),
        level    INTEGER,
        label    TEXT NOT NULL,
        PRIMARY KEY (match_id, seat),
        UNIQUE (match_id, label),
        UNIQUE (match_id, user_id),
        CHECK ((kind = 'human' AND user_id IS NOT NULL AND level IS NULL)
            OR (kind = 'computer' AND user_id IS NULL AND level IS NOT NULL))
    ) WITHOUT ROWID
    """,
    """
    CREATE TABLE moves (
        match_id   INTEGER NOT NULL REFERENCES matches (match_id),
        seq        INTEGER NOT NULL CHECK (seq >= 1),
        action     TEXT NOT NULL,
        update_id  INTEGER,
        created_at REAL NOT NULL,
        PRIMARY KEY (match_id, seq)
    ) WITHOUT ROWID
    """,
    # The log is append-only, gap-free and closed with its match, whoever writes to it.
    """
    CREATE TRIGGER moves_no_update BEFORE UPDATE ON moves
    BEGIN SELECT RAISE(ABORT, 'moves are append-only'); END
    """,
    """
    CREATE TRIGGER moves_no_delete BEFORE DELETE ON moves
    BEGIN SELECT RAISE(ABORT, 'moves are append-only'); END
    """,
    """
    CREATE TRIGGER moves_in_sequence BEFORE INSERT ON moves
    WHEN NEW.seq <> 1 + COALESCE(
        (SELECT MAX(seq) FROM moves WHERE match_id = NEW.match_id), 0)
    BEGIN SELECT RAISE(ABORT, 'move out of sequence'); END
    """,
    """
    CREATE TRIGGER moves_only_while_active BEFORE INSERT ON moves
    WHEN (SELECT status FROM matches WHERE match_id = NEW.match_id) IS NOT 'active'
    BEGIN SELECT RAISE(ABORT, 'match is not active'); END
    """,
)

_V2 = (
    # Telegram update ids seen recently: a set (ids are not always increasing), pruned by age.
    """
    CREATE TABLE processed_updates (
        update_id    INTEGER PRIMARY KEY,
        processed_at REAL NOT NULL
    )
    """,
    "CREATE INDEX processed_updates_by_time ON processed_updates (processed_at)",
    """
    CREATE TABLE user_stats (
        user_id         INTEGER NOT NULL REFERENCES users (user_id),
        chat_id         INTEGER NOT NULL REFERENCES chats (chat_id),
        matches         INTEGER NOT NULL DEFAULT 0,
        wins            INTEGER NOT NULL DEFAULT 0,
        draws           INTEGER NOT NULL DEFAULT 0,
        points_scored   INTEGER NOT NULL DEFAULT 0,
        points_conceded INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (user_id, chat_id)
    ) WITHOUT ROWID
    """,
    "CREATE INDEX user_stats_by_chat ON user_stats (chat_id, wins DESC)",
    "CREATE INDEX seats_by_user ON seats (user_id) WHERE user_id IS NOT NULL",
    "CREATE INDEX matches_by_status ON matches (status, match_id)",
    # Final totals per seat (JSON list), written with the final status.
    "ALTER TABLE matches ADD COLUMN totals TEXT",
)

_V3 = (
    # Lobbies: a match being gathered in a chat (or forum topic). ``state`` is the chat
    # layer's JSON (settings, seats, pending invitations); storage keeps it opaque.
    """
    CREATE TABLE lobbies (
        lobby_id   INTEGER PRIMARY KEY AUTOINCREMENT,
        chat_id    INTEGER NOT NULL REFERENCES chats (chat_id),
        thread_id  INTEGER NOT NULL DEFAULT 0,
        creator_id INTEGER NOT NULL,
        state      TEXT NOT NULL,
        message_id INTEGER,
        status     TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'started', 'closed')),
        match_id   INTEGER REFERENCES matches (match_id),
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
    )
    """,
    """
    CREATE UNIQUE INDEX lobbies_one_open_per_topic
        ON lobbies (chat_id, thread_id) WHERE status = 'open'
    """,
    # Outbox marker: moves with seq > announced_seq are stored but not yet announced; a
    # restart announces them.
    "ALTER TABLE matches ADD COLUMN announced_seq INTEGER NOT NULL DEFAULT 0",
    # Matches stored before the marker existed count as announced: a restart must not post
    # old matches again.
    """
    UPDATE matches SET announced_seq =
        (SELECT COALESCE(MAX(seq), 0) FROM moves WHERE moves.match_id = matches.match_id)
    """,
)

_V4 = (
    # Turn timers: one row per match that has one; ``deadline`` is the running turn's (None
    # when no person is to move), for the move numbered ``seq``.
    """
    CREATE TABLE turn_timers (
        match_id INTEGER PRIMARY KEY REFERENCES matches (match_id) ON DELETE CASCADE,
        seconds INTEGER NOT NULL CHECK (seconds > 0),
        seq INTEGER,
        deadline REAL,
        reminded INTEGER NOT NULL DEFAULT 0 CHECK (reminded IN (0, 1))
    )
    """,
    "CREATE INDEX turn_timers_by_deadline ON turn_timers (deadline) WHERE deadline IS NOT NULL",
    # Absent players: consecutive timeouts of a seat, and whether the computer keeps it.
    """
    CREATE TABLE stand_ins (
        match_id INTEGER NOT NULL REFERENCES matches (match_id) ON DELETE CASCADE,
        seat INTEGER NOT NULL CHECK (seat >= 0),
        timeouts INTEGER NOT NULL DEFAULT 0 CHECK (timeouts >= 0),
        computer INTEGER NOT NULL DEFAULT 0 CHECK (computer IN (0, 1)),
        resigned INTEGER NOT NULL DEFAULT 0 CHECK (resigned IN (0, 1)),
        PRIMARY KEY (match_id, seat)
    )
    """,
)

_V5 = (
    # Finer statistics per user and chat (added up as matches finish).
    *(f"ALTER TABLE user_stats ADD COLUMN {column} INTEGER NOT NULL DEFAULT 0"
      for column in ("tours_attacked", "tours_defended", "best_tour", "suit_combos",
                     "progression_combos", "own_goals_conceded")),
    # Ratings (a Weng-Lin / OpenSkill model kept by the chat layer): the current one per
    # user, one row per user and rated match (for the plot), and which matches were rated.
    """
    CREATE TABLE ratings (
        user_id       INTEGER PRIMARY KEY REFERENCES users (user_id),
        mu            REAL NOT NULL,
        sigma         REAL NOT NULL CHECK (sigma > 0),
        rated_matches INTEGER NOT NULL DEFAULT 0,
        updated_at    REAL NOT NULL
    )
    """,
    """
    CREATE TABLE rating_history (
        match_id INTEGER NOT NULL REFERENCES matches (match_id) ON DELETE CASCADE,
        user_id  INTEGER NOT NULL REFERENCES users (user_id),
        mu       REAL NOT NULL,
        sigma    REAL NOT NULL,
        rated_at REAL NOT NULL,
        PRIMARY KEY (user_id, match_id)
    ) WITHOUT ROWID
    """,
    "ALTER TABLE matches ADD COLUMN rated INTEGER NOT NULL DEFAULT 0",
    # A duel or team match one side conceded (/resign): the seat that resigned.
    "ALTER TABLE matches ADD COLUMN conceded_by INTEGER",
    # A chat setting: keep only the newest board post (delete the previous one).
    "ALTER TABLE chats ADD COLUMN tidy INTEGER NOT NULL DEFAULT 0 CHECK (tidy IN (0, 1))",
    "CREATE INDEX matches_by_chat ON matches (chat_id, thread_id, match_id)",
)

_V6 = (
    # Looking a player up by name (/stats NAME) reads one index entry, not every player: the
    # case-folded name (storage.base.name_key; ``casefold`` is that function, registered on
    # every connection by storage.sqlite.connect) kept beside the display name.
    "ALTER TABLE users ADD COLUMN name_key TEXT",
    "UPDATE users SET name_key = casefold(display_name)",
    "CREATE INDEX users_by_name ON users (name_key)",
)

_V7 = (
    # A group's title as last seen, for the "where" line of private messages (any process
    # can write it; none has to have seen the group's updates).
    "ALTER TABLE chats ADD COLUMN title TEXT",
    # A group keeps one live board by default now (only the newest board post of a match;
    # /settings tidy=off keeps them all): nobody had chosen "off" while it was the default.
    "UPDATE chats SET tidy = 1",
    # The caption of the group's newest board post, so that its clock line can be refreshed.
    "ALTER TABLE matches ADD COLUMN board_caption TEXT",
    # Delivery's: the message that is each player's private panel, edited in place.
    """
    CREATE TABLE panel_messages (
        match_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL,
        message_id INTEGER NOT NULL,
        is_photo INTEGER NOT NULL DEFAULT 0 CHECK (is_photo IN (0, 1)),
        PRIMARY KEY (match_id, user_id)
    ) WITHOUT ROWID
    """,
    # The flow's: the move lines each player's newest panel shows (they become the record
    # of that player's move).
    """
    CREATE TABLE panel_lines (
        match_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL,
        lines TEXT NOT NULL,
        PRIMARY KEY (match_id, user_id)
    ) WITHOUT ROWID
    """,
)

_V8 = (
    # Outside engines (issue 31). An engine plays under a user of its own (id
    # storage.base.engine_user_id(engine_id), far below every Telegram id): its seats are
    # ordinary human seats of that user, so statistics, ratings and /top need nothing new.
    # Only the SHA-256 of its token is kept. AUTOINCREMENT: a deleted engine's id (and so
    # its user, with that user's statistics) is never given to another engine.
    """
    CREATE TABLE engines (
        engine_id   INTEGER PRIMARY KEY AUTOINCREMENT,
        owner_id    INTEGER NOT NULL,
        name        TEXT NOT NULL,
        name_key    TEXT NOT NULL UNIQUE,  -- storage.base.name_key(name)
        token_hash  TEXT NOT NULL UNIQUE,  -- hex SHA-256 of the token
        visibility  TEXT NOT NULL DEFAULT 'open'
                        CHECK (visibility IN ('open', 'owner', 'off')),
        max_matches INTEGER NOT NULL DEFAULT 4 CHECK (max_matches >= 1),
        created_at  REAL NOT NULL
    )
    """,
    "CREATE INDEX engines_by_owner ON engines (owner_id, engine_id)",
)

_V9 = (
    # When the bot last wrote in each group (a post, a lobby edit): Telegram allows about 20
    # a minute per group, and a restarted process that did not know what the one before it
    # wrote would meet a 429 pausing the group for up to a minute. Rows older than a couple
    # of minutes are pruned as new ones come.
    """
    CREATE TABLE group_writes (
        chat_id INTEGER NOT NULL,
        at      REAL NOT NULL
    )
    """,
    "CREATE INDEX group_writes_by_time ON group_writes (at)",
)

_V10 = (
    # What of each match's announcements Telegram took (chat.notices.Told): a key per
    # delivered notice, noted right after Telegram answered. A restart skips what is here,
    # so a match announced in part when the bot stopped (its group post waiting for the
    # group's window) tells nobody the same thing twice. PostgreSQL's twin: its version 6.
    """
    CREATE TABLE told (
        match_id INTEGER NOT NULL,
        key      TEXT NOT NULL,
        seq      INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (match_id, key)
    )
    """,
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "core tables: chats, users, matches, seats, move log", _V1),
    Migration(2, "processed updates, user statistics, indices, final totals", _V2),
    Migration(3, "lobbies; announced move marker (outbox)", _V3),
    Migration(4, "turn timers; stand-ins for absent players", _V4),
    Migration(5, "finer statistics; ratings and their history; tidy chats", _V5),
    Migration(6, "players looked up by name", _V6),
    Migration(7, "group titles; private panels' messages and lines", _V7),
    Migration(8, "outside engines", _V8),
    Migration(9, "group writes of the last minutes (Telegram's window after a restart)", _V9),
    Migration(10, "what of each match's announcements was delivered", _V10),
)

#: Tables of the embedded mode alone: the scaled mode keeps Telegram's windows in tables
#: of its own (storage/pg_windows.py, :data:`storage.pg_migrations.POSTGRES_ONLY`).
SQLITE_ONLY = frozenset({"group_writes"})

LATEST = MIGRATIONS[-1].version
