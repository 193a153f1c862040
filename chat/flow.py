"""Lobbies and matches as plain async code over ``storage`` and ``krendzu``.

Every entry point checks its input, takes the chat's lock, changes what is stored and
returns an :class:`~chat.notices.Outcome`: a short answer for the actor and the notices for
everyone else. A move is appended to the store before anything about it is announced; the
``announced`` marker in the store says how far announcements got, so a restart can finish
them (:meth:`Flow.resume`). No ``telegram`` here: tests call the flow directly.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import random
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from chat.describe import (
    cards_text,
    describe_moves,
    hand_text,
    level_label,
    next_text,
    result_text,
    role_text,
    roles_line,
    score_text,
    short_name,
    tour_frame,
    tour_text,
    visible,
)
from chat.i18n import Catalogs, Tr
from chat.model import (
    DEFAULT_GROUP_TIMER,
    LEVEL_CODES,
    LEVEL_NAMES,
    LEVELS,
    TIMER_STEPS,
    Button,
    InputError,
    Keyboard,
    LobbySeat,
    LobbyState,
    Placement,
    apply_new_args,
    lobby_data,
    match_data,
    parse_join_payload,
    rows_of,
)
from chat.notices import (
    Announced,
    BoardPicture,
    BoardPost,
    ComputerTurn,
    DropPanel,
    EditPanel,
    Notice,
    Outcome,
    Send,
    ShowLobby,
)
from chat.ratings import rate_match
from chat.results import resigned_seats
from chat.turns import STAND_IN_LEVEL, TurnTimers
from krendzu import (
    DEAL_PRESETS,
    Action,
    Announce,
    CannotPass,
    Card,
    CardNotInHand,
    CellTaken,
    Discard,
    EndTurn,
    GameOver,
    IllegalMove,
    Match,
    MatchView,
    NotTouching,
    NotYourTurn,
    Pass,
    Place,
    SettingsError,
    Table,
    WrongExchangeCount,
    WrongOpening,
    WrongPhase,
    export_record,
    match_outcome,
)
from krendzu import Outcome as MatchOutcome  # chat.notices.Outcome answers a flow call
from krendzu.coords import LabelFrame, frame_for
from krendzu.tour import ANNOUNCE, DISCARD, PLAY
from storage import (
    ActiveMatchExists,
    DuplicateUpdate,
    LobbyExists,
    LobbyRow,
    LobbyStatus,
    MatchClosed,
    MatchRow,
    MatchStatus,
    NotFound,
    SeatKind,
    SeatSpec,
    SequenceConflict,
    Store,
    StoredMatch,
)

log = logging.getLogger(__name__)

#: What a hint needs, taken from the position under the lock: the seat's view, the board's
#: frame.
HintRequest = tuple[MatchView, LabelFrame]


class Decide(Protocol):
    """A computer's decision: (level, the seat's observation, a seed) → the actions of its
    turn. ``urgent``: a person is waiting for it (a hint, their timed-out turn, a computer
    move in a match they play), so it goes before computer-only work (:class:`Thinker`)."""

    def __call__(self, level: str, view: object, seed: int, *,
                 urgent: bool = False) -> Awaitable[list[Action]]: ...


#: Show cells as buttons directly when there are at most this many; else column, then row.
DIRECT_CELLS = 40
PANEL_LINES = 6


@dataclass(frozen=True, slots=True)
class Actor:
    """Who did something: Telegram user id, display name and Telegram language code."""

    user_id: int
    name: str
    language_code: str | None = None


class Flow:
    def __init__(self, store: Store, catalogs: Catalogs, decide: Decide, *,
                 bot_username: str, clock: Callable[[], float] = time.time,
                 timer_grace: float = 60.0, max_matches_per_user: int = 3,
                 max_matches_per_chat: int = 5) -> None:
        self.store = store
        self.decide = decide
        #: Caps on active matches (each keeps computer players busy): per person, per chat.
        self.max_matches_per_user = max_matches_per_user
        self.max_matches_per_chat = max_matches_per_chat
        self.timers = TurnTimers(self, clock, timer_grace)
        self._titles: dict[int, str] = {}
        #: Move lines on each player's live panel, kept when it becomes the move's record.
        self._shown: dict[tuple[int, int], list[str]] = {}
        self.catalogs = catalogs
        self.bot_username = bot_username
        self._locks: dict[tuple[int, int], asyncio.Lock] = defaultdict(asyncio.Lock)
        self._games: dict[int, StoredMatch] = {}
        self._names: dict[int, str] = {}
        self._languages: dict[int, str] = {}
        #: Group languages (every change goes through this flow, so the cache stays true).
        self._chat_languages: dict[int, str] = {}

    # People and languages ---------------------------------------------------------------

    def lock(self, chat_id: int, thread_id: int | None) -> asyncio.Lock:
        return self._locks[(chat_id, thread_id or 0)]

    async def see_user(self, actor: Actor, *, private: bool = False) -> Tr:
        """Remember the user (name, language on first sight, that they started the bot)."""
        known = await self.store.get_user(actor.user_id)
        language = None
        if known is None or known.language is None:
            language = self.catalogs.pick(None, actor.language_code).language
        name = short_name(actor.name)
        if (
            known is None or known.display_name != name or language is not None
            or (private and not known.can_write_privately)
        ):
            known = await self.store.upsert_user(
                actor.user_id, name, language=language,
                can_write_privately=True if private else None,
            )
        self._names[actor.user_id] = known.display_name
        self._languages[actor.user_id] = known.language or "en"
        return self.catalogs.get(known.language)

    async def sets_up(self, chat_id: int, thread_id: int | None, user_id: int) -> bool:
        """Whether the user created the match being set up in this chat (or forum topic)."""
        lobby = await self.store.open_lobby(chat_id, thread_id)
        return lobby is not None and lobby.creator_id == user_id

    async def set_language(self, chat_id: int, actor: Actor, language: str) -> Tr:
        if language not in self.catalogs.languages:
            raise InputError("Languages: {names}.", names=", ".join(self.catalogs.languages))
        if chat_id < 0:
            await self.store.upsert_chat(chat_id, language=language)
            self._chat_languages[chat_id] = language
        else:
            await self.see_user(actor)
            await self.store.upsert_user(actor.user_id, short_name(actor.name), language=language)
            self._languages[actor.user_id] = language
        return self.catalogs.get(language)

    async def user_tr(self, user_id: int) -> Tr:
        if user_id not in self._languages:
            row = await self.store.get_user(user_id)
            self._languages[user_id] = (row.language if row else None) or "en"
            if row:
                self._names[user_id] = short_name(row.display_name)
        return self.catalogs.get(self._languages[user_id])

    async def chat_tr(self, chat_id: int, fallback: str | None = None) -> Tr:
        if chat_id > 0:
            return await self.user_tr(chat_id)
        if chat_id not in self._chat_languages:
            row = await self.store.get_chat(chat_id)
            if row is None or row.language is None:
                return self.catalogs.get(fallback)  # not remembered: it may be set soon
            self._chat_languages[chat_id] = row.language
        return self.catalogs.get(self._chat_languages[chat_id])

    async def name_of(self, user_id: int) -> str:
        if user_id not in self._names:
            row = await self.store.get_user(user_id)
            # Cleaned again: a name stored before invisible characters were removed.
            self._names[user_id] = short_name(row.display_name) if row else str(user_id)
        return self._names[user_id]

    async def seat_names(self, row: MatchRow, tr: Tr) -> tuple[str, ...]:
        """Display names by seat; computers of the same level get their seat number."""
        names = []
        levels = [s.level for s in row.seats if s.kind is SeatKind.COMPUTER]
        for seat in row.seats:
            if seat.kind is SeatKind.HUMAN and seat.user_id is not None:
                names.append(await self.name_of(seat.user_id))
            else:
                label = level_label(tr, LEVEL_NAMES.get(seat.level or 2, "normal"))
                if levels.count(seat.level) > 1:
                    label += f" ({seat.seat + 1})"
                names.append(label)
        return tuple(names)

    # Lobbies ----------------------------------------------------------------------------

    async def new_lobby(self, chat_id: int, thread_id: int | None, actor: Actor,
                        args: list[str], *, title: str = "") -> Outcome:
        private = chat_id > 0
        tr = await self.see_user(actor, private=private)
        group_tr = await self.chat_tr(chat_id, tr.language)
        async with self.lock(chat_id, thread_id):
            if await self.store.active_match(chat_id, thread_id):
                return Outcome(group_tr._("A match is already being played here: /board shows "
                                          "it, /cancel ends it."))
            lobby = await self.store.open_lobby(chat_id, thread_id)
            if lobby is not None:
                state = _state(lobby)
                return Outcome(notices=[self._show_lobby(lobby, state, group_tr, repost=True)])
            refusal = await self._over_cap(chat_id, [actor.user_id], actor.user_id, group_tr)
            if refusal is not None:
                return Outcome(refusal)
            known = None if private else await self.store.get_chat(chat_id)
            if not private and (known is None or known.language is None):
                # The group speaks its first creator's language until /lang says otherwise.
                await self.store.upsert_chat(chat_id, language=group_tr.language)
                self._chat_languages[chat_id] = group_tr.language
            state = LobbyState(language=group_tr.language, private=private, title=title,
                               timer=None if private else DEFAULT_GROUP_TIMER)
            apply_new_args(state, args, private=private)
            user = await self.store.get_user(actor.user_id)
            if private or (user is not None and user.can_write_privately):
                state.seats.append(LobbySeat("human", actor.user_id))
            else:
                # Never started the bot: seated like any joiner, through the link that opens
                # the private chat (the lobby shows it), so the deal never meets a 403.
                state.invited.append(actor.user_id)
            if private:
                _fill_computers(state)
            try:
                lobby = await self.store.create_lobby(chat_id, actor.user_id, state.to_json(),
                                                      thread_id=thread_id)
            except LobbyExists:
                return Outcome(group_tr._("A new match is being set up here already."))
            return Outcome(notices=[self._show_lobby(lobby, state, group_tr)])

    async def lobby_action(self, chat_id: int, thread_id: int | None, actor: Actor, op: str,
                           *, lobby_id: int | None = None, is_admin: bool = False) -> Outcome:
        """join, leave, add:<level>, go, cancel, level:<l>, table, tours, deal, exchange."""
        tr = await self.see_user(actor, private=chat_id > 0)
        async with self.lock(chat_id, thread_id):
            try:
                lobby = await (self.store.get_lobby(lobby_id) if lobby_id is not None
                               else self.store.open_lobby(chat_id, thread_id))
            except NotFound:  # a forged (or long forgotten) button: the same answer
                lobby = None
            if lobby is None or lobby.chat_id != chat_id:
                return Outcome(tr._("There is no match being set up here. Start one with /new."))
            if lobby.status is not LobbyStatus.OPEN:
                return Outcome(tr._("This match has already started or was cancelled."))
            state = _state(lobby)
            group_tr = await self.chat_tr(chat_id, state.language)
            return await self._lobby_op(lobby, state, actor, op, tr, group_tr, is_admin)

    async def _lobby_op(self, lobby: LobbyRow, state: LobbyState, actor: Actor, op: str,
                        tr: Tr, group_tr: Tr, is_admin: bool) -> Outcome:
        creator = actor.user_id == lobby.creator_id
        seated = state.seat_of(actor.user_id) is not None
        reply: str | None = None
        if op == "join":
            if seated and actor.user_id in state.waiting:
                state.waiting.remove(actor.user_id)
                if not state.waiting and state.full:
                    return await self._start(lobby, state, actor, tr, group_tr)
                reply = tr._("Your seat is ready: waiting for the others.")
                lobby = await self.store.update_lobby(lobby.lobby_id, state=state.to_json())
                return Outcome(reply, [self._show_lobby(lobby, state, group_tr)])
            if seated:
                return Outcome(tr._("You are already seated."))
            if state.full:
                return Outcome(tr._("All seats are taken."))
            refusal = await self._over_cap(None, [actor.user_id], actor.user_id, tr)
            if refusal is not None:
                return Outcome(refusal)
            user = await self.store.get_user(actor.user_id)
            if user is None or not user.can_write_privately:
                if actor.user_id not in state.invited:
                    state.invited.append(actor.user_id)
                lobby = await self.store.update_lobby(lobby.lobby_id, state=state.to_json())
                link = self.deep_link(lobby.lobby_id, state)
                return Outcome(
                    tr._("First open my private chat and press Start — your hand will come "
                         "there: {link}", link=link),
                    [self._show_lobby(lobby, state, group_tr)], alert=True, url=link,
                )
            state.seats.append(LobbySeat("human", actor.user_id))
            state.invited = [u for u in state.invited if u != actor.user_id]
            reply = tr._("You are seated.")
        elif op == "leave":
            index = state.seat_of(actor.user_id)
            if index is None:
                return Outcome(tr._("You are not seated."))
            del state.seats[index]
            state.invited = [u for u in state.invited if u != actor.user_id]
            state.waiting = [u for u in state.waiting if u != actor.user_id]
            reply = tr._("You left the table.")
            if not any(s.kind == "human" for s in state.seats):
                await self.store.update_lobby(lobby.lobby_id, state=state.to_json(),
                                              status=LobbyStatus.CLOSED)
                return Outcome(reply, [ShowLobby(lobby.lobby_id, lobby.chat_id, lobby.thread_id,
                                                 lobby.message_id,
                                                 group_tr._("The table is empty: set-up "
                                                            "cancelled. /new starts again."),
                                                 None)])
        elif op.startswith("add:") or op == "add":
            level = op[4:] or "normal"
            if level not in LEVELS:
                return Outcome(tr._("Unknown level “{value}”: use easy, normal or hard.",
                                    value=level[:20]))
            if state.full:
                return Outcome(tr._("All seats are taken."))
            if not (seated or creator):
                return Outcome(tr._("Only seated players can add computer players."))
            state.seats.append(LobbySeat("computer", level=level))
            reply = tr._("{level} joined.", level=level_label(tr, level))
        elif op in ("table", "tours", "deal", "exchange", "timer") or op.startswith("level:"):
            if not creator:
                return Outcome(tr._("Only the creator can change the settings."))
            try:
                _cycle(state, op)
            except SettingsError:
                return Outcome(tr._("This button is not valid any more."))
            while len(state.seats) > state.table.players:
                extra = next((i for i in range(len(state.seats) - 1, -1, -1)
                              if state.seats[i].kind == "computer"), len(state.seats) - 1)
                del state.seats[extra]
            if state.private:
                _fill_computers(state)
        elif op == "cancel":
            if not (creator or is_admin):
                return Outcome(tr._("Only the creator or a chat admin can cancel."))
            await self.store.update_lobby(lobby.lobby_id, status=LobbyStatus.CLOSED)
            return Outcome(tr._("Cancelled."), [ShowLobby(
                lobby.lobby_id, lobby.chat_id, lobby.thread_id, lobby.message_id,
                group_tr._("Match set-up cancelled. /new starts again."), None)])
        elif op == "go":
            return await self._start(lobby, state, actor, tr, group_tr)
        else:
            return Outcome(tr._("This button is not valid any more."))
        lobby = await self.store.update_lobby(lobby.lobby_id, state=state.to_json())
        return Outcome(reply, [self._show_lobby(lobby, state, group_tr)])

    async def join_by_link(self, actor: Actor, payload: str) -> Outcome:
        """``/start j<lobby>_<key>`` in the private chat: the player can be written to now;
        seat them, if they pressed Join in that lobby (or it invited them). Any other payload
        (guessed, forwarded, stale) gets the same neutral answer, naming no group."""
        tr = await self.see_user(actor, private=True)
        refused = Outcome(tr._("This invitation link is not valid. Press Join in the group "
                               "again."))
        parsed = parse_join_payload(payload)
        if parsed is None:
            return refused
        try:
            lobby = await self.store.get_lobby(parsed[0])
        except NotFound:
            return refused
        state = _state(lobby)
        if (not hmac.compare_digest(state.invite_key, parsed[1])
                or actor.user_id not in (*state.invited, *state.waiting)):
            return refused
        return await self._seat_from_private(actor, lobby, tr)

    async def _seat_from_private(self, actor: Actor, lobby: LobbyRow, tr: Tr) -> Outcome:
        if lobby.status is not LobbyStatus.OPEN:
            return Outcome(tr._("This match has already started or was cancelled."))
        outcome = await self.lobby_action(lobby.chat_id, lobby.thread_id, actor, "join",
                                          lobby_id=lobby.lobby_id)
        state = _state(await self.store.get_lobby(lobby.lobby_id))
        if state.seat_of(actor.user_id) is not None:
            outcome.reply = tr._("You are seated in “{title}”. Your cards will come here.",
                                 title=state.title or "?")
            outcome.alert = True  # said even though the lobby is updated too
        return outcome

    async def seat_invited(self, actor: Actor) -> list[Outcome]:
        """A plain ``/start`` from someone who pressed Join before they could be written to:
        seat them at every open table that waits for them."""
        tr = await self.see_user(actor, private=True)
        outcomes = []
        for lobby in await self.store.open_lobbies():
            if actor.user_id in _state(lobby).invited:
                outcomes.append(await self._seat_from_private(actor, lobby, tr))
        return outcomes

    def deep_link(self, lobby_id: int, state: LobbyState) -> str:
        """The invitation link: the lobby id plus its secret key (never the id alone)."""
        return f"https://t.me/{self.bot_username}?start=j{lobby_id}_{state.invite_key}"

    async def _over_cap(self, chat_id: int | None, user_ids: Sequence[int], actor_id: int,
                        tr: Tr) -> str | None:
        """Why one more active match may not begin (``None``: it may): the chat already has
        as many as one chat may, or one of ``user_ids`` plays as many as one person may. Each
        match keeps computer players busy, and those are shared by every chat."""
        if chat_id is not None:
            count = await self.store.count_active_matches(chat_id=chat_id)
            if count >= self.max_matches_per_chat:
                return tr.n_("This chat already has {n} match being played, as many as one "
                             "chat may have at once. Start a new one when it is over.",
                             "This chat already has {n} matches being played, as many as one "
                             "chat may have at once. Start a new one when one of them is "
                             "over.", count)
        for user_id in user_ids:
            count = await self.store.count_active_matches(user_id=user_id)
            if count < self.max_matches_per_user:
                continue
            if user_id == actor_id:
                return tr.n_("You are already playing {n} match, as many as one person may "
                             "at once. Finish it (or /resign) before you start or join "
                             "another.",
                             "You are already playing {n} matches, as many as one person may "
                             "at once. Finish one of them (or /resign) before you start or "
                             "join another.", count)
            return tr.n_("{name} is already playing {n} match, as many as one person may at "
                         "once. This match can start when they finish it or leave this "
                         "table.",
                         "{name} is already playing {n} matches, as many as one person may "
                         "at once. This match can start when they finish one or leave this "
                         "table.", count, name=await self.name_of(user_id))
        return None

    def _show_lobby(self, lobby: LobbyRow, state: LobbyState, tr: Tr,
                    *, repost: bool = False) -> ShowLobby:
        return ShowLobby(lobby.lobby_id, lobby.chat_id, lobby.thread_id,
                         None if repost else lobby.message_id, self._lobby_text(state, tr),
                         self._lobby_keyboard(lobby, state, tr))

    def _lobby_text(self, state: LobbyState, tr: Tr) -> str:
        settings = state.settings()
        lines = [tr._("🃏 Krendzu — a new match"), "", table_name(tr, state.table)]
        deal = settings.deal_sizes
        preset = settings.preset if settings.preset != "custom" else tr._("custom")
        lines.append(tr._("Tours: {tours} · Deal: {a}/{d} ({preset}) · Exchange: {exchange}",
                          tours=settings.tour_count, a=deal.attacker, d=deal.defender,
                          preset=preset, exchange=state.exchange or tr._("off")))
        lines.append(tr._("Turn timer: {seconds} s", seconds=state.timer) if state.timer
                     else tr._("Turn timer: off"))
        lines.append("")
        for i in range(state.table.players):
            team = ""
            if state.table is Table.TEAMS:
                team = " · " + (tr._("team A") if i % 2 == 0 else tr._("team B"))
            if i < len(state.seats):
                seat = state.seats[i]
                who = (self._names.get(seat.user_id or 0, "?") if seat.kind == "human"
                       else level_label(tr, seat.level or "normal"))
                if seat.user_id in state.waiting:
                    who += " ⏳"
            else:
                who = tr._("— free seat —")
            lines.append(f"{i + 1}. {who}{team}")
        if state.waiting:
            lines.append("")
            lines.append(tr._("Rematch: waiting for {names} to press Rematch (or Join).",
                              names=", ".join(self._names.get(u, "?") for u in state.waiting)))
        waiting = [self._names.get(u, "?") for u in state.invited if state.seat_of(u) is None]
        if waiting and not state.full:
            lines.append("")
            lines.append(tr._("Waiting for {names} to press Start in my private chat.",
                              names=", ".join(waiting)))
        lines.append("")
        if state.private:
            lines.append(tr._("Choose the computer's level and press Start."))
        elif state.full:
            lines.append(tr._("All seats are taken: press Start (or /go)."))
        else:
            lines.append(tr._("Press Join (or /join) to take a seat, or add a computer player. "
                              "The creator may change the settings."))
        return "\n".join(lines)

    def _lobby_keyboard(self, lobby: LobbyRow, state: LobbyState, tr: Tr) -> Keyboard:
        lid = lobby.lobby_id
        rows: Keyboard = []
        if state.private:
            rows.append([Button(("✓ " if state.level == lv else "") + level_label(tr, lv),
                                lobby_data(lid, f"level:{lv}")) for lv in LEVELS])
        else:
            rows.append([Button(tr._("Join"), lobby_data(lid, "join")),
                         Button(tr._("Leave"), lobby_data(lid, "leave"))])
            if not state.full:
                rows.append([Button("+ " + level_label(tr, lv), lobby_data(lid, f"add:{lv}"))
                             for lv in LEVELS])
            if any(u for u in state.invited if state.seat_of(u) is None):
                rows.append([Button(tr._("🔑 Open my private chat to join"),
                                    url=self.deep_link(lid, state))])
        rows.append([Button(tr._("Table ↻"), lobby_data(lid, "table")),
                     Button(tr._("Tours ↻"), lobby_data(lid, "tours")),
                     Button(tr._("Deal ↻"), lobby_data(lid, "deal")),
                     Button(tr._("Exchange ↻"), lobby_data(lid, "exchange")),
                     Button(tr._("Timer ↻"), lobby_data(lid, "timer"))])
        rows.append([Button(tr._("▶ Start"), lobby_data(lid, "go")),
                     Button(tr._("✖ Cancel"), lobby_data(lid, "cancel"))])
        return rows

    async def _start(self, lobby: LobbyRow, state: LobbyState, actor: Actor, tr: Tr,
                     group_tr: Tr) -> Outcome:
        if not state.full:
            missing = state.table.players - len(state.seats)
            return Outcome(tr.n_("{n} seat is still free.", "{n} seats are still free.", missing))
        if state.seat_of(actor.user_id) is None and actor.user_id != lobby.creator_id:
            return Outcome(tr._("Only seated players can start the match."))
        if state.waiting:
            # Start pressed before everyone pressed Rematch: their seats are freed.
            state.seats = [s for s in state.seats if s.user_id not in state.waiting]
            state.waiting = []
            lobby = await self.store.update_lobby(lobby.lobby_id, state=state.to_json())
            return Outcome(tr._("Seats nobody claimed are free now: Join, or add a computer."),
                           [self._show_lobby(lobby, state, group_tr)])
        refusal = await self._over_cap(lobby.chat_id, [s.user_id for s in state.seats
                                                       if s.user_id is not None],
                                       actor.user_id, tr)
        if refusal is not None:
            return Outcome(refusal)
        specs = [SeatSpec.human(s.user_id) if s.kind == "human" and s.user_id is not None
                 else SeatSpec.computer(LEVEL_CODES[s.level or "normal"]) for s in state.seats]
        try:
            stored = await self.store.create_match(lobby.chat_id, state.settings(), specs,
                                                   thread_id=lobby.thread_id,
                                                   lobby_id=lobby.lobby_id)
        except ActiveMatchExists:
            return Outcome(tr._("A match is already being played here: /board shows it, "
                                "/cancel ends it."))
        self._games[stored.match_id] = stored
        await self.timers.start(stored.match_id, state.timer)
        self.remember_title(lobby.chat_id, state.title)
        notices: list[Notice] = [ShowLobby(
            lobby.lobby_id, lobby.chat_id, lobby.thread_id, lobby.message_id,
            self._lobby_text(state, group_tr).rsplit("\n\n", 1)[0] + "\n\n"
            + group_tr._("The match has started. Good luck!"), None)]
        notices += await self._announce(stored, None, [])
        return Outcome(tr._("The match has started."), notices)

    # Matches ----------------------------------------------------------------------------

    async def load(self, match_id: int) -> StoredMatch:
        stored = self._games.get(match_id)
        if stored is None or stored.row.status is not MatchStatus.ACTIVE:
            stored = await self.store.load_match(match_id)
            if stored.row.status is MatchStatus.ACTIVE:
                self._games[match_id] = stored
            if stored.row.chat_id not in self._titles:
                lobby = await self.store.lobby_of_match(match_id)
                if lobby is not None:
                    self.remember_title(lobby.chat_id, _state(lobby).title)
        return stored

    async def find_match(self, chat_id: int, thread_id: int | None,
                         user_id: int) -> StoredMatch | None:
        """The chat's match; in a private chat, the user's match where it is their turn."""
        row = await self.store.active_match(chat_id, thread_id)
        if row is not None or chat_id < 0:
            return await self.load(row.match_id) if row else None
        return None

    async def latest_match(self, chat_id: int, thread_id: int | None,
                           user_id: int) -> StoredMatch | None:
        """The chat's active match, else the newest one the user played in this chat."""
        row = await self.store.active_match(chat_id, thread_id)
        if row is None:
            mine = await self.store.matches_of_user(user_id, status=None, chat_id=chat_id,
                                                    thread_id=thread_id, limit=1)
            row = mine[0] if mine else None
        return await self.load(row.match_id) if row else None

    async def my_matches(self, user_id: int) -> list[StoredMatch]:
        rows = await self.store.matches_of_user(user_id)
        return [await self.load(r.match_id) for r in rows]

    async def play(self, match_id: int, actor: Actor, steps: Sequence[Action], *,
                   update_id: int | None = None, expected_seq: int | None = None,
                   from_panel: bool = False) -> Outcome:
        """Apply a player's steps (validated on a clone first), store them, announce them."""
        tr = await self.see_user(actor)
        try:
            row = await self.store.get_match(match_id)
        except NotFound:
            return Outcome(tr._("This match does not exist any more."))
        async with self.lock(row.chat_id, row.thread_id):
            stored = await self.load(match_id)
            if stored.row.status is not MatchStatus.ACTIVE:
                return Outcome(tr._("This match is over."))
            seat = stored.row.seat_of(actor.user_id)
            if seat is None:
                return Outcome(tr._("You are not playing in this match."))
            if expected_seq is not None and expected_seq != stored.next_seq:
                return Outcome(tr._("This panel is out of date: use the newest one."))
            game = stored.game
            if game.current_player != seat:
                names = await self.seat_names(stored.row, tr)
                view = game.observation(None)
                return Outcome(tr._("It is not your turn. {next}", next=next_text(tr, view, names)))
            steps = _without_needless_end(game, steps)
            error = self._check(tr, game, steps)
            if error:
                return Outcome(error, private_reply=True)
            await self.timers.moved_by(match_id, seat)
            return await self._commit(stored, list(steps), tr, update_id=update_id,
                                      mover=actor.user_id, from_panel=from_panel)

    def _check(self, tr: Tr, game: Match, steps: Sequence[Action]) -> str | None:
        """The reply refusing ``steps`` of the seat to move, or None if all are legal. Every
        step is played as that seat's: a step after the turn passed on is refused, never
        played for the next seat."""
        trial = game.clone()
        frame = tour_frame(trial)
        seat = trial.current_player
        for step in steps:
            try:
                trial.apply(step, seat=seat)
            except IllegalMove as exc:
                return _illegal(tr, step, frame, exc)
        return None

    async def _commit(self, stored: StoredMatch, steps: list[Action], tr: Tr, *,
                      update_id: int | None, mover: int | None,
                      from_panel: bool = False) -> Outcome:
        before = stored.game.clone()
        game = stored.game
        done: list[Action] = []
        for i, step in enumerate(steps):
            after = game.clone()
            after.apply(step)
            try:
                await self.store.append_move(
                    stored.match_id, stored.next_seq, step,
                    update_id=update_id if i == 0 else None,
                    final=after if after.is_over else None,
                )
            except DuplicateUpdate:
                return Outcome(None)
            except (SequenceConflict, MatchClosed):
                self._games.pop(stored.match_id, None)
                if not done:
                    return Outcome(tr._("Someone was quicker: the position changed. Look at "
                                        "the newest board."))
                break
            game.apply(step)
            done.append(step)
        if game.is_over:
            self._games.pop(stored.match_id, None)
            stored.row = await self.store.get_match(stored.match_id)
            await self._rate(stored.row, game)
        notices = await self._announce(stored, before, done, mover=mover, from_panel=from_panel)
        frame = frame_for(game.tours[before.tour_index].observation(None).placements)
        echo = _echo(tr, done, frame)
        return Outcome(echo, notices)

    async def _announce(self, stored: StoredMatch, before: Match | None,
                        actions: Sequence[Action], *, mover: int | None = None,
                        from_panel: bool = False) -> list[Notice]:
        """Notices telling everyone about ``actions`` (applied to ``before``) and what next."""
        row, game = stored.row, stored.game
        group_tr = await self.chat_tr(row.chat_id)
        names = await self.seat_names(row, group_tr)
        private_match = row.chat_id > 0
        notices: list[Notice] = []
        lines: list[str] = []
        if before is not None:
            lines, _ = describe_moves(group_tr, before, actions, names)
        new_tour = before is None or before.tour_index != game.tour_index
        view = game.observation(None)
        result = await self._result(stored)  # a finished match's winner, for its pictures
        if not private_match:
            footer = "\n".join(x for x in (
                score_text(group_tr, view, names),
                tour_text(group_tr, view) + " · " + next_text(group_tr, view, names)
                if not view.match_over else next_text(group_tr, view, names),
            ) if x)
            head = lines + ([roles_line(group_tr, view, names)]
                            if new_tour and not view.match_over else [])
            notices.append(BoardPost(row.match_id, row.chat_id, row.thread_id, tuple(head),
                                     footer, BoardPicture(view, names, group_tr.language,
                                                          outcome=result),
                                     provisional=bool(lines) and bool(game.tour.pending)))
        humans = [s for s in row.seats if s.kind is SeatKind.HUMAN and s.user_id is not None]
        current = game.current_player
        for seat in humans:
            user_id = seat.user_id
            assert user_id is not None
            tr = await self.user_tr(user_id)
            own_names = await self.seat_names(row, tr)
            own_lines = lines
            if tr.language != group_tr.language and before is not None:
                own_lines, _ = describe_moves(tr, before, actions, own_names)
            seat_view = game.observation(seat.seat) if not game.is_over else None
            to_move = seat.seat == current and not game.is_over
            if user_id == mover:
                # The mover's panel turns into the record of the move (what it showed
                # before, then the move), with the hand.
                shown = self._shown.pop((row.match_id, user_id), [])
                if shown and before is not None and before.tour.pending:
                    shown = shown[:-1]  # "first card (may place a second)": now a whole turn
                record = [*shown, *own_lines][-PANEL_LINES:]
                text = "\n".join([*record,
                                  hand_text(tr, seat_view.tour.hand) if seat_view else ""])
                if to_move and not new_tour:
                    notices.append(self._panel(stored, seat.seat, user_id, tr, own_names,
                                               record, edit=from_panel))
                    continue
                if from_panel:
                    notices.append(EditPanel(row.match_id, user_id, text.strip(), None))
                else:
                    # Typed: the answer belongs below what was typed, not in an old panel.
                    notices.append(DropPanel(row.match_id, user_id))
                    notices.append(Send(user_id, text.strip(), match_id=row.match_id))
            elif not to_move:
                notices.append(DropPanel(row.match_id, user_id))
            if new_tour and seat_view is not None:
                notices.append(self._deal_message(stored, seat.seat, user_id, tr, own_names))
            if to_move:
                notices.append(self._panel(stored, seat.seat, user_id, tr, own_names,
                                           own_lines if private_match or user_id != mover
                                           else []))
            elif private_match and mover is None and own_lines:
                # Alone with computers and not to move: follow their moves like a group.
                footer = score_text(tr, view, own_names) + "\n" + (
                    next_text(tr, view, own_names) if view.match_over else
                    tour_text(tr, view) + " · " + next_text(tr, view, own_names))
                notices.append(BoardPost(row.match_id, user_id, None, tuple(own_lines), footer,
                                         BoardPicture(view, own_names, tr.language,
                                                      outcome=result)))
        if game.is_over:
            notices.extend(await self._summary(stored, group_tr, names))
        elif (row.seats[current].kind is SeatKind.COMPUTER
              or await self.timers.computer_keeps(row.match_id, current)):
            notices.append(ComputerTurn(row.match_id, stored.next_seq))
        await self.timers.after_moves(stored)
        notices.append(Announced(row.match_id, len(game.history)))
        return notices

    async def panel_for(self, stored: StoredMatch, seat: int, user_id: int) -> list[Notice]:
        """A fresh panel for the player to move (after /back)."""
        tr = await self.user_tr(user_id)
        names = await self.seat_names(stored.row, tr)
        return [self._panel(stored, seat, user_id, tr, names, [])]

    async def was_unreachable(self, user_id: int) -> bool:
        """The user is known and their private chat refused us (blocked, never started)."""
        row = await self.store.get_user(user_id)
        return row is not None and not row.can_write_privately

    async def mark_unreachable(self, user_id: int) -> None:
        """The user blocked the bot (``my_chat_member`` in their private chat)."""
        row = await self.store.get_user(user_id)
        if row is not None and row.can_write_privately:
            await self.store.upsert_user(user_id, row.display_name, can_write_privately=False)

    async def welcome_back(self, user_id: int) -> list[Notice]:
        """A seated player who could not be written to pressed Start again: their hand in
        every match they play, and the panel where it is their turn, without asking."""
        notices: list[Notice] = []
        for stored in await self.my_matches(user_id):
            seat = stored.row.seat_of(user_id)
            if seat is None or stored.game.is_over:
                continue
            notices.append(await self.hand(stored, user_id))
            if (stored.game.current_player == seat
                    and not await self.timers.computer_keeps(stored.match_id, seat)):
                notices += await self.panel_for(stored, seat, user_id)
        return notices

    def _deal_message(self, stored: StoredMatch, seat: int, user_id: int, tr: Tr,
                      names: Sequence[str]) -> Send:
        view = stored.game.observation(seat)
        where = self._where(stored, tr)
        text = "\n".join([
            where, tour_text(tr, view) + " · " + role_text(tr, view, seat),
            roles_line(tr, view, names), hand_text(tr, view.tour.hand),
        ])
        return Send(user_id, text, hand=tuple(view.tour.hand),
                    silent=seat != stored.game.current_player, match_id=stored.match_id,
                    language=tr.language, hand_title=hand_title(tr, view.tour.hand))

    def _where(self, stored: StoredMatch, tr: Tr) -> str:
        if stored.row.chat_id > 0:
            return tr._("🃏 Your match against the computer")
        lobby_title = self._titles.get(stored.row.chat_id)
        if not lobby_title:
            return tr._("🃏 Match in a group")
        return tr._("🃏 Match in “{title}”", title=lobby_title)

    def remember_title(self, chat_id: int, title: str | None) -> None:
        title = " ".join(visible(title or "").split())  # shown inside our own sentences
        if title:
            self._titles[chat_id] = title

    def _panel(self, stored: StoredMatch, seat: int, user_id: int, tr: Tr,
               names: Sequence[str], lines: Sequence[str], *, edit: bool = False,
               stage: str = "", card: Card | None = None, column: int | None = None) -> Notice:
        """The private panel of the player to move: board, hand, what to do, buttons."""
        game = stored.game
        view = game.observation(seat)
        hand = view.tour.hand
        head = [self._where(stored, tr), *lines[-PANEL_LINES:],
                tour_text(tr, view) + " · " + role_text(tr, view, seat) + " · "
                + score_text(tr, view, names), hand_text(tr, hand)]
        prompt, keyboard = self._panel_keyboard(stored, view, tr, stage, card, column)
        text = "\n".join([*head, "", prompt])
        self._shown[(stored.match_id, user_id)] = list(lines[-PANEL_LINES:])
        if edit:
            return EditPanel(stored.match_id, user_id, text, keyboard,
                             fallback=Send(user_id, text, keyboard=keyboard,
                                           picture=BoardPicture(view, tuple(names), tr.language,
                                                                private=True),
                                           panel_of=(stored.match_id, user_id)))
        return Send(user_id, text, keyboard=keyboard,
                    picture=BoardPicture(view, tuple(names), tr.language, private=True),
                    panel_of=(stored.match_id, user_id))

    def _panel_keyboard(self, stored: StoredMatch, view: object, tr: Tr, stage: str,
                        card: Card | None, column: int | None) -> tuple[str, Keyboard]:
        mid, seq = stored.match_id, stored.next_seq
        tour = view.tour  # type: ignore[attr-defined]
        hand = sorted(tour.hand)
        legal = tour.legal

        def data(op: str) -> str:
            return match_data(mid, seq, op)

        if tour.phase == ANNOUNCE:
            counts = sorted(a.count for a in legal if isinstance(a, Announce))
            return (tr._("Exchange: how many cards will you swap for new ones? (/exchange N)"),
                    rows_of([Button(str(n), data(f"a{n}")) for n in counts], 8))
        if tour.phase == DISCARD:
            left = dict(tour.announcements)[tour.current_player] - tour.discards_done[
                tour.current_player]
            if stage == "discard" and card is not None:
                return (tr._("Exchange {card}?", card=card.pretty()),
                        [[Button(tr._("✓ Exchange {card}", card=card.pretty()),
                                 data(f"x{card.code()}")), Button(tr._("◀ Back"), data("h"))]])
            return (tr.n_("Choose {n} more card to exchange (/discard CARD).",
                          "Choose {n} more cards to exchange (/discard CARD).", left),
                    rows_of([Button(c.pretty(), data(f"d{c.code()}")) for c in hand], 8))
        if tour.phase != PLAY:
            return "", []
        frame = tour_frame(stored.game)
        if card is not None:
            cells = sorted({(a.x, a.y) for a in legal if isinstance(a, Place) and a.card == card},
                           key=lambda c: (c[1], c[0]))
            back = [Button(tr._("◀ Back"), data("h"))]
            if column is not None:
                cells = [c for c in cells if c[0] == column]
            if len(cells) <= DIRECT_CELLS:
                buttons = [Button(frame.label(x, y), data(f"p{card.code()}@{x},{y}"))
                           for x, y in cells]
                return (tr._("{card}: choose a cell (the free cells are labelled on the "
                             "picture).", card=card.pretty()), [*rows_of(buttons, 5), back])
            columns = sorted({x for x, _ in cells})
            buttons = [Button(frame.column_label(x), data(f"k{card.code()}:{x}"))
                       for x in columns]
            return (tr._("{card}: choose a column, then a row.", card=card.pretty()),
                    [*rows_of(buttons, 8), back])
        rows = rows_of([Button(c.pretty(), data(f"c{c.code()}")) for c in hand], 8)
        extra = []
        if any(isinstance(a, Pass) for a in legal):
            extra.append(Button(tr._("Pass"), data("pass")))
        if any(isinstance(a, EndTurn) for a in legal):
            extra.append(Button(tr._("End turn"), data("end")))
        extra.append(Button(tr._("💡 Hint"), data("hint")))
        rows.append(extra)
        if tour.step_in_turn:
            prompt = tr._("Place a second card, or end your turn.")
        elif any(isinstance(a, Pass) for a in legal):
            prompt = tr._("Your move: choose a card (or pass).")
        else:
            prompt = tr._("Your move: choose a card.")
        return prompt + " " + tr._("Or type e.g. /play QC M12."), rows

    async def plays_in(self, match_id: int, user_id: int) -> bool:
        """Whether the user is seated in this running match: asked before anything keyed by
        a pressed button's match id is remembered (forged ids must allocate nothing)."""
        try:
            row = await self.store.get_match(match_id)
        except NotFound:
            return False
        return row.status is MatchStatus.ACTIVE and row.seat_of(user_id) is not None

    async def panel_press(self, match_id: int, seq: int, op: str, actor: Actor, *,
                          update_id: int | None = None, private: bool = True) -> Outcome:
        """A button on a private panel (or Rematch under a group's summary, ``private``
        False): navigation edits the panel, a step plays it.

        A press on a match the presser does not play gets the answer a match that does not
        exist gets: button data can be forged, and must not tell a stranger whether another
        chat's match exists, is running or is over."""
        tr = await self.see_user(actor, private=private)
        try:
            row = await self.store.get_match(match_id)
        except NotFound:
            row = None
        if row is None or row.seat_of(actor.user_id) is None:
            return Outcome(tr._("This button is not valid any more."))
        if op == "rematch":
            return await self.rematch(row, actor)
        step = _op_action(op)
        if step is not None:
            return await self.play(match_id, actor, [step], update_id=update_id,
                                   expected_seq=seq, from_panel=True)
        async with self.lock(row.chat_id, row.thread_id):
            stored = await self.load(match_id)
            seat = stored.row.seat_of(actor.user_id)
            if stored.row.status is not MatchStatus.ACTIVE:
                return Outcome(tr._("This match is over."))
            if seat is None:
                return Outcome(tr._("You are not playing in this match."))
            if seq != stored.next_seq or stored.game.current_player != seat:
                return Outcome(tr._("This panel is out of date: use the newest one."))
            names = await self.seat_names(stored.row, tr)
            hand = stored.game.observation(seat).tour.hand
            card: Card | None = None
            column: int | None = None
            stage = ""
            hint: HintRequest | None = None
            try:
                if op[0] in "cdk":
                    card = Card.parse(op[1:].split(":")[0])
                    if card not in hand:
                        raise ValueError
                    stage = "discard" if op[0] == "d" else ""
                    if op[0] == "k":
                        column = int(op.split(":")[1])
                elif op == "hint":
                    hint = self.hint_request(stored, seat)
                elif op != "h":
                    raise ValueError
            except (ValueError, IndexError):
                return Outcome(tr._("This button is not valid any more."))
            if hint is None:
                shown = self._shown.get((match_id, actor.user_id), [])
                return Outcome(None, [self._panel(stored, seat, actor.user_id, tr, names,
                                                  shown, edit=True, stage=stage, card=card,
                                                  column=column)])
        # The suggestion is thought out without the chat's lock: the other players of the
        # chat need not wait for it.
        return Outcome(None, [await self.hint_notice(stored, seat, actor.user_id,
                                                     request=hint)])

    def hint_request(self, stored: StoredMatch, seat: int) -> HintRequest:
        """What a hint needs from the position, taken now: the seat's view and the board's
        frame (``stored.game`` moves on with the next move, also while the hint is thought
        out)."""
        return stored.game.observation(seat), tour_frame(stored.game)

    async def hint_notice(self, stored: StoredMatch, seat: int, user_id: int, *,
                          request: HintRequest | None = None) -> Send:
        view, frame = request or self.hint_request(stored, seat)
        tr = await self.user_tr(user_id)
        names = await self.seat_names(stored.row, tr)
        actions = await self.suggest(view)
        places = tuple((a.card, a.x, a.y) for a in actions if isinstance(a, Place))
        text = (tr._("💡 Suggestion: {move}", move=_steps_text(tr, actions, frame))
                if actions else tr._("No suggestion."))
        return Send(user_id, text, picture=BoardPicture(view, names, tr.language, private=True,
                                                        suggestion=places),
                    match_id=stored.match_id)

    async def suggest(self, view: object) -> list[Action]:
        """The normal level's suggestion (set by the application to run off the loop); a
        person waits for it, so it is urgent."""
        return await self.decide("normal", view, 0, urgent=True)

    async def think(self, level: str, view: object, seed_text: str, *,
                    urgent: bool) -> list[Action]:
        """A computer's decision for ``view``, seeded by ``seed_text`` (so a replay of the
        same move decides the same). Call it without holding the chat's lock."""
        seed = random.Random(seed_text).randrange(2**32)
        return await self.decide(level, view, seed, urgent=urgent)

    async def _computer_level(self, stored: StoredMatch, seat: int) -> str | None:
        """The level that plays ``seat`` now: a computer seat's own, the stand-in's for an
        absent person, or ``None`` for a person who plays it."""
        seat_row = stored.row.seats[seat]
        if seat_row.kind is SeatKind.COMPUTER:
            return LEVEL_NAMES.get(seat_row.level or 2, "normal")
        if await self.timers.computer_keeps(stored.match_id, seat):
            return STAND_IN_LEVEL  # the player is away: the computer keeps the seat
        return None

    async def computer_turn(self, match_id: int, seq: int) -> Outcome:
        """The computer's move ``seq``. It is thought out without the chat's lock (people of
        the chat may act meanwhile: /back, a move, /cancel); under the lock again it is stored
        only if the match still waits for that very move of that seat, else dropped."""
        row = await self.store.get_match(match_id)
        async with self.lock(row.chat_id, row.thread_id):
            stored = await self.load(match_id)
            if stored.row.status is not MatchStatus.ACTIVE or stored.next_seq != seq:
                return Outcome(None)
            seat = stored.game.current_player
            level = await self._computer_level(stored, seat)
            if level is None:
                return Outcome(None)
            view = stored.game.observation(seat)
            urgent = await self.timers.someone_present(stored)
        actions = await self.think(level, view, f"{row.seed}:{seq}", urgent=urgent)
        async with self.lock(row.chat_id, row.thread_id):
            stored = await self.load(match_id)
            if (stored.row.status is not MatchStatus.ACTIVE or stored.next_seq != seq
                    or stored.game.current_player != seat
                    or await self._computer_level(stored, seat) != level):
                log.debug("match %s: move %s was made or the seat changed hands while the "
                          "computer thought; its decision is dropped", match_id, seq)
                return Outcome(None)
            outcome = await self.play_for_seat(stored, actions)
            return Outcome(None, outcome.notices)

    async def play_for_seat(self, stored: StoredMatch, actions: Sequence[Action]) -> Outcome:
        """The computer makes the turn of the seat to move (a computer seat's, or an absent
        person's) with ``actions`` decided beforehand. Hold the chat's lock, and check first
        that the match is still at the move the actions were decided for; the store refuses
        a stale move number anyway (:class:`SequenceConflict`)."""
        game = stored.game
        tr = await self.chat_tr(stored.row.chat_id)
        if self._check(tr, game, actions) is not None:
            log.error("match %s: the computer chose an illegal turn; playing the first "
                      "legal step instead", stored.match_id)
            actions = [game.legal_actions()[0]]
        return await self._commit(stored, list(actions), tr, update_id=None, mover=None)

    # Other commands ---------------------------------------------------------------------

    async def hand(self, stored: StoredMatch, user_id: int) -> Send:
        tr = await self.user_tr(user_id)
        seat = stored.row.seat_of(user_id)
        assert seat is not None
        view = stored.game.observation(seat)
        text = "\n".join([self._where(stored, tr), tour_text(tr, view) + " · "
                          + role_text(tr, view, seat), hand_text(tr, view.tour.hand)])
        return Send(user_id, text, hand=tuple(view.tour.hand), match_id=stored.match_id,
                    language=tr.language, hand_title=hand_title(tr, view.tour.hand))

    async def board(self, stored: StoredMatch, chat_id: int, thread_id: int | None,
                    user_id: int) -> list[Notice]:
        """``/board``: the public board in a group; the own panel in a private chat."""
        if chat_id > 0:
            seat = stored.row.seat_of(user_id)
            tr = await self.user_tr(user_id)
            names = await self.seat_names(stored.row, tr)
            if seat is not None and stored.game.current_player == seat:
                return [self._panel(stored, seat, user_id, tr, names, [])]
            view = stored.game.observation(seat)
            text = "\n".join([tour_text(tr, view), score_text(tr, view, names),
                              next_text(tr, view, names)])
            return [Send(chat_id, text, picture=BoardPicture(
                view, names, tr.language, outcome=await self._result(stored)))]
        tr = await self.chat_tr(chat_id)
        names = await self.seat_names(stored.row, tr)
        view = stored.game.observation(None)
        text = "\n".join([tour_text(tr, view), score_text(tr, view, names),
                          next_text(tr, view, names)])
        return [Send(chat_id, text, thread_id=thread_id, silent=True, group=True,
                     picture=BoardPicture(view, names, tr.language,
                                          outcome=await self._result(stored)))]

    async def score(self, stored: StoredMatch, tr: Tr) -> str:
        names = await self.seat_names(stored.row, tr)
        view = stored.game.observation(None)
        per_tour = []
        for i, tour in enumerate(stored.game.tours):
            side = " & ".join(names[s] for s in tour.roles.attackers)
            if tour.is_over:
                per_tour.append(tr.n_("Tour {t}: {side} scored {n} point.",
                                      "Tour {t}: {side} scored {n} points.", tour.points,
                                      t=i + 1, side=side))
            else:
                per_tour.append(tr.n_("Tour {t}, being played: {side} {n} point so far.",
                                      "Tour {t}, being played: {side} {n} points so far.",
                                      tour.points, t=i + 1, side=side))
        return "\n".join([score_text(tr, view, names), *per_tour, next_text(tr, view, names)])

    def export(self, stored: StoredMatch) -> tuple[bytes, int]:
        """The record of finished tours only (a running tour's record holds the hands)."""
        record = export_record(stored.game)
        finished = [t for t in stored.game.tours if t.is_over]
        record["tours"] = record["tours"][: len(finished)]
        return json.dumps(record, ensure_ascii=False, indent=1).encode(), len(finished)

    async def resign(self, stored: StoredMatch, actor: Actor) -> Outcome:
        tr = await self.chat_tr(stored.row.chat_id)
        seat = stored.row.seat_of(actor.user_id)
        if seat is None:
            return Outcome(tr._("You are not playing in this match."))
        names = await self.seat_names(stored.row, tr)
        if stored.row.table.players == 3 and stored.row.chat_id < 0:
            # A trio plays on: the computer takes the seat (the player ranks last).
            return Outcome(None, await self.timers.hand_over(stored, seat, tr._(
                "{name} resigned: the computer plays their seat to the end, and they rank "
                "last.", name=names[seat]), resigned=True))
        async with self.lock(stored.row.chat_id, stored.row.thread_id):
            if not await self.store.concede_match(stored.match_id, seat):
                return Outcome(tr._("This match is over."))
            self._games.pop(stored.match_id, None)
            await self._rate(await self.store.get_match(stored.match_id), stored.game)
        winners = " & ".join(names[i] for i in match_outcome(stored.game, conceded=seat).winners)
        text = tr._("{name} resigned: the match goes to {winners}.", name=names[seat],
                    winners=winners)
        return Outcome(None, self._closing(stored, tr, text))

    async def cancel(self, stored: StoredMatch, actor: Actor, is_admin: bool) -> Outcome:
        tr = await self.chat_tr(stored.row.chat_id)
        lobby = await self.store.lobby_of_match(stored.match_id)
        creator = lobby is not None and lobby.creator_id == actor.user_id
        if not (creator or is_admin or stored.row.chat_id > 0):
            return Outcome(tr._("Only the creator or a chat admin can cancel."))
        async with self.lock(stored.row.chat_id, stored.row.thread_id):
            if not await self.store.abandon_match(stored.match_id):
                return Outcome(tr._("This match is over."))
            self._games.pop(stored.match_id, None)
        return Outcome(None, self._closing(stored, tr, tr._("The match was cancelled.")))

    def _closing(self, stored: StoredMatch, tr: Tr, text: str) -> list[Notice]:
        notices: list[Notice] = [Send(stored.row.chat_id, text, thread_id=stored.row.thread_id,
                                      group=stored.row.chat_id < 0)]
        for seat in stored.row.seats:
            if seat.user_id is not None:
                notices.append(DropPanel(stored.match_id, seat.user_id))
                if stored.row.chat_id < 0:
                    notices.append(Send(seat.user_id, text, silent=True))
        return notices

    async def _result(self, stored: StoredMatch) -> MatchOutcome | None:
        """The engine's outcome of a match played to the end (None before): a trio player
        who resigned ranks last here as in the statistics and ratings, whatever the points
        of the seat the computer played on for them."""
        if not stored.game.is_over:
            return None
        return match_outcome(stored.game, await resigned_seats(self.store, stored.match_id))

    async def _summary(self, stored: StoredMatch, tr: Tr, names: Sequence[str]) -> list[Notice]:
        game = stored.game
        outcome = await self._result(stored)
        assert outcome is not None, "a summary comes after the last move"
        lines = [tr._("🏁 The match is over."), result_text(tr, outcome, names),
                 score_text(tr, game.observation(None), names)]
        for i, tour in enumerate(game.tours):
            side = " & ".join(names[s] for s in tour.roles.attackers)
            lines.append(tr.n_("Tour {t}: {side} scored {n} point.",
                               "Tour {t}: {side} scored {n} points.", tour.points, t=i + 1,
                               side=side))
        keyboard = [[Button(tr._("🔁 Rematch"), match_data(stored.match_id, 0, "rematch"))]]
        notices: list[Notice] = [Send(stored.row.chat_id, "\n".join(lines),
                                      thread_id=stored.row.thread_id, keyboard=keyboard,
                                      group=stored.row.chat_id < 0)]
        if stored.row.chat_id < 0:
            for seat in stored.row.seats:
                if seat.user_id is not None:
                    utr = await self.user_tr(seat.user_id)
                    unames = await self.seat_names(stored.row, utr)
                    notices.append(Send(seat.user_id, "\n".join([
                        self._where(stored, utr), result_text(utr, outcome, unames),
                        score_text(utr, game.observation(None), unames)]), silent=True))
        return notices

    async def rematch(self, row: MatchRow, actor: Actor) -> Outcome:
        """The same table and settings with the seats rotated by one. Every player's seat is
        kept for them until they press Rematch too; the last press starts the match."""
        tr = await self.user_tr(actor.user_id)
        if row.status is MatchStatus.ACTIVE:
            return Outcome(tr._("This match is not over yet."))
        if row.seat_of(actor.user_id) is None:
            return Outcome(tr._("You are not playing in this match."))
        group_tr = await self.chat_tr(row.chat_id)
        async with self.lock(row.chat_id, row.thread_id):
            if await self.store.active_match(row.chat_id, row.thread_id):
                return Outcome(tr._("A match is already being played here: /board shows it, "
                                    "/cancel ends it."))
            lobby = await self.store.open_lobby(row.chat_id, row.thread_id)
            if lobby is not None:
                state = _state(lobby)
                if state.rematch_of != row.match_id:
                    return Outcome(tr._("A new match is being set up here already."),
                                   [self._show_lobby(lobby, state, group_tr, repost=True)])
                if actor.user_id not in state.waiting:
                    return Outcome(tr._("Your seat is ready: waiting for the others."))
                state.waiting.remove(actor.user_id)
            else:
                old = await self.store.lobby_of_match(row.match_id)
                state = _state(old) if old else LobbyState(private=row.chat_id > 0)
                seats = [LobbySeat("human", s.user_id) if s.user_id is not None
                         else LobbySeat("computer",
                                        level=LEVEL_NAMES.get(s.level or 2, "normal"))
                         for s in row.seats]
                state.seats = seats[1:] + seats[:1]
                state.invited = []
                state.rematch_of = row.match_id
                state.waiting = [s.user_id for s in row.seats
                                 if s.user_id is not None and s.user_id != actor.user_id]
                group_tr = await self.chat_tr(row.chat_id, state.language)
                try:
                    lobby = await self.store.create_lobby(row.chat_id, actor.user_id,
                                                          state.to_json(),
                                                          thread_id=row.thread_id)
                except LobbyExists:
                    return Outcome(tr._("A new match is being set up here already."))
            if not state.waiting:
                return await self._start(lobby, state, actor, tr, group_tr)
            lobby = await self.store.update_lobby(lobby.lobby_id, state=state.to_json())
            return Outcome(tr._("Your seat is ready: waiting for the others."),
                           [self._show_lobby(lobby, state, group_tr, repost=lobby.message_id
                                             is None)])

    async def close_chat(self, chat_id: int) -> int:
        """The bot was removed from a group: close every running match and open set-up of
        it, in every forum topic (nothing can be shown there any more). Returns how many."""
        closed = 0
        for row in await self.store.active_matches_of_chat(chat_id):
            async with self.lock(row.chat_id, row.thread_id):
                if await self.store.abandon_match(row.match_id):
                    closed += 1
                self._games.pop(row.match_id, None)
        for lobby in await self.store.open_lobbies_of_chat(chat_id):
            async with self.lock(lobby.chat_id, lobby.thread_id):
                try:
                    await self.store.update_lobby(lobby.lobby_id, status=LobbyStatus.CLOSED)
                except NotFound:  # started or closed meanwhile
                    continue
                closed += 1
        return closed

    async def _rate(self, row: MatchRow, game: Match) -> None:
        try:
            await rate_match(self.store, row, game)
        except Exception:  # a rating must never stop the announcement; a restart retries
            log.exception("match %s: rating failed", row.match_id)

    # Restart ----------------------------------------------------------------------------

    async def resume(self) -> list[Notice]:
        """After a restart: announce what was stored but not announced; wake computers."""
        notices: list[Notice] = []
        await self.timers.resume()
        for row in await self.store.unrated_matches():
            try:
                await self._rate(row, (await self.store.load_match(row.match_id)).game)
            except Exception:
                log.exception("match %s cannot be rated", row.match_id)
        rows = [*await self.store.unannounced_matches(), *await self.store.active_matches()]
        for row in rows:
            try:
                stored = await self.load(row.match_id)
            except Exception:
                log.exception("match %s cannot be resumed", row.match_id)
                continue
            game = stored.game
            if row.announced_seq < len(game.history):
                before = Match(row.labels, row.settings, seed=row.seed)
                for text in (m.action for m in stored.moves[: row.announced_seq]):
                    before.apply(text)
                actions = list(game.history[row.announced_seq:])
                notices += await self._announce(stored, before, actions)
            else:
                if (row.status is MatchStatus.ACTIVE
                        and not await self.timers.someone_present(stored)
                        and not any(s.resigned for s in
                                    (await self.timers.stand_ins(row.match_id)).values())):
                    # Computers alone (left so before this rule, or by a crash in between):
                    # cancelled. A last player's resignation in a trio is finished instead.
                    notices += await self.timers.end_unattended(stored)
                    continue
                if (row.seats[game.current_player].kind is SeatKind.COMPUTER
                        or await self.timers.computer_keeps(row.match_id, game.current_player)):
                    notices.append(ComputerTurn(row.match_id, stored.next_seq))
                await self.timers.after_moves(stored)
        return notices


# Helpers --------------------------------------------------------------------------------


def _state(lobby: LobbyRow) -> LobbyState:
    try:
        return LobbyState.from_json(lobby.state)
    except (ValueError, TypeError, KeyError, SettingsError):
        log.warning("lobby %s: unreadable state, starting it afresh", lobby.lobby_id)
        return LobbyState(seats=[LobbySeat("human", lobby.creator_id)])


def _fill_computers(state: LobbyState) -> None:
    state.seats = [s for s in state.seats if s.kind == "human"][:1]
    while len(state.seats) < state.table.players:
        state.seats.append(LobbySeat("computer", level=state.level))


def _cycle(state: LobbyState, op: str) -> None:
    if op.startswith("level:"):
        level = op[6:]
        if level not in LEVELS:
            raise SettingsError(level)
        state.level = level
        return
    if op == "table":
        tables = list(Table)
        state.table = tables[(tables.index(state.table) + 1) % len(tables)]
        state.tours, state.preset, state.deal = None, "standard", None
    elif op == "tours":
        step = 6 if state.table.players == 3 else 2
        tours = state.settings().tour_count + step
        state.tours = tours if tours <= 12 else step
    elif op == "deal":
        presets = list(DEAL_PRESETS[state.table])
        current = state.preset if state.preset in presets else presets[-1]
        state.preset, state.deal = presets[(presets.index(current) + 1) % len(presets)], None
    elif op == "exchange":
        state.exchange = (state.exchange + 1) % 4
    elif op == "timer":
        steps = list(TIMER_STEPS)
        current = state.timer if state.timer in steps else None
        state.timer = steps[(steps.index(current) + 1) % len(steps)]
    state.settings()


def table_name(tr: Tr, table: Table) -> str:
    return {
        Table.DUEL: tr._("Table: 2 players, one against one"),
        Table.TRIO_LONE_ATTACKER: tr._("Table: 3 players — a lone attacker against two "
                                       "defenders"),
        Table.TRIO_LONE_DEFENDER: tr._("Table: 3 players — two attackers against a lone "
                                       "defender"),
        Table.TEAMS: tr._("Table: 4 players in two teams (seats 1 & 3 against 2 & 4)"),
    }[table]


def _op_action(op: str) -> Action | None:
    """Panel ops that are game steps: p<card>@x,y, pass, end, a<n>, x<card>."""
    try:
        if op.startswith("p") and op != "pass":
            card, _, cell = op[1:].partition("@")
            x, _, y = cell.partition(",")
            return Place(Card.parse(card), int(x), int(y))
        if op == "pass":
            return Pass()
        if op == "end":
            return EndTurn()
        if op.startswith("a") and op[1:].isdigit():
            return Announce(int(op[1:]))
        if op.startswith("x"):
            return Discard(Card.parse(op[1:]))
    except ValueError:
        return None
    return None


def _without_needless_end(game: Match, steps: Sequence[Action]) -> list[Action]:
    """Drop an ``EndTurn`` that a one-card ``/play`` adds when the card already ended the turn
    (the defender's last card, or the tour's end)."""
    if not steps or not isinstance(steps[-1], EndTurn) or len(steps) < 2:
        return list(steps)
    trial = game.clone()
    seat = trial.current_player
    try:
        for step in steps[:-1]:
            trial.apply(step)
    except IllegalMove:
        return list(steps)  # the check that follows explains what is wrong
    if trial.is_over or trial.current_player != seat or trial.tour.step_in_turn != 1:
        return list(steps[:-1])
    return list(steps)


def placements_to_steps(placements: Sequence[Placement], defender_turn: bool) -> list[Action]:
    steps: list[Action] = [Place(p.card, p.x, p.y) for p in placements]
    if defender_turn and len(steps) == 1:
        steps.append(EndTurn())
    return steps


def _echo(tr: Tr, actions: Sequence[Action], frame: object) -> str:
    """The answer to an accepted move: the steps as understood."""
    return "✓ " + (_steps_text(tr, actions, frame) or "")


def hand_title(tr: Tr, hand: Sequence[Card]) -> str:
    if not hand:
        return tr._("No cards left")
    return tr.n_("Your hand · {n} card", "Your hand · {n} cards", len(hand))


def _steps_text(tr: Tr, actions: Sequence[Action], frame: object) -> str:
    parts = []
    for a in actions:
        if isinstance(a, Place):
            parts.append(f"{a.card.pretty()} → {frame.label(a.x, a.y)}")  # type: ignore[attr-defined]
        elif isinstance(a, Pass):
            parts.append(tr._("pass"))
        elif isinstance(a, Announce):
            parts.append(tr.n_("exchange {n} card", "exchange {n} cards", a.count))
        elif isinstance(a, Discard):
            parts.append(tr._("exchange {card}", card=a.card.pretty()))
        elif isinstance(a, EndTurn) and not parts:
            parts.append(tr._("end the turn"))
    return ", ".join(parts)


def _illegal(tr: Tr, step: Action, frame: object, exc: IllegalMove) -> str:
    """The reply to a refused step, chosen by the engine's reason (:mod:`krendzu.illegal`);
    the step only picks the wording (a card placed or discarded, a pass, an exchange)."""
    if isinstance(exc, NotYourTurn | GameOver) and isinstance(step, Place):
        # The turn ended with an earlier card of the same command (an attacker's one card,
        # the opening card, a last card).
        return tr._("Your turn ends before {card}: play it in a turn of its own.",
                    card=step.card.pretty())
    if isinstance(exc, CardNotInHand):
        if isinstance(step, Discard):
            return tr._("You cannot exchange {card} now.", card=exc.card.pretty())
        return tr._("You do not hold {card}.", card=exc.card.pretty())
    if isinstance(exc, CellTaken | NotTouching):
        x, y = exc.cell
        label = frame.label(x, y) if frame.fits(x, y) else "?"  # type: ignore[attr-defined]
        if isinstance(exc, CellTaken):
            return tr._("{cell} is taken. Choose a free cell next to a card.", cell=label)
        return tr._("{card} cannot go to {cell}: a card must touch another card edge to edge.",
                    card=step.card.pretty() if isinstance(step, Place) else "?", cell=label)
    if isinstance(exc, WrongOpening):
        return tr._("The first card goes to M13.")
    if isinstance(exc, CannotPass) or (isinstance(exc, WrongPhase) and isinstance(step, Pass)):
        return tr._("You cannot pass now.")
    if isinstance(exc, WrongExchangeCount) or (isinstance(exc, WrongPhase)
                                               and isinstance(step, Announce)):
        return tr._("You cannot exchange that many cards now.")
    if isinstance(exc, WrongPhase) and isinstance(step, Discard):
        return tr._("You cannot exchange {card} now.", card=step.card.pretty())
    if isinstance(exc, WrongPhase) and isinstance(step, Place):
        return tr._("Cards are placed after the exchange.")
    log.debug("illegal step %s: %s", type(step).__name__, type(exc).__name__)
    return tr._("That move is not allowed now.")


__all__ = ["Actor", "Flow", "cards_text", "placements_to_steps"]
