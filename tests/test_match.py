"""Matches: settings, role rotation (RULES.md §6), totals and result (§7), secrecy, seeds."""

from __future__ import annotations

import random

import pytest

from krendzu import (
    TERMINAL,
    DealSizes,
    IllegalMove,
    Match,
    Pass,
    Place,
    Settings,
    SettingsError,
    Table,
    tour_roles,
)
from krendzu.tables import DEAL_PRESETS


def names(n: int) -> list[str]:
    return ["ann", "bob", "cy", "dee"][:n]


def play_out(match: Match, seed: int = 0) -> None:
    rng = random.Random(seed)
    while not match.is_over:
        match.apply(rng.choice(match.legal_actions()))


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"tours": 3}, "even number"),
        ({"tours": 0}, "even number"),
        ({"table": Table.TRIO_LONE_ATTACKER, "tours": 4}, "multiple of 6"),
        ({"deal": DealSizes(18, 19)}, "deck has 36"),
        ({"deal": DealSizes(0, 5)}, "at least one card"),
        ({"exchange_limit": -1}, "exchange limit"),
        ({"preset": "huge"}, "unknown deal preset"),
        ({"table": "five-players"}, "unknown table"),
    ],
)
def test_bad_settings_refused(kwargs: dict, fragment: str) -> None:
    with pytest.raises(SettingsError, match=fragment):
        Settings(**kwargs)


def test_settings_defaults_and_presets() -> None:
    assert Settings().tour_count == 2 and Settings().deal_sizes == DealSizes(12, 14)
    assert Settings(table=Table.TRIO_LONE_DEFENDER).tour_count == 6
    assert Settings(table=Table.TRIO_LONE_DEFENDER).deal_sizes == DealSizes(7, 15)
    assert Settings(table=Table.TRIO_LONE_ATTACKER).deal_sizes == DealSizes(12, 7)
    assert Settings(table=Table.TEAMS).deal_sizes == DealSizes(7, 8)
    for table, presets in DEAL_PRESETS.items():
        for preset in presets:
            assert Settings(table=table, preset=preset).cards_dealt <= 36
    assert Settings(deal=DealSizes(18, 18)).cards_dealt == 36
    assert Settings(deal=DealSizes(1, 1)).preset == "custom"


def test_settings_json_round_trip() -> None:
    s = Settings(table=Table.TEAMS, tours=4, exchange_limit=2, deal=DealSizes(6, 9))
    assert Settings.from_json(Table.TEAMS, s.to_json()) == s


def test_wrong_number_of_players() -> None:
    with pytest.raises(SettingsError, match="seats 2 players"):
        Match(names(3), Settings())
    with pytest.raises(SettingsError, match="distinct"):
        Match(["a", "a"], Settings())


@pytest.mark.parametrize("table", list(Table))
def test_deal_sizes_and_hidden_stock(table: Table) -> None:
    settings = Settings(table=table)
    match = Match(names(table.players), settings, seed=11)
    tour = match.tour
    deal = settings.deal_sizes
    for seat in range(table.players):
        want = deal.attacker if seat in tour.roles.attackers else deal.defender
        assert len(tour.hands[seat]) == want
    dealt = [c for h in tour.hands for c in h]
    assert len(set(dealt)) == len(dealt) == settings.cards_dealt
    assert sorted(dealt + tour.stock) == list(range(36))


def test_duel_roles_swap_every_tour() -> None:
    match = Match(names(2), Settings(tours=4), seed=1)
    play_out(match)
    attackers = [t.roles.attackers for t in match.tours]
    first = attackers[0][0]
    assert attackers == [(first,), (1 - first,), (first,), (1 - first,)]
    for t in match.tours:
        assert t.roles.dealer == t.roles.attackers[0]  # the attacker deals
        assert t.turns[0].player == t.roles.defenders[0]  # the defender opens


def test_trio_lone_role_passes_clockwise() -> None:
    for table in (Table.TRIO_LONE_ATTACKER, Table.TRIO_LONE_DEFENDER):
        match = Match(names(3), Settings(table=table), seed=4)
        play_out(match, 4)
        lone = [
            t.roles.attackers[0] if table is Table.TRIO_LONE_ATTACKER else t.roles.defenders[0]
            for t in match.tours
        ]
        assert lone == [(lone[0] + i) % 3 for i in range(6)]
        assert sorted(lone) == [0, 0, 1, 1, 2, 2]  # everyone alone equally often
        for t in match.tours:
            assert t.roles.dealer == lone[match.tours.index(t)]  # the lone player deals


def test_trio_openers() -> None:
    la = tour_roles(Table.TRIO_LONE_ATTACKER, 2)
    assert la.order == (0, 2, 1, 2)  # the defender seated after the attacker opens
    ld = tour_roles(Table.TRIO_LONE_DEFENDER, 2)
    assert ld.order == (2, 0, 2, 1)  # the lone defender opens, then the seat after it


def test_teams_rotation() -> None:
    match = Match(names(4), Settings(table=Table.TEAMS, tours=4), seed=2)
    play_out(match, 2)
    for t in match.tours:
        dealer = t.roles.dealer
        assert dealer in t.roles.attackers
        assert t.roles.order == ((dealer + 1) % 4, (dealer + 2) % 4, (dealer + 3) % 4, dealer)
        assert {s % 2 for s in t.roles.attackers} == {dealer % 2}
    dealers = [t.roles.dealer for t in match.tours]
    assert dealers == [(dealers[0] + i) % 4 for i in range(4)]
    teams = [t.roles.attackers[0] % 2 for t in match.tours]
    assert teams[0] != teams[1] and teams[0] == teams[2]  # team roles swap every tour


def test_first_dealer_is_drawn_by_lot_from_the_seed() -> None:
    dealers = {Match(names(4), Settings(table=Table.TEAMS), seed=s).first_dealer
               for s in range(40)}
    assert dealers == {0, 1, 2, 3}


def test_same_seed_same_match_and_rebuild_from_history() -> None:
    settings = Settings(table=Table.TRIO_LONE_DEFENDER, exchange_limit=2)
    live = Match(names(3), settings, seed=99)
    rng = random.Random(5)
    for _ in range(60):
        live.apply(rng.choice(live.legal_actions()))
    rebuilt = Match(names(3), settings, seed=99)
    for action in live.history:
        rebuilt.apply(str(action))
    assert rebuilt.to_record() == live.to_record()
    assert rebuilt.tour.hands == live.tour.hands
    assert rebuilt.tour.stock == live.tour.stock


def test_totals_and_result() -> None:
    match = Match(names(2), Settings(), seed=3)
    play_out(match, 3)
    assert match.is_over and match.current_player == TERMINAL
    per_tour = match.tour_points()
    assert match.totals() == tuple(sum(p[s] for p in per_tour) for s in range(2))
    result = match.result()
    assert result.draw == (match.totals()[0] == match.totals()[1])
    with pytest.raises(IllegalMove, match="over"):
        match.apply(Pass())


def test_teams_result_is_by_team() -> None:
    match = Match(names(4), Settings(table=Table.TEAMS), seed=8)
    play_out(match, 8)
    totals = match.totals()
    assert totals[0] == totals[2] and totals[1] == totals[3]
    result = match.result()
    if totals[0] == totals[1]:
        assert result.draw and result.winners == (0, 1, 2, 3)
    else:
        assert not result.draw and len(result.winners) == 2


def test_observation_hides_other_hands_and_stock() -> None:
    match = Match(names(4), Settings(table=Table.TEAMS, exchange_limit=2), seed=21)
    rng = random.Random(1)
    for _ in range(30):
        for seat in range(4):
            view = match.observation(seat)
            own = {c.code() for c in view.tour.hand}
            assert own == {c.code() for c in match.tour.hand(seat)}
            hidden = {
                c.code() for s in range(4) if s != seat for c in match.tour.hand(s)
            } | {c.code() for c in match.tour.stock_cards()}
            hidden -= {c.code() for c in view.tour.own_discards}  # it saw those itself
            text = repr(view)
            for code in hidden:
                assert f"Card.parse('{code}')" not in text, (seat, code)
            if match.current_player != seat:
                assert view.tour.legal == ()
        public = match.observation(None)
        assert public.tour.hand == () and public.tour.own_discards == ()
        assert public.tour.hand_sizes == match.tour.hand_sizes()
        match.apply(rng.choice(match.legal_actions()))


def test_clone_keeps_future_randomness() -> None:
    match = Match(names(2), Settings(exchange_limit=1), seed=6)
    copy = match.clone()
    play_out(match, 1)
    play_out(copy, 1)
    assert match.to_record() == copy.to_record()


def test_next_tour_is_dealt_when_a_tour_ends() -> None:
    match = Match(names(2), Settings(deal=DealSizes(1, 2)), seed=0)
    tour0 = match.tour
    defender = tour0.roles.defenders[0]
    attacker = tour0.roles.attackers[0]
    d_cards = tour0.hand(defender)
    a_card = tour0.hand(attacker)[0]
    match.apply(Place(d_cards[0], 0, 0))
    match.apply(Place(a_card, 1, 0))
    match.apply(Place(d_cards[1], 2, 0))
    assert tour0.is_over and len(match.tours) == 2
    assert match.tour.roles.attackers == (defender,)
