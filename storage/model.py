"""The storage's vocabulary, knowing no SQL: typed rows, errors, and the engine glue every
backend shares (:func:`rebuild_game` turns a stored match back into a :class:`krendzu.Match`).

:mod:`storage.base` re-exports all of it beside the backend's interface
(:class:`~storage.base.StoreBackend`), so ``from storage.base import MatchRow`` and
``from storage import MatchRow`` keep working.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, NamedTuple

from krendzu import IllegalMove, KrendzuError, Match, PlayerAction, Redeal, Settings, Table
from krendzu import parse_action as _parse_action


def name_key(name: str) -> str:
    """A display name as looked up: case-folded, so "ИВАН" finds "Иван" (SQLite's own
    ``lower`` folds ASCII only)."""
    return name.casefold()


# Errors ---------------------------------------------------------------------------------


class StorageError(Exception):
    """Base of every error the storage layer raises on purpose."""


class SchemaTooNew(StorageError):
    """The database was written by a newer version of the bot: refuse rather than damage it."""

    def __init__(self, found: int, supported: int) -> None:
        super().__init__(
            f"database schema version {found} is newer than this code supports "
            f"({supported}); upgrade the bot or restore a matching backup"
        )
        self.found = found
        self.supported = supported


class NotFound(StorageError):
    """A match (or user) that is not stored."""


class SequenceConflict(StorageError):
    """Another writer appended first: the caller's view of the match is stale. Reload."""

    def __init__(self, match_id: int, expected: int, actual: int) -> None:
        super().__init__(
            f"match {match_id}: move {expected} was expected, but the next free "
            f"sequence number is {actual}; reload the match"
        )
        self.match_id = match_id
        self.expected = expected
        self.actual = actual


class DuplicateUpdate(StorageError):
    """This Telegram update was processed already; nothing was written this time."""

    def __init__(self, update_id: int) -> None:
        super().__init__(f"update {update_id} was processed already")
        self.update_id = update_id


class MatchClosed(StorageError):
    """The match is finished or abandoned: no more moves."""


class ActiveMatchExists(StorageError):
    """A chat (or forum topic) has at most one active match."""


class LobbyExists(StorageError):
    """A chat (or forum topic) has at most one open lobby."""


class CorruptMatch(StorageError):
    """Stored moves that the engine refuses: the log no longer rebuilds the match."""


class EngineExists(StorageError):
    """An engine of that name (compared case-insensitively) is registered already."""


# Outside engines (issue 31) ---------------------------------------------------------------

#: An outside engine plays under a user id of its own, far below every Telegram id (users
#: are positive, groups down to about -10**13): its seat is a person's seat, so statistics,
#: ratings, ``/top``, turn timers and stand-ins treat it exactly like a person's, and
#: nothing is ever sent to it through Telegram (delivery drops notices addressed to it).
ENGINE_USER_BASE = 4 * 10**15


def engine_user_id(engine_id: int) -> int:
    """The user id an engine plays under (its row in ``users`` is "🤖 NAME")."""
    return -(ENGINE_USER_BASE + engine_id)


def is_engine_user(user_id: int | None) -> bool:
    """Whether ``user_id`` is an outside engine's (not a Telegram account)."""
    return user_id is not None and user_id <= -ENGINE_USER_BASE


# The "Play now" pool (issue 40) --------------------------------------------------------------

#: A pool match is played between strangers, each in their own private chat: its chat id is
#: one of its own, below every Telegram group (down to about -10**13) and above the engines'
#: users (:data:`ENGINE_USER_BASE`). Nothing is ever sent to such a chat (delivery drops
#: its board posts); each player follows the match on their private panel.
POOL_CHAT_BASE = 3 * 10**15


def pool_chat_id(entry_id: int) -> int:
    """The chat id of the pool match seated from the pool entry ``entry_id`` (entries are
    numbered once, never reused, so each pool match has a chat of its own)."""
    return -(POOL_CHAT_BASE + entry_id)


def is_pool_chat(chat_id: int | None) -> bool:
    """Whether ``chat_id`` is a pool match's reserved chat (not a Telegram chat)."""
    return chat_id is not None and -ARENA_CHAT_BASE < chat_id <= -POOL_CHAT_BASE


#: An arena game (issue 40) is played as a pool match is, each player in their own private
#: chat, so that the group sees one arena post and no boards: its chat id is reserved too,
#: in the range below the pool's and above the engines' users.
ARENA_CHAT_BASE = 35 * 10**14


def arena_chat_id(game_id: int) -> int:
    """The chat id of arena game ``game_id`` (games are numbered once, never reused)."""
    return -(ARENA_CHAT_BASE + game_id)


def arena_game_of(chat_id: int) -> int | None:
    """The arena game whose reserved chat ``chat_id`` is, or ``None``."""
    return -chat_id - ARENA_CHAT_BASE if is_arena_chat(chat_id) else None


def is_arena_chat(chat_id: int | None) -> bool:
    """Whether ``chat_id`` is an arena game's reserved chat (not a Telegram chat)."""
    return chat_id is not None and -ENGINE_USER_BASE < chat_id <= -ARENA_CHAT_BASE


def is_detached_chat(chat_id: int | None) -> bool:
    """Whether ``chat_id`` is a match's chat of its own, no Telegram chat (a pool match, an
    arena game): nothing is sent there; each player follows the match privately."""
    return chat_id is not None and -ENGINE_USER_BASE < chat_id <= -POOL_CHAT_BASE


@dataclass(frozen=True, slots=True)
class PoolRow:
    """One person waiting in the pool: the table they want (``duel``, ``trio``, ``teams``),
    their rating when they joined (the pool's scale), when (Unix seconds), the computer
    level they were offered (``None``: not yet) and the entry's number."""

    entry_id: int
    user_id: int
    table: str
    rating: int
    joined_at: float
    offered: str | None = None


class ArenaStatus(StrEnum):
    """An arena's life: people join (``lobby``), it runs until its end, it is over."""

    LOBBY = "lobby"
    RUNNING = "running"
    FINISHED = "finished"


@dataclass(frozen=True, slots=True)
class ArenaRow:
    """An arena of a group (issue 40): its length, the ``/new`` words of its games
    (``match_args``), whether a lone player may get a computer (``bots``), when it starts
    (``starts_at``: ``None`` until the creator starts it or sets a time) and ends, and the
    group's arena post (``message_id``)."""

    arena_id: int
    chat_id: int
    thread_id: int | None
    creator: int
    minutes: int
    match_args: str
    bots: bool
    status: ArenaStatus
    starts_at: float | None
    ends_at: float | None
    message_id: int | None
    created_at: float
    #: ``arena``, or ``swiss`` for a Swiss league (chat/flow/leagues.py): ``rounds`` in all,
    #: the current ``round`` (0 before the first) and its deadline.
    kind: str = "arena"
    rounds: int = 0
    round: int = 0
    round_ends_at: float | None = None


@dataclass(frozen=True, slots=True)
class ArenaEntry:
    """A player of an arena: their rating when they joined (the pool's scale), whether
    they paused, and since when they wait (for the computer after a wait)."""

    arena_id: int
    user_id: int
    rating: int
    joined_at: float
    paused: bool
    waiting_since: float


@dataclass(frozen=True, slots=True)
class ArenaGameRow:
    """A game of an arena or a league: ``second`` is ``None`` for a computer (a league's
    bye: result ``bye``, no match); ``match_id`` once the match exists; ``result`` once it
    ended (``first``, ``second``, ``draw``, or ``void`` for a match cancelled without a
    result, which does not count)."""

    game_id: int
    arena_id: int
    first: int
    second: int | None
    match_id: int | None
    started_at: float
    result: str | None
    finished_at: float | None
    round: int = 0  # a Swiss league's round (0 in an arena)


class Visibility(StrEnum):
    """Who may seat an engine: anyone, only its owner, nobody."""

    OPEN = "open"
    OWNER = "owner"
    OFF = "off"


#: Concurrent matches an engine plays unless its owner says otherwise.
DEFAULT_ENGINE_MATCHES = 4


@dataclass(frozen=True, slots=True)
class EngineRow:
    """A registered outside engine. Its token is never stored, only its SHA-256."""

    engine_id: int
    owner_id: int
    name: str
    visibility: Visibility
    max_matches: int
    created_at: datetime

    @property
    def user_id(self) -> int:
        return engine_user_id(self.engine_id)

    @property
    def display_name(self) -> str:
        return engine_display_name(self.name)


def engine_display_name(name: str) -> str:
    return f"🤖 {name}"


def engine_row(r: Any) -> EngineRow:
    """An ``engines`` row (SQLite's or PostgreSQL's, read by column name)."""
    return EngineRow(engine_id=int(r["engine_id"]), owner_id=int(r["owner_id"]),
                     name=str(r["name"]), visibility=Visibility(r["visibility"]),
                     max_matches=int(r["max_matches"]),
                     created_at=datetime.fromtimestamp(float(r["created_at"]), UTC))


ENGINE_COLUMNS = "engine_id, owner_id, name, visibility, max_matches, created_at"


# Rows -----------------------------------------------------------------------------------


class SeatKind(StrEnum):
    HUMAN = "human"
    COMPUTER = "computer"


class MatchStatus(StrEnum):
    ACTIVE = "active"
    FINISHED = "finished"
    ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """A seat to create: a human (Telegram user id) or a computer player (its level)."""

    kind: SeatKind
    user_id: int | None = None
    level: int | None = None

    @classmethod
    def human(cls, user_id: int) -> SeatSpec:
        return cls(SeatKind.HUMAN, user_id=user_id)

    @classmethod
    def computer(cls, level: int) -> SeatSpec:
        return cls(SeatKind.COMPUTER, level=level)

    def __post_init__(self) -> None:
        if self.kind is SeatKind.HUMAN and (self.user_id is None or self.level is not None):
            raise ValueError("a human seat has a user id and no level")
        if self.kind is SeatKind.COMPUTER and (self.level is None or self.user_id is not None):
            raise ValueError("a computer seat has a level and no user id")

    def label(self, seat: int) -> str:
        """Stable engine player name: ``u<telegram id>`` or ``cpu<seat number>``."""
        return f"u{self.user_id}" if self.kind is SeatKind.HUMAN else f"cpu{seat + 1}"


@dataclass(frozen=True, slots=True)
class SeatRow:
    seat: int
    kind: SeatKind
    user_id: int | None
    level: int | None
    label: str


@dataclass(frozen=True, slots=True)
class RatingRow:
    """A user's current rating (OpenSkill mu and sigma) and how many matches it rests on."""

    user_id: int
    mu: float
    sigma: float
    rated_matches: int


@dataclass(frozen=True, slots=True)
class TimerRow:
    """A match's turn timer: ``deadline`` (clock seconds) of the move numbered ``seq``."""

    match_id: int
    seconds: int
    seq: int | None
    deadline: float | None
    reminded: bool


@dataclass(frozen=True, slots=True)
class StandIn:
    """A seat whose player is absent: consecutive timeouts; the computer keeps the seat."""

    seat: int
    timeouts: int
    computer: bool
    resigned: bool = False  # resigned in a trio: ranks last whatever the totals


class PanelMessage(NamedTuple):
    """Where a player's panel is: a message of their private chat (``in_group`` None), or
    an ephemeral message of the match's group seen by them alone, ``message_id`` then being
    its ``ephemeral_message_id`` (Telegram keys it by the group, the receiver and that id)."""

    message_id: int
    is_photo: bool
    in_group: int | None = None


@dataclass(frozen=True, slots=True)
class ChatRow:
    chat_id: int
    language: str | None
    default_settings: Settings | None
    created_at: datetime
    updated_at: datetime
    tidy: bool = True  # keep only the newest board post (the default since schema v7)
    title: str | None = None  # the group's title as last seen
    #: Players' panels open in the group itself, each seen by its player alone (Telegram's
    #: ephemeral messages, issue 42): ``/settings panels=group`` or ``private`` (the bot's
    #: private chat, as before); ``None``: not chosen (the bot's ``KRENDZU_PANELS``).
    panels_in_group: bool | None = None
    #: Whether the bot administers the group as last learnt (its membership updates, or an
    #: ephemeral push refused): only an administrator may push a panel unasked.
    #: ``None``: not known yet.
    bot_admin: bool | None = None


@dataclass(frozen=True, slots=True)
class UserRow:
    user_id: int
    display_name: str
    language: str | None
    can_write_privately: bool
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class MatchRow:
    match_id: int
    chat_id: int
    thread_id: int | None  # forum topic, None outside forums
    settings: Settings
    seed: int
    status: MatchStatus
    seats: tuple[SeatRow, ...]
    move_count: int
    board_message_id: int | None
    created_at: datetime
    finished_at: datetime | None
    totals: tuple[int, ...] | None  # final totals per seat once finished
    announced_seq: int = 0  # moves up to this one were announced (outbox marker)
    conceded_by: int | None = None  # the seat that resigned a duel or team match

    @property
    def table(self) -> Table:
        return self.settings.table

    @property
    def labels(self) -> list[str]:
        return [s.label for s in self.seats]

    @property
    def next_seq(self) -> int:
        """The sequence number the next move will get (moves are numbered from 1)."""
        return self.move_count + 1

    def seat_of(self, user_id: int) -> int | None:
        for s in self.seats:
            if s.user_id == user_id:
                return s.seat
        return None


class LobbyStatus(StrEnum):
    OPEN = "open"
    STARTED = "started"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class LobbyRow:
    """A match being gathered. ``state`` is the chat layer's JSON object, opaque here."""

    lobby_id: int
    chat_id: int
    thread_id: int | None
    creator_id: int
    state: dict[str, Any]
    message_id: int | None
    status: LobbyStatus
    match_id: int | None
    created_at: datetime
    updated_at: datetime


class Door(StrEnum):
    """Through which door a move came, stored with it: the announcement reads it back from
    the row (whoever announces, whenever), never from the memory of the process that
    stored it."""

    UNKNOWN = "unknown"  # stored before the doors were recorded (schema change 1)
    BUTTON = "button"  # a key of the player's private panel
    HINT = "hint"  # the "Play it" key under a hint (not the panel)
    TYPED = "typed"  # /play words in a chat
    MINIAPP = "miniapp"  # the Mini App's board
    ENGINE = "engine"  # an outside engine, through the engine protocol
    TIMER = "timer"  # the computer moved for a person: their time ran out, or it keeps the seat
    COMPUTER = "computer"  # a computer seat's own move

    @property
    def from_panel(self) -> bool:
        """The mover pressed their panel (or the Mini App, which replaces it): the panel is
        edited into the record of the move; otherwise the record is a new message below."""
        return self in (Door.BUTTON, Door.MINIAPP)


@dataclass(frozen=True, slots=True)
class MovedBy:
    """Who made a move and through which door, written with each of its steps in the
    move's transaction. ``user_id``: the person who moved (an engine's user too; ``None``:
    a computer, or one made for an absent person). ``then``: a defender's first card was
    placed from a key that named the second (its code): the panel the move redraws asks
    for that card's cell at once (stored with the move's last step)."""

    user_id: int | None = None
    door: Door = Door.UNKNOWN
    then: str | None = None


#: A move stored before the rows said who made it.
UNKNOWN_MOVER = MovedBy()


@dataclass(frozen=True, slots=True)
class MoveRow:
    match_id: int
    seq: int
    action: str  # ``str(action)``; ``krendzu.parse_action`` reads it back
    update_id: int | None
    created_at: datetime
    #: Who made it and through which door (:class:`MovedBy`; old rows: unknown).
    by: MovedBy = UNKNOWN_MOVER


@dataclass(frozen=True, slots=True)
class OperatingFigures:
    """What an operator reads of the store at a metrics scrape (chat/metrics.py)."""

    open_lobbies: int
    active_matches: int
    #: Moves of running matches stored but not yet announced, and the oldest one's time
    #: (Unix seconds; ``None`` when none waits).
    unannounced_moves: int
    oldest_unannounced: float | None
    #: People waiting in the Play now pool (issue 40).
    pool_waiting: int = 0


@dataclass(frozen=True, slots=True)
class StatsRow:
    user_id: int
    display_name: str
    matches: int
    wins: int
    draws: int
    points_scored: int  # points its side scored while it attacked
    points_conceded: int  # points scored against it while it defended
    tours_attacked: int = 0
    tours_defended: int = 0
    best_tour: int = 0
    suit_combos: int = 0
    progression_combos: int = 0
    own_goals_conceded: int = 0

    @property
    def losses(self) -> int:
        return self.matches - self.wins - self.draws


@dataclass(slots=True)
class StoredMatch:
    """A match as stored plus the engine state rebuilt from it."""

    row: MatchRow
    moves: tuple[MoveRow, ...]
    game: Match

    @property
    def match_id(self) -> int:
        return self.row.match_id

    @property
    def next_seq(self) -> int:
        return len(self.game.history) + 1


@dataclass(frozen=True, slots=True)
class RequestRows:
    """What a request in a chat reads before it acts, from one snapshot
    (:meth:`storage.Store.request_rows`): the sender's row, the group's, the group's active
    match (its row, turn timer and stand-ins) and, when the caller did not hold the match's
    moves already, the match rebuilt from its log (``stored``)."""

    user: UserRow | None
    chat: ChatRow | None = None
    match: MatchRow | None = None
    timer: TimerRow | None = None
    stand_ins: dict[int, StandIn] = field(default_factory=dict)
    stored: StoredMatch | None = None
    #: The update ledger's state of the update the caller named (``update_id``): whether it
    #: was processed, its failed tries as the store counts them (``None``: uncounted);
    #: ``None`` when none was named.
    update: tuple[bool, int | None] | None = None


# Engine glue shared by every backend ----------------------------------------------------


def normalize_action(action: PlayerAction | str) -> str:
    """Canonical text of a player action; refuses text the engine cannot parse."""
    try:
        parsed = _parse_action(action) if isinstance(action, str) else action
    except IllegalMove as exc:
        raise ValueError(f"not an action: {action!r}") from exc
    if isinstance(parsed, Redeal):
        raise ValueError("the exchange redeal is chance, dealt by the match, never stored")
    return str(parsed)


def rebuild_game(row: MatchRow, actions: Sequence[str]) -> Match:
    """Replay the stored log through the engine; a refused move is :class:`CorruptMatch`."""
    game = Match(row.labels, row.settings, seed=row.seed)
    for seq, text in enumerate(actions, start=1):
        try:
            game.apply(text)
        except KrendzuError as exc:
            raise CorruptMatch(f"match {row.match_id}, move {seq} {text!r}: {exc}") from exc
    return game
