"""The arena's pure logic: fire-streak scoring and performance worked by hand, standings,
and continuous pairing checked over 200 simulated arenas with seeded randomness."""

from __future__ import annotations

import random
import time

import pytest

from tournaments import Outcome, TournamentError
from tournaments.arena import (
    ArenaGame,
    ArenaPlayer,
    ArenaSettings,
    ArenaState,
    Duel,
    Status,
    game_points,
    on_fire,
    pair,
    performance,
    score,
    standings,
    streak,
)

W, D, L = Outcome.WIN, Outcome.DRAW, Outcome.LOSS


def games(outcomes: str, rating: int = 1500) -> tuple[ArenaGame, ...]:
    """Games against distinct nobodies from a string like "WWDL"."""
    code = {"W": W, "D": D, "L": L}
    return tuple(ArenaGame(1000 + i, rating, code[c]) for i, c in enumerate(outcomes))


# Scoring, worked by hand ------------------------------------------------------------------


def test_two_wins_light_the_fire_and_every_further_win_doubles() -> None:
    # W W W W L W W W D W: 2 2 4 4 | 0 | 2 2 4 | 1 | 2
    history = games("WWWWLWWWDW")
    assert game_points(history) == (2, 2, 4, 4, 0, 2, 2, 4, 1, 2)
    assert score(history) == 23
    assert [on_fire(history[:n]) for n in range(len(history) + 1)] == [
        False, False, True, True, True, False, False, True, True, False, False,
    ]
    assert streak(history) == 1


def test_a_draw_on_fire_counts_one_and_ends_the_streak() -> None:
    history = games("WWWD")
    assert game_points(history) == (2, 2, 4, 1)
    assert streak(history) == 0 and not on_fire(history)
    # The next two wins count 2 each again; only the third is doubled.
    assert game_points(games("WWWDWWW")) == (2, 2, 4, 1, 2, 2, 4)


def test_performance_is_average_opponent_rating_plus_500_times_balance_per_game() -> None:
    mixed = (ArenaGame(1, 1500, W), ArenaGame(2, 1600, D), ArenaGame(3, 1700, L))
    assert performance(mixed) == 1600  # (4800 + 500·0) / 3
    assert performance((ArenaGame(1, 1500, W), ArenaGame(2, 1700, W))) == 2100
    assert performance((ArenaGame(1, 1500, L),)) == 1000
    # (1500 + 1501) / 2 = 1500.5 rounds half up.
    assert performance((ArenaGame(1, 1500, D), ArenaGame(2, 1501, D))) == 1501
    assert performance(()) is None
    # A computer opponent (None) counts with its rating.
    assert performance((ArenaGame(None, 1800, W),)) == 2300


def test_standings_rank_by_score_then_performance_and_keep_paused_players() -> None:
    ann = ArenaPlayer(1, 1500, Status.WAITING, (ArenaGame(2, 1400, W), ArenaGame(3, 1400, D)))
    bob = ArenaPlayer(2, 1400, Status.PAUSED, (ArenaGame(1, 1500, L), ArenaGame(4, 1900, W)))
    cid = ArenaPlayer(3, 1400, Status.PLAYING, (ArenaGame(1, 1500, D), ArenaGame(4, 1900, D)))
    dan = ArenaPlayer(4, 1900, Status.LEFT, (ArenaGame(2, 1400, L), ArenaGame(3, 1400, D)))
    eve = ArenaPlayer(5, 2000, Status.WAITING)
    table = standings([eve, dan, cid, bob, ann])
    # Ann 3 (perf 1650), Cid 2 (1700) and Bob 2 (1700: (1500+1900)/2 + 0): a tie in performance
    # too, broken by rating (equal) then id; Dan 1 (1150); Eve 0 and no game: last.
    assert [(s.rank, s.player, s.score, s.performance) for s in table] == [
        (1, 1, 3, 1650), (2, 2, 2, 1700), (3, 3, 2, 1700), (4, 4, 1, 1150), (5, 5, 0, None),
    ]
    assert table[1].status is Status.PAUSED and table[3].status is Status.LEFT
    assert (table[0].wins, table[0].draws, table[0].losses, table[0].games) == (1, 1, 0, 2)


def test_standings_show_the_fire_mark() -> None:
    hot = ArenaPlayer(1, 1500, games=games("LWWW"))
    cold = ArenaPlayer(2, 1500, games=games("WWL"))
    marks = {s.player: (s.streak, s.fire, s.score) for s in standings([hot, cold])}
    assert marks == {1: (3, True, 8), 2: (0, False, 4)}


def test_a_player_twice_is_refused() -> None:
    with pytest.raises(TournamentError):
        standings([ArenaPlayer(1, 1500), ArenaPlayer(1, 1600)])
    with pytest.raises(TournamentError):
        pair(ArenaState((ArenaPlayer(1, 1500), ArenaPlayer(1, 1600))), seed=1)


# Pairing, by hand -------------------------------------------------------------------------


def test_waiting_players_pair_by_score_first_then_rating() -> None:
    players = (
        ArenaPlayer(1, 2000, games=games("L")),  # 0 points, the best rating
        ArenaPlayer(2, 1200, games=games("WW")),  # 4 points
        ArenaPlayer(3, 1300, games=games("W")),  # 2 points
        ArenaPlayer(4, 1900, games=games("W")),  # 2 points, better rating than 3
        ArenaPlayer(5, 1800, Status.PLAYING),
    )
    assert pair(ArenaState(players), seed=3) == (Duel(2, 4), Duel(3, 1))


def test_never_the_same_opponent_twice_in_a_row_while_another_can_come() -> None:
    met = (ArenaGame(2, 1500, W),)
    ann = ArenaPlayer(1, 1500, games=met)
    bob = ArenaPlayer(2, 1500, games=(ArenaGame(1, 1500, L),))
    cid = ArenaPlayer(3, 1500, Status.PLAYING)
    # Cid will be free soon: Ann and Bob wait rather than meet again at once.
    assert pair(ArenaState((ann, bob, cid)), seed=1) == ()
    # Once Cid waits, one of them plays Cid and the other waits.
    waiting = ArenaPlayer(3, 1500)
    (duel,) = pair(ArenaState((ann, bob, waiting)), seed=1)
    assert 3 in (duel.first, duel.second)
    # Alone in the arena (Cid paused), they meet again: otherwise nobody would ever play.
    paused = ArenaPlayer(3, 1500, Status.PAUSED)
    assert pair(ArenaState((ann, bob, paused)), seed=1) == (Duel(1, 2),)


def test_just_met_leftovers_exchange_partners_with_a_duel() -> None:
    # By score: 1, 2, 3, 4. Greedy pairs 1–2, then 3 and 4 have just met: 1–3 and 2–4 (or
    # 1–4 and 2–3) pair all four.
    players = (
        ArenaPlayer(1, 1500, games=games("WWW")),
        ArenaPlayer(2, 1500, games=games("WW")),
        ArenaPlayer(3, 1500, games=(ArenaGame(4, 1500, W),)),
        ArenaPlayer(4, 1500, games=(ArenaGame(3, 1500, D),)),
    )
    duels = pair(ArenaState(players), seed=5)
    assert len(duels) == 2
    assert {frozenset((d.first, d.second)) for d in duels} & {frozenset((3, 4))} == set()


def test_a_lone_waiting_player_waits_unless_computers_are_allowed() -> None:
    ann = ArenaPlayer(1, 1500, waiting_since=100.0)
    bob = ArenaPlayer(2, 1500, Status.PLAYING)
    assert pair(ArenaState((ann, bob), now=200.0), seed=1) == ()
    bots = ArenaSettings(bots=True, computer_after=10.0)
    assert pair(ArenaState((ann, bob), bots, now=105.0), seed=1) == ()
    assert pair(ArenaState((ann, bob), bots, now=110.0), seed=1) == (Duel(1, None),)


def test_paused_and_departed_players_are_never_paired() -> None:
    players = (
        ArenaPlayer(1, 1500, Status.PAUSED),
        ArenaPlayer(2, 1500, Status.LEFT),
        ArenaPlayer(3, 1500, Status.PLAYING),
        ArenaPlayer(4, 1500),
    )
    assert pair(ArenaState(players, ArenaSettings(bots=True), now=99.0), seed=1) == (
        Duel(4, None),
    )


def test_ties_are_drawn_with_the_seed_and_the_input_order_does_not_matter() -> None:
    players = tuple(ArenaPlayer(i, 1500) for i in range(1, 9))  # all tied
    results = {pair(ArenaState(players), seed=s) for s in range(20)}
    assert len(results) > 1  # the seed decides ties
    for s in range(20):
        shuffled = list(players)
        random.Random(s).shuffle(shuffled)
        assert pair(ArenaState(tuple(shuffled)), seed=s) == pair(ArenaState(players), seed=s)


# Pairing, 200 simulated arenas --------------------------------------------------------------


def allowed(a: ArenaPlayer, b: ArenaPlayer) -> bool:
    last_a = a.games[-1].opponent if a.games else None
    last_b = b.games[-1].opponent if b.games else None
    return last_a != b.id and last_b != a.id


def maximum_duels(waiting: list[ArenaPlayer]) -> int:
    """The most duels the rematch rule allows among ``waiting`` (brute force, small n)."""
    if len(waiting) < 2:
        return 0
    first, rest = waiting[0], waiting[1:]
    best = maximum_duels(rest)
    for i, other in enumerate(rest):
        if allowed(first, other):
            best = max(best, 1 + maximum_duels(rest[:i] + rest[i + 1 :]))
    return best


@pytest.mark.parametrize("seed", range(200))
def test_simulated_arena_keeps_the_pairing_rules(seed: int) -> None:
    rng = random.Random(seed)
    count = rng.randint(2, 11)
    bots = rng.random() < 0.3
    settings = ArenaSettings(bots=bots, computer_after=rng.choice([0.0, 5.0, 20.0]))
    players = {i: ArenaPlayer(i, rng.randint(1000, 2200)) for i in range(1, count + 1)}
    running: list[tuple[int, int | None]] = []
    for tick in range(40):
        now = float(tick * 5)
        # Some games finish, some players pause, come back or leave.
        for game in list(running):
            if rng.random() < 0.5:
                running.remove(game)
                a, b = game
                outcome = rng.choice([W, W, D, L, L])
                rating_b = players[b].rating if b is not None else 1700
                for me, other, result, other_rating in (
                    (a, b, outcome, rating_b),
                    (b, a, outcome.reverse, players[a].rating),
                ):
                    if me is None:
                        continue
                    p = players[me]
                    players[me] = ArenaPlayer(
                        p.id, p.rating, Status.WAITING,
                        (*p.games, ArenaGame(other, other_rating, result)), now,
                    )
        for pid, p in list(players.items()):
            roll = rng.random()
            if p.status is Status.WAITING and roll < 0.05:
                players[pid] = ArenaPlayer(p.id, p.rating, Status.PAUSED, p.games, now)
            elif p.status is Status.PAUSED and roll < 0.3:
                players[pid] = ArenaPlayer(p.id, p.rating, Status.WAITING, p.games, now)
            elif p.status is Status.PAUSED and roll > 0.97:
                players[pid] = ArenaPlayer(p.id, p.rating, Status.LEFT, p.games, now)
        state = ArenaState(tuple(players.values()), settings, now)
        duels = pair(state, seed=seed * 1000 + tick)
        assert duels == pair(state, seed=seed * 1000 + tick)

        waiting = [p for p in players.values() if p.status is Status.WAITING]
        active = [p for p in players.values() if p.status in (Status.WAITING, Status.PLAYING)]
        seated = [x for d in duels for x in (d.first, d.second) if x is not None]
        assert len(seated) == len(set(seated)), "a player twice in one pairing"
        assert set(seated) <= {p.id for p in waiting}, "only waiting players are paired"
        people = [d for d in duels if d.second is not None]
        for d in people:
            assert d.second is not None
            if not allowed(players[d.first], players[d.second]):
                # A rematch in a row only when nobody else could come.
                assert len(active) == 2, (d, active)
        if not bots:
            assert len(people) == len(duels)
        if len(active) > 2:
            # As many duels as the rematch rule allows among the waiting players.
            assert len(people) == maximum_duels(waiting)
        for d in duels:
            if d.second is None:
                assert now - players[d.first].waiting_since >= settings.computer_after
        for d in duels:
            for pid in (d.first, d.second):
                if pid is not None:
                    p = players[pid]
                    players[pid] = ArenaPlayer(p.id, p.rating, Status.PLAYING, p.games, now)
            running.append((d.first, d.second))


def test_pairs_with_rank_neighbours_when_nothing_blocks() -> None:
    rng = random.Random(7)
    players = tuple(
        ArenaPlayer(i, rng.randint(1000, 2000), games=games(rng.choice(["", "W", "WW", "L"])))
        for i in range(1, 11)
    )
    duels = pair(ArenaState(players), seed=2)
    order = sorted(players, key=lambda p: (-score(p.games), -p.rating))
    expected = [Duel(a.id, b.id) for a, b in zip(order[::2], order[1::2], strict=True)]
    assert list(duels) == expected


# Speed ------------------------------------------------------------------------------------


def test_pairing_500_and_standings_of_200_are_fast() -> None:
    rng = random.Random(11)

    def history(n: int) -> tuple[ArenaGame, ...]:
        return tuple(
            ArenaGame(rng.randint(1, 500), rng.randint(1000, 2000), rng.choice([W, D, L]))
            for _ in range(n)
        )

    waiting = tuple(ArenaPlayer(i, rng.randint(1000, 2200), games=history(20)) for i in range(500))
    started = time.perf_counter()
    duels = pair(ArenaState(waiting), seed=1)
    pairing = time.perf_counter() - started
    assert len(duels) == 250
    table = tuple(ArenaPlayer(i, rng.randint(1000, 2200), games=history(30)) for i in range(200))
    started = time.perf_counter()
    assert len(standings(table)) == 200
    ranking = time.perf_counter() - started
    # Measured about 10 ms and 5 ms; the bounds leave room for a busy machine.
    assert pairing < 0.5 and ranking < 0.2, (pairing, ranking)
