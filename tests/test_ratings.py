"""Ratings (OpenSkill) and the finer statistics after scripted matches."""

from __future__ import annotations

import random

import pytest
from openskill.models import PlackettLuce

from chat.ratings import COMPUTER_RATINGS, SHOW_AFTER, display_rating, rate_match, shown
from krendzu import Settings, Table
from storage import MatchStatus, open_store
from tests.storage_helpers import add_users, play_and_store, seats_for


async def finished(store, table: Table, humans: list[int], seed: int, chat: int = -5):
    stored = await store.create_match(chat, Settings(table=table), seats_for(table, humans),
                                      seed=seed)
    game = await play_and_store(store, stored, random.Random(seed))
    row = await store.get_match(stored.match_id)
    assert row.status is MatchStatus.FINISHED
    return row, game


async def test_a_duel_rates_both_players_once_as_computed_by_hand(store_target: str) -> None:
    async with await open_store(store_target) as store:
        await add_users(store, 1, 2)
        for seed in range(20):  # a match with a winner
            row, game = await finished(store, Table.DUEL, [1, 2], seed)
            if len(set(game.totals())) == 2:
                break
        assert await rate_match(store, row, game)
        assert not await rate_match(store, row, game), "a match is rated once"
        winner = 1 if game.totals()[0] > game.totals()[1] else 2
        # By hand: the same model, two newcomers, the winner ranked first.
        model = PlackettLuce()
        first, second = model.rate([[model.rating()], [model.rating()]], ranks=[1, 2])
        ratings = await store.ratings_of([1, 2])
        assert ratings[winner].mu == pytest.approx(first[0].mu)
        assert ratings[3 - winner].mu == pytest.approx(second[0].mu)
        assert ratings[winner].sigma == pytest.approx(first[0].sigma)
        assert ratings[winner].rated_matches == 1
        assert await store.rating_history(winner) == [(pytest.approx(first[0].mu),
                                                       pytest.approx(first[0].sigma))]
        assert shown(ratings[winner]) is None  # hidden until a few rated matches
        assert row.match_id not in [r.match_id for r in await store.unrated_matches()]


async def test_computers_rate_people_and_stay_fixed(store_target: str) -> None:
    async with await open_store(store_target) as store:
        await add_users(store, 1)
        for seed in range(SHOW_AFTER):
            row, game = await finished(store, Table.DUEL, [1], seed)
            assert await rate_match(store, row, game)
        ratings = await store.ratings_of([1])
        assert set(ratings) == {1} and ratings[1].rated_matches == SHOW_AFTER
        assert shown(ratings[1]) == pytest.approx(display_rating(ratings[1].mu,
                                                                 ratings[1].sigma))
        assert len(await store.rating_history(1)) == SHOW_AFTER
        assert COMPUTER_RATINGS[1][0] < COMPUTER_RATINGS[2][0] < COMPUTER_RATINGS[3][0]


async def test_teams_move_together_and_trios_rank_three_sides(store_target: str) -> None:
    async with await open_store(store_target) as store:
        await add_users(store, 1, 2, 3, 4)
        for seed in range(30):
            row, game = await finished(store, Table.TEAMS, [1, 2, 3, 4], seed)
            if game.totals()[0] != game.totals()[1]:
                break
        assert await rate_match(store, row, game)
        ratings = await store.ratings_of([1, 2, 3, 4])
        up = game.totals()[0] > game.totals()[1]
        assert (ratings[1].mu > 25) == up and (ratings[3].mu > 25) == up  # seats 1 & 3
        assert (ratings[2].mu > 25) != up and (ratings[4].mu > 25) != up
        row, game = await finished(store, Table.TRIO_LONE_DEFENDER, [1, 2, 3], 7)
        before = await store.ratings_of([1, 2, 3])
        assert await rate_match(store, row, game)
        after = await store.ratings_of([1, 2, 3])
        best = max(range(3), key=lambda s: game.totals()[s])
        if game.totals().count(game.totals()[best]) == 1:
            uid = row.seats[best].user_id
            assert after[uid].mu > before[uid].mu  # type: ignore[index]


async def test_finer_statistics_add_up(store_target: str) -> None:
    async with await open_store(store_target) as store:
        await add_users(store, 1, 2)
        scored = conceded = 0
        for seed in range(4):
            _, game = await finished(store, Table.DUEL, [1, 2], seed, chat=-9)
            scored += game.totals()[0]
            conceded += game.totals()[1]
        stats = await store.user_stats(1, -9)
        assert stats is not None and stats.matches == 4
        assert stats.tours_attacked + stats.tours_defended == 4 * 2
        assert stats.suit_combos + stats.progression_combos == stats.points_scored == scored
        assert stats.points_conceded == conceded
        assert stats.best_tour <= stats.points_scored
        assert stats.own_goals_conceded <= stats.points_conceded


async def test_a_concession_and_a_trio_resignation_rank_last(store_target: str) -> None:
    async with await open_store(store_target) as store:
        await add_users(store, 1, 2, 3)
        stored = await store.create_match(-7, Settings(table=Table.DUEL),
                                          seats_for(Table.DUEL, [1, 2]), seed=3)
        await play_and_store(store, stored, random.Random(3), max_moves=5)
        assert await store.concede_match(stored.match_id, 0)  # user 1 resigns
        assert not await store.concede_match(stored.match_id, 0)
        row = await store.get_match(stored.match_id)
        assert row.status is MatchStatus.ABANDONED and row.conceded_by == 0
        assert [r.match_id for r in await store.unrated_matches()] == [row.match_id]
        assert await rate_match(store, row, (await store.load_match(row.match_id)).game)
        ratings = await store.ratings_of([1, 2])
        assert ratings[1].mu < 25 < ratings[2].mu
        one, two = await store.user_stats(1, -7), await store.user_stats(2, -7)
        assert (one.matches, one.wins, two.matches, two.wins) == (1, 0, 1, 1)  # type: ignore[union-attr]
        # A trio: the resigner's seat is played on by the computer and ranks last.
        stored = await store.create_match(-8, Settings(table=Table.TRIO_LONE_DEFENDER),
                                          seats_for(Table.TRIO_LONE_DEFENDER, [1, 2, 3]),
                                          seed=11)
        await store.set_stand_in(stored.match_id, 0, timeouts=2, computer=True, resigned=True)
        game = await play_and_store(store, stored, random.Random(11))
        row = await store.get_match(stored.match_id)
        stats = await store.user_stats(1, -8)
        assert stats is not None and stats.wins == 0 and stats.draws == 0
        before = (await store.ratings_of([1]))[1].mu
        assert await rate_match(store, row, game)
        assert (await store.ratings_of([1]))[1].mu < before


def test_sides_of_every_table() -> None:
    assert Table.DUEL.sides == ((0,), (1,))
    assert Table.TRIO_LONE_ATTACKER.sides == Table.TRIO_LONE_DEFENDER.sides == ((0,), (1,), (2,))
    assert Table.TEAMS.sides == ((0, 2), (1, 3))
