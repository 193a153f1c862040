"""The "Play now" pool (issue 40): a rated opponent from anywhere.

``/playnow`` (or the greeting's button) puts a person in the pool shared by every chat and
process (the store's ``pool`` table, one entry each); ``/playnow`` again, or Leave the
queue, takes them out. Every tick of the job queue, and every join, asks
:func:`tournaments.pool.match_pool` whom to seat (pairing is that pure function's: windows
by rating that widen with the wait, never two people of whom one blocked the other) and
starts those matches; whoever waited long enough is offered, once, the computer level of
their strength (:data:`chat.ratings.POOL_LEVELS`).

A pool match is played between strangers, each in their own private chat, and has a chat of
its own that is no Telegram chat (:func:`storage.pool_chat_id`): the announcer tells it as a
group match whose board posts and summaries go nowhere (delivery drops them), so each player
follows the match on their private panel and gets the summary privately, with 🚫 Block under
it. Players see each other's display name and pool rating, never a username or a link, and
nothing passes between them but the moves.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Sequence

from chat.describe import level_label
from chat.flow.base import Actor
from chat.flow.caps import Caps
from chat.flow.parts import HoldsSharedParts, SharedParts
from chat.flow.views import codec
from chat.flow.views.messages import watch_offer
from chat.flow.views.reactions import reaction_row
from chat.i18n import Tr
from chat.lobby_model import DEFAULT_GROUP_TIMER, LobbyState, apply_new_args
from chat.model import LEVEL_CODES, Button, InputError
from chat.notices import Notice, Send
from chat.outcomes import Outcome
from chat.ratings import POOL_LEVELS, pool_rating
from krendzu import Settings, SettingsError, Table
from storage import ActiveMatchExists, MatchRow, PoolRow, SeatSpec, is_pool_chat, pool_chat_id
from tournaments.pool import PoolEntry, PoolGroup, PoolSettings, TableKind, match_pool

log = logging.getLogger(__name__)

#: A wait ends after this many seconds: someone who queued and went away is never paired
#: with a person who would then wait out their timeouts.
MAX_WAIT = 600.0

#: The engine's table for each table the pool fills (a trio: the lone attacker's).
TABLES = {TableKind.DUEL: Table.DUEL, TableKind.TRIO: Table.TRIO_LONE_ATTACKER,
          TableKind.TEAMS: Table.TEAMS}


class Pool(HoldsSharedParts):
    def __init__(self, parts: SharedParts, caps: Caps, *, clock: Callable[[], float],
                 computer_after: float = 30.0, match_args: Sequence[str] = ()) -> None:
        """``computer_after``: seconds of waiting before the computer offer
        (``KRENDZU_POOL_COMPUTER_SECONDS``); ``match_args``: the ``/new`` words of every
        pool match (``KRENDZU_POOL_MATCH``; the group's defaults and turn timer without)."""
        super().__init__(parts)
        self.caps = caps
        self.clock = clock
        self.settings = PoolSettings(computer_after=computer_after, levels=POOL_LEVELS)
        self.match_args = tuple(match_args)

    def match_state(self, table: Table, *, private: bool) -> tuple[LobbyState, Settings]:
        """The table and settings of a pool match: the configured words (the group's turn
        timer unless they say otherwise; against the computer, no timer), a deal preset
        the table does not have left at its standard one."""
        state = LobbyState(table=table, private=private,
                           timer=None if private else DEFAULT_GROUP_TIMER)
        with contextlib.suppress(InputError):  # words this table cannot play (tours=2 at a
            apply_new_args(state, list(self.match_args), private=private)  # trio): its own
        state.table = table
        try:
            return state, state.settings()
        except SettingsError:
            state.preset, state.deal = "standard", None
        try:
            return state, state.settings()
        except SettingsError:
            return state, LobbyState(table=table).settings()

    async def toggle(self, actor: Actor, args: Sequence[str]) -> Outcome:
        """``/playnow [duel|trio|teams]`` in the private chat: join the pool, or leave it
        when already in it (whatever table was asked for)."""
        tr = await self.people.see_user(actor, private=True)
        if await self.store.leave_pool(actor.user_id):
            return Outcome(tr._("You left the queue."))
        return await self.join(actor, args, tr)

    async def join(self, actor: Actor, args: Sequence[str], tr: Tr) -> Outcome:
        wanted = (args[0].lower() if args else TableKind.DUEL.value)[:20]
        if wanted not in {kind.value for kind in TableKind}:
            return Outcome(tr._("Unknown table “{value}”: /playnow duel, trio or teams.",
                                value=wanted))
        refusal = await self.caps.refusal(None, [actor.user_id], actor.user_id, tr)
        if refusal is not None:
            return Outcome(refusal)
        rating = pool_rating((await self.store.ratings_of([actor.user_id])).get(actor.user_id))
        if not await self.store.join_pool(actor.user_id, wanted, rating, self.clock()):
            return Outcome(tr._("You are already in the queue."))
        seconds = round(self.settings.computer_after)
        waiting = Send(actor.user_id, "\n".join([
            tr._("⚡ Looking for an opponent of your strength (rating {rating}).",
                 rating=rating),
            tr.n_("If nobody is free within {n} second, you may play the computer.",
                  "If nobody is free within {n} seconds, you may play the computer.",
                  seconds)]),
            keyboard=[[Button(tr._("Leave the queue"), codec.pool_data("leave"))]])
        return Outcome(None, [waiting, *await self.tick()])

    async def leave(self, actor: Actor) -> Outcome:
        """Leave the queue (its button)."""
        tr = await self.people.user_tr(actor.user_id)
        if await self.store.leave_pool(actor.user_id):
            return Outcome(tr._("You left the queue."))
        return Outcome(tr._("You are not in the queue."))

    async def tick(self) -> list[Notice]:
        """Seat whom the pool pairs now, and make the computer offers that are due."""
        entries = await self.store.pool_entries()
        if not entries:
            return []
        now = self.clock()
        notices: list[Notice] = []
        for entry in [e for e in entries if now - e.joined_at > MAX_WAIT]:
            entries.remove(entry)
            if await self.store.leave_pool(entry.user_id):
                tr = await self.people.user_tr(entry.user_id)
                notices.append(Send(entry.user_id, tr.n_(
                    "Nobody was found within {n} minute: you left the queue. /playnow "
                    "tries again.",
                    "Nobody was found within {n} minutes: you left the queue. /playnow "
                    "tries again.", round(MAX_WAIT / 60)), keyboard=[[Button(
                        tr._("⚡ Play now"), codec.pool_data())]]))
        blocks = await self.store.blocks_among([e.user_id for e in entries])
        waiting = [PoolEntry(e.user_id, e.rating, TableKind(e.table), e.joined_at,
                             frozenset(blocks.get(e.user_id, ()))) for e in entries]
        groups, offers = match_pool(waiting, now, self.settings)
        by_user = {e.user_id: e for e in entries}
        for group in groups:
            try:
                notices += await self.seat(group, [by_user[p] for p in group.players])
            except Exception:  # one table's failure never holds the others (nor the tick)
                log.exception("the pool could not seat %s", group.players)
        for offer in offers:
            if by_user[offer.player].offered is None and \
                    await self.store.offer_computer(offer.player, offer.level):
                notices.append(await self.offer(offer.player, offer.level, offer.rating))
        return notices

    async def seat(self, group: PoolGroup, entries: Sequence[PoolRow]) -> list[Notice]:
        """Start the match of a table the pool paired: its people are taken out of the
        pool first (all or none, so no process seats anyone twice)."""
        if not await self.store.take_from_pool([e.user_id for e in entries]):
            return []
        # The seats in the table's order: partners at a teams table sit opposite (seats 1
        # and 3 against 2 and 4), the strongest with the weakest (PoolGroup.sides).
        first, second = group.sides[0], group.sides[-1]
        players = ([first[0], second[0], first[1], second[1]]
                   if group.table is TableKind.TEAMS else list(group.players))
        state, settings = self.match_state(TABLES[group.table], private=False)
        chat_id = pool_chat_id(min(e.entry_id for e in entries))
        async with self.locks.hold(chat_id, None):
            stored = await self.store.create_match(chat_id, settings,
                                                   [SeatSpec.human(p) for p in players])
        self.games.keep(stored)
        await self.deadlines.start(stored.match_id, state.timer)
        readers = {user_id: await self.people.user_tr(user_id) for user_id in players}
        if len({tr.language for tr in readers.values()}) == 1:
            # The match's own chat speaks its players' language when they share one: the
            # lines told to them all (someone left, came back) are in it.
            await self.people.set_chat_language(chat_id, readers[players[0]].language)
        rating = {e.user_id: e.rating for e in entries}
        notices: list[Notice] = []
        for user_id in players:
            tr = readers[user_id]
            others = [tr._("{name} (rating {rating})", name=await self.people.name_of(other),
                           rating=rating[other]) for other in players if other != user_id]
            partner = [p for side in group.sides for p in side if user_id in side
                       and p != user_id] if group.table is TableKind.TEAMS else []
            watch = watch_offer(tr, self.broadcast.app, stored.match_id)  # 👀, 🙈 under it
            notices.append(Send(user_id, "\n".join([
                tr._("⚡ Opponent found: {names}.", names=", ".join(others)) if len(others) == 1
                else tr._("⚡ Your table: {names}.", names=", ".join(others)),
                *([tr._("Your partner: {name}.", name=await self.people.name_of(partner[0]))]
                  if partner else []),
                tr._("Your panel below is your board. Only moves pass between you; after "
                     "the match you may block your opponent."),
                *([watch[0]] if watch else []),
                tr._("The faces below send your opponents a reaction (/settings "
                     "reactions=off turns them off).")]),
                keyboard=[*(watch[1] if watch else []), reaction_row(stored.match_id)]))
        return notices + await self.broadcast.started(stored)

    async def offer(self, user_id: int, level: str, rating: int) -> Send:
        tr = await self.people.user_tr(user_id)
        return Send(user_id, tr._("⏳ Nobody of your strength is free yet. Play the computer "
                                  "({level}, rating {rating}) meanwhile? You stay in the "
                                  "queue until you choose.",
                                  level=level_label(tr, level), rating=rating),
                    keyboard=[[Button(tr._("🤖 Play the computer"),
                                      codec.pool_data(f"c:{level}"))],
                              [Button(tr._("Leave the queue"), codec.pool_data("leave"))]])

    async def accept_computer(self, actor: Actor, level: str) -> Outcome:
        """The offer accepted: out of the pool, into a private match against that level."""
        tr = await self.people.user_tr(actor.user_id)
        entry = await self.store.pool_entry(actor.user_id)
        if entry is None or entry.offered != level or level not in LEVEL_CODES:
            return Outcome(tr._("This offer is not valid any more."))
        if await self.store.active_match(actor.user_id) is not None:
            return Outcome(tr._("A match is already being played here: /board shows it, "
                                "/cancel ends it."))
        if not await self.store.take_from_pool([actor.user_id]):
            return Outcome(tr._("This offer is not valid any more."))
        _, settings = self.match_state(Table.DUEL, private=True)
        async with self.locks.hold(actor.user_id, None):
            try:
                stored = await self.store.create_match(
                    actor.user_id, settings,
                    [SeatSpec.human(actor.user_id), SeatSpec.computer(LEVEL_CODES[level])])
            except ActiveMatchExists:
                return Outcome(tr._("A match is already being played here: /board shows "
                                    "it, /cancel ends it."))
        self.games.keep(stored)
        await self.deadlines.start(stored.match_id, None)
        return Outcome(tr._("The match has started."), await self.broadcast.started(stored))

    async def block(self, row: MatchRow, actor: Actor) -> Outcome:
        """🚫 Block under a finished pool match's summary: the presser is never paired with
        the other players of that match again (either way round)."""
        tr = await self.people.user_tr(actor.user_id)
        if not is_pool_chat(row.chat_id) or row.seat_of(actor.user_id) is None:
            return Outcome(tr._("This button is not valid any more."))
        others = [s.user_id for s in row.seats
                  if s.user_id is not None and s.user_id != actor.user_id]
        for other in others:
            await self.store.block(actor.user_id, other)
        names = [await self.people.name_of(other) for other in others]
        return Outcome(tr._("Blocked: you will not be paired with {names} again.",
                            names=", ".join(names)))
