"""The emoji reactions of "Play now" matches (issue 40): a player presses one of the fixed
faces (:mod:`chat.flow.views.reactions`) under their pool match's start or summary message,
and each other player of that match who has not turned reactions off gets one line, "Ann: 👍".

Nothing else passes between strangers, so the checks are strict: the match must be a pool
match the presser sits at (button data can be forged: anything else gets the answer an
expired button gets and sends nothing), and whoever turned reactions off neither gets nor
sends them (``/settings reactions=off`` in the private chat, or 🔕 under a received one; kept
in the store, so a restart keeps it), and nothing passes between two people once either
blocked the other. A flood is the admission's to stop: reactions count
against the per-person budget of information requests (chat/handlers/admission.py).
"""

from __future__ import annotations

from chat.flow.base import Actor
from chat.flow.parts import HoldsSharedParts
from chat.flow.views.reactions import REACTIONS, reaction_line
from chat.notices import Notice, Send
from chat.outcomes import Outcome
from storage import MatchRow, is_pool_chat


class Reactions(HoldsSharedParts):
    async def react(self, row: MatchRow, actor: Actor, index: int | None) -> Outcome:
        """Send the ``index``-th face to the other players of the pool match ``row``
        (``None``: the button named no face)."""
        tr = await self.people.user_tr(actor.user_id)
        if not is_pool_chat(row.chat_id) or row.seat_of(actor.user_id) is None \
                or index is None or not 0 <= index < len(REACTIONS):
            return Outcome(tr._("This button is not valid any more."))
        others = [s.user_id for s in row.seats
                  if s.user_id is not None and s.user_id != actor.user_id]
        off = await self.store.reactions_off([actor.user_id, *others])
        if actor.user_id in off:
            return Outcome(tr._("Your reactions are off: /settings reactions=on turns them "
                                "on."))
        # A block after the match (either way) ends the faces between the two as well.
        blocked = (await self.store.blocks_among([actor.user_id])).get(actor.user_id, set())
        name = await self.people.name_of(actor.user_id)
        notices: list[Notice] = []
        for other in others:
            if other in off or other in blocked:
                continue  # told nothing, and the sender is not told who turned them off
            text, keyboard = reaction_line(await self.people.user_tr(other), name, index)
            notices.append(Send(other, text, keyboard=keyboard, silent=True))
        return Outcome(tr._("Sent: {face}", face=REACTIONS[index]), notices)

    async def switch(self, actor: Actor, on: bool) -> Outcome:
        """Turn the presser's reactions on or off (for every pool match, from now on)."""
        tr = await self.people.see_user(actor, private=True)
        await self.store.set_reactions(actor.user_id, on)
        return Outcome(tr._("Reactions are on: your Play now opponents' 👍 and the like "
                            "reach you, and you may send them.") if on else
                       tr._("Reactions are off: you will neither get nor send them. "
                            "/settings reactions=on turns them on again."))

    async def are_on(self, user_id: int) -> bool:
        return user_id not in await self.store.reactions_off([user_id])
