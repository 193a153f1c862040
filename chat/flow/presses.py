"""A press on a private panel's button (or Rematch under a group's summary): the op is read
back by :mod:`chat.flow.views.codec` (which wrote it), then a step is played, a navigation
redraws the panel, a hint is thought out, a rematch is set up."""

from __future__ import annotations

from chat.flow.base import Actor, HintRequest
from chat.flow.broadcast import Broadcast
from chat.flow.games import Games
from chat.flow.lobbies import Lobbies
from chat.flow.locks import Locks
from chat.flow.matches import Matches
from chat.flow.people import People
from chat.flow.views import codec
from chat.notices import Outcome
from storage import MatchStatus, NotFound, Store


class Presses:
    def __init__(self, store: Store, locks: Locks, people: People, games: Games,
                 broadcast: Broadcast, matches: Matches, lobbies: Lobbies) -> None:
        self.store = store
        self.locks = locks
        self.people = people
        self.games = games
        self.broadcast = broadcast
        self.matches = matches
        self.lobbies = lobbies

    async def panel_press(self, match_id: int, seq: int, op: str, actor: Actor, *,
                          update_id: int | None = None, private: bool = True) -> Outcome:
        """A button on a private panel (or Rematch under a group's summary, ``private``
        False): navigation edits the panel, a step plays it.

        A press on a match the presser does not play gets the answer a match that does not
        exist gets: button data can be forged, and must not tell a stranger whether another
        chat's match exists, is running or is over."""
        tr = await self.people.see_user(actor, private=private)
        try:
            row = await self.store.get_match(match_id)
        except NotFound:
            row = None
        if row is None or row.seat_of(actor.user_id) is None:
            return Outcome(tr._("This button is not valid any more."))
        press = codec.decode_op(op)
        if isinstance(press, codec.Rematch):
            return await self.lobbies.rematch(row, actor)
        if isinstance(press, codec.Step):
            return await self.matches.play(match_id, actor, [press.action],
                                           update_id=update_id, expected_seq=seq,
                                           from_panel=True)
        async with self.locks.hold(row.chat_id, row.thread_id):
            stored = await self.games.load(match_id)
            seat = stored.row.seat_of(actor.user_id)
            if stored.row.status is not MatchStatus.ACTIVE:
                return Outcome(tr._("This match is over."))
            if seat is None:
                return Outcome(tr._("You are not playing in this match."))
            if seq != stored.next_seq or stored.game.current_player != seat:
                return Outcome(tr._("This panel is out of date: use the newest one."))
            names = await self.people.seat_names(stored.row, tr)
            hand = stored.game.observation(seat).tour.hand
            hint: HintRequest | None = None
            if isinstance(press, codec.AskHint):
                hint = self.matches.hint_request(stored, seat)
            elif not isinstance(press, codec.Show) or (press.card is not None
                                                       and press.card not in hand):
                return Outcome(tr._("This button is not valid any more."))
            if hint is None:
                assert isinstance(press, codec.Show)
                shown = self.games.shown(match_id, actor.user_id)
                return Outcome(None, [self.broadcast.panel(
                    stored, seat, actor.user_id, tr, names, shown, edit=True,
                    stage=press.stage, card=press.card, column=press.column)])
        # The suggestion is thought out without the chat's lock: the other players of the
        # chat need not wait for it.
        return Outcome(None, [await self.matches.hint_notice(stored, seat, actor.user_id,
                                                             request=hint)])
