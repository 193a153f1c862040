"""Telling about a stored change: read what the words need, let :func:`announce` write them,
then remember what each new panel shows and time the next person's turn.

Also the one way a private panel is drawn outside an announcement (/back, /board, a
button that only navigates), so the panel's shown lines are always recorded the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from chat.flow.announce import Audience, Change, announce, stored_change
from chat.flow.base import Locks, MatchLocks, begin_work, work_memo
from chat.flow.deadlines import Deadlines
from chat.flow.games import Games
from chat.flow.people import People
from chat.flow.signals import Signals
from chat.flow.views import panel as panels
from chat.flow.views.messages import Reader
from chat.flow.views.texts import clock_text
from chat.flow.views.webapp import AppLinks
from chat.i18n import Tr
from chat.notices import DropPanel, EditPanel, Notice, Send
from krendzu import Card, Match
from storage import MatchRow, SeatKind, StoredMatch

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Untold:
    """A match whose stored moves this process's announcer has still to tell: the newest
    state its requests stored, the moves told (queued for delivery) up to ``since``, and
    the position after them when a request handed it over (else it is replayed), and the
    rows the storing requests read (names, languages, the turn's timer), which the
    announcer tells with rather than reading them again."""

    stored: StoredMatch
    since: int
    before: Match | None
    rows: dict[Hashable, Any]


class Broadcast:
    def __init__(self, people: People, games: Games, deadlines: Deadlines, *,
                 bot_username: str = "", app: AppLinks | None = None,
                 by_jobs: bool = False, locks: Locks | None = None,
                 tell: Callable[[list[Notice]], object] | None = None) -> None:
        self.bot_username = bot_username
        #: The Mini App's links (issue 29): its buttons on panels and board posts.
        self.app = app
        self.people = people
        self.games = games
        self.deadlines = deadlines
        #: Wakes the engine protocol's streams after each stored change (chat.flow.signals).
        self.signals = Signals()
        #: Who runs the announcer (:meth:`announce`), chosen once when the flow is built:
        #: the process that stored a move (the embedded mode), or the announcement job
        #: deferred in the move's own transaction (the scaled mode, chat/jobs/). The one
        #: difference between the modes: the announcer and the rows it reads are the same.
        self.by_jobs = by_jobs
        #: The embedded mode's announcer hands what it tells to this (the process's
        #: delivery queue): it runs in a task of its own per match (:meth:`stored`), so the
        #: request that stored a move ends at the store. ``None`` (a flow built without
        #: delivery, as the flow's own tests and the arena build it): the storing request
        #: runs the announcer and its outcome carries the notices.
        self.tell_to = tell
        #: The chats' locks: the announcer composes under the match's chat lock, as the
        #: move was stored, so the panels' lines and the turn's clock it writes follow the
        #: moves in their order.
        self.locks: Locks = locks or MatchLocks()
        self._untold: dict[int, _Untold] = {}
        self._announcers: dict[int, asyncio.Task[None]] = {}

    async def reader(self, row: MatchRow, tr: Tr) -> Reader:
        return Reader(tr, await self.people.seat_names(row, tr))

    async def started(self, stored: StoredMatch) -> list[Notice]:
        """A match's start (no moves: nothing for an announcement job to find), told at
        once in both modes."""
        return await self.tell(Change(stored, None, []))

    @property
    def later(self) -> bool:
        """Whether a stored move is told after the request that stored it, not in its
        outcome: by a job (the scaled mode) or by this process's announcer task."""
        return self.by_jobs or self.tell_to is not None

    async def stored(self, stored: StoredMatch, before: Match) -> list[Notice]:
        """A move was just stored (``stored`` after it, ``before`` the position it was made
        on); the caller holds the chat's lock. In the embedded mode the match is handed to
        this process's announcer (:meth:`_announcer`, a task per match that tells every
        move stored and not yet told, in order, as the scaled mode's job does); in the
        scaled mode the job deferred with the move runs it (:attr:`by_jobs`), and this only
        times the next turn. Without delivery (:attr:`tell_to`) the request tells it."""
        if self.by_jobs:
            await self.deadlines.after_moves(stored)
            self.signals.changed(stored.match_id)
            return []
        since = len(before.history)
        if self.tell_to is None:
            return await self.announce(stored, since, before=before)
        untold = self._untold.get(stored.match_id)
        rows = work_memo() or {}
        if untold is None:
            self._untold[stored.match_id] = _Untold(stored, since, before, dict(rows))
        else:
            untold.stored = stored
            untold.rows.update(rows)
            if untold.since == since:
                untold.before = before
        if stored.match_id not in self._announcers:
            # A context of its own: nothing of the request's (its memo of rows, a webhook
            # request's held notices) follows the announcer; what it tells is queued when
            # told, and a kill before that leaves the marker behind for the restart.
            self._announcers[stored.match_id] = asyncio.create_task(
                self._announcer(stored.match_id, stored.row.chat_id, stored.row.thread_id),
                context=contextvars.Context())
        return []

    async def _announcer(self, match_id: int, chat_id: int, thread_id: int | None) -> None:
        """The embedded mode's caller of the one announcer (:meth:`announce`): under the
        chat's lock, the moves the match's requests stored since those told, from the
        rows, handed to delivery in order; until none is left. Moves stored while it waits
        for the lock are told together, as the scaled mode's job tells them. Whatever stops
        it (a failure, the shutdown), the match is let go: the marker stays behind the log,
        for the restart, and the match's next move starts its announcer anew."""
        try:
            while True:
                async with self.locks.hold(chat_id, thread_id):
                    untold = self._untold.get(match_id)
                    if untold is None or untold.since >= len(untold.stored.game.history):
                        # Let go under the lock: a move stored after it starts a new one.
                        self._untold.pop(match_id, None)
                        self._announcers.pop(match_id, None)
                        return
                    begin_work(untold.rows)
                    untold.rows = {}
                    stored = untold.stored
                    notices = await self.announce(stored, untold.since, before=untold.before)
                    untold.since, untold.before = len(stored.game.history), None
                    assert self.tell_to is not None
                    self.tell_to(notices)
        except Exception:
            log.exception("match %s: the stored moves could not be announced", match_id)
        finally:
            if self._announcers.get(match_id) is asyncio.current_task():
                self._untold.pop(match_id, None)
                self._announcers.pop(match_id, None)

    def announcing(self) -> bool:
        """Whether the announcer has moves to tell still (tests wait for it to finish)."""
        return bool(self._announcers)

    async def told(self) -> None:
        """Wait until the announcer has handed every stored move to delivery (stopping)."""
        while self._announcers:
            await asyncio.gather(*self._announcers.values(), return_exceptions=True)

    async def close(self, *, within: float = 0.0) -> None:
        """Stop the announcer (at shutdown), after letting it tell for up to ``within``
        seconds: what it had not told stays behind the marker, for the restart."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.told(), within)
        tasks = list(self._announcers.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def announce(self, stored: StoredMatch, since: int | None = None, *,
                       before: Match | None = None, board: int | None = None,
                       record: bool = True) -> list[Notice]:
        """The one announcer: every stored move after the match's ``announced`` marker (or
        after move ``since``), told from the rows (who moved, through which door, the
        position before: :func:`~chat.flow.announce.stored_change`), whoever calls it: the
        process that stored them (:meth:`stored`), the scaled mode's announcement job
        (:meth:`chat.flow.Flow.announce_pending`) or the restart
        (:func:`chat.flow.restart.resume`). Its last notice
        (:class:`~chat.notices.Announced`) says where the marker goes once delivered.
        ``before``: the position after move ``since`` when the caller holds it; ``board``
        and ``record``: the scaled mode's board job's (:func:`stored_change`, :meth:`tell`).
        """
        start = stored.row.announced_seq if since is None else since
        if start >= len(stored.game.history):
            return []
        return await self.tell(stored_change(stored, start, before=before, board=board),
                               record=record)

    async def tell(self, change: Change, *, record: bool = True) -> list[Notice]:
        """Notices telling everyone about ``change`` and what next. Without ``record`` the
        panels' lines are not remembered: the scaled mode's board job, which tells the
        group alone, leaves them to the announcement's."""
        stored, mover = change.stored, change.mover
        row, game = stored.row, stored.game
        group = await self.reader(row, await self.people.chat_tr(row.chat_id))
        players: dict[int, Reader] = {}
        for seat in row.seats:
            if seat.user_id is not None and seat.user_id not in players:
                players[seat.user_id] = await self.reader(
                    row, await self.people.user_tr(seat.user_id))
        result = await self.games.result(stored)
        current = game.current_player
        computer_next = not game.is_over and (
            row.seats[current].kind is SeatKind.COMPUTER
            or await self.deadlines.computer_keeps(row.match_id, current))
        mover_shown: list[str] = []
        if mover is not None and any(s.kind is SeatKind.HUMAN and s.user_id == mover
                                     for s in row.seats):
            # What the mover's panel showed becomes the record of their move.
            mover_shown = await self.games.shown(row.match_id, mover)
        # The next deadline first: the post and the panel show its clock.
        await self.deadlines.after_moves(stored)
        in_group = await self.people.panels_in_group(row.chat_id)
        out = announce(change,
                       Audience(group, players, await self.people.title_of(row.chat_id),
                                result, mover_shown, computer_next, self.bot_username,
                                await self.deadlines.seconds_left(stored), self.app,
                                in_group=in_group,
                                push=in_group and await self.people.may_push(row.chat_id)))
        shown: dict[int, list[str] | None] = {}
        if mover is not None and mover_shown:
            shown[mover] = None
        shown.update(out.panels)
        notices = out.notices
        if record:
            notices, later = with_lines(notices, shown)
            await self.games.show(row.match_id, shown, written=later)
        self.signals.changed(row.match_id)
        return notices

    async def panel(self, stored: StoredMatch, seat: int, user_id: int, tr: Tr,
                    names: Sequence[str], lines: Sequence[str], *, edit: bool = False,
                    stage: str = "", card: Card | None = None,
                    column: int | None = None, reminder: bool = False) -> Notice:
        """The private panel of the player to move, its shown lines remembered."""
        left = await self.deadlines.seconds_left(stored)
        notice = panels.panel(stored, seat, user_id, tr, names, lines,
                              await self.people.title_of(stored.row.chat_id), edit=edit,
                              stage=stage, card=card, column=column,
                              clock=clock_text(tr, left, panel=True, reminder=reminder)
                              if left else "", app=self.app)
        await self.games.show(stored.match_id, {user_id: panels.shown(lines)})
        return notice

    async def panel_for(self, stored: StoredMatch, seat: int, user_id: int) -> list[Notice]:
        """A fresh panel for the player to move (after /back)."""
        tr = await self.people.user_tr(user_id)
        names = await self.people.seat_names(stored.row, tr)
        return [await self.panel(stored, seat, user_id, tr, names, [])]


def with_lines(notices: Sequence[Notice], shown: Mapping[int, list[str] | None]
               ) -> tuple[list[Notice], set[int]]:
    """``notices`` with the panels' lines (``shown``, by user) given to the notice whose
    write remembers that user's panel anyway (a new panel's :class:`Send`, a dropped
    panel): stored with it, one write where there were two; and the users so served.
    The others' lines (an edited panel's, an ephemeral one's) are written at once."""
    out = dropped_with_record(notices)
    later: set[int] = set()
    for i in reversed(range(len(out))):
        notice = out[i]
        if isinstance(notice, Send) and notice.panel_of is not None:
            user = notice.panel_of[1]
            if user not in later and (lines := shown.get(user)) is not None:
                out[i] = replace(notice, lines=tuple(lines))
                later.add(user)
        elif isinstance(notice, Send) and notice.drops_panel:
            if notice.chat_id not in later and shown.get(notice.chat_id, []) is None:
                later.add(notice.chat_id)  # forgotten with the panel, in its write
        elif isinstance(notice, DropPanel):
            user = notice.user_id
            if user not in later and user in shown and shown[user] is None:
                out[i] = replace(notice, forget_lines=True)
                later.add(user)
    return out, later


def dropped_with_record(notices: Sequence[Notice]) -> list[Notice]:
    """``notices`` with a typed move's :class:`DropPanel` of its mover folded into the
    record sent to them next (:attr:`Send.drops_panel`): the panel is forgotten in the
    write that notes the record, one write where there were two. The old panel is retired
    just after the record goes out rather than just before it."""
    out = list(notices)
    folded: set[int] = set()
    for i, notice in enumerate(out):
        if not isinstance(notice, DropPanel):
            continue
        for j in range(i + 1, len(out)):
            later = out[j]
            if isinstance(later, Send) and later.chat_id == notice.user_id:
                if (later.match_id == notice.match_id and later.panel_of is None
                        and later.told is not None and later.replaces is None):
                    out[j] = replace(later, drops_panel=True, replaces=notice.note)
                    folded.add(i)
                break
            if isinstance(later, DropPanel | EditPanel) and later.user_id == notice.user_id:
                break
    return [n for i, n in enumerate(out) if i not in folded]
