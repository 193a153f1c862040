"""What a player asks about a match without changing it: /hand, /board, /score, /export,
and everything again after they come back to a private chat they had blocked."""

from __future__ import annotations

import json

from chat.flow.broadcast import Broadcast
from chat.flow.deadlines import Deadlines
from chat.flow.games import Games
from chat.flow.people import People
from chat.flow.views.messages import board_text, hand_message, score_report
from chat.i18n import Tr
from chat.notices import BoardPicture, Notice, Send
from krendzu import export_record
from storage import StoredMatch


class Reports:
    def __init__(self, people: People, games: Games, deadlines: Deadlines,
                 broadcast: Broadcast) -> None:
        self.people = people
        self.games = games
        self.deadlines = deadlines
        self.broadcast = broadcast

    async def hand(self, stored: StoredMatch, user_id: int) -> Send:
        tr = await self.people.user_tr(user_id)
        seat = stored.row.seat_of(user_id)
        assert seat is not None
        return hand_message(stored, seat, user_id, tr, self.people.title_of(stored.row.chat_id))

    async def board(self, stored: StoredMatch, chat_id: int, thread_id: int | None,
                    user_id: int) -> list[Notice]:
        """``/board``: the public board in a group; the own panel in a private chat."""
        if chat_id > 0:
            seat = stored.row.seat_of(user_id)
            tr = await self.people.user_tr(user_id)
            names = await self.people.seat_names(stored.row, tr)
            if seat is not None and stored.game.current_player == seat:
                return [self.broadcast.panel(stored, seat, user_id, tr, names, [])]
            view = stored.game.observation(seat)
            return [Send(chat_id, board_text(tr, view, names), picture=BoardPicture(
                view, names, tr.language, outcome=await self.games.result(stored)))]
        tr = await self.people.chat_tr(chat_id)
        names = await self.people.seat_names(stored.row, tr)
        view = stored.game.observation(None)
        return [Send(chat_id, board_text(tr, view, names), thread_id=thread_id, silent=True,
                     group=True, picture=BoardPicture(view, names, tr.language,
                                                      outcome=await self.games.result(stored)))]

    async def score(self, stored: StoredMatch, tr: Tr) -> str:
        names = await self.people.seat_names(stored.row, tr)
        return score_report(stored.game, tr, names)

    def export(self, stored: StoredMatch) -> tuple[bytes, int]:
        """The record of finished tours only (a running tour's record holds the hands)."""
        record = export_record(stored.game)
        finished = [t for t in stored.game.tours if t.is_over]
        record["tours"] = record["tours"][: len(finished)]
        return json.dumps(record, ensure_ascii=False, indent=1).encode(), len(finished)

    async def welcome_back(self, user_id: int) -> list[Notice]:
        """A seated player who could not be written to pressed Start again: their hand in
        every match they play, and the panel where it is their turn, without asking."""
        notices: list[Notice] = []
        for stored in await self.games.my_matches(user_id):
            seat = stored.row.seat_of(user_id)
            if seat is None or stored.game.is_over:
                continue
            notices.append(await self.hand(stored, user_id))
            if (stored.game.current_player == seat
                    and not await self.deadlines.computer_keeps(stored.match_id, seat)):
                notices += await self.broadcast.panel_for(stored, seat, user_id)
        return notices
