"""Per-seat statistics of a finished match (krendzu.stats): computed by the engine from the
match and its outcome, so the figures agree with the tours and with who won."""

from __future__ import annotations

import random

import pytest

from krendzu import Match, Settings, Table, match_outcome
from krendzu.stats import seat_statistics


def played_out(table: Table, seed: int) -> Match:
    match = Match([f"p{i}" for i in range(table.players)], Settings(table=table), seed=seed)
    rng = random.Random(seed)
    while not match.is_over:
        match.apply(rng.choice(match.legal_actions()))
    return match


@pytest.mark.parametrize("table", list(Table))
def test_the_figures_add_up_to_the_tours(table: Table) -> None:
    for seed in range(6):
        match = played_out(table, seed)
        outcome = match_outcome(match)
        stats = seat_statistics(match, outcome)
        assert [s.seat for s in stats] == list(range(table.players))
        for s in stats:
            attacked = [t for t in match.tours if t.is_attacker[s.seat]]
            defended = [t for t in match.tours if not t.is_attacker[s.seat]]
            assert s.points_scored == match.totals()[s.seat] == outcome.points[s.seat]
            assert s.points_conceded == sum(t.points for t in defended)
            assert (s.tours_attacked, s.tours_defended) == (len(attacked), len(defended))
            assert s.best_tour == max((t.points for t in attacked), default=0)
            # Every combination scored while attacking is one suit or a progression.
            assert s.suit_combos + s.progression_combos == sum(len(t.combos) for t in attacked)
            assert s.own_goals_conceded <= s.points_conceded
            assert (s.win, s.draw) == (outcome.won(s.seat), outcome.drew(s.seat))


def test_suit_combinations_progressions_and_own_goals_are_told_apart() -> None:
    """Over many matches each kind shows up: a classification that put every combination in
    one bucket, or never saw an own goal, fails here."""
    suited = progression = own_goals = 0
    for seed in range(40):
        match = played_out(Table.DUEL, seed)
        for s in seat_statistics(match, match_outcome(match)):
            suited += s.suit_combos
            progression += s.progression_combos
            own_goals += s.own_goals_conceded
    assert suited > 0 and progression > 0 and own_goals > 0


def test_who_won_is_the_outcome_given_not_the_points() -> None:
    """A trio player who resigned ranks last whatever the points: the statistics say so
    because they take the outcome, not the totals."""
    for seed in range(10):
        match = played_out(Table.TRIO_LONE_DEFENDER, seed)
        top = max(range(3), key=lambda seat: match.totals()[seat])
        stats = seat_statistics(match, match_outcome(match, [top]))
        assert not stats[top].win and not stats[top].draw
        assert stats[top].points_scored == match.totals()[top]  # the points stay its own
        assert any(s.win or s.draw for s in stats)


def test_an_unfinished_match_or_a_foreign_outcome_is_refused() -> None:
    match = Match(["a", "b"], Settings(table=Table.DUEL), seed=3)
    with pytest.raises(ValueError, match="not over"):
        seat_statistics(match, match_outcome(played_out(Table.DUEL, 3)))
    trio = played_out(Table.TRIO_LONE_ATTACKER, 1)
    with pytest.raises(ValueError, match="not of this match"):
        seat_statistics(played_out(Table.DUEL, 1), match_outcome(trio))
