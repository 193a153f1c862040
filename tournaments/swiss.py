"""The Swiss league: rounds paired by score, no pairing twice, a bye for an odd number.

State in, decision out: :class:`SwissState` holds the players and every finished round as
plain data (who played whom and how it ended, who had the bye); :func:`pair_round` returns the
next round's boards and bye, :func:`standings` the table. Deadlines, reminders and the
adjudication of unfinished games are the bot's; a game enters here only with its result.

**Points**: a win 1, a draw ½, a loss 0, a bye 1 (as a win). A player gets the bye at most
once.

**Pairing** (:func:`pair_round`), a simplified Dutch system without colours (a Krendzu duel
has none to balance: the first dealer is drawn by lot and the roles rotate):

1. The active players are ranked by points, then rating, then id.
2. With an odd number, the bye goes to the lowest-ranked player who has not had one and
   without whom the others can still all be paired.
3. From the top, each unpaired player ``p`` takes the first opponent in this order of
   preference whom ``p`` has not met: in ``p``'s score group (the unpaired players with
   ``p``'s points, ``p`` first) the player half a group below (the top half meets the bottom
   half: 1–5, 2–6, … in a group of 8), then the next ones below, then the ones above;
   after the group, the players of lower score groups by points, then rank (a player left
   over "floats down").
4. The choice must leave the rest pairable: the pairing is the first in that order of
   preference whose every pair is new. A depth-first search finds it (usually at once); past
   a bound on its steps the same choices are made greedily with a perfect-matching test
   (Edmonds, :mod:`tournaments.matching`) at each, which gives the same pairing in
   polynomial time. When no pairing without a repeat exists, :class:`NoPairing` says so.

**Tie-breaks** (:func:`standings`): points, then Buchholz, then Sonneborn–Berger, then rating
and id. Both use the opponents' final points:

- Buchholz = the sum of the points of every opponent met;
- Sonneborn–Berger = the sum of the points of the opponents beaten + half the points of the
  opponents drawn with.

A bye is counted as FIDE's tie-break rules (2009–2023) count a round without an opponent: a
win against a *virtual opponent* whose points are ``S + ½ × (n − R)``, where ``R`` is the
round of the bye, ``S`` the player's points before it and ``n`` the rounds played (the virtual
opponent starts level with the player, loses to them and draws every later round). It adds
that to the player's Buchholz and, being a win, to their Sonneborn–Berger.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from tournaments.common import Outcome, TournamentError
from tournaments.matching import has_perfect_matching

WIN_POINTS = 1.0
DRAW_POINTS = 0.5
BYE_POINTS = 1.0
# Depth-first steps before the pairing switches to the matching look-ahead (same result).
SEARCH_STEPS = 20_000


class NoPairing(TournamentError):
    """No round can be paired without a repeated pairing (or a second bye): the league has
    run out of opponents. :func:`max_rounds` tells in advance how many rounds can be."""


@dataclass(frozen=True, slots=True)
class SwissPlayer:
    """A player of the league; ``active`` false once they withdrew (never paired again, their
    line and points stay)."""

    id: int
    rating: int
    active: bool = True


@dataclass(frozen=True, slots=True)
class SwissGame:
    """A finished game: ``outcome`` is ``first``'s (adjudicated or played, alike here)."""

    first: int
    second: int
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class SwissRound:
    """One finished round: its games and the player who had the bye, if any."""

    games: tuple[SwissGame, ...]
    bye: int | None = None


@dataclass(frozen=True, slots=True)
class SwissState:
    """The league so far: its players and its finished rounds, in order."""

    players: tuple[SwissPlayer, ...]
    rounds: tuple[SwissRound, ...] = ()


@dataclass(frozen=True, slots=True)
class RoundPairing:
    """The next round: ``boards`` from the top of the table down (``first`` ranked higher),
    and the player with the bye."""

    boards: tuple[tuple[int, int], ...]
    bye: int | None


@dataclass(frozen=True, slots=True)
class SwissStanding:
    """One line of the league's table."""

    rank: int
    player: int
    points: float
    buchholz: float
    sonneborn_berger: float
    wins: int
    draws: int
    losses: int
    byes: int
    active: bool


def max_rounds(players: int) -> int:
    """The most rounds ``players`` can play without a repeat: everyone meets everyone once
    (n − 1 rounds), plus one when the number is odd (each round someone rests). Only a bound:
    pairing by score may leave a later round without any new pairing before it is reached."""
    return players - 1 if players % 2 == 0 else players


def guaranteed_rounds(players: int) -> int:
    """The rounds that can always be paired, whatever the results: ``players // 2``.

    Why: before round k + 1 each player has met at most k others, so among the N players to
    pair (all, or all but the bye) each still has at least N − 1 − k new opponents. When that
    is at least N / 2 (k ≤ N / 2 − 1), Dirac's theorem gives a cycle through all N of them in
    the graph of new pairings, and every other edge of it is a pairing of the round. The bot
    should cap ``rounds=`` here, or expect :class:`NoPairing` past it.
    """
    return players // 2


# Points and tie-breaks ----------------------------------------------------------------------


def points(state: SwissState) -> dict[int, float]:
    """Each player's points after the finished rounds."""
    return _tally(state)[0]


def _game_points(outcome: Outcome) -> float:
    if outcome is Outcome.WIN:
        return WIN_POINTS
    return DRAW_POINTS if outcome is Outcome.DRAW else 0.0


def _tally(
    state: SwissState,
) -> tuple[dict[int, float], dict[int, list[tuple[int | None, Outcome, float]]]]:
    """Points, and each player's results as (opponent or ``None`` for a bye, outcome,
    the virtual opponent's points for a bye, 0 otherwise)."""
    ids = _check(state)
    total = dict.fromkeys(ids, 0.0)
    results: dict[int, list[tuple[int | None, Outcome, float]]] = {pid: [] for pid in ids}
    played = len(state.rounds)
    for number, round_ in enumerate(state.rounds, start=1):
        before = dict(total)
        for game in round_.games:
            total[game.first] += _game_points(game.outcome)
            total[game.second] += _game_points(game.outcome.reverse)
            results[game.first].append((game.second, game.outcome, 0.0))
            results[game.second].append((game.first, game.outcome.reverse, 0.0))
        if round_.bye is not None:
            total[round_.bye] += BYE_POINTS
            virtual = before[round_.bye] + DRAW_POINTS * (played - number)
            results[round_.bye].append((None, Outcome.WIN, virtual))
    return total, results


def standings(state: SwissState) -> tuple[SwissStanding, ...]:
    """The table: points, then Buchholz, then Sonneborn–Berger (see the module's docstring for
    the formulas and the bye), then rating and id; ranked 1, 2, 3, …"""
    total, results = _tally(state)
    lines: list[SwissStanding] = []
    for player in state.players:
        buchholz = 0.0
        berger = 0.0
        for opponent, outcome, virtual in results[player.id]:
            opponent_points = virtual if opponent is None else total[opponent]
            buchholz += opponent_points
            berger += opponent_points * _game_points(outcome)
        outcomes = [outcome for opponent, outcome, _ in results[player.id] if opponent is not None]
        lines.append(
            SwissStanding(
                rank=0,
                player=player.id,
                points=total[player.id],
                buchholz=buchholz,
                sonneborn_berger=berger,
                wins=outcomes.count(Outcome.WIN),
                draws=outcomes.count(Outcome.DRAW),
                losses=outcomes.count(Outcome.LOSS),
                byes=len(results[player.id]) - len(outcomes),
                active=player.active,
            )
        )
    rating = {p.id: p.rating for p in state.players}
    lines.sort(
        key=lambda s: (-s.points, -s.buchholz, -s.sonneborn_berger, -rating[s.player], s.player)
    )
    return tuple(replace(line, rank=rank) for rank, line in enumerate(lines, start=1))


# Pairing ------------------------------------------------------------------------------------


def pair_round(state: SwissState, search_steps: int = SEARCH_STEPS) -> RoundPairing:
    """The next round (see the module's docstring). ``search_steps`` bounds the depth-first
    search before the look-ahead takes over; the answer is the same either way."""
    total = points(state)
    met = {
        frozenset((game.first, game.second)) for round_ in state.rounds for game in round_.games
    }
    had_bye = {round_.bye for round_ in state.rounds if round_.bye is not None}
    rating = {p.id: p.rating for p in state.players}
    ranked = sorted(
        (p.id for p in state.players if p.active),
        key=lambda pid: (-total[pid], -rating[pid], pid),
    )
    pairer = _Pairer(ranked, total, met, search_steps)
    bye: int | None = None
    field = ranked
    if len(ranked) % 2:
        for candidate in reversed(ranked):
            if candidate in had_bye:
                continue
            rest = [pid for pid in ranked if pid != candidate]
            if pairer.pairable(rest):
                bye, field = candidate, rest
                break
        else:
            raise NoPairing("no player can take the bye and leave the others pairable")
    boards = pairer.pair(field)
    if boards is None:
        raise NoPairing("every pairing of this round would repeat a game")
    return RoundPairing(tuple(boards), bye)


class _Pairer:
    """The preference order and the two ways of finding the first pairing in it."""

    def __init__(
        self,
        ranked: Sequence[int],
        total: dict[int, float],
        met: set[frozenset[int]],
        search_steps: int,
    ) -> None:
        self.rank = {pid: i for i, pid in enumerate(ranked)}
        self.total = total
        self.met = met
        self.steps_left = search_steps
        self.opponents = dict.fromkeys(ranked, 0)
        for pair in met:
            for pid in pair:
                if pid in self.opponents:
                    self.opponents[pid] += 1

    def new(self, a: int, b: int) -> bool:
        return frozenset((a, b)) not in self.met

    def preferences(self, unpaired: Sequence[int]) -> list[int]:
        """Whom ``unpaired[0]`` (the highest-ranked unpaired player) should meet, best first."""
        top = unpaired[0]
        group = [pid for pid in unpaired if self.total[pid] == self.total[top]]
        half = len(group) // 2
        in_group = group[half:] + group[1:half][::-1] if half else []
        below = [pid for pid in unpaired[1:] if self.total[pid] != self.total[top]]
        below.sort(key=lambda pid: (-self.total[pid], self.rank[pid]))
        return [pid for pid in in_group + below if pid != top and self.new(top, pid)]

    def pairable(self, players: Sequence[int]) -> bool:
        """Whether ``players`` can all be paired with someone new (a perfect matching).

        Without building the graph when nobody has met more than N/2 − 1 others (N players):
        then each has N/2 new opponents at least, and Dirac's theorem gives the pairing (see
        :func:`guaranteed_rounds`). That is every early round of a large league."""
        if len(players) % 2:
            return False
        if 2 * max((self.opponents[pid] for pid in players), default=0) <= len(players) - 2:
            return True
        index = {pid: i for i, pid in enumerate(players)}
        adjacent = [
            [index[q] for q in players if q != p and self.new(p, q)] for p in players
        ]
        return has_perfect_matching(adjacent)

    def pair(self, players: Sequence[int]) -> list[tuple[int, int]] | None:
        ordered = sorted(players, key=lambda pid: self.rank[pid])
        try:
            return self._search(ordered)
        except _OutOfSteps:
            return self._look_ahead(ordered)

    def _search(self, ordered: list[int]) -> list[tuple[int, int]] | None:
        """Depth-first, with an explicit stack (a league of thousands stays within Python's
        recursion limit): ``boards[i]`` is the choice of ``frames[i]``, the top frame may have
        none yet."""
        if not ordered:
            return []
        frames: list[tuple[list[int], Iterator[int]]] = [(ordered, iter(self.preferences(ordered)))]
        boards: list[tuple[int, int]] = []
        while frames:
            unpaired, options = frames[-1]
            other = next(options, None)
            if other is None:  # every choice here failed: undo the one below and go on there
                if len(boards) == len(frames):
                    boards.pop()
                frames.pop()
                continue
            self.steps_left -= 1
            if self.steps_left < 0:
                raise _OutOfSteps
            if len(boards) == len(frames):
                boards[-1] = (unpaired[0], other)
            else:
                boards.append((unpaired[0], other))
            rest = [pid for pid in unpaired[1:] if pid != other]
            if not rest:
                return boards
            frames.append((rest, iter(self.preferences(rest))))
        return None

    def _look_ahead(self, unpaired: list[int]) -> list[tuple[int, int]] | None:
        if not self.pairable(unpaired):
            return None
        boards: list[tuple[int, int]] = []
        while unpaired:
            top = unpaired[0]
            for other in self.preferences(unpaired):
                rest = [pid for pid in unpaired[1:] if pid != other]
                if self.pairable(rest):
                    boards.append((top, other))
                    unpaired = rest
                    break
            else:  # pragma: no cover - a perfect matching always has a first choice
                return None
        return boards


class _OutOfSteps(Exception):
    """The depth-first search used its steps: the look-ahead takes over."""


def _check(state: SwissState) -> list[int]:
    """The players' ids, after checking the rounds name only them, each at most once a round."""
    ids = [p.id for p in state.players]
    known = set(ids)
    if len(known) != len(ids):
        raise TournamentError("a player is in the league twice")
    for number, round_ in enumerate(state.rounds, start=1):
        seated: list[int] = [x for g in round_.games for x in (g.first, g.second)]
        if round_.bye is not None:
            seated.append(round_.bye)
        if len(seated) != len(set(seated)):
            raise TournamentError(f"round {number} seats a player twice")
        if not set(seated) <= known:
            raise TournamentError(f"round {number} names a player not in the league")
    return ids

