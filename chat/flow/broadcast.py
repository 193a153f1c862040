"""Telling about a stored change: read what the words need, let :func:`announce` write them,
then remember what each new panel shows and time the next person's turn.

Also the one way a private panel is drawn outside an announcement (/back, /board, a
button that only navigates), so the panel's shown lines are always recorded the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from chat.flow.announce import Audience, Change, announce
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
from krendzu import Action, Card, Match
from storage import MatchRow, SeatKind, StoredMatch


class Broadcast:
    def __init__(self, people: People, games: Games, deadlines: Deadlines, *,
                 bot_username: str = "", app: AppLinks | None = None) -> None:
        self.bot_username = bot_username
        #: The Mini App's links (issue 29): its buttons on panels and board posts.
        self.app = app
        self.people = people
        self.games = games
        self.deadlines = deadlines
        #: Wakes the engine protocol's streams after each stored change (chat.flow.signals).
        self.signals = Signals()
        #: The scaled mode (chat/jobs.py): a stored change is announced by the announcement
        #: job deferred in the move's own transaction, not by the process that stored it, so
        #: :meth:`change` only times the next turn unless ``drain`` (the job itself) asks. A
        #: match's start (no moves: nothing for the job to find) is told at once as ever.
        self.by_jobs = False

    async def reader(self, row: MatchRow, tr: Tr) -> Reader:
        return Reader(tr, await self.people.seat_names(row, tr))

    async def change(self, stored: StoredMatch, before: Match | None,
                     actions: Sequence[Action], *, mover: int | None = None,
                     from_panel: bool = False, drain: bool = False, then: Card | None = None,
                     group_since: tuple[Match, Sequence[Action]] | None = None,
                     record: bool = True) -> list[Notice]:
        """Notices telling everyone about ``actions`` (applied to ``before``) and what next
        (:class:`~chat.flow.announce.Change` for ``then`` and ``group_since``). Without
        ``record`` the panels' lines are not remembered: the scaled mode's board job,
        which tells the group alone, leaves them to the announcement's."""
        row, game = stored.row, stored.game
        if self.by_jobs and actions and not drain:
            await self.deadlines.after_moves(stored)
            self.signals.changed(row.match_id)
            return []
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
        out = announce(Change(stored, before, actions, mover, from_panel, then, group_since),
                       Audience(group, players, await self.people.title_of(row.chat_id),
                                result, mover_shown, computer_next, self.bot_username,
                                await self.deadlines.seconds_left(stored), self.app))
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
