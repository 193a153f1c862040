"""A Swiss league over days (issue 40): ``/swiss rounds=5 [days=7] [table=duel]``.

People join on the league's post until its creator (or an admin) starts the first round.
Each round is paired by :func:`tournaments.swiss.pair_round` (by score, never the same
pairing twice, one bye at most a player when the number is odd) and has a deadline: the
league's days shared by its rounds. The games are duels played in each player's private
chat, as an arena's are (the store's events: one table of events, ``kind`` ``swiss``).

The group sees one post of pairings and one of results a round (and the league's post,
edited); players are told privately of their game and its deadline, once a round. A game not
finished by its deadline is adjudicated: the normal computer takes the seat of the player it
waits for (the absent side) and finishes the game, and the results say so. When every game of
a round has its result, the next round is paired, by whichever process ticks first (the store
lets one move the round on); after the last round the final table comes, with Buchholz and
Sonneborn–Berger (docs/tournaments.md).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence

from chat.flow.arenas import Arenas
from chat.flow.base import Actor
from chat.flow.caps import Caps
from chat.flow.endings import Endings
from chat.flow.event_words import event_settings
from chat.flow.parts import SharedParts
from chat.flow.views.arena_view import summary_line
from chat.flow.views.league_view import (
    league_keyboard,
    league_text,
    pairings_text,
    points_text,
    results_text,
    table_lines,
    when,
)
from chat.i18n import Tr
from chat.lobby_model import DEFAULT_GROUP_TIMER
from chat.model import InputError
from chat.notices import Notice, Send, ShowLobby
from chat.outcomes import Outcome
from storage import ArenaGameRow, ArenaRow, ArenaStatus, MatchStatus
from tournaments.common import Outcome as GameOutcome
from tournaments.swiss import (
    NoPairing,
    SwissGame,
    SwissPlayer,
    SwissRound,
    SwissState,
    max_rounds,
    pair_round,
    standings,
)

log = logging.getLogger(__name__)

#: Rounds and days a league may have.
ROUNDS = (1, 15)
DAYS = (1, 60)
_NUMBER = re.compile(r"^(rounds|days)=(\d{1,3})$")
#: The told key of a league game's reminder (the store notes it: one a game).
REMINDED = "league-reminder"


class Leagues(Arenas):
    kind = "swiss"

    def __init__(self, parts: SharedParts, caps: Caps, endings: Endings, *,
                 clock: Callable[[], float], bot_username: str) -> None:
        super().__init__(parts, caps, clock=clock, bot_username=bot_username)
        self.endings = endings

    # /swiss -----------------------------------------------------------------------------

    async def command(self, chat_id: int, thread_id: int | None, actor: Actor,
                      args: Sequence[str], *, is_admin: bool) -> Outcome:
        """``/swiss`` shows the league; ``/swiss rounds=5 days=7`` creates one;
        ``/swiss start`` pairs the first round (its creator or an admin)."""
        tr = await self.people.chat_tr(chat_id)
        words = [w.strip().lower() for w in args if w.strip()][:8]
        latest = await self.store.latest_arena(chat_id)
        league = latest if latest is not None and latest.kind == self.kind else None
        if not words:
            if league is None:
                return Outcome(tr._("No league here yet. /swiss rounds=5 days=7 creates one: "
                                    "a round of duels a day or so, paired by score."))
            return Outcome(None, [await self.show(league)])
        if words[0] == "start":
            if league is None or league.status is not ArenaStatus.LOBBY:
                return Outcome(tr._("No league waits to start here: /swiss rounds=5 creates "
                                    "one."))
            if actor.user_id != league.creator and not is_admin:
                return Outcome(tr._("Only the league's creator or an admin can do that."))
            return Outcome(None, await self.start(league, tr))
        try:
            rounds, days, match_args = self.parse_league(words)
        except InputError as exc:
            return Outcome(tr._(exc.key, **exc.values))
        if latest is not None and latest.status is not ArenaStatus.FINISHED:
            return Outcome(tr._("A tournament is on here already: /arena or /swiss shows it."))
        created = await self.store.create_arena(
            chat_id, thread_id, actor.user_id, minutes=round(days * 24 * 60 / rounds),
            match_args=match_args, bots=False, starts_at=None, kind=self.kind, rounds=rounds)
        if created is None:
            return Outcome(tr._("A tournament is on here already: /arena or /swiss shows it."))
        return Outcome(None, [await self.post(created, anew=True)])

    def parse_league(self, words: Sequence[str]) -> tuple[int, int, str]:
        """(rounds, days, the games' /new words)."""
        rounds, days = 5, 7
        match_words: list[str] = []
        for word in words:
            if found := _NUMBER.match(word):
                if found.group(1) == "rounds":
                    rounds = int(found.group(2))
                else:
                    days = int(found.group(2))
            elif word.startswith("table="):
                if word != "table=duel":
                    raise InputError("Swiss leagues play duels: table=duel.")
            else:
                match_words.append(word)
        if not ROUNDS[0] <= rounds <= ROUNDS[1] or not DAYS[0] <= days <= DAYS[1]:
            raise InputError("A league has 1 to {rounds} rounds over 1 to {days} days.",
                             rounds=ROUNDS[1], days=DAYS[1])
        event_settings(" ".join(match_words))
        return rounds, days, " ".join(match_words)

    async def press(self, arenas: Arenas, op: str, arena_id: int, actor: Actor, *,
                    is_admin: bool) -> Outcome:
        """A post's ``join``, ``pause`` or ``go``, by the room of its event: this one for a
        league, ``arenas`` for an arena."""
        event = await self.store.get_arena(arena_id)
        room = self if event is not None and event.kind == self.kind else arenas
        if op == "join":
            return await room.join(arena_id, actor)
        if op == "pause":
            return await room.pause(arena_id, actor)
        return await room.press_start(arena_id, actor, is_admin=is_admin)

    def started_text(self, tr: Tr) -> str:
        return tr._("The league has started: round 1 is paired.")

    def joined_text(self, tr: Tr, title: str) -> str:
        return tr._("🏆 You are in the Swiss league of “{title}”. Each round's game comes "
                    "here, with its deadline.", title=title)

    async def join(self, arena_id: int, actor: Actor) -> Outcome:
        league = await self.store.get_arena(arena_id)
        if league is not None and league.status is ArenaStatus.RUNNING:
            tr = await self.people.user_tr(actor.user_id)
            return Outcome(tr._("The league has begun: players join until its first round."))
        return await super().join(arena_id, actor)

    async def pause(self, arena_id: int, actor: Actor) -> Outcome:
        """Withdraw: never paired again; the games played and the points stay."""
        tr = await self.people.user_tr(actor.user_id)
        if not await self.store.pause_arena(arena_id, actor.user_id):
            return Outcome(tr._("You are not playing in this league."))
        self._dirty.add(arena_id)
        return Outcome(tr._("You withdrew: no more rounds for you. Your points stay."))

    async def start(self, arena: ArenaRow, tr: Tr) -> list[Notice]:
        players = [e for e in await self.store.arena_entries(arena.arena_id) if not e.paused]
        if len(players) < 2:
            return [Send(arena.chat_id, tr._("A league needs two players at least."),
                         thread_id=arena.thread_id, group=True)]
        now = self.clock()
        if not await self.store.update_arena(arena.arena_id, status=ArenaStatus.RUNNING,
                                             starts_at=now, was=ArenaStatus.LOBBY):
            return []
        started = await self.store.get_arena(arena.arena_id)
        assert started is not None
        notices: list[Notice] = []
        if max_rounds(len(players)) < arena.rounds:
            notices.append(Send(arena.chat_id, tr._(
                "With {n} players a league has {rounds} rounds at most without a repeated "
                "pairing: it may end early.", n=len(players), rounds=max_rounds(len(players))),
                thread_id=arena.thread_id, group=True))
        return notices + await self.next_round(started)

    # The tick ---------------------------------------------------------------------------

    async def tick(self, arena: ArenaRow) -> list[Notice]:
        if arena.status is not ArenaStatus.RUNNING:
            return await self.waiting(arena, self.clock()) \
                if arena.status is ArenaStatus.LOBBY else []
        games = [g for g in await self.collect(arena) if g.round == arena.round]
        if games and all(g.result is not None for g in games):
            return await self.round_over(arena, games)
        notices: list[Notice] = []
        left = (arena.round_ends_at or 0.0) - self.clock()
        if 0 < left <= arena.minutes * 60 / 4:
            notices += await self.remind(arena, games)
        if arena.round_ends_at is not None and self.clock() >= arena.round_ends_at:
            for game in games:
                if game.result is None and await self.store.adjudicate_arena_game(
                        game.game_id):
                    notices += await self.adjudicate(arena, game)
        return notices

    async def remind(self, league: ArenaRow, games: Sequence[ArenaGameRow]) -> list[Notice]:
        """A quarter of the round left: the players of each game not finished are reminded,
        privately and once (noted in the store first, whichever process ticks)."""
        notices: list[Notice] = []
        for game in games:
            if game.result is not None or game.match_id is None or \
                    REMINDED in await self.store.told(game.match_id):
                continue
            await self.store.note_told(game.match_id, REMINDED)
            for me, other in ((game.first, game.second), (game.second, game.first)):
                if me is None or other is None:
                    continue
                tr = await self.people.user_tr(me)
                notices.append(Send(me, tr._(
                    "⏰ League round {round}: your game against {name} is due by {deadline}. "
                    "Then the normal computer finishes it for whoever it waits for.",
                    round=league.round, name=await self.people.name_of(other),
                    deadline=when(league.round_ends_at or 0.0)), match_id=game.match_id))
        return notices

    async def adjudicate(self, arena: ArenaRow, game: ArenaGameRow) -> list[Notice]:
        """The deadline passed: the normal computer finishes the game for the player it
        waits for, and both are told so."""
        if game.match_id is None:
            return []
        stored = await self.games.load(game.match_id)
        if stored.row.status is not MatchStatus.ACTIVE:
            return []
        seat = stored.game.current_player
        absent = stored.row.seats[seat].user_id
        name = await self.people.name_of(absent) if absent is not None else "?"
        tr = await self.people.chat_tr(arena.chat_id)
        log.info("league %s: game %s missed its deadline; the computer plays for seat %s",
                 arena.arena_id, game.game_id, seat)
        if await self.deadlines.timer(stored.match_id) is None:
            # From now on the game is played on the clock, so that it ends even when the
            # other player is gone too (their timeouts hand their seat over as well, and a
            # match nobody plays is cancelled: no result).
            await self.deadlines.start(stored.match_id, DEFAULT_GROUP_TIMER)
        return await self.endings.hand_over(stored, seat, tr._(
            "The round's deadline passed: the normal computer finishes this game for {name}.",
            name=name))

    async def round_over(self, arena: ArenaRow, games: Sequence[ArenaGameRow]
                         ) -> list[Notice]:
        """Every game of the round has its result: its post, then the next round (or the
        end). One process moves the round on (``was_round``)."""
        entries = await self.store.arena_entries(arena.arena_id)
        active = len([e for e in entries if not e.paused])
        tr = await self.people.chat_tr(arena.chat_id)
        names = await self.names(arena)
        adjudicated = [g.game_id for g in games if g.match_id is not None and any(
            s.computer for s in (await self.store.stand_ins(g.match_id)).values())]
        told = Send(arena.chat_id, results_text(tr, arena, arena.round, games, names,
                                                adjudicated),
                    thread_id=arena.thread_id, group=True, silent=True)
        if arena.round >= arena.rounds or active < 2:
            if not await self.store.update_arena(arena.arena_id, status=ArenaStatus.FINISHED,
                                                 was=ArenaStatus.RUNNING):
                return []
            ended = await self.store.get_arena(arena.arena_id)
            assert ended is not None
            table = standings(await self.state(ended))
            final = Send(arena.chat_id, "\n".join([
                tr._("🏁 The league is over. The final table:"),
                *table_lines(tr, table, names)]), thread_id=arena.thread_id, group=True)
            return [told, final, await self.post(ended)]
        moved = await self.next_round(arena)
        return [told, *moved] if moved else []

    async def next_round(self, arena: ArenaRow) -> list[Notice]:
        """Pair round ``arena.round + 1``: one post of pairings, a private word to each
        player."""
        now = self.clock()
        number = arena.round + 1
        if not await self.store.update_arena(arena.arena_id, round=number,
                                             round_ends_at=now + arena.minutes * 60,
                                             was_round=arena.round):
            return []  # another process moved it on
        league = await self.store.get_arena(arena.arena_id)
        assert league is not None
        tr = await self.people.chat_tr(league.chat_id)
        try:
            pairing = pair_round(await self.state(league))
        except NoPairing:
            await self.store.update_arena(league.arena_id, status=ArenaStatus.FINISHED)
            return [Send(league.chat_id, tr._("No new pairing is possible: the league ends "
                                              "here."), thread_id=league.thread_id,
                         group=True)]
        deadline = when(league.round_ends_at or now)
        notices: list[Notice] = []
        for first, second in pairing.boards:
            notices += await self.seat(league, first, second, round=number, intro=lambda r, n: (
                r._("🏆 League round {round} of {rounds}: you play {name}, by {deadline}. "
                    "Your panel below is your board.", round=number, rounds=league.rounds, name=n,
                    deadline=deadline)))
        if pairing.bye is not None:
            await self.store.start_arena_game(league.arena_id, pairing.bye, None,
                                              round=number, bye=True)
            utr = await self.people.user_tr(pairing.bye)
            notices.append(Send(pairing.bye, utr._(
                "🏆 League round {round}: you have the bye (1 point). Your next game comes "
                "with the next round.", round=number)))
        games = [g for g in await self.store.arena_games(league.arena_id) if g.round == number]
        names = await self.names(league)
        return [Send(league.chat_id, pairings_text(tr, league, games, names),
                     thread_id=league.thread_id, group=True), await self.post(league),
                *notices]

    async def state(self, league: ArenaRow) -> SwissState:
        """The league as :mod:`tournaments.swiss` sees it: its finished rounds."""
        entries = await self.store.arena_entries(league.arena_id)
        games = await self.store.arena_games(league.arena_id)
        rounds = []
        for number in range(1, league.round + 1):
            these = [g for g in games if g.round == number]
            if not these or any(g.result is None for g in these):
                continue
            rounds.append(SwissRound(tuple(
                SwissGame(g.first, g.second, GameOutcome.WIN if g.result == "first" else
                          GameOutcome.LOSS if g.result == "second" else GameOutcome.DRAW)
                for g in these if g.second is not None and g.result not in ("bye", "void")),
                next((g.first for g in these if g.result == "bye"), None)))
        return SwissState(tuple(SwissPlayer(e.user_id, e.rating, not e.paused)
                                for e in entries), tuple(rounds))

    async def summary(self, event: ArenaRow, tr: Tr) -> str:
        """``/history``'s line of this league: its first three so far."""
        state = await self.state(event)
        names = await self.names(event)
        return summary_line(tr, event, [(names.get(r.player, "?"), points_text(r.points))
                                        for r in standings(state)[:3]] if state.rounds else [])

    async def names(self, league: ArenaRow) -> dict[int, str]:
        entries = await self.store.arena_entries(league.arena_id)
        name = await self.people.names_of([e.user_id for e in entries])
        return {e.user_id: name(e.user_id) for e in entries}

    async def post(self, arena: ArenaRow, *, anew: bool = False, full: bool = False
                   ) -> ShowLobby:
        """The league's post: who joined, then the table."""
        self._edited[arena.arena_id] = self.clock()
        self._dirty.discard(arena.arena_id)
        tr = await self.people.chat_tr(arena.chat_id)
        names = await self.names(arena)
        state = await self.state(arena)
        table = standings(state) if state.rounds else ()
        return ShowLobby(arena.arena_id, arena.chat_id, arena.thread_id,
                         None if anew else arena.message_id,
                         league_text(tr, arena, table, names),
                         league_keyboard(tr, arena, self.bot_username), arena=True)
