"""The Swiss league's pure logic: Buchholz and Sonneborn–Berger on hand-worked tables, and
the pairing rules checked over 200 random leagues against brute force; the blossom matching
against brute force too."""

from __future__ import annotations

import random
import time
from itertools import combinations

import pytest

from tournaments import Outcome, TournamentError
from tournaments.matching import FREE, has_perfect_matching, maximum_matching
from tournaments.swiss import (
    NoPairing,
    RoundPairing,
    SwissGame,
    SwissPlayer,
    SwissRound,
    SwissState,
    guaranteed_rounds,
    max_rounds,
    pair_round,
    points,
    standings,
)

W, D, L = Outcome.WIN, Outcome.DRAW, Outcome.LOSS


# Tie-breaks, worked by hand -----------------------------------------------------------------


def test_buchholz_and_sonneborn_berger_with_byes_worked_by_hand() -> None:
    """Five players, three rounds, a bye each round:

    round 1: A–B 1–0, C–D ½–½, bye E      round 2: A–C ½–½, B–E 1–0, bye D
    round 3: A–E 1–0, B–D ½–½, bye C

    Points: A 2½, C 2, D 2, B 1½, E 1. The byes' virtual opponents (S before the bye +
    ½ × (3 − R)): E's (round 1) 0 + 1 = 1, D's (round 2) ½ + ½ = 1, C's (round 3) 1 + 0 = 1.

    | player | opponents' points        | Buchholz | Sonneborn–Berger            |
    |--------|--------------------------|----------|-----------------------------|
    | A      | B 1½ + C 2 + E 1         | 4½       | B 1½ + ½·C 2 + E 1 = 3½     |
    | B      | A 2½ + E 1 + D 2         | 5½       | E 1 + ½·D 2 = 2             |
    | C      | D 2 + A 2½ + virtual 1   | 5½       | ½·D 2 + ½·A 2½ + 1 = 3¼     |
    | D      | C 2 + virtual 1 + B 1½   | 4½       | ½·C 2 + 1 + ½·B 1½ = 2¾     |
    | E      | virtual 1 + B 1½ + A 2½  | 5        | 1                           |

    C and D tie on points; Buchholz puts C first.
    """
    A_, B_, C_, D_, E = 1, 2, 3, 4, 5
    state = SwissState(
        tuple(SwissPlayer(pid, 1500) for pid in (A_, B_, C_, D_, E)),
        (
            SwissRound((SwissGame(A_, B_, W), SwissGame(C_, D_, D)), bye=E),
            SwissRound((SwissGame(A_, C_, D), SwissGame(B_, E, W)), bye=D_),
            SwissRound((SwissGame(A_, E, W), SwissGame(B_, D_, D)), bye=C_),
        ),
    )
    table = standings(state)
    assert [(s.player, s.points, s.buchholz, s.sonneborn_berger) for s in table] == [
        (A_, 2.5, 4.5, 3.5),
        (C_, 2.0, 5.5, 3.25),
        (D_, 2.0, 4.5, 2.75),
        (B_, 1.5, 5.5, 2.0),
        (E, 1.0, 5.0, 1.0),
    ]
    assert [s.rank for s in table] == [1, 2, 3, 4, 5]
    assert (table[1].wins, table[1].draws, table[1].losses, table[1].byes) == (0, 2, 0, 1)


def test_sonneborn_berger_breaks_a_buchholz_tie_worked_by_hand() -> None:
    """A round robin of four (every Buchholz of equal points is equal):

    |   | A | B | C | D | points |
    |---|---|---|---|---|--------|
    | A | · | ½ | 1 | 0 | 1½     |
    | B | ½ | · | 1 | ½ | 2      |
    | C | 0 | 0 | · | 1 | 1      |
    | D | 1 | ½ | 0 | · | 1½     |

    A and D: Buchholz 2 + 1 + 1½ = 4½ both. Sonneborn–Berger: A = ½·B 2 + C 1 = 2,
    D = A 1½ + ½·B 2 = 2½, so D ranks above A.
    """
    A_, B_, C_, D_ = 1, 2, 3, 4
    state = SwissState(
        tuple(SwissPlayer(pid, 1500) for pid in (A_, B_, C_, D_)),
        (
            SwissRound((SwissGame(A_, B_, D), SwissGame(C_, D_, W))),
            SwissRound((SwissGame(A_, C_, W), SwissGame(B_, D_, D))),
            SwissRound((SwissGame(A_, D_, L), SwissGame(B_, C_, W))),
        ),
    )
    table = standings(state)
    assert [(s.player, s.points, s.buchholz, s.sonneborn_berger) for s in table] == [
        (B_, 2.0, 4.0, 2.5),
        (D_, 1.5, 4.5, 2.5),
        (A_, 1.5, 4.5, 2.0),
        (C_, 1.0, 5.0, 1.5),
    ]


def test_bad_rounds_are_refused() -> None:
    players = (SwissPlayer(1, 1500), SwissPlayer(2, 1500), SwissPlayer(3, 1500))
    twice = SwissRound((SwissGame(1, 2, W),), bye=1)
    with pytest.raises(TournamentError):
        standings(SwissState(players, (twice,)))
    stranger = SwissRound((SwissGame(1, 9, W),), bye=3)
    with pytest.raises(TournamentError):
        pair_round(SwissState(players, (stranger,)))
    with pytest.raises(TournamentError):
        points(SwissState((*players, SwissPlayer(1, 1400))))


# Pairing, by hand ---------------------------------------------------------------------------


def test_round_one_meets_top_half_against_bottom_half() -> None:
    players = tuple(SwissPlayer(pid, 2000 - 10 * pid) for pid in range(1, 9))
    assert pair_round(SwissState(players)) == RoundPairing(((1, 5), (2, 6), (3, 7), (4, 8)), None)


def test_round_two_pairs_by_score_and_the_bye_goes_to_the_lowest_without_one() -> None:
    players = tuple(SwissPlayer(pid, 2000 - 10 * pid) for pid in range(1, 8))
    first = pair_round(SwissState(players))
    assert first == RoundPairing(((1, 4), (2, 5), (3, 6)), 7)
    # 1, 2 and 6 win; 7 has the bye (1 point): the winners' group is 1, 2, 6, 7.
    done = SwissRound((SwissGame(1, 4, W), SwissGame(2, 5, W), SwissGame(3, 6, L)), bye=7)
    second = pair_round(SwissState(players, (done,)))
    # Ranked: 1, 2, 6, 7 (1 point) then 3, 4, 5 (0). The bye goes to 5, the lowest; 1–6 and
    # 2–7 (top half against bottom half), then 3–4.
    assert second == RoundPairing(((1, 6), (2, 7), (3, 4)), 5)


def test_a_repeat_is_avoided_by_the_next_preference_and_withdrawn_players_rest() -> None:
    players = (
        SwissPlayer(1, 1900), SwissPlayer(2, 1800), SwissPlayer(3, 1700), SwissPlayer(4, 1600),
        SwissPlayer(5, 1500, active=False),
    )
    met = SwissRound((SwissGame(1, 3, D), SwissGame(2, 4, D)), bye=5)
    # All on ½ except 5 (the bye, 1 point, but withdrawn). 1 would meet 3 (half a group below)
    # but has; then 4.
    assert pair_round(SwissState(players, (met,))) == RoundPairing(((1, 4), (2, 3)), None)


def test_no_pairing_once_everyone_has_met() -> None:
    players = tuple(SwissPlayer(pid, 1500) for pid in range(1, 5))
    state = SwissState(players)
    for _ in range(max_rounds(4)):
        pairing = pair_round(state)
        games = tuple(SwissGame(a, b, W) for a, b in pairing.boards)
        state = SwissState(players, (*state.rounds, SwissRound(games, pairing.bye)))
    with pytest.raises(NoPairing):
        pair_round(state)
    assert max_rounds(4) == 3 and max_rounds(7) == 7


# Pairing, 200 random leagues ----------------------------------------------------------------


def brute_pairings(players: list[int], met: set[frozenset[int]]) -> bool:
    if not players:
        return True
    first, rest = players[0], players[1:]
    return any(
        frozenset((first, other)) not in met
        and brute_pairings(rest[:i] + rest[i + 1 :], met)
        for i, other in enumerate(rest)
    )


@pytest.mark.parametrize("seed", range(200))
def test_random_league_keeps_the_pairing_rules(seed: int) -> None:
    rng = random.Random(seed)
    count = rng.randint(2, 12)
    players = [SwissPlayer(pid, rng.randint(1000, 2200)) for pid in range(1, count + 1)]
    state = SwissState(tuple(players))
    byes: list[int] = []
    for _ in range(max_rounds(count) + 1):
        if rng.random() < 0.05:  # someone withdraws
            pid = rng.randrange(count)
            players[pid] = SwissPlayer(players[pid].id, players[pid].rating, active=False)
            state = SwissState(tuple(players), state.rounds)
        active = [p.id for p in players if p.active]
        met = {frozenset((g.first, g.second)) for r in state.rounds for g in r.games}
        possible = any(
            bye not in byes and brute_pairings([p for p in active if p != bye], met)
            for bye in active
        ) if len(active) % 2 else brute_pairings(active, met)
        try:
            pairing = pair_round(state)
        except NoPairing:
            assert not possible, "a pairing existed"
            break
        assert possible
        assert pairing == pair_round(state, search_steps=0), "the look-ahead pairs alike"
        seated = [x for board in pairing.boards for x in board]
        if pairing.bye is not None:
            seated.append(pairing.bye)
        assert sorted(seated) == sorted(active), "each active player once"
        for a, b in pairing.boards:
            assert frozenset((a, b)) not in met, "no repeated pairing"
        if len(active) % 2:
            assert pairing.bye is not None and pairing.bye not in byes
            # Nobody ranked lower could have taken it.
            total = points(state)
            rating = {p.id: p.rating for p in players}
            ranked = sorted(active, key=lambda pid: (-total[pid], -rating[pid], pid))
            for lower in ranked[ranked.index(pairing.bye) + 1 :]:
                assert lower in byes or not brute_pairings(
                    [p for p in active if p != lower], met
                )
            byes.append(pairing.bye)
        else:
            assert pairing.bye is None
        games = tuple(SwissGame(a, b, rng.choice([W, W, D, L, L])) for a, b in pairing.boards)
        state = SwissState(tuple(players), (*state.rounds, SwissRound(games, pairing.bye)))
    assert len(byes) == len(set(byes)), "a bye at most once"
    table = standings(state)
    assert sum(s.points for s in table) == sum(
        len(r.games) + (r.bye is not None) for r in state.rounds
    )


@pytest.mark.parametrize("seed", range(40))
def test_the_guaranteed_rounds_always_pair(seed: int) -> None:
    rng = random.Random(seed)
    count = rng.randint(2, 30)
    players = tuple(SwissPlayer(pid, rng.randint(1000, 2200)) for pid in range(1, count + 1))
    state = SwissState(players)
    for _ in range(guaranteed_rounds(count)):
        pairing = pair_round(state)
        games = tuple(SwissGame(a, b, rng.choice([W, D, L])) for a, b in pairing.boards)
        state = SwissState(players, (*state.rounds, SwissRound(games, pairing.bye)))
    assert len(state.rounds) == count // 2


def test_pairing_a_round_of_200_is_fast() -> None:
    rng = random.Random(3)
    players = tuple(SwissPlayer(pid, rng.randint(1000, 2200)) for pid in range(1, 201))
    state = SwissState(players)
    slowest = 0.0
    for _ in range(9):
        started = time.perf_counter()
        pairing = pair_round(state)
        slowest = max(slowest, time.perf_counter() - started)
        games = tuple(SwissGame(a, b, rng.choice([W, D, L])) for a, b in pairing.boards)
        state = SwissState(players, (*state.rounds, SwissRound(games, pairing.bye)))
    assert slowest < 1.0, slowest  # measured about 25 ms


def test_a_league_of_thousands_pairs_without_recursion() -> None:
    # 1,100 boards: a recursive search would pass Python's limit of 1,000 frames.
    players = tuple(SwissPlayer(pid, 1000 + pid % 900) for pid in range(2201))
    pairing = pair_round(SwissState(players))
    assert len(pairing.boards) == 1100 and pairing.bye is not None


# The blossom matching -----------------------------------------------------------------------


def brute_matching_size(n: int, edges: set[frozenset[int]]) -> int:
    best = 0
    edge_list = sorted(tuple(sorted(e)) for e in edges)
    for size in range(n // 2, 0, -1):
        for chosen in combinations(edge_list, size):
            ends = [v for e in chosen for v in e]
            if len(ends) == len(set(ends)):
                return size
    return best


@pytest.mark.parametrize("seed", range(150))
def test_blossom_matching_is_maximum(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 10)
    density = rng.random()
    edges = {frozenset(e) for e in combinations(range(n), 2) if rng.random() < density}
    adjacent = [[u for u in range(n) if frozenset((u, v)) in edges] for v in range(n)]
    mate = maximum_matching(adjacent)
    for v, u in enumerate(mate):
        if u != FREE:
            assert mate[u] == v and frozenset((u, v)) in edges
    size = sum(1 for u in mate if u != FREE) // 2
    assert size == brute_matching_size(n, edges)
    assert has_perfect_matching(adjacent) == (2 * size == n)


def test_blossom_finds_the_path_through_an_odd_cycle() -> None:
    """x=0, y=1, r=2, z=3: the triangle r–x–y and the tail x–z. The greedy start matches x–y
    and leaves r and z free; the only augmenting path, r–y=x–z, leaves r through y, so x must
    be reached as an outer vertex of the blossom r, x, y."""
    adjacent = [[1, 2, 3], [0, 2], [0, 1], [0]]
    assert maximum_matching(adjacent) == [3, 2, 1, 0]
    assert has_perfect_matching(adjacent)
    assert not has_perfect_matching([[1, 2], [0, 2], [0, 1], []])
