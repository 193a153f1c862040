"""An arena's post and its end: the one group post an arena keeps (edited at most every
:data:`EDIT_EVERY` seconds, within the group's window), ``/history``'s line of it, and the
end (the final table, the podium, the players of unfinished games told).

What is shown, apart from what is played (:mod:`chat.flow.arenas`: /arena, join, pause, the
tick that pairs and seats, built on this); a league's room (:mod:`chat.flow.leagues`) builds on
both.
"""

from __future__ import annotations

from collections.abc import Callable

from chat.flow.caps import Caps
from chat.flow.parts import HoldsSharedParts, SharedParts
from chat.flow.views.arena_view import (
    arena_keyboard,
    arena_players,
    arena_text,
    result_lines,
    summary_line,
)
from chat.i18n import Tr
from chat.notices import Drawing, Notice, Send, ShowLobby
from render.podium import podium_png
from storage import ArenaRow, ArenaStatus
from tournaments.arena import standings

#: The arena post is edited at most this often (seconds), unless the arena starts or ends:
#: a group's window is about 20 writes a minute, shared with everything else it sees.
EDIT_EVERY = 20.0


class ArenaPosts(HoldsSharedParts):
    def __init__(self, parts: SharedParts, caps: Caps, *, clock: Callable[[], float],
                 bot_username: str) -> None:
        super().__init__(parts)
        self.caps = caps
        self.clock = clock
        self.bot_username = bot_username
        #: When each arena's post was last edited, and whether something changed since: a
        #: throttle only (after a restart the first tick edits it).
        self._edited: dict[int, float] = {}
        self._dirty: set[int] = set()
        self._reposted: dict[int, float] = {}

    # The post ---------------------------------------------------------------------------

    async def refresh(self, arena: ArenaRow) -> list[Notice]:
        """The post edited when something changed, at most every :data:`EDIT_EVERY`
        seconds (and once a minute for the countdown)."""
        now = self.clock()
        last = self._edited.get(arena.arena_id)
        if last is not None and now - last < (EDIT_EVERY if arena.arena_id in self._dirty
                                              else 60.0):
            return []
        return [await self.post(arena)]

    async def post(self, arena: ArenaRow, *, anew: bool = False, full: bool = False
                   ) -> ShowLobby:
        """The arena post as it stands (``anew``: a new message, /arena's answer)."""
        now = self.clock()
        self._edited[arena.arena_id] = now
        self._dirty.discard(arena.arena_id)
        tr = await self.people.chat_tr(arena.chat_id)
        entries = await self.store.arena_entries(arena.arena_id)
        games = await self.store.arena_games(arena.arena_id)
        players = arena_players(entries, games)
        table = standings(players)
        name = await self.people.names_of([e.user_id for e in entries])
        names = {e.user_id: name(e.user_id) for e in entries}
        playing = [(g.first, g.second) for g in games if g.result is None and g.match_id]
        text = arena_text(tr, arena, table, names, playing, result_lines(tr, games, names),
                          now, full=full or arena.status is ArenaStatus.FINISHED)
        # The games in progress, to watch in the Mini App (its public board only), where
        # the bot has a public address and a registered Mini App.
        app = self.broadcast.app
        watch = [(f"{names.get(g.first, '?')} – {names.get(g.second, '?')}", url)
                 for g in games if g.result is None and g.match_id and g.second is not None
                 and app is not None and (url := app.group_url(g.match_id))]
        return ShowLobby(arena.arena_id, arena.chat_id, arena.thread_id,
                         None if anew else arena.message_id, text,
                         arena_keyboard(tr, arena, self.bot_username, watch), arena=True)

    async def summary(self, event: ArenaRow, tr: Tr) -> str:
        """``/history``'s line of this arena: its first three so far."""
        entries = await self.store.arena_entries(event.arena_id)
        table = standings(arena_players(entries, await self.store.arena_games(event.arena_id)))
        name = await self.people.names_of([e.user_id for e in entries])
        return summary_line(tr, event, [(name(r.player), str(r.score)) for r in table[:3]
                                        if r.games])

    # The end ----------------------------------------------------------------------------

    async def finish(self, arena: ArenaRow) -> list[Notice]:
        """End the arena (once, whichever process): the post shows the final table without
        buttons; the podium and the full table come as one more post."""
        if not await self.store.update_arena(arena.arena_id, status=ArenaStatus.FINISHED,
                                             was=arena.status):
            return []
        ended = await self.store.get_arena(arena.arena_id)
        assert ended is not None
        tr = await self.people.chat_tr(arena.chat_id)
        final = await self.post(ended)
        entries = await self.store.arena_entries(arena.arena_id)
        games = await self.store.arena_games(arena.arena_id)
        table = standings(arena_players(entries, games))
        name = await self.people.names_of([e.user_id for e in entries])
        podium = [(name(row.player), row.score) for row in table[:3] if row.games]
        counted = len([g for g in games if g.result not in (None, "void")])
        subtitle = tr.n_("{n} player", "{n} players", len(entries)) + " · " + \
            tr.n_("{n} game", "{n} games", counted)
        notices: list[Notice] = [final]
        for game in games:  # still played: its players are told it no longer counts
            for user_id in (game.first, game.second):
                if game.result is None and game.match_id is not None and user_id is not None:
                    utr = await self.people.user_tr(user_id)
                    notices.append(Send(user_id, utr._(
                        "🏁 The arena is over: this game no longer counts. Finish it or "
                        "/resign.")))
        if podium:
            notices.append(Send(arena.chat_id, "\n".join([
                tr._("🏁 The arena is over. The podium:"),
                *[f"{medal} {who} — {points}" for medal, (who, points)
                  in zip("🥇🥈🥉", podium, strict=False)],
                tr._("/arena shows the full table.")]),
                thread_id=arena.thread_id, group=True,
                photo=Drawing(podium_png, (tr._("Arena · the podium"), tuple(
                    (who, tr.n_("{n} point", "{n} points", points)) for who, points in podium),
                    subtitle))))
        return notices
