"""The flow's one door: :class:`Flow` composes the modules of :mod:`chat.flow` and keeps the
methods the handlers, the application and the tests call. Each method only delegates; the
logic lives in the module named in its docstring."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass

from chat.flow.arenas import Arenas
from chat.flow.base import Actor, Decide, HintRequest, Locks, MatchLocks, begin_work
from chat.flow.broadcast import Broadcast
from chat.flow.caps import PAUSED, Caps
from chat.flow.deadlines import Deadlines
from chat.flow.endings import Endings
from chat.flow.engines import Engines
from chat.flow.games import Games, Read
from chat.flow.invites import Invites
from chat.flow.leagues import Leagues
from chat.flow.lobbies import Lobbies
from chat.flow.matches import Matches, Steps
from chat.flow.parts import SharedParts
from chat.flow.people import People
from chat.flow.pool import Pool
from chat.flow.presses import Presses
from chat.flow.reactions import Reactions
from chat.flow.reports import Reports
from chat.flow.restart import resume
from chat.flow.set_up_doors import SetUpDoors
from chat.flow.ticker import Ticker
from chat.flow.views.webapp import AppLinks
from chat.flow.watch import Watch
from chat.i18n import Catalogs, Tr
from chat.notices import Notice, Send
from chat.outcomes import Outcome
from krendzu import Action
from storage import Door, MatchRow, OperatingFigures, Store, StoredMatch


@dataclass(frozen=True, slots=True)
class OperatorFigures:
    """The owners' figures at a glance (/admin): people and chats known, matches started
    since a moment, and what is open and waiting now."""

    users: int
    chats: int
    started: int
    now: OperatingFigures

class Flow(SetUpDoors):
    """Lobbies and matches as plain async code over ``storage`` and ``krendzu``.

    Every entry point checks its input, takes the chat's lock, changes what is stored and
    returns an :class:`~chat.outcomes.Outcome`: a short answer for the actor and the notices
    for everyone else. No ``telegram`` here: tests call the flow directly."""

    def __init__(self, store: Store, catalogs: Catalogs, decide: Decide, *,
                 bot_username: str, clock: Callable[[], float] = time.time,
                 timer_grace: float = 60.0, max_matches_per_user: int = 3,
                 max_matches_per_chat: int = 5, locks: Locks | None = None,
                 engine_api_url: str | None = None, app_links: AppLinks | None = None,
                 announced_by_jobs: bool = False, panels_in_group: bool = False,
                 pool_computer_seconds: float = 30.0, pool_match: str = "", announce_to:
                 Callable[[list[Notice]], object] | None = None) -> None:
        """``announced_by_jobs``: who runs the announcer, chosen here once (the scaled mode's
        jobs, else this process's, handing its notices to ``announce_to``: :class:`Broadcast`);
        ``panels_in_group``: where a group that did not choose opens its panels (the bot's
        is ``KRENDZU_PANELS``, in the group by default; the flow's tests choose)."""
        self.store, self.catalogs = store, catalogs
        self.decide = decide
        self.bot_username = bot_username
        self.locks: Locks = locks or MatchLocks()
        self.people = People(store, catalogs, panels_in_group=panels_in_group)
        self.deadlines = Deadlines(store, clock, timer_grace)
        self.games = Games(store, self.people)
        self.broadcast = Broadcast(self.people, self.games, self.deadlines,
                                   bot_username=bot_username, app=app_links,
                                   by_jobs=announced_by_jobs, locks=self.locks,
                                   tell=announce_to)
        self.caps = Caps(store, self.people, per_user=max_matches_per_user,
                         per_chat=max_matches_per_chat)
        self.endings = Endings(store, self.locks, self.people, self.games, self.deadlines)
        parts = SharedParts(store, self.locks, self.people, self.games, self.deadlines,
                            self.broadcast)
        self.matches = Matches(parts, decide)
        self.reports = Reports(self.people, self.games, self.deadlines, self.broadcast)
        self.lobbies = Lobbies(parts, self.caps, bot_username=bot_username, clock=clock)
        self.invites = Invites(store, self.people, self.lobbies)
        #: Outside engines (issue 31): ``/engine``, ``/add @NAME``, their tokens.
        self.engines = Engines(store, self.people, api_url=engine_api_url,
                               revoked=self.broadcast.signals.wake_all)
        if engine_api_url is not None:
            self.lobbies.engines = self.engines
        #: "Play now" (issue 40): the pool shared by every chat, its matches and blocks.
        self.pool = Pool(parts, self.caps, clock=clock, computer_after=pool_computer_seconds,
                         match_args=pool_match.split())
        #: Arenas in groups (issue 40): a timed tournament of duels played privately.
        self.arenas = Arenas(parts, self.caps, clock=clock, bot_username=bot_username)
        #: Swiss leagues over days (issue 40): rounds paired by score, deadlines.
        self.leagues = Leagues(parts, self.caps, self.endings, clock=clock,
                               bot_username=bot_username)
        #: Spectators (issue 40): who may watch a match; a pool match's watch link off.
        self.watch = Watch(parts)
        #: Its fixed emoji reactions between strangers, which anyone may turn off.
        self.reactions = Reactions(parts)
        self.presses = Presses(parts, self.matches, self.lobbies, self.pool, self.reactions)
        #: Turn timers, /back, a seat handed over, idle set-ups (the job queue ticks it).
        self.ticker = Ticker(parts, self.matches, self.endings, self.lobbies)

    def lock(self, chat_id: int, thread_id: int | None) -> AbstractAsyncContextManager[None]:
        """The chat's (or forum topic's) lock: :mod:`chat.flow.base`."""
        return self.locks.hold(chat_id, thread_id)

    # People: chat.flow.people -------------------------------------------------------------

    def begin_request(self) -> None:
        """Called once per update, in its task, before any handler (chat.flow.people)."""
        self.people.begin_request()

    async def read_request(self, user_id: int, chat_id: int, thread_id: int | None, *,
                           update_id: int | None = None) -> tuple[bool, int | None] | None:
        return await self.games.read_request(user_id, chat_id, thread_id, update_id=update_id)

    async def see_user(self, actor: Actor, *, private: bool = False) -> Tr:
        return await self.people.see_user(actor, private=private)

    async def set_language(self, chat_id: int, actor: Actor, language: str) -> Tr:
        return await self.people.set_language(chat_id, actor, language)

    async def user_tr(self, user_id: int) -> Tr:
        return await self.people.user_tr(user_id)

    async def chat_tr(self, chat_id: int, fallback: str | None = None) -> Tr:
        return await self.people.chat_tr(chat_id, fallback)

    async def adopt_chat_language(self, chat_id: int, language: str) -> Tr:
        return await self.people.adopt_chat_language(chat_id, language)

    async def name_of(self, user_id: int) -> str:
        return await self.people.name_of(user_id)

    async def seat_names(self, row: MatchRow, tr: Tr) -> tuple[str, ...]:
        return await self.people.seat_names(row, tr)

    async def remember_title(self, chat_id: int, title: str | None) -> None:
        await self.people.remember_title(chat_id, title)

    async def started_bot(self, user_id: int) -> bool:
        """The user pressed Start: their private chat takes messages."""
        return await self.people.started_bot(user_id)

    async def bot_rights(self, chat_id: int, admin: bool, *, tell: bool = True) -> list[Notice]:
        """Whether the bot administers the group, as Telegram showed it (its membership
        update, or a push refused); the admins' one notice when it does not."""
        return list(await self.invites.bot_rights(chat_id, admin, tell=tell))

    async def unreachable(self, match_id: int, user_id: int) -> list[Notice]:
        """The group's line when a seated player's private chat refuses the bot."""
        return list(await self.invites.unreachable(match_id, user_id, self.bot_username))

    async def set_panels_in_group(self, chat_id: int, on: bool) -> None:
        """``/settings panels=group|private``."""
        await self.people.set_panels_in_group(chat_id, on)

    async def panels_in_group(self, chat_id: int) -> bool:
        return await self.people.panels_in_group(chat_id)

    async def was_unreachable(self, user_id: int) -> bool:
        return await self.people.was_unreachable(user_id)

    async def mark_unreachable(self, user_id: int) -> None:
        await self.people.mark_unreachable(user_id)

    # Matches: chat.flow.games, chat.flow.matches, chat.flow.presses -----------------------

    async def load(self, match_id: int) -> StoredMatch:
        return await self.games.load(match_id)

    async def by_number(self, match_id: int) -> StoredMatch | None:
        return await self.games.by_number(match_id)

    async def find_match(self, chat_id: int, thread_id: int | None,
                         user_id: int) -> StoredMatch | None:
        return await self.games.find_match(chat_id, thread_id, user_id)

    async def latest_match(self, chat_id: int, thread_id: int | None,
                           user_id: int) -> StoredMatch | None:
        return await self.games.latest_match(chat_id, thread_id, user_id)

    async def my_matches(self, user_id: int) -> list[StoredMatch]:
        return await self.games.my_matches(user_id)

    async def match_here(self, chat_id: int, thread_id: int | None) -> MatchRow | None:
        """The row of the chat's (topic's) match, as the request read it (Games.here)."""
        return await self.games.here(chat_id, thread_id)

    async def plays_in(self, match_id: int, user_id: int) -> bool:
        return await self.games.plays_in(match_id, user_id)

    async def play(self, match_id: int, actor: Actor, steps: Steps, *,
                   update_id: int | None = None, expected_seq: int | None = None,
                   door: Door = Door.TYPED, row: MatchRow | None = None,
                   echo: bool = True) -> Outcome:
        """A person's move, checked once and stored with its ``door``: the outcome's
        ``verdict`` says accepted (the stored numbers) or refused (why), whichever door
        asked; ``row`` and ``echo``: as :meth:`chat.flow.matches.Matches.play` says."""
        return await self.matches.play(match_id, actor, steps, update_id=update_id,
                                       expected_seq=expected_seq, door=door, row=row, echo=echo)

    async def panel_press(self, match_id: int, seq: int, op: str, actor: Actor, *,
                          chat_id: int | None = None,
                          update_id: int | None = None, private: bool = True) -> Outcome:
        return await self.presses.panel_press(match_id, seq, op, actor, update_id=update_id,
                                              private=private, chat_id=chat_id)

    async def panel_for(self, stored: StoredMatch, seat: int, user_id: int) -> list[Notice]:
        return await self.broadcast.panel_for(stored, seat, user_id)

    def hint_request(self, stored: StoredMatch, seat: int) -> HintRequest:
        return self.matches.hint_request(stored, seat)

    async def hint_notice(self, stored: StoredMatch, seat: int, user_id: int, *,
                          request: HintRequest | None = None,
                          actions: Sequence[Action] | None = None) -> Send:
        return await self.matches.hint_notice(stored, seat, user_id, request=request,
                                              actions=actions)

    async def suggest(self, view: object) -> list[Action]:
        return await self.matches.suggest(view)

    async def think(self, level: str, view: object, seed_text: str, *,
                    urgent: bool) -> list[Action]:
        return await self.matches.think(level, view, seed_text, urgent=urgent)

    async def computer_turn(self, match_id: int, seq: int) -> Outcome:
        begin_work()  # a computer's turn, in a task of its own: a unit of work
        return await self.matches.computer_turn(match_id, seq)

    async def play_for_seat(self, stored: StoredMatch, actions: Sequence[Action],
                            door: Door) -> Outcome:
        return await self.matches.play_for_seat(stored, actions, door)

    # Reports: chat.flow.reports -------------------------------------------------------------

    async def hand(self, stored: StoredMatch, user_id: int) -> Send:
        return await self.reports.hand(stored, user_id)

    async def board(self, stored: StoredMatch, chat_id: int, thread_id: int | None,
                    user_id: int) -> list[Notice]:
        return await self.reports.board(stored, chat_id, thread_id, user_id)

    async def open_turn(self, user_id: int, payload: str) -> list[Notice]:
        return await self.reports.open_turn(user_id, payload)

    async def score(self, stored: StoredMatch, tr: Tr) -> str:
        return await self.reports.score(stored, tr)

    async def moves(self, stored: StoredMatch, tr: Tr, tour: int | None = None) -> str:
        return await self.reports.moves(stored, tr, tour)

    async def export(self, stored: StoredMatch, tr: Tr) -> tuple[bytes, int]:
        return await self.reports.export(stored, tr)

    async def welcome_back(self, user_id: int) -> list[Notice]:
        return await self.reports.welcome_back(user_id)

    # Endings: chat.flow.endings -------------------------------------------------------------

    async def resign(self, stored: StoredMatch, actor: Actor, *,
                     update_id: int | None = None) -> Outcome:
        return await self.endings.resign(stored, actor, update_id=update_id)

    # Operators: /admin (chat/handlers/admin.py) ----------------------------------------------

    async def paused(self) -> bool:
        """Whether new matches are refused for maintenance (every process reads the store)."""
        return await self.store.switch(PAUSED) is not None

    async def set_paused(self, on: bool) -> None:
        await self.store.set_switch(PAUSED, "on" if on else None)

    async def operator_figures(self, since: float) -> OperatorFigures:
        users, chats, started = await self.store.totals(since)
        return OperatorFigures(users, chats, started, await self.store.operating_figures())

    async def running_chats(self) -> list[tuple[int, int | None]]:
        """Each chat (and forum topic) with a match being played, once."""
        return list(dict.fromkeys((row.chat_id, row.thread_id)
                                  for row in await self.store.active_matches()))

    async def cancel(self, stored: StoredMatch, actor: Actor, is_admin: bool) -> Outcome:
        return await self.endings.cancel(stored, actor, is_admin)

    async def close_chat(self, chat_id: int) -> int:
        return await self.endings.close_chat(chat_id)

    # Restart: chat.flow.restart -------------------------------------------------------------

    async def resume(self) -> list[Notice]:
        return await resume(self.store, self.games, self.deadlines, self.broadcast, self.endings)

    async def announce_pending(self, match_id: int, since: int | None = None, *,
                               board: int | None = None, record: bool = True,
                               read: Read | None = None) -> list[Notice]:
        """The scaled mode's announcement job runs the one announcer
        (:meth:`~chat.flow.broadcast.Broadcast.announce`): every stored move after the
        match's ``announced`` marker (or after move ``since``, which the job told already),
        told from the rows, the mover named as the process that stored the move would have;
        its last notice (:class:`~chat.notices.Announced`) says where the marker goes once
        delivered. ``board`` and ``record``: the board job's; ``read``: see Games.fresh.

        The next turn's clock starts when its panel is composed here, not when the move was
        stored: a panel that waited (its announcement behind a killed worker's) gets the
        whole turn (:meth:`~chat.flow.deadlines.Deadlines.start_late`)."""
        begin_work()
        stored = await self.games.fresh(match_id, read)  # another process stored the moves
        start = stored.row.announced_seq if since is None else since
        if record and start < len(stored.game.history):
            await self.deadlines.start_late(stored)
        return await self.broadcast.announce(stored, since, board=board, record=record)
