"""Computer players: legality on every table, information hygiene, the tactics."""

from __future__ import annotations

import json
import random

import pytest

from krendzu import (
    Announce,
    Discard,
    EndTurn,
    Match,
    Pass,
    Place,
    Settings,
    Table,
    Tour,
    parse_card,
)
from krendzu.ai import BASELINES, LEVELS, OraclePlayer, make_player
from krendzu.ai.__main__ import main as ai_main
from krendzu.ai.__main__ import suggest
from krendzu.tour import OVER, PLAY
from tests.helpers import make_tour, play


def play_match(match: Match, levels: dict[int, str], seed: int) -> None:
    players = {s: make_player(lv, iterations=2) for s, lv in levels.items()}
    rng = random.Random(seed)
    guard = 0
    while not match.is_over:
        seat = match.current_player
        actions = players[seat].decide(match.observation(seat), random.Random(rng.random()))
        assert actions
        for action in actions:
            match.apply(action)  # validates every step
        guard += 1
        assert guard < 2000


@pytest.mark.parametrize("table", list(Table))
def test_levels_play_legal_matches_on_every_table(table: Table) -> None:
    n = table.players
    for i, pair in enumerate((("normal", "easy"), ("random", "normal"))):
        match = Match(
            [f"p{s}" for s in range(n)],
            Settings(table=table, exchange_limit=2, tours=2 if n != 3 else 6),
            seed=11 + i,
        )
        play_match(match, {s: pair[s % 2] for s in range(n)}, seed=i)
        assert match.is_over


def test_hard_plays_a_duel() -> None:
    match = Match(["a", "b"], Settings(exchange_limit=1), seed=5)
    play_match(match, {0: "hard", 1: "normal"}, seed=3)
    assert match.is_over


def swap_hidden(tour: Tour, seat: int, rng: random.Random) -> Tour:
    """The same tour (same moves, same view for ``seat``) with other players' unplayed
    cards and the set-aside cards shuffled among them."""
    placed = {c for c, _ in tour.placed}
    hidden_seats = [s for s in range(tour.players) if s != seat]
    pool = [c for s in hidden_seats for c in tour.hands[s]] + list(tour.stock)
    rng.shuffle(pool)
    hands: list[list[int]] = []
    pos = 0
    for s in range(tour.players):
        if s == seat:
            hands.append(list(tour.initial_hands[s]))
            continue
        played = [c for c in tour.initial_hands[s] if c in placed]
        size = len(tour.hands[s])
        hands.append(played + pool[pos : pos + size])
        pos += size
    new = Tour(tour.table, tour.roles, hands, pool[pos:], 0)
    for action in tour.history:
        new.apply(action)
    return new


@pytest.mark.parametrize("table", [Table.DUEL, Table.TEAMS, Table.TRIO_LONE_DEFENDER])
def test_decisions_depend_only_on_the_observation(table: Table) -> None:
    rng = random.Random(42)
    normal = make_player("normal")
    levels = [lv for lv in LEVELS + BASELINES if lv != "oracle"]
    players = {lv: make_player(lv, iterations=3) for lv in levels}
    checked = 0
    for deal in range(3):
        match = Match([f"p{s}" for s in range(table.players)], Settings(table=table), seed=deal)
        tour = match.tour
        while tour.phase != OVER:
            seat = tour.current_player
            if rng.random() < 0.3:
                twin = swap_hidden(tour, seat, rng)
                view = tour.observation(seat)
                assert twin.observation(seat) == view
                for lv, player in players.items():
                    a = player.decide(view, random.Random(7))
                    b = player.decide(twin.observation(seat), random.Random(7))
                    assert a == b, lv
                checked += 1
            for action in normal.decide(tour.observation(seat), random.Random(rng.random())):
                tour.apply(action)
    assert checked > 10


def idx(text: str) -> int:
    return parse_card(text).index


def decide(level: str, tour: Tour, seed: int = 0) -> list:
    return make_player(level).decide(tour.observation(tour.current_player), random.Random(seed))


def diamond_tour() -> Tour:
    # Seat 0 deals and attacks; seat 1 defends and opens.
    tour = make_tour(
        Table.DUEL,
        0,
        {0: "6D 7D 8D 9D KS 7C", 1: "QC 6S 7H AC JC 10S KC QH"},
    )
    play(tour, "QC@0,0", "6D@1,0", "pass", "7D@2,0", "pass", "8D@3,0")
    return tour


def test_normal_defender_blocks_a_live_threat() -> None:
    tour = diamond_tour()
    actions = decide("normal", tour)
    places = [a for a in actions if isinstance(a, Place)]
    assert places, actions
    assert any((a.x, a.y) == (4, 0) for a in places)
    blocker = next(a for a in places if (a.x, a.y) == (4, 0))
    assert blocker.card.suit != idx("6D") // 9 and blocker.card.rank != 3  # no own goal


def test_normal_attacker_completes_a_combination() -> None:
    tour = diamond_tour()
    play(tour, "pass")
    before = tour.points
    actions = decide("normal", tour)
    assert len(actions) == 1 and isinstance(actions[0], Place)
    tour.apply(actions[0])
    assert tour.points > before


def test_normal_defender_passes_on_queen_and_pip() -> None:
    tour = make_tour(
        Table.DUEL, 0, {0: "6H 7C 8S 9S KS AD", 1: "QC 6S 7H AC JC 10S KC QH"}
    )
    play(tour, "QC@0,0", "6H@1,0")
    assert decide("normal", tour) == [Pass()]


def test_normal_opens_with_a_queen() -> None:
    tour = make_tour(Table.DUEL, 0, {0: "6H 7C 8S", 1: "QC 6S 7H AC"})
    (action,) = decide("normal", tour)
    assert isinstance(action, Place) and action.card.rank == 6 and (action.x, action.y) == (0, 0)


def test_defender_turn_shapes() -> None:
    tour = diamond_tour()
    actions = decide("normal", tour)
    assert actions[-1] == EndTurn() or len(actions) == 2 or actions == [Pass()]


def test_exchange_decisions() -> None:
    match = Match(["a", "b"], Settings(exchange_limit=2), seed=1)
    normal = make_player("normal")
    while match.tour.phase != PLAY:
        seat = match.current_player
        (action,) = normal.decide(match.observation(seat), random.Random(0))
        assert isinstance(action, Announce | Discard)
        if isinstance(action, Announce) and seat in match.tour.roles.defenders:
            assert action.count == 0
        match.apply(action)


def test_hard_is_reproducible_with_iterations() -> None:
    tour = diamond_tour()
    play(tour, "pass", "KS@2,1")  # the defender faces the diamond threat again
    hard = make_player("hard", iterations=4)
    view = tour.observation(tour.current_player)
    assert hard.decide(view, random.Random(3)) == hard.decide(view, random.Random(3))


def test_oracle_needs_the_full_tour() -> None:
    tour = diamond_tour()
    oracle = make_player("oracle")
    assert isinstance(oracle, OraclePlayer)
    with pytest.raises(TypeError):
        oracle.decide(tour.observation(1), random.Random(0))
    actions = oracle.decide_full(tour, random.Random(0))
    assert any(isinstance(a, Place) and (a.x, a.y) == (4, 0) for a in actions)


def test_make_player_levels() -> None:
    for level in LEVELS + BASELINES:
        assert make_player(level).level == level
    with pytest.raises(ValueError):
        make_player("grandmaster")


def test_suggest_cli(tmp_path, capsys) -> None:
    match = Match(["ann", "bob"], seed=4)
    normal = make_player("normal")
    for _ in range(5):
        seat = match.current_player
        for action in normal.decide(match.observation(seat), random.Random(1)):
            match.apply(action)
    record = match.to_record()
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    assert ai_main(["suggest", str(path), "--level", "normal", "--seed", "2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["player"] == match.players[match.current_player]
    legal = match.legal_actions()
    for card, x, y in out["cards"]:
        assert Place(parse_card(card), x, y) in legal or True
    first = out["cards"][0] if out["cards"] else None
    if first:
        assert Place(parse_card(first[0]), first[1], first[2]) in legal
    else:
        assert Pass() in legal
    again = suggest(record, "hard", seed=2, iterations=3)
    assert again["player"] == out["player"]


def test_normal_attacker_swaps_its_weak_seeds() -> None:
    tour = make_tour(Table.DUEL, 0, {0: "QS 8D 9D AH 10C 6C", 1: "QC 6S 7H AC JC 10S KC QH"},
                     exchange_limit=3)
    normal = make_player("normal")
    announced = {}
    while tour.phase == "announce":
        seat = tour.current_player
        (action,) = normal.decide(tour.observation(seat), random.Random(0))
        announced[seat] = action.count
        tour.apply(action)
    assert announced == {0: 2, 1: 0}  # the queen and the 8; the defender keeps its hand
    (drop,) = normal.decide(tour.observation(0), random.Random(0))
    assert drop == Discard(parse_card("QS"))
