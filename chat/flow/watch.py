"""Spectators (issue 40): who may watch a match through the Mini App, and a pool match's
players turning its watch link off.

Anyone holding a match's link sees its public board (chat/miniapp/: never a hand, the
seated player's own aside). A group's match is the group's business, and its board post
carries the link (chat/flow/announce.py). A pool match is played by strangers: each gets
the link to share (:func:`chat.flow.views.messages.watch_offer`) and any one of them may
close the match to spectators for good (stored: every process and a restart agree). From
then on the Mini App shows that match to its players alone.
"""

from __future__ import annotations

from chat.flow.base import Actor
from chat.flow.parts import HoldsSharedParts
from chat.notices import Notice, Send
from chat.outcomes import Outcome
from storage import MatchRow, NotFound, is_pool_chat


class Watch(HoldsSharedParts):
    async def open_to(self, row: MatchRow, user_id: int) -> bool:
        """Whether ``user_id`` may see the match: a player always; anyone else unless it is
        a pool match one of its players closed."""
        if row.seat_of(user_id) is not None or not is_pool_chat(row.chat_id):
            return True
        return not await self.store.watch_is_off(row.match_id)

    async def turn_off_mine(self, actor: Actor) -> Outcome:
        """``/settings watch=off`` in the private chat: the watch link of every pool match
        the person plays now turned off (as 🙈 under its start message would)."""
        rows = [row for row in await self.store.matches_of_user(actor.user_id)
                if is_pool_chat(row.chat_id)]
        if not rows:
            tr = await self.people.user_tr(actor.user_id)
            return Outcome(tr._("You are not playing a Play now match: a watch link is turned "
                                "off during one."))
        outcomes = [await self.turn_off(actor, str(row.match_id)) for row in rows]
        # Said as 🙈's alert is: the reply is given although the other players are told.
        return Outcome(outcomes[-1].reply, [n for o in outcomes for n in o.notices],
                       alert=outcomes[-1].alert)

    async def turn_off(self, actor: Actor, match: str) -> Outcome:
        """🙈 under a pool match's start message (``match``: the match id the button names,
        untrusted): the match is closed to spectators and its other players are told. A
        button of a match the presser does not play is answered as an invalid one."""
        tr = await self.people.user_tr(actor.user_id)
        try:
            row = await self.store.get_match(int(match)) if match.isdigit() and \
                len(match) < 13 else None
        except NotFound:
            row = None
        if row is None or not is_pool_chat(row.chat_id) or row.seat_of(actor.user_id) is None:
            return Outcome(tr._("This button is not valid any more."))
        if not await self.store.turn_watch_off(row.match_id, actor.user_id):
            return Outcome(tr._("The watch link of this match is off already."))
        # A spectator's long poll waiting on this match wakes up, and is refused now.
        self.broadcast.signals.changed(row.match_id)
        name = await self.people.name_of(actor.user_id)
        notices: list[Notice] = []
        for other in {s.user_id for s in row.seats} - {actor.user_id, None}:
            assert other is not None
            otr = await self.people.user_tr(other)
            notices.append(Send(other, otr._(
                "🙈 {name} turned the watch link off: only the players can open this match "
                "now.", name=name)))
        return Outcome(tr._("🙈 The watch link is off: only the players can open this match "
                            "now."), notices, alert=True)
