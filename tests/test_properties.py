"""Property tests over seeded random playouts of every table (issue 2's proof).

The slow scorer below is written independently of the engine: it tries every value choice
itself and never calls ``is_combination`` or the engine's tables.
"""

from __future__ import annotations

import itertools
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from krendzu import (
    DealSizes,
    EndTurn,
    Match,
    Pass,
    Place,
    Settings,
    Table,
    export_record,
    import_record,
    replay,
)

RANK_VALUES = {"6": (6,), "7": (7,), "8": (8,), "9": (9,), "T": (10,), "J": (2, 12),
               "Q": (3, 13), "K": (4, 14), "A": (1, 5, 11, 15)}
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


def slow_line_scores(codes: list[str]) -> bool:
    if len({c[1] for c in codes}) == 1:
        return True
    for values in itertools.product(*(RANK_VALUES[c[0]] for c in codes)):
        step = values[1] - values[0]
        if step != 0 and all(values[i + 1] - values[i] == step for i in range(3)):
            return True
    return False


def slow_new_lines(board: dict[tuple[int, int], str], x: int, y: int) -> set[frozenset]:
    """Every full scoring line of four through (x, y) on ``board`` (codes by cell)."""
    found = set()
    for dx, dy in DIRECTIONS:
        for back in range(4):
            cells = tuple((x + (i - back) * dx, y + (i - back) * dy) for i in range(4))
            if all(c in board for c in cells) and slow_line_scores([board[c] for c in cells]):
                found.add(frozenset(cells))
    return found


tables = st.sampled_from(list(Table))
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def random_settings(table: Table, rng: random.Random) -> Settings:
    exchange = rng.choice([0, 0, 1, 3])
    if rng.random() < 0.5:
        return Settings(table=table, exchange_limit=exchange)
    n_att = {Table.DUEL: 1, Table.TRIO_LONE_ATTACKER: 1, Table.TRIO_LONE_DEFENDER: 2,
             Table.TEAMS: 2}[table]
    n_def = table.players - n_att
    while True:
        a, d = rng.randint(1, 14), rng.randint(1, 18)
        if n_att * a + n_def * d <= 36:
            return Settings(table=table, exchange_limit=exchange, deal=DealSizes(a, d))


@settings(max_examples=40, deadline=None)
@given(table=tables, seed=seeds)
def test_random_matches_keep_every_invariant(table: Table, seed: int) -> None:
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(table.players)]
    match = Match(players, random_settings(table, rng), seed=seed)
    boards: dict[int, dict[tuple[int, int], str]] = {}
    expected_points: dict[int, int] = {}
    steps = 0
    while not match.is_over:
        tour = match.tour
        t = match.tour_index
        board = boards.setdefault(t, {})
        # Cards are conserved: hands + board + set aside + pending discards = the deck.
        pool = [c for h in tour.hands for c in h] + [c for c, _ in tour.placed] + tour.stock
        pool += [c for d in tour.discards.values() for c in d] if tour.phase != "play" else []
        assert sorted(pool) == list(range(36))
        legal = match.legal_actions()
        assert legal, "a legal action exists until the end"
        action = rng.choice(legal)
        # Validate a sample of illegal placements: never accepted.
        if isinstance(action, Place) and tour.placed:
            assert (action.x, action.y) not in board
        before = tour.points
        match.apply(action)
        steps += 1
        assert steps < 2000, "the match always ends"
        if isinstance(action, Place):
            board[(action.x, action.y)] = action.card.code()
            new = slow_new_lines(board, action.x, action.y)
            assert tour.points - before == len(new)
            expected_points[t] = expected_points.get(t, 0) + len(new)
            got = {frozenset(c.cells) for c in tour.combos[len(tour.combos) - len(new):]}
            assert got == new
        elif isinstance(action, Pass | EndTurn):
            assert tour.points == before
    for t, tour in enumerate(match.tours):
        assert tour.is_over
        assert tour.points == expected_points.get(t, 0)
        assert not any(tour.hands)
    # export -> import -> replay reproduces the scores.
    record = json.loads(json.dumps(export_record(match)))
    report = replay(record)
    assert report["valid"] is True
    assert report["totals"] == dict(zip(players, match.totals(), strict=True))
    assert all(t["finished"] for t in report["tours"])
    again = import_record(record)
    assert again.totals() == match.totals() and again.is_over


@settings(max_examples=60, deadline=None)
@given(table=tables, seed=seeds, cut=st.integers(min_value=0, max_value=200))
def test_records_of_unfinished_matches_round_trip(table: Table, seed: int, cut: int) -> None:
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(table.players)]
    match = Match(players, random_settings(table, rng), seed=seed)
    for _ in range(cut):
        if match.is_over:
            break
        match.apply(rng.choice(match.legal_actions()))
    record = json.loads(json.dumps(export_record(match)))
    again = import_record(record)
    assert export_record(again) == record
    assert again.current_player == match.current_player
    assert {str(a) for a in again.legal_actions()} == {str(a) for a in match.legal_actions()}
    assert replay(record)["valid"] is True


@settings(max_examples=30, deadline=None)
@given(table=tables, seed=seeds)
def test_fast_random_playout_scores_like_the_slow_scorer(table: Table, seed: int) -> None:
    """The int-level playout (used by the benchmark and the computer players) scores right."""
    rng = random.Random(seed)
    match = Match([f"p{i}" for i in range(table.players)], Settings(table=table), seed=seed)
    tour = match.tour
    tour.play_random(rng)
    board: dict[tuple[int, int], str] = {}
    total = 0
    for turn in tour.turns:
        for card, x, y in turn.cards:
            board[(x, y)] = card.code()
            total += len(slow_new_lines(board, x, y))
    assert total == tour.points
