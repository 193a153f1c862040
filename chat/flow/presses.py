"""A press on a private panel's button (or Rematch under a group's summary): the op is read
back by :mod:`chat.flow.views.codec` (which wrote it), then a step is played, a navigation
redraws the panel, a hint is thought out, a rematch is set up."""

from __future__ import annotations

from chat.flow.base import Actor, HintRequest
from chat.flow.lobbies import Lobbies
from chat.flow.matches import Matches
from chat.flow.parts import HoldsSharedParts, SharedParts
from chat.flow.pool import Pool
from chat.flow.reactions import Reactions
from chat.flow.views import codec
from chat.flow.views import panel as panels
from chat.flow.views.reactions import is_reaction, reaction_of
from chat.i18n import Tr
from chat.outcomes import Outcome
from storage import Door, MatchRow, MatchStatus, NotFound


class Presses(HoldsSharedParts):
    def __init__(self, parts: SharedParts, matches: Matches, lobbies: Lobbies,
                 pool: Pool, reactions: Reactions) -> None:
        super().__init__(parts)
        self.matches = matches
        self.lobbies = lobbies
        self.pool = pool
        self.reactions = reactions

    async def panel_press(self, match_id: int, seq: int, op: str, actor: Actor, *,
                          update_id: int | None = None, private: bool = True,
                          chat_id: int | None = None) -> Outcome:
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
        press = codec.decode_op(op)
        if isinstance(press, codec.OpenPanel):
            if row is None or row.chat_id != chat_id:  # forged, or another chat's
                return Outcome(tr._("This button is not valid any more."))
            return await self.open_panel(row, actor, tr)
        if row is None or row.seat_of(actor.user_id) is None:
            return Outcome(tr._("This button is not valid any more."))
        if isinstance(press, codec.Rematch):
            return await self.lobbies.rematch(row, actor)
        if isinstance(press, codec.Block):
            return await self.pool.block(row, actor)
        if is_reaction(op):
            return await self.reactions.react(row, actor, reaction_of(op))
        if isinstance(press, codec.Step):
            # The hint's Play it is pressed under the hint, not on the panel: its move is
            # told like a typed one (a new message below, the hint's button gone).
            # A first card whose key named the second one (``then``): the panel the move
            # redraws asks for that card's cell at once, so a two-card turn is four taps
            # (the announcement draws it, in the scaled mode the job's too).
            return await self.matches.play(match_id, actor, press.actions,
                                           update_id=update_id, expected_seq=seq,
                                           door=Door.HINT if press.suggested
                                           else Door.BUTTON, then=press.then)
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
                if press.second is not None and (press.second not in hand
                                                 or press.second == press.card):
                    return Outcome(tr._("This button is not valid any more."))
                shown = await self.games.shown(match_id, actor.user_id)
                stage = panels.then_stage(press.second) if press.second else press.stage
                return Outcome(None, [await self.broadcast.panel(
                    stored, seat, actor.user_id, tr, names, shown, edit=True,
                    stage=stage, card=press.card, column=press.column)])
        # The suggestion is thought out without the chat's lock: the other players of the
        # chat need not wait for it.
        return Outcome(None, [await self.matches.hint_notice(stored, seat, actor.user_id,
                                                             request=hint, seq=seq)])

    async def open_panel(self, row: MatchRow, actor: Actor, tr: Tr) -> Outcome:
        """The board post's "your move" pressed in a group whose panels open there (issue
        42): the presser's panel, as a message to them alone (the door makes it the
        ephemeral answer to the press). Anyone else gets a short answer and nothing else:
        whoever is not seated, or not to move, learns nothing of any hand."""
        async with self.locks.hold(row.chat_id, row.thread_id):
            stored = await self.games.load(row.match_id)
            seat = stored.row.seat_of(actor.user_id)
            if stored.row.status is not MatchStatus.ACTIVE or stored.game.is_over:
                return Outcome(tr._("This match is over."))
            if seat is None:
                return Outcome(tr._("You are not playing in this match."))
            if stored.game.current_player != seat:
                names = await self.people.seat_names(stored.row, tr)
                return Outcome(tr._("Not your turn: {name} moves.",
                                    name=names[stored.game.current_player]))
            names = await self.people.seat_names(stored.row, tr)
            return Outcome(None, [await self.broadcast.panel(stored, seat, actor.user_id, tr,
                                                             names, [])])
