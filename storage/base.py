"""The storage interface: the abstract :class:`Store`, with the typed rows and errors of
:mod:`storage.model` re-exported.

Nothing here knows SQL. A backend subclasses :class:`Store` (both do through the SQL written
once, :class:`storage.store.SqlStore`); the bot only ever sees these rows and errors. The
stored form of a match is its settings, seat labels, seed and move log:
:func:`rebuild_game` turns them back into a :class:`krendzu.Match` with the engine, so the
database is the single source of truth.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

from krendzu import Match, PlayerAction, Settings
from storage.model import (
    ARENA_CHAT_BASE,
    DEFAULT_ENGINE_MATCHES,
    ENGINE_COLUMNS,
    ENGINE_USER_BASE,
    POOL_CHAT_BASE,
    UNKNOWN_MOVER,
    ActiveMatchExists,
    ArenaEntry,
    ArenaGameRow,
    ArenaRow,
    ArenaStatus,
    ChatRow,
    CorruptMatch,
    Door,
    DuplicateUpdate,
    EngineExists,
    EngineRow,
    LobbyExists,
    LobbyRow,
    LobbyStatus,
    MatchClosed,
    MatchRow,
    MatchStatus,
    MovedBy,
    MoveRow,
    NotFound,
    OperatingFigures,
    PanelMessage,
    PoolRow,
    RatingRow,
    SchemaTooNew,
    SeatKind,
    SeatRow,
    SeatSpec,
    SequenceConflict,
    StandIn,
    StatsRow,
    StorageError,
    StoredMatch,
    TimerRow,
    UserRow,
    Visibility,
    arena_chat_id,
    arena_game_of,
    engine_display_name,
    engine_row,
    engine_user_id,
    is_arena_chat,
    is_detached_chat,
    is_engine_user,
    is_pool_chat,
    name_key,
    normalize_action,
    pool_chat_id,
    rebuild_game,
)

__all__ = [
    "ARENA_CHAT_BASE",
    "DEFAULT_ENGINE_MATCHES",
    "ENGINE_COLUMNS",
    "ENGINE_USER_BASE",
    "POOL_CHAT_BASE",
    "ActiveMatchExists",
    "ArenaEntry",
    "ArenaGameRow",
    "ArenaRow",
    "ArenaStatus",
    "ChatRow",
    "CorruptMatch",
    "Door",
    "DuplicateUpdate",
    "EngineExists",
    "EngineRow",
    "LobbyExists",
    "LobbyRow",
    "LobbyStatus",
    "MatchClosed",
    "MatchRow",
    "MatchStatus",
    "MoveRow",
    "MovedBy",
    "NotFound",
    "OperatingFigures",
    "PanelMessage",
    "PoolRow",
    "RatingRow",
    "SchemaTooNew",
    "SeatKind",
    "SeatRow",
    "SeatSpec",
    "SequenceConflict",
    "StandIn",
    "StatsRow",
    "StorageError",
    "Store",
    "StoredMatch",
    "TimerRow",
    "UserRow",
    "Visibility",
    "arena_chat_id",
    "arena_game_of",
    "engine_display_name",
    "engine_row",
    "engine_user_id",
    "is_arena_chat",
    "is_detached_chat",
    "is_engine_user",
    "is_pool_chat",
    "name_key",
    "normalize_action",
    "pool_chat_id",
    "rebuild_game",
]


# The interface --------------------------------------------------------------------------


class Store(abc.ABC):
    """Durable storage of chats, users, matches, move logs and statistics.

    Every method is a coroutine and every write is one transaction: it happens completely
    or not at all, also if the process dies or the calling task is cancelled midway.
    """

    # Lifecycle --------------------------------------------------------------------------

    @abc.abstractmethod
    async def close(self) -> None:
        """Close connections; pending writes are committed or rolled back first."""

    async def listen(self, on_change: Callable[[int], None],
                     on_revoke: Callable[[int], None] | None = None) -> bool:
        """Call ``on_change(match_id)`` whenever any process stores a change of a match (a
        move, its start, its end), and ``on_revoke(engine_id)`` whenever one gives an
        engine a new token or deletes it, until the store is closed; whether this store can
        tell (PostgreSQL: ``LISTEN``/``NOTIFY``). A store that cannot returns ``False`` and
        its readers poll (the engine protocol's streams re-read every second)."""
        del on_change, on_revoke
        return False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # Chats and users --------------------------------------------------------------------

    @abc.abstractmethod
    async def upsert_chat(
        self,
        chat_id: int,
        *,
        language: str | None = None,
        default_settings: Settings | None = None,
        tidy: bool | None = None,
        title: str | None = None,
        panels_in_group: bool | None = None,
        bot_admin: bool | None = None,
    ) -> ChatRow:
        """Create the chat or update it; ``None`` leaves a field as it is."""

    @abc.abstractmethod
    async def get_chat(self, chat_id: int) -> ChatRow | None: ...

    @abc.abstractmethod
    async def upsert_user(
        self,
        user_id: int,
        display_name: str,
        *,
        language: str | None = None,
        can_write_privately: bool | None = None,
    ) -> UserRow:
        """Create the user or update it (the name always; ``None`` leaves the rest)."""

    @abc.abstractmethod
    async def get_user(self, user_id: int) -> UserRow | None: ...

    # Matches ----------------------------------------------------------------------------

    @abc.abstractmethod
    async def create_match(
        self,
        chat_id: int,
        settings: Settings,
        seats: Sequence[SeatSpec],
        *,
        thread_id: int | None = None,
        seed: int | None = None,
        board_message_id: int | None = None,
        lobby_id: int | None = None,
    ) -> StoredMatch:
        """Start a match (status active) and deal it with the engine.

        Raises :class:`ActiveMatchExists` if the chat/topic already has an active match,
        :class:`NotFound` for a human seat whose user is not stored. A missing seed is drawn
        at random; it is stored, so the deal replays exactly. With ``lobby_id`` that open
        lobby is marked started in the same transaction (:class:`NotFound` if not open).
        """

    @abc.abstractmethod
    async def get_match(self, match_id: int) -> MatchRow:
        """The match row; :class:`NotFound` if there is none."""

    @abc.abstractmethod
    async def load_match(self, match_id: int) -> StoredMatch:
        """Row, move log and the engine state rebuilt from them, read consistently."""

    @abc.abstractmethod
    async def append_move(
        self,
        match_id: int,
        expected_seq: int,
        action: PlayerAction | str,
        *,
        update_id: int | None = None,
        final: Match | None = None,
        by: MovedBy = UNKNOWN_MOVER,
    ) -> MoveRow:
        """Append one move atomically, if and only if it gets number ``expected_seq``,
        with who made it and through which door (``by``, read back in :class:`MoveRow`).

        ``expected_seq`` is ``len(game.history) + 1`` of the caller's state before the move.
        A stale number raises :class:`SequenceConflict`; an ``update_id`` seen before raises
        :class:`DuplicateUpdate`; a closed match raises :class:`MatchClosed`. In each case
        nothing is written. When the move ends the match, pass the engine state after it as
        ``final``: the match is closed and statistics recorded in the same transaction.
        """

    #: Whether :meth:`append_moves` stores a move's steps in one transaction (both backends
    #: do: a webhook worker may be killed between two of them); else step by step.
    appends_atomically = False

    async def append_moves(self, match_id: int,
                           moves: Sequence[tuple[int, PlayerAction | str]], *,
                           update_id: int | None = None,
                           final: Match | None = None,
                           by: MovedBy = UNKNOWN_MOVER) -> list[MoveRow]:
        """The steps of one move, ``(expected_seq, action)`` each, numbered one after
        another; ``update_id`` goes with the first, ``final`` and ``by.then`` with the last,
        ``by`` with every one. Here one
        :meth:`append_move` after another (a refused one raises, those before it stay);
        a backend with :attr:`appends_atomically` stores all of them or none."""
        rows: list[MoveRow] = []
        for i, (seq, action) in enumerate(moves):
            last = i == len(moves) - 1
            rows.append(await self.append_move(
                match_id, seq, action, update_id=update_id if i == 0 else None,
                final=final if last else None,
                by=by if last else MovedBy(by.user_id, by.door)))
        return rows

    @abc.abstractmethod
    async def abandon_match(self, match_id: int) -> bool:
        """Close an unfinished match without statistics. False if it was closed already."""

    @abc.abstractmethod
    async def set_board_message(self, match_id: int, message_id: int | None,
                                caption: str | None = None) -> int | None:
        """Remember the group message that shows the board (and its caption); returns the
        id it replaces."""

    async def post_board(self, match_id: int, message_id: int,
                         caption: str) -> tuple[int | None, bool]:
        """:meth:`set_board_message` for a new board post, and whether the match's chat
        keeps one live board (``/settings tidy``): what the post's sender needs to delete
        the old one. The SQL store does both in one transaction."""
        old = await self.set_board_message(match_id, message_id, caption)
        chat = await self.get_chat((await self.get_match(match_id)).chat_id)
        return old, chat is None or chat.tidy

    @abc.abstractmethod
    async def board_message(self, match_id: int) -> tuple[int, str] | None:
        """The group's newest board post of the match: (message id, caption)."""

    @abc.abstractmethod
    async def match_head(self, match_id: int) -> tuple[MatchRow, int]:
        """The match's row and the number of its last stored move (0 before any): enough to
        tell whether a kept :class:`StoredMatch` is still the current one."""

    async def match_state(
        self, match_id: int
    ) -> tuple[MatchRow, TimerRow | None, dict[int, StandIn]]:
        """:meth:`match_head`'s row (its ``move_count`` the last stored move's number) with
        the match's turn timer and stand-ins: what a move checks and times, read together.
        A move reads them once per request; the SQL store reads them in one transaction,
        one round trip in the scaled mode instead of three."""
        row, _last = await self.match_head(match_id)
        return row, await self.timer_of(match_id), await self.stand_ins(match_id)

    # Private panels: the message (delivery's) and the lines it shows (the flow's) ---------

    @abc.abstractmethod
    async def get_panel(self, match_id: int, user_id: int) -> PanelMessage | None:
        """The player's panel message (:class:`PanelMessage`)."""

    @abc.abstractmethod
    async def set_panel(self, match_id: int, user_id: int,
                        panel: PanelMessage | None) -> PanelMessage | None:
        """Remember (or, with ``None``, forget) the player's panel message; returns the one
        it replaces (in the same write, so two senders cannot both miss the old one)."""

    @abc.abstractmethod
    async def get_panel_lines(self, match_id: int, user_id: int) -> list[str]:
        """The move lines the player's newest panel shows ([] when none)."""

    @abc.abstractmethod
    async def set_panel_lines(self, match_id: int,
                              lines: Mapping[int, Sequence[str] | None]) -> None:
        """Remember (or, with ``None``, forget) the lines each player's panel shows, by user
        id, in one write (one move changes several players' panels)."""

    @abc.abstractmethod
    async def set_announced(self, match_id: int, seq: int) -> None:
        """Record that moves up to ``seq`` were announced (never lowers the marker)."""

    @abc.abstractmethod
    async def told(self, match_id: int) -> dict[str, int]:
        """What of the match's announcements was delivered (:data:`chat.notices.Told`
        keys, each with its move number, ``board``'s the last move the group's board post
        shows): a restart, or an announcement job run again, skips what is here."""

    @abc.abstractmethod
    async def note_told(self, match_id: int, key: str, seq: int = 0) -> None:
        """Note a delivered notice of the match's announcements (a key's move number
        never goes down)."""

    # Ratings and history ----------------------------------------------------------------

    @abc.abstractmethod
    async def ratings_of(self, user_ids: Sequence[int]) -> dict[int, RatingRow]:
        """Current ratings of the users that have one."""

    @abc.abstractmethod
    async def unrated_matches(self) -> list[MatchRow]:
        """Finished matches not rated yet, oldest first (a restart rates them)."""

    @abc.abstractmethod
    async def apply_ratings(self, match_id: int, ratings: Mapping[int, tuple[float, float]]
                            ) -> bool:
        """Store the new (mu, sigma) of every rated user of a finished match, once: False if
        the match was rated already."""

    @abc.abstractmethod
    async def rating_history(self, user_id: int, limit: int = 100) -> list[tuple[float, float]]:
        """(mu, sigma) after each of the user's last ``limit`` rated matches, oldest first."""

    @abc.abstractmethod
    async def top_players(self, chat_id: int | None = None, limit: int = 20, *,
                          rated_after: int = 3
                          ) -> tuple[list[tuple[StatsRow, RatingRow | None]], int]:
        """One page of a leaderboard and how many players it has in all. Players whose
        rating rests on at least ``rated_after`` matches come first, best conservative rating
        ``mu - 3 sigma`` first, then everyone else by wins; ties by user id. Only the
        ``limit`` rows shown leave the database (a leaderboard of thousands costs a page).
        ``chat_id``: one chat's players (``None``: everyone's); a pool match's chat (such
        as ``pool_chat_id(0)``) stands for every pool match: the "Play now" leaderboard."""

    @abc.abstractmethod
    async def recent_matches(self, chat_id: int, thread_id: int | None = None,
                             limit: int = 10) -> list[MatchRow]:
        """The chat's (topic's) newest matches, newest first."""

    # Turn timers and absent players ------------------------------------------------------

    @abc.abstractmethod
    async def set_timer(self, match_id: int, seconds: int | None) -> None:
        """Give the match a turn timer of ``seconds`` (None: remove it)."""

    @abc.abstractmethod
    async def timer_of(self, match_id: int) -> TimerRow | None:
        """The match's timer, if it has one."""

    @abc.abstractmethod
    async def arm_timer(self, match_id: int, seq: int | None, deadline: float | None) -> None:
        """Start the deadline of move ``seq`` (None, None: no person is to move)."""

    @abc.abstractmethod
    async def set_reminded(self, match_id: int, seq: int) -> None:
        """The reminder for move ``seq`` was sent."""

    @abc.abstractmethod
    async def due_timers(self, now: float) -> list[TimerRow]:
        """Timers of active matches whose deadline passed or whose reminder is due (when a
        third of the time is left), oldest deadline first."""

    @abc.abstractmethod
    async def stretch_deadlines(self, earliest: float) -> int:
        """Move every running deadline earlier than ``earliest`` to it (after an outage);
        returns how many moved."""

    @abc.abstractmethod
    async def stand_ins(self, match_id: int) -> dict[int, StandIn]:
        """Seats with a timeout or a computer stand-in, by seat."""

    @abc.abstractmethod
    async def set_stand_in(self, match_id: int, seat: int, *, timeouts: int,
                           computer: bool, resigned: bool = False,
                           update_id: int | None = None) -> None:
        """Record a seat's consecutive timeouts, whether the computer keeps it, and whether
        its player resigned (a trio plays on; the resigner ranks last). With ``update_id``
        (``/leave``, ``/kick``) the update is recorded in the ledger in the same transaction
        (:class:`DuplicateUpdate` if it was already, and nothing changes), so a seat handed
        over by a redelivered update is handed over, and told, once."""

    @abc.abstractmethod
    async def concede_match(self, match_id: int, seat: int) -> bool:
        """``seat`` resigned a duel or team match: it ends now, lost by that side and won by
        the other (statistics too). False if the match was not active."""

    @abc.abstractmethod
    async def migrate_chat(self, old_chat_id: int, new_chat_id: int) -> None:
        """A group became a supergroup: move its matches, lobbies and statistics over."""

    # Lobbies ----------------------------------------------------------------------------

    @abc.abstractmethod
    async def create_lobby(
        self,
        chat_id: int,
        creator_id: int,
        state: dict[str, Any],
        *,
        thread_id: int | None = None,
    ) -> LobbyRow:
        """Open a lobby; :class:`LobbyExists` if the chat/topic has an open one."""

    @abc.abstractmethod
    async def get_lobby(self, lobby_id: int) -> LobbyRow:
        """The lobby; :class:`NotFound` if there is none."""

    @abc.abstractmethod
    async def open_lobby(self, chat_id: int, thread_id: int | None = None) -> LobbyRow | None:
        """The open lobby of a chat or forum topic."""

    @abc.abstractmethod
    async def update_lobby(
        self,
        lobby_id: int,
        *,
        state: dict[str, Any] | None = None,
        message_id: int | None = None,
        status: LobbyStatus | None = None,
        update_id: int | None = None,
    ) -> LobbyRow:
        """Change an open lobby (``None`` leaves a field); :class:`NotFound` if not open.
        With ``update_id`` the update is recorded in the ledger in the same transaction
        (:class:`DuplicateUpdate` if it was already, and nothing changes), so a set-up
        change re-run by a redelivered update applies once."""

    @abc.abstractmethod
    async def lobby_of_match(self, match_id: int) -> LobbyRow | None:
        """The lobby a match was started from (its creator may cancel it)."""

    @abc.abstractmethod
    async def open_lobbies(self) -> list[LobbyRow]:
        """Every open lobby, oldest first."""

    @abc.abstractmethod
    async def open_lobbies_of_chat(self, chat_id: int) -> list[LobbyRow]:
        """The open lobbies of a chat, of every forum topic of it, oldest first."""

    @abc.abstractmethod
    async def active_match(self, chat_id: int, thread_id: int | None = None) -> MatchRow | None:
        """The active match of a chat, or of one forum topic of it."""

    @abc.abstractmethod
    async def matches_of_user(
        self, user_id: int, *, status: MatchStatus | None = MatchStatus.ACTIVE,
        chat_id: int | None = None, thread_id: int | None = None, limit: int | None = None
    ) -> list[MatchRow]:
        """Matches the user is seated in (``status=None``: all), newest first; with
        ``chat_id`` only those of that chat and forum topic (``thread_id``), at most
        ``limit`` of them (a long-time player's whole history is not read for one)."""

    @abc.abstractmethod
    async def active_matches(self) -> list[MatchRow]:
        """Every unfinished match, oldest first: what a restart resumes."""

    @abc.abstractmethod
    async def active_matches_of_chat(self, chat_id: int) -> list[MatchRow]:
        """The active matches of a chat, of every forum topic of it, oldest first (what a
        chat that removed the bot leaves to close)."""

    @abc.abstractmethod
    async def count_active_matches(self, *, chat_id: int | None = None,
                                   user_id: int | None = None) -> int:
        """How many active matches a chat has (every forum topic of it counted), or a user is
        seated in: the caps on matches per chat and per person count without reading rows."""

    async def note_group_write(self, chat_id: int, at: float) -> None:
        """The bot wrote in group ``chat_id`` at ``at`` (a post or an edit: what Telegram
        counts against the group's 20 a minute). Kept by the embedded mode so that a
        restarted process starts each group's window from it (:meth:`group_writes`); the
        scaled mode keeps its windows in storage/pg_windows.py instead, and keeps nothing
        here."""
        return None

    async def group_writes(self, since: float) -> list[tuple[int, float]]:
        """``(chat_id, at)`` of the group writes noted at ``since`` or later, oldest first
        (:meth:`note_group_write`)."""
        return []

    @abc.abstractmethod
    async def switch(self, name: str) -> str | None:
        """An operator's switch (``paused``: /admin pause), ``None`` when off."""

    @abc.abstractmethod
    async def set_switch(self, name: str, value: str | None) -> None:
        """Set an operator's switch (``None``: off); every process reads it from here."""

    @abc.abstractmethod
    async def totals(self, since: float) -> tuple[int, int, int]:
        """Users and chats known, and matches created since ``since`` (Unix seconds): the
        owners' figures at a glance (/admin)."""

    @abc.abstractmethod
    async def ping(self) -> None:
        """One trivial query, for readiness (``/readyz``): raises when the database does
        not answer."""

    @abc.abstractmethod
    async def operating_figures(self) -> OperatingFigures:
        """Open set-ups, running matches, and their moves stored but not yet announced
        (how many, the oldest one's time): read at each metrics scrape, so one statement."""

    @abc.abstractmethod
    async def unannounced_matches(self) -> list[MatchRow]:
        """Finished matches whose last moves were stored but not all announced (the bot
        stopped before the final post went out), oldest first."""

    # Statistics -------------------------------------------------------------------------

    @abc.abstractmethod
    async def user_stats(self, user_id: int, chat_id: int | None = None) -> StatsRow | None:
        """A user's statistics in one chat, or over all chats."""

    @abc.abstractmethod
    async def stats_by_name(self, name: str, chat_id: int | None = None) -> StatsRow | None:
        """The statistics of the player called ``name`` (compared by :func:`name_key`, an
        indexed look-up, not a scan of every player) in one chat or over all chats; of
        several players of that name, the one with the most wins."""

    # Outside engines (issue 31) -----------------------------------------------------------

    @abc.abstractmethod
    async def create_engine(self, owner_id: int, name: str, token_hash: str) -> EngineRow:
        """Register an engine and the user it plays under (``🤖 NAME``, never written to),
        in one write; :class:`EngineExists` if the name (case-folded) is taken."""

    @abc.abstractmethod
    async def get_engine(self, engine_id: int) -> EngineRow | None: ...

    @abc.abstractmethod
    async def engine_by_name(self, name: str) -> EngineRow | None:
        """The engine called ``name``, compared case-insensitively."""

    @abc.abstractmethod
    async def engine_by_token(self, token_hash: str) -> EngineRow | None:
        """The engine whose token has this SHA-256 (hex)."""

    @abc.abstractmethod
    async def engines_of(self, owner_id: int) -> list[EngineRow]:
        """The engines a person registered, oldest first."""

    @abc.abstractmethod
    async def update_engine(self, engine_id: int, *, token_hash: str | None = None,
                            visibility: Visibility | None = None,
                            max_matches: int | None = None) -> EngineRow:
        """Change an engine (``None`` leaves a field); :class:`NotFound` if there is none.
        A new token hash makes the old token stop working at once."""

    @abc.abstractmethod
    async def delete_engine(self, engine_id: int) -> bool:
        """Forget an engine (its token stops working; the matches it played and its
        statistics stay under its user). False if there was none."""

    # "Play now": the pool and the blocks (issue 40) ------------------------------------------

    @abc.abstractmethod
    async def join_pool(self, user_id: int, table: str, rating: int, joined_at: float) -> bool:
        """Put a person in the pool; False if they are in it already (one entry each,
        whatever the table: the second changes nothing)."""

    @abc.abstractmethod
    async def leave_pool(self, user_id: int) -> bool:
        """Take a person out of the pool; False if they were not in it."""

    @abc.abstractmethod
    async def pool_entry(self, user_id: int) -> PoolRow | None:
        """The person's entry in the pool, if they wait."""

    @abc.abstractmethod
    async def pool_entries(self) -> list[PoolRow]:
        """Everyone waiting, the oldest entry first."""

    @abc.abstractmethod
    async def take_from_pool(self, user_ids: Sequence[int]) -> bool:
        """Take every one of ``user_ids`` out of the pool to seat them together, in one
        write; False (and nobody taken) if any of them is no longer there, so two processes
        matching the same pool never seat one person twice."""

    @abc.abstractmethod
    async def offer_computer(self, user_id: int, level: str) -> bool:
        """Note the computer level offered to a waiting person; False if they were offered
        one already (or left): each wait gets one offer."""

    @abc.abstractmethod
    async def block(self, user_id: int, blocked_id: int) -> None:
        """``user_id`` never wants to meet ``blocked_id`` in the pool again (kept once)."""

    @abc.abstractmethod
    async def blocks_among(self, user_ids: Sequence[int]) -> dict[int, set[int]]:
        """For each of ``user_ids`` with a block either way, the people they must never
        meet: whom they blocked and who blocked them."""

    # Arenas of groups (issue 40): storage/store_arenas.py -----------------------------------

    @abc.abstractmethod
    async def create_arena(self, chat_id: int, thread_id: int | None, creator: int, *,
                           minutes: int, match_args: str, bots: bool,
                           starts_at: float | None, kind: str = "arena",
                           rounds: int = 0) -> ArenaRow | None:
        """A new arena (or Swiss league: ``kind`` ``swiss``, ``rounds`` rounds) in its lobby;
        ``None`` if the chat has one not over yet."""

    @abc.abstractmethod
    async def get_arena(self, arena_id: int) -> ArenaRow | None:
        """The arena, if it exists."""

    @abc.abstractmethod
    async def latest_arena(self, chat_id: int) -> ArenaRow | None:
        """The chat's newest arena, over or not (``/arena`` shows it)."""

    @abc.abstractmethod
    async def open_arenas(self) -> list[ArenaRow]:
        """Every arena not over yet: what the ticker starts, pairs and ends."""

    @abc.abstractmethod
    async def update_arena(self, arena_id: int, *, status: ArenaStatus | None = None,
                           starts_at: float | None = None, ends_at: float | None = None,
                           message_id: int | None = None, was: ArenaStatus | None = None,
                           round: int | None = None, round_ends_at: float | None = None,
                           was_round: int | None = None) -> bool:
        """Set what is given; with ``was`` (``was_round``), only if the status (round) is
        that, so one process alone starts or ends it (or a round). False if nothing
        changed."""

    @abc.abstractmethod
    async def join_arena(self, arena_id: int, user_id: int, rating: int) -> str:
        """Seat a person: ``joined``, ``back`` (from a pause), ``already`` (playing in it),
        or ``elsewhere`` (in another arena not over: one at a time)."""

    @abc.abstractmethod
    async def pause_arena(self, arena_id: int, user_id: int) -> bool:
        """Pause a player (no new game; their points stay); False if not playing in it."""

    @abc.abstractmethod
    async def arena_entries(self, arena_id: int) -> list[ArenaEntry]:
        """The arena's players, in joining order."""

    @abc.abstractmethod
    async def arena_games(self, arena_id: int) -> list[ArenaGameRow]:
        """The arena's games, in the order they started."""

    @abc.abstractmethod
    async def start_arena_game(self, arena_id: int, first: int, second: int | None, *,
                               round: int = 0, bye: bool = False) -> int | None:
        """Note a game (``second``: ``None`` for a computer; with ``bye``, a league round's
        bye, its result set at once) and return its number; ``None`` if either player has a
        game of this arena without a result (seated elsewhere)."""

    @abc.abstractmethod
    async def set_arena_game_match(self, game_id: int, match_id: int | None) -> None:
        """The match a game is; ``None``: it could not be made (the game is void)."""

    @abc.abstractmethod
    async def finish_arena_game(self, game_id: int, result: str) -> bool:
        """Set a game's result once (``first``, ``second``, ``draw``, ``void``); its players
        wait again from now. False if it had one."""

    @abc.abstractmethod
    async def adjudicate_arena_game(self, game_id: int) -> bool:
        """Note that a league game missed its round's deadline (its time kept in
        ``finished_at`` until the result comes): True once, whichever process asks."""

    @abc.abstractmethod
    async def arena_of_game_chat(self, chat_id: int) -> ArenaRow | None:
        """The arena whose game's reserved chat ``chat_id`` is, or ``None``."""

    # Spectators: a pool match's watch link (issue 40) -----------------------------------

    @abc.abstractmethod
    async def turn_watch_off(self, match_id: int, user_id: int) -> bool:
        """Close the match to spectators for good (``user_id``: the player who did); False
        if it was closed already."""

    @abc.abstractmethod
    async def watch_is_off(self, match_id: int) -> bool:
        """Whether a player closed the match to spectators."""

    @abc.abstractmethod
    async def set_reactions(self, user_id: int, on: bool) -> bool:
        """Whether ``user_id`` gets (and may send) the emoji reactions of their pool matches;
        False if there is no such user."""

    @abc.abstractmethod
    async def reactions_off(self, user_ids: Sequence[int]) -> set[int]:
        """Those of ``user_ids`` who turned the reactions off (everyone else has them on)."""

    # Administration and inspection ------------------------------------------------------
    # Nothing in the bot calls these but the update ledger's ``mark_update`` and
    # ``seen_update``: ``python -m storage``, operators and tests do. The bot's own update
    # ids are remembered by ``append_move(update_id=...)`` and pruned automatically; in
    # webhook mode (chat/web.py) every update processed is marked too, so that a copy
    # Telegram delivers again is recognised.

    @abc.abstractmethod
    async def schema_version(self) -> int:
        """The schema version the database is at."""

    @abc.abstractmethod
    async def backup(self, dest: str) -> None:
        """Write a consistent copy of the whole database to ``dest``, safe while running."""

    @abc.abstractmethod
    async def mark_update(self, update_id: int) -> bool:
        """Remember an update id; False if it was remembered already (a redelivery)."""

    @abc.abstractmethod
    async def seen_update(self, update_id: int) -> bool:
        """Whether the update id was processed (read only)."""

    async def update_state(self, update_id: int) -> tuple[bool, int | None]:
        """Whether the update was processed, and how many times it failed so far as the
        store keeps count (``None``: it does not, the one process counts for itself; the
        PostgreSQL store does, for every webhook worker)."""
        return await self.seen_update(update_id), None

    async def count_update_failure(self, update_id: int) -> int | None:
        """One more failed try of the update; its count, or ``None`` if the store keeps
        none (see :meth:`update_state`)."""
        return None

    @abc.abstractmethod
    async def prune_updates(self, older_than_seconds: float) -> int:
        """Forget update ids processed longer ago than that; returns how many."""
