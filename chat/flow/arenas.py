"""Arenas in a group (issue 40): a timed tournament of continuous duels, Lichess style.

``/arena [30m] [timer=60] [deal=12/13] [tours=N] [bots=on] [in=10m]`` posts the arena's one
post in the group: Join / Pause / Start, the countdown, the table. Whoever joins plays from
their private chat (the games are matches with a reserved chat of their own, as pool matches
are: :func:`storage.arena_chat_id`), so the group is never flooded with boards: it sees its
arena post edited (at most once every :data:`~chat.flow.arena_post.EDIT_EVERY` seconds,
within its window), a line a finished game, and at the end the podium picture and the full
table (the post and the end: :mod:`chat.flow.arena_post`).

Every tick of the job queue (and every join or start) runs :meth:`Arenas.tick` on each open
arena: start it when its time comes, take the results of its finished games, ask
:func:`tournaments.arena.pair` whom to pair (by score, then rating, never the same opponent
twice in a row), start those games, end it at its time. The store decides who is free, in one
write (storage/store_arenas.py), so any number of processes may tick the same arena. Arena
games count in the group's statistics and in the ratings like any match.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from chat.flow.arena_post import ArenaPosts
from chat.flow.base import Actor
from chat.flow.event_words import arena_words, event_settings
from chat.flow.views.arena_view import (
    arena_players,
)
from chat.i18n import Tr
from chat.lobby_model import LobbyState
from chat.model import LEVEL_CODES, InputError
from chat.notices import Notice, Send, ShowLobby
from chat.outcomes import Outcome
from chat.ratings import POOL_LEVELS, pool_rating
from chat.results import stored_outcome
from krendzu import Settings, Table
from storage import (
    ActiveMatchExists,
    ArenaGameRow,
    ArenaRow,
    ArenaStatus,
    MatchStatus,
    SeatSpec,
    arena_chat_id,
)
from tournaments.arena import (
    ArenaSettings,
    ArenaState,
    pair,
)
from tournaments.pool import closest_level

log = logging.getLogger(__name__)

#: An arena or league nobody started is given up after this long (seconds).
IDLE_LOBBY = 24 * 3600.0
#: ``/arena`` alone posts the arena anew at most this often (seconds).
REPOST_EVERY = 60.0


class Arenas(ArenaPosts):
    #: The events of the store this room runs (a league's room runs ``swiss``).
    kind = "arena"

    # /arena -----------------------------------------------------------------------------

    async def command(self, chat_id: int, thread_id: int | None, actor: Actor,
                      args: Sequence[str], *, is_admin: bool) -> Outcome:
        """``/arena`` shows the group's arena (or its last one's table); with words it
        creates one; ``/arena start`` starts it now, ``/arena end`` ends it (its creator
        or an admin)."""
        tr = await self.people.chat_tr(chat_id)
        words = [w.strip().lower() for w in args if w.strip()][:8]
        latest = await self.store.latest_arena(chat_id)
        if latest is not None and latest.kind != self.kind:
            latest = None  # a league: /swiss shows it
        if not words:
            if latest is None:
                return Outcome(tr._("No arena here yet. /arena 30m timer=60 creates one: "
                                    "a tournament of quick duels, open to everyone for 30 "
                                    "minutes."))
            return Outcome(None, [await self.show(latest)])
        if words[0] in {"start", "end"}:
            if latest is None or latest.status is ArenaStatus.FINISHED:
                return Outcome(tr._("No arena is on here: /arena 30m creates one."))
            if actor.user_id != latest.creator and not is_admin:
                return Outcome(tr._("Only the arena's creator or an admin can do that."))
            if words[0] == "start":
                started = await self.start(latest, tr)
                return Outcome(None if started else tr._("The arena is on already."), started)
            return Outcome(None, await self.finish(latest))
        try:
            minutes, match_args, bots, delay = arena_words(words)
        except InputError as exc:
            return Outcome(tr._(exc.key, **exc.values))
        now = self.clock()
        arena = await self.store.create_arena(
            chat_id, thread_id, actor.user_id, minutes=minutes, match_args=match_args,
            bots=bots, starts_at=None if delay is None else now + delay * 60)
        if arena is None:
            return Outcome(tr._("A tournament is on here already: /arena or /swiss shows it."))
        return Outcome(None, [await self.post(arena, anew=True)])

    async def show(self, event: ArenaRow) -> ShowLobby:
        """``/arena`` (``/swiss``) alone: the post again at the bottom of the chat, at most
        once every :data:`REPOST_EVERY` seconds; asked again sooner, the post is brought up
        to date where it is (a flood of the command costs one message)."""
        last = self._reposted.get(event.arena_id)
        anew = event.message_id is None or last is None or \
            self.clock() - last >= REPOST_EVERY
        if anew:
            self._reposted[event.arena_id] = self.clock()
        return await self.post(event, anew=anew, full=True)

    # Join, pause, start -----------------------------------------------------------------

    async def join(self, arena_id: int, actor: Actor) -> Outcome:
        """Join (or come back from a pause). Games are played in the private chat, so a
        person the bot cannot write to is sent there first (Start in it joins)."""
        tr = await self.people.user_tr(actor.user_id)
        arena = await self.store.get_arena(arena_id)
        if arena is None or arena.status is ArenaStatus.FINISHED:
            return Outcome(tr._("This arena is over."))
        user = await self.store.get_user(actor.user_id)
        if user is None or not user.can_write_privately:
            return Outcome(tr._("Your arena games come to my private chat: open it with 💬 "
                                "My private chat and press Start, and you are in."))
        refusal = await self.caps.refusal(None, [actor.user_id], actor.user_id, tr)
        if refusal is not None:
            return Outcome(refusal)
        rating = pool_rating((await self.store.ratings_of([actor.user_id])).get(actor.user_id))
        joined = await self.store.join_arena(arena_id, actor.user_id, rating)
        if joined == "elsewhere":
            return Outcome(tr._("You are playing in another arena: one at a time."))
        if joined == "already":
            return Outcome(tr._("You are in this arena already: your games come to my "
                                "private chat."))
        self._dirty.add(arena_id)
        title = await self.people.title_of(arena.chat_id) or "?"
        notices: list[Notice] = [Send(actor.user_id, self.joined_text(tr, title))]
        # Who joined shows at once while it waits; a running one's post keeps its pace.
        notices += ([await self.post(arena)] if arena.status is ArenaStatus.LOBBY
                    else await self.tick(arena))
        return Outcome(tr._("You are in: your games come to my private chat.")
                       if joined == "joined" else tr._("Welcome back: you are paired again."),
                       notices)

    async def pause(self, arena_id: int, actor: Actor) -> Outcome:
        tr = await self.people.user_tr(actor.user_id)
        if not await self.store.pause_arena(arena_id, actor.user_id):
            return Outcome(tr._("You are not playing in this arena."))
        self._dirty.add(arena_id)
        return Outcome(tr._("Paused: no new game until you press ✋ Join again. Your points "
                            "stay yours."))

    async def press_start(self, arena_id: int, actor: Actor, *, is_admin: bool) -> Outcome:
        tr = await self.people.user_tr(actor.user_id)
        arena = await self.store.get_arena(arena_id)
        if arena is None or arena.status is not ArenaStatus.LOBBY:
            return Outcome(tr._("This button is not valid any more."))
        if actor.user_id != arena.creator and not is_admin:
            return Outcome(tr._("Only the arena's creator or an admin can do that."))
        return Outcome(self.started_text(tr),
                       await self.start(arena, await self.people.chat_tr(arena.chat_id)))

    def started_text(self, tr: Tr) -> str:
        return tr._("The arena has started.")

    def joined_text(self, tr: Tr, title: str) -> str:
        return tr._("🏟 You are in the arena of “{title}”. Your games come here, one after "
                    "another, until its end; ⏸ Pause under the arena post stops new ones.",
                    title=title)

    async def start(self, arena: ArenaRow, tr: Tr) -> list[Notice]:
        now = self.clock()
        if not await self.store.update_arena(arena.arena_id, status=ArenaStatus.RUNNING,
                                             starts_at=now, ends_at=now + arena.minutes * 60,
                                             was=ArenaStatus.LOBBY):
            return []
        self._dirty.add(arena.arena_id)
        started = await self.store.get_arena(arena.arena_id)
        assert started is not None
        notices = await self.tick(started)
        if not any(isinstance(n, ShowLobby) for n in notices):  # the start shows at once
            notices.append(await self.post(started))
        return notices

    async def waiting(self, arena: ArenaRow, now: float) -> list[Notice]:
        """An event that waits: started at its time; given up after :data:`IDLE_LOBBY`
        unstarted (the group may make another); its post edited only when someone joined."""
        if arena.starts_at is not None and now >= arena.starts_at:
            return await self.start(arena, await self.people.chat_tr(arena.chat_id))
        if arena.starts_at is None and now - arena.created_at >= IDLE_LOBBY:
            return await self.finish(arena)
        return await self.refresh(arena) if arena.arena_id in self._dirty else []

    # The tick ---------------------------------------------------------------------------

    async def tick_all(self, found: Sequence[ArenaRow] | None = None) -> list[Notice]:
        notices: list[Notice] = []  # ``found``: the open arenas, just read by the caller
        for arena in await self.store.open_arenas() if found is None else found:
            if arena.kind != self.kind:
                continue
            try:
                notices += await self.tick(arena)
            except Exception:  # one arena's failure never holds the others
                log.exception("arena %s: the tick failed", arena.arena_id)
        return notices

    async def tick(self, arena: ArenaRow) -> list[Notice]:
        """Start, pair, end: what is due now for ``arena`` (see the module's docstring)."""
        now = self.clock()
        if arena.status is ArenaStatus.LOBBY:
            return await self.waiting(arena, now)
        if arena.status is not ArenaStatus.RUNNING:
            return []
        games = await self.collect(arena)
        if arena.ends_at is not None and now >= arena.ends_at:
            return await self.finish(arena)
        # No lock here: the store seats each player once (Store.start_arena_game).
        notices: list[Notice] = []
        entries = await self.store.arena_entries(arena.arena_id)
        state = ArenaState(tuple(arena_players(entries, games)),
                           ArenaSettings(bots=arena.bots), now)
        for duel in pair(state, seed=arena.arena_id * 100_003 + len(games)):
            notices += await self.seat(arena, duel.first, duel.second)
        return notices + await self.refresh(arena)

    async def seat(self, arena: ArenaRow, first: int, second: int | None, *, round: int = 0,
                   intro: Callable[[Tr, str], str] | None = None) -> list[Notice]:
        """Start one game: noted first (nobody seated twice), then made a match; each
        player is told whom they play (``intro``: a league's words, with the name)."""
        game_id = await self.store.start_arena_game(arena.arena_id, first, second, round=round)
        if game_id is None:
            return []
        try:
            state, settings = event_settings(arena.match_args)
        except InputError:
            state, settings = LobbyState(table=Table.DUEL), Settings(table=Table.DUEL)
        if second is None:
            rating = (await self.store.arena_entries(arena.arena_id))
            mine = next((e.rating for e in rating if e.user_id == first), 1000)
            level = LEVEL_CODES[closest_level(mine, POOL_LEVELS)]
            seats = [SeatSpec.human(first), SeatSpec.computer(level)]
        else:
            seats = [SeatSpec.human(first), SeatSpec.human(second)]
        chat_id = arena_chat_id(game_id)
        try:
            async with self.locks.hold(chat_id, None):
                stored = await self.store.create_match(chat_id, settings, seats)
        except (ActiveMatchExists, ValueError):
            log.exception("arena %s: game %s could not be made", arena.arena_id, game_id)
            await self.store.set_arena_game_match(game_id, None)
            return []
        await self.store.set_arena_game_match(game_id, stored.match_id)
        self.games.keep(stored)
        await self.deadlines.start(stored.match_id, state.timer)
        self._dirty.add(arena.arena_id)
        notices: list[Notice] = []
        for user_id, other in ((first, second), (second, first)):
            if user_id is None:
                continue
            tr = await self.people.user_tr(user_id)
            name = (await self.people.name_of(other) if other is not None
                    else tr._("the computer"))
            notices.append(Send(user_id, intro(tr, name) if intro else tr._(
                "🏟 Arena game: you play {name}. Your panel below is your board.",
                name=name)))
        return notices + await self.broadcast.started(stored)

    async def collect(self, arena: ArenaRow) -> list[ArenaGameRow]:
        """Note the results of the arena's games whose match ended; its games as they are
        now (read again only when a result was noted)."""
        games = await self.store.arena_games(arena.arena_id)
        noted = False
        for game in games:
            if game.result is not None or game.match_id is None:
                continue
            row = await self.store.get_match(game.match_id)
            if row.status is MatchStatus.ACTIVE:
                continue
            outcome = await stored_outcome(self.store, row)
            first = row.seat_of(game.first)
            if outcome is None or first is None:
                result = "void"
            elif outcome.draw:
                result = "draw"
            else:
                result = "first" if outcome.won(first) else "second"
            if await self.store.finish_arena_game(game.game_id, result):
                self._dirty.add(arena.arena_id)
                noted = True
        return await self.store.arena_games(arena.arena_id) if noted else games
