"""What a player asks about a match without changing it: /hand, /board, /score, /export,
and everything again after they come back to a private chat they had blocked."""

from __future__ import annotations

import json

from chat.describe import next_text, tour_moves, tour_over_line
from chat.flow.broadcast import Broadcast
from chat.flow.deadlines import Deadlines
from chat.flow.games import Games
from chat.flow.people import People
from chat.flow.views.codec import parse_turn_payload
from chat.flow.views.messages import board_text, hand_message, moves_report, score_report
from chat.i18n import Tr
from chat.notices import BoardPicture, Notice, Send
from krendzu import export_record
from storage import MatchStatus, StoredMatch


def record_ids(seats: int) -> tuple[str, ...]:
    """The exported record's player ids, by seat: ``p1`` … ``p4``."""
    return tuple(f"p{seat + 1}" for seat in range(seats))


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
        title = await self.people.title_of(stored.row.chat_id)
        return hand_message(stored, seat, user_id, tr, title)

    async def board(self, stored: StoredMatch, chat_id: int, thread_id: int | None,
                    user_id: int) -> list[Notice]:
        """``/board``: the public board in a group; the own panel in a private chat."""
        if chat_id > 0:
            seat = stored.row.seat_of(user_id)
            tr = await self.people.user_tr(user_id)
            names = await self.people.seat_names(stored.row, tr)
            if seat is not None and stored.game.current_player == seat:
                shown = await self.games.shown(stored.match_id, user_id)
                return [await self.broadcast.panel(stored, seat, user_id, tr, names, shown)]
            view = stored.game.observation(seat)
            return [Send(chat_id, board_text(tr, view, names), picture=BoardPicture(
                view, names, tr.language, outcome=await self.games.result(stored)))]
        tr = await self.people.chat_tr(chat_id)
        names = await self.people.seat_names(stored.row, tr)
        view = stored.game.observation(None)
        return [Send(chat_id, board_text(tr, view, names), thread_id=thread_id, silent=True,
                     group=True, picture=BoardPicture(view, names, tr.language,
                                                      outcome=await self.games.result(stored)))]

    async def open_turn(self, user_id: int, payload: str) -> list[Notice]:
        """``/start t<match>`` from a board post's button: the player's panel at the bottom
        of the private chat (their turn), else their hand and the board; anyone else is told
        only that they do not play there."""
        tr = await self.people.user_tr(user_id)
        match_id = parse_turn_payload(payload)
        stored = await self.games.by_number(match_id) if match_id is not None else None
        if stored is None or stored.row.seat_of(user_id) is None:
            return [Send(user_id, tr._("You are not playing in this match."))]
        if stored.row.status is not MatchStatus.ACTIVE:
            return [Send(user_id, tr._("This match is over."))]
        seat = stored.row.seat_of(user_id)
        if stored.game.current_player == seat:
            return await self.board(stored, user_id, None, user_id)
        names = await self.people.seat_names(stored.row, tr)
        return [await self.hand(stored, user_id),
                Send(user_id, next_text(tr, stored.game.observation(None), names))]

    async def score(self, stored: StoredMatch, tr: Tr) -> str:
        names = await self.people.seat_names(stored.row, tr)
        return score_report(stored.game, tr, names)

    async def moves(self, stored: StoredMatch, tr: Tr, tour: int | None = None) -> str:
        """``/moves [T]``: tour T's numbered moves (default the tour being played, or the
        last one of a finished match). Placed cards and exchange counts only: it may be
        answered anywhere."""
        game = stored.game
        if tour is not None and not 1 <= tour <= len(game.tours):
            return tr.n_("Tour {t} has not been dealt yet: there is {n} tour so far.",
                         "Tour {t} has not been dealt yet: there are {n} tours so far.",
                         len(game.tours), t=tour)
        names = await self.people.seat_names(stored.row, tr)
        index = game.tour_index if tour is None else tour - 1
        return moves_report(game, index, tr, names)

    async def export(self, stored: StoredMatch, tr: Tr) -> tuple[bytes, int]:
        """The record of finished tours only (a running tour's record holds the hands), in
        ``tr``'s language.

        Seats are named ``p1``, ``p2``, … in the record's ``players`` (and wherever it
        names a player): opaque, stable for the match, and unlike the engine's own names
        (``u<Telegram id>``) they say nothing about who the person is on Telegram. The
        extension field ``names`` gives each id its display name, and each tour's ``log``
        its numbered moves as ``/moves`` words them; the importer ignores both."""
        ids = record_ids(len(stored.row.seats))
        # A person without a stored name is named by their seat's id, not their user id.
        names = tuple(ids[seat.seat] if name == str(seat.user_id) else name for seat, name in
                      zip(stored.row.seats, await self.people.seat_names(stored.row, tr),
                          strict=True))
        record = export_record(stored.game, players=ids)
        finished = [t for t in stored.game.tours if t.is_over]
        record["names"] = dict(zip(ids, names, strict=True))
        record["tours"] = record["tours"][: len(finished)]
        for index, raw in enumerate(record["tours"]):
            exchange, moves = tour_moves(tr, stored.game.tours[index], names)
            raw["log"] = [*exchange, *moves,
                          tour_over_line(tr, stored.game, index, names)]
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
