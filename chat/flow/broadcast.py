"""Telling about a stored change: read what the words need, let :func:`announce` write them,
then remember what each new panel shows and time the next person's turn.

Also the one way a private panel is drawn outside an announcement (/back, /board, a
button that only navigates), so the panel's shown lines are always recorded the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from chat.flow.announce import Audience, Change, announce, stored_change
from chat.flow.deadlines import Deadlines
from chat.flow.games import Games
from chat.flow.people import People
from chat.flow.signals import Signals
from chat.flow.views import panel as panels
from chat.flow.views.messages import Reader
from chat.flow.views.texts import clock_text
from chat.flow.views.webapp import AppLinks
from chat.i18n import Tr
from chat.notices import Notice
from krendzu import Card, Match
from storage import MatchRow, SeatKind, StoredMatch


class Broadcast:
    def __init__(self, people: People, games: Games, deadlines: Deadlines, *,
                 bot_username: str = "", app: AppLinks | None = None,
                 by_jobs: bool = False) -> None:
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

    async def reader(self, row: MatchRow, tr: Tr) -> Reader:
        return Reader(tr, await self.people.seat_names(row, tr))

    async def started(self, stored: StoredMatch) -> list[Notice]:
        """A match's start (no moves: nothing for an announcement job to find), told at
        once in both modes."""
        return await self.tell(Change(stored, None, []))

    async def stored(self, stored: StoredMatch, before: Match) -> list[Notice]:
        """A move was just stored (``stored`` after it, ``before`` the position it was made
        on): the embedded mode runs the announcer here, in the storing request's task, so
        that the reply and the board keep their order; in the scaled mode the job deferred
        with the move runs it (:attr:`by_jobs`), and this only times the next turn."""
        if self.by_jobs:
            await self.deadlines.after_moves(stored)
            self.signals.changed(stored.match_id)
            return []
        return await self.announce(stored, len(before.history), before=before)

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
        if record:
            await self.games.show(row.match_id, shown)
        self.signals.changed(row.match_id)
        return out.notices

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
