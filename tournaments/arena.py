"""The arena: a timed tournament in which waiting players are paired continuously (Lichess style).

State in, decision out, no I/O: the caller (the bot) keeps who is waiting, playing or paused
and every finished game, and asks :func:`pair` whom to start now and :func:`standings` what to
show. Nothing here knows Telegram, SQL or a clock: the time is an argument.

**Scoring.** A win is 2, a draw 1, a loss 0. After two wins in a row every further win counts
double (4) until a game that is not a win: the "fire" streak, shown by a flame beside the
name (:func:`on_fire`). Unlike Lichess, a draw on fire counts 1, not 2: the issue's rule
doubles wins only, and a draw ends the streak.

**Standings** rank by score, then by performance (below), then by rating and id so that the
table never depends on the order of the input.

**Pairing** (:func:`pair`) takes the players who wait, ranks them by arena score, then rating,
then a seeded random draw (the only randomness, so the same seed gives the same duels), and
pairs each with the nearest one below who is not the opponent of their previous game. Two
players left over only because they have just met are re-paired by exchanging partners with
the nearest duel that allows it; a rematch in a row happens only when nobody else is waiting
or playing (else they would wait for ever). A lone waiting player waits until someone is
free, or, when the arena admits computers (``bots``), gets a computer after a short wait.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

from tournaments.common import Outcome, TournamentError

WIN_POINTS = 2
DRAW_POINTS = 1
LOSS_POINTS = 0
# Wins in a row after which a win counts double.
FIRE_AFTER = 2
# The weight of the win balance in the performance rating (Lichess's linear estimate).
PERFORMANCE_SPREAD = 500


class Status(Enum):
    """Where a player of the arena is now. Only ``WAITING`` players are paired."""

    WAITING = "waiting"
    PLAYING = "playing"
    PAUSED = "paused"
    LEFT = "left"


@dataclass(frozen=True, slots=True)
class ArenaGame:
    """One finished game of a player: the opponent (``None`` for a computer), the opponent's
    rating when the game started (for the performance) and the outcome for this player."""

    opponent: int | None
    opponent_rating: int
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class ArenaPlayer:
    """A player as the arena sees them. ``games`` are in the order played; ``waiting_since``
    is on the caller's clock (seconds) and matters only for a computer opponent."""

    id: int
    rating: int
    status: Status = Status.WAITING
    games: tuple[ArenaGame, ...] = ()
    waiting_since: float = 0.0


@dataclass(frozen=True, slots=True)
class ArenaSettings:
    """``bots``: a lone waiting player may get a computer (``/arena … bots=on``), once they
    have waited ``computer_after`` seconds, so that a person who frees up soon comes first."""

    bots: bool = False
    computer_after: float = 10.0


@dataclass(frozen=True, slots=True)
class ArenaState:
    """Everything :func:`pair` needs: the players, the arena's settings and the time now."""

    players: tuple[ArenaPlayer, ...]
    settings: ArenaSettings = ArenaSettings()
    now: float = 0.0


@dataclass(frozen=True, slots=True)
class Duel:
    """A game to start: ``first`` ranks above ``second``; ``second`` is ``None`` for a computer
    (the caller picks its level, for example with :func:`tournaments.pool.closest_level`)."""

    first: int
    second: int | None


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of the table. ``performance`` is ``None`` before the first game; ``streak`` is
    the wins in a row at the end of the player's games and ``fire`` says the next win doubles."""

    rank: int
    player: int
    score: int
    games: int
    wins: int
    draws: int
    losses: int
    performance: int | None
    streak: int
    fire: bool
    status: Status


# Scoring ------------------------------------------------------------------------------------


def game_points(games: Iterable[ArenaGame]) -> tuple[int, ...]:
    """The points each game earned, in order: a win 2 (4 on fire), a draw 1, a loss 0.

    Kept per game, not only summed, so that the arena post can say "+4 🔥" for each line.
    """
    points: list[int] = []
    run = 0
    for game in games:
        if game.outcome is Outcome.WIN:
            points.append(WIN_POINTS * (2 if run >= FIRE_AFTER else 1))
            run += 1
        else:
            points.append(DRAW_POINTS if game.outcome is Outcome.DRAW else LOSS_POINTS)
            run = 0
    return tuple(points)


def score(games: Iterable[ArenaGame]) -> int:
    """The arena score: the sum of :func:`game_points`."""
    return sum(game_points(games))


def streak(games: Sequence[ArenaGame]) -> int:
    """The wins in a row at the end of ``games`` (0 after a draw or a loss)."""
    run = 0
    for game in reversed(games):
        if game.outcome is not Outcome.WIN:
            break
        run += 1
    return run


def on_fire(games: Sequence[ArenaGame]) -> bool:
    """The streak mark: two wins in a row or more, so the player's next win counts double."""
    return streak(games) >= FIRE_AFTER


def _performance_exact(games: Sequence[ArenaGame]) -> Fraction | None:
    if not games:
        return None
    balance = sum(
        1 if g.outcome is Outcome.WIN else -1 if g.outcome is Outcome.LOSS else 0 for g in games
    )
    total = sum(g.opponent_rating for g in games) + PERFORMANCE_SPREAD * balance
    return Fraction(total, len(games))


def performance(games: Sequence[ArenaGame]) -> int | None:
    """The performance rating, Lichess's linear estimate::

        performance = average opponent rating + 500 × (wins − losses) / games

    rounded half up; ``None`` without a game. A computer opponent counts with its calibrated
    rating. A draw moves it toward the opponents' average, a win 500 points above it.
    """
    exact = _performance_exact(games)
    if exact is None:
        return None
    return (2 * exact.numerator + exact.denominator) // (2 * exact.denominator)


def standings(players: Iterable[ArenaPlayer]) -> tuple[Standing, ...]:
    """The table: by score, then performance (exact, before rounding; a player without a game
    after those with one), then rating, then id, ranked 1, 2, 3, … Players who paused or left
    keep their line: their points stay theirs, as on Lichess."""
    rows: list[tuple[tuple[int, int, Fraction, int, int], ArenaPlayer, int, Fraction | None]] = []
    for player in _unique(players):
        points = score(player.games)
        exact = _performance_exact(player.games)
        has_games = 1 if exact is not None else 0
        key = (-points, -has_games, -(exact or Fraction(0)), -player.rating, player.id)
        rows.append((key, player, points, exact))
    rows.sort(key=lambda row: row[0])
    table: list[Standing] = []
    for rank, (_, player, points, _exact) in enumerate(rows, start=1):
        outcomes = [g.outcome for g in player.games]
        run = streak(player.games)
        table.append(
            Standing(
                rank=rank,
                player=player.id,
                score=points,
                games=len(outcomes),
                wins=outcomes.count(Outcome.WIN),
                draws=outcomes.count(Outcome.DRAW),
                losses=outcomes.count(Outcome.LOSS),
                performance=performance(player.games),
                streak=run,
                fire=run >= FIRE_AFTER,
                status=player.status,
            )
        )
    return tuple(table)


# Pairing ------------------------------------------------------------------------------------


def last_opponent(player: ArenaPlayer) -> int | None:
    """The person this player met in their previous game; ``None`` after a computer or
    before any game (a computer never blocks anyone)."""
    return player.games[-1].opponent if player.games else None


def _just_met(a: ArenaPlayer, b: ArenaPlayer) -> bool:
    return last_opponent(a) == b.id or last_opponent(b) == a.id


def pair(state: ArenaState, seed: int) -> tuple[Duel, ...]:
    """The duels to start now among the ``WAITING`` players (see the module's docstring).

    Deterministic for a given ``seed``: ties in score and rating are drawn with
    ``random.Random(seed)``, one number per waiting player in the order of their ids, so the
    input's order does not matter. Work is O(n²) in the waiting players at worst.
    """
    players = _unique(state.players)
    rng = random.Random(seed)
    waiting = sorted((p for p in players if p.status is Status.WAITING), key=lambda p: p.id)
    draw = {p.id: rng.random() for p in waiting}
    points = {p.id: score(p.games) for p in waiting}
    ranked = sorted(waiting, key=lambda p: (-points[p.id], -p.rating, draw[p.id]))
    rank = {p.id: i for i, p in enumerate(ranked)}

    duels: list[tuple[ArenaPlayer, ArenaPlayer]] = []
    left: list[ArenaPlayer] = []
    taken: set[int] = set()
    for i, first in enumerate(ranked):
        if first.id in taken:
            continue
        partner = next(
            (
                q
                for q in ranked[i + 1 :]
                if q.id not in taken and not _just_met(first, q)
            ),
            None,
        )
        if partner is None:
            left.append(first)
            continue
        taken.update((first.id, partner.id))
        duels.append((first, partner))

    # Leftovers are pairwise blocked (each was offered every later free player): exchange
    # partners with the nearest duel whose two players each accept one of them.
    while len(left) >= 2:
        u, v = left[0], left[1]
        swap = _exchange(u, v, duels, rank)
        if swap is None:
            break
        index, new = swap
        duels[index : index + 1] = new
        left = left[2:]

    active = [p for p in players if p.status in (Status.WAITING, Status.PLAYING)]
    if len(left) == 2 and len(active) == 2:
        # The two are alone in the arena: a rematch in a row is the only game there is.
        duels.append((left[0], left[1]))
        left = []

    # Each duel lists its higher-ranked player first; duels go from the top of the table down.
    ordered = [(a, b) if rank[a.id] < rank[b.id] else (b, a) for a, b in duels]
    chosen = [Duel(a.id, b.id) for a, b in sorted(ordered, key=lambda d: rank[d[0].id])]
    if state.settings.bots:
        chosen += [
            Duel(p.id, None)
            for p in left
            if state.now - p.waiting_since >= state.settings.computer_after
        ]
    return tuple(chosen)


def _exchange(
    u: ArenaPlayer,
    v: ArenaPlayer,
    duels: list[tuple[ArenaPlayer, ArenaPlayer]],
    rank: dict[int, int],
) -> tuple[int, list[tuple[ArenaPlayer, ArenaPlayer]]] | None:
    """The duel nearest in rank to ``u`` and ``v`` that can be split into two duels with
    them, with its index and the two new duels; ``None`` when none can."""
    middle = (rank[u.id] + rank[v.id]) / 2
    order = sorted(
        range(len(duels)),
        key=lambda i: abs((rank[duels[i][0].id] + rank[duels[i][1].id]) / 2 - middle),
    )
    for i in order:
        x, y = duels[i]
        for a, b in ((x, y), (y, x)):
            if not _just_met(u, a) and not _just_met(v, b):
                return i, [(a, u), (b, v)]
    return None


def _unique(players: Iterable[ArenaPlayer]) -> list[ArenaPlayer]:
    listed = list(players)
    seen: set[int] = set()
    for player in listed:
        if player.id in seen:
            raise TournamentError(f"player {player.id} is in the arena twice")
        seen.add(player.id)
    return listed
