"""A match's outcome (krendzu.outcome): places, winners and draws on every table, with
resignations and concessions; and that statistics and ratings take it as it is."""

from __future__ import annotations

import dataclasses
import random

import pytest
from openskill.models import PlackettLuce

from chat.ratings import new_ratings
from krendzu import Match, Outcome, Settings, Table, match_outcome
from krendzu.stats import seat_statistics
from storage import MatchRow, MatchStatus, SeatKind, SeatRow

DUEL, LONE_ATT, LONE_DEF, TEAMS = (Table.DUEL, Table.TRIO_LONE_ATTACKER,
                                   Table.TRIO_LONE_DEFENDER, Table.TEAMS)
TRIOS = [LONE_ATT, LONE_DEF]


def of(table: Table, totals: tuple[int, ...], **kw: object) -> Outcome:
    return Outcome.of_totals(table, totals, **kw)  # type: ignore[arg-type]


def played_out(table: Table, seed: int) -> Match:
    match = Match([f"p{i}" for i in range(table.players)], Settings(table=table), seed=seed)
    rng = random.Random(seed)
    while not match.is_over:
        match.apply(rng.choice(match.legal_actions()))
    return match


# Played to the end ---------------------------------------------------------------------


def test_a_duel_goes_to_the_higher_total_and_level_totals_draw() -> None:
    won = of(DUEL, (3, 5))
    assert (won.winners, won.draw, won.places, won.points) == ((1,), False, (2, 1), (3, 5))
    assert won.won(1) and won.lost(0) and not won.drew(1)
    level = of(DUEL, (4, 4))
    assert (level.winners, level.draw, level.places) == ((0, 1), True, (1, 1))
    assert level.drew(0) and level.drew(1) and not level.won(0)


@pytest.mark.parametrize("table", TRIOS)
def test_a_trio_ranks_three_players_and_two_level_at_the_top_share_a_draw(
        table: Table) -> None:
    clear = of(table, (2, 7, 4))
    assert (clear.winners, clear.draw, clear.places) == ((1,), False, (3, 1, 2))
    shared = of(table, (6, 2, 6))
    assert (shared.winners, shared.draw, shared.places) == ((0, 2), True, (1, 3, 1))
    assert shared.lost(1)
    tied_second = of(table, (9, 1, 1))
    assert (tied_second.winners, tied_second.draw, tied_second.places) == ((0,), False,
                                                                           (1, 2, 2))
    everyone = of(table, (0, 0, 0))
    assert (everyone.winners, everyone.draw, everyone.places) == ((0, 1, 2), True, (1, 1, 1))


def test_teams_win_and_draw_together() -> None:
    won = of(TEAMS, (1, 3, 1, 3))
    assert (won.winners, won.draw, won.places) == ((1, 3), False, (2, 1, 2, 1))
    assert won.side_places == (2, 1)
    level = of(TEAMS, (2, 2, 2, 2))
    assert (level.winners, level.draw, level.side_places) == ((0, 1, 2, 3), True, (1, 1))


# Resignations (the computer plays the seat on) -----------------------------------------


@pytest.mark.parametrize("table", TRIOS)
def test_a_trio_player_who_resigned_ranks_last_even_with_the_most_points(
        table: Table) -> None:
    outcome = of(table, (9, 4, 6), resigned=[0])
    assert (outcome.winners, outcome.draw, outcome.places) == ((2,), False, (3, 2, 1))
    assert outcome.lost(0) and outcome.resigned == (0,)
    assert outcome.points == (9, 4, 6), "the points stay as scored"
    # The two who played on, level: a draw between them, the resigner still last.
    level = of(table, (9, 5, 5), resigned=[0])
    assert (level.winners, level.draw, level.places) == ((1, 2), True, (3, 1, 1))


@pytest.mark.parametrize("table", TRIOS)
def test_two_resignations_leave_one_winner_not_a_draw(table: Table) -> None:
    outcome = of(table, (9, 8, 0), resigned=[0, 1])
    assert (outcome.winners, outcome.draw, outcome.places) == ((2,), False, (2, 2, 1))
    assert outcome.won(2)


@pytest.mark.parametrize("table", [*TRIOS, DUEL, TEAMS])
def test_when_every_side_resigned_nobody_wins(table: Table) -> None:
    outcome = of(table, tuple(range(table.players)), resigned=range(table.players))
    assert outcome.winners == () and not outcome.draw
    assert all(outcome.lost(seat) for seat in range(table.players))
    assert set(outcome.places) == {1}, "all share the last place, which is the only one"


def test_a_resigned_duel_seat_and_a_resigned_team_partner_lose_for_their_side() -> None:
    duel = of(DUEL, (5, 1), resigned=[0])
    assert (duel.winners, duel.places) == ((1,), (2, 1))
    teams = of(TEAMS, (6, 2, 6, 2), resigned=[2])
    assert (teams.winners, teams.draw, teams.places) == ((1, 3), False, (2, 1, 2, 1))


# Concessions (the match ends at once) -------------------------------------------------


def test_a_conceded_duel_or_team_match_goes_to_the_other_side_whatever_the_points() -> None:
    duel = of(DUEL, (7, 0), conceded=0)
    assert (duel.winners, duel.draw, duel.places, duel.conceded_by) == ((1,), False, (2, 1), 0)
    assert duel.points == (7, 0)
    teams = of(TEAMS, (3, 0, 3, 0), conceded=2)
    assert (teams.winners, teams.draw, teams.places) == ((1, 3), False, (2, 1, 2, 1))
    assert teams.won(1) and teams.won(3) and teams.lost(0) and teams.lost(2)


@pytest.mark.parametrize("table", TRIOS)
def test_a_conceded_trio_goes_to_both_others_together(table: Table) -> None:
    outcome = of(table, (0, 0, 0), conceded=1)
    assert (outcome.winners, outcome.draw, outcome.places) == ((0, 2), False, (1, 3, 1))
    assert outcome.won(0) and outcome.won(2) and outcome.lost(1)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="totals"):
        of(DUEL, (1, 2, 3))
    with pytest.raises(ValueError, match="seats"):
        of(DUEL, (1, 2), resigned=[2])
    with pytest.raises(ValueError, match="seats"):
        of(TEAMS, (1, 2, 1, 2), conceded=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        of(DUEL, (1, 2)).draw = True  # type: ignore[misc]


# On real matches ----------------------------------------------------------------------


@pytest.mark.parametrize("table", list(Table))
def test_match_outcome_of_played_matches_agrees_with_the_totals(table: Table) -> None:
    for seed in range(3):
        match = played_out(table, seed)
        outcome = match_outcome(match)
        assert outcome == match.outcome()
        assert outcome.points == match.totals()
        result = match.result()
        assert (result.totals, result.winners, result.draw) == (outcome.points,
                                                                outcome.winners, outcome.draw)
        best = max(match.totals())
        assert set(outcome.winners) == {s for s, t in enumerate(match.totals()) if t == best}


def test_only_a_finished_or_conceded_match_has_an_outcome() -> None:
    match = Match(["a", "b"], Settings(), seed=4)
    with pytest.raises(ValueError, match="not over"):
        match_outcome(match)
    outcome = match_outcome(match, conceded=1)
    assert outcome.winners == (0,) and outcome.points == (0, 0)


# Statistics and ratings take the outcome as it is --------------------------------------


@pytest.mark.parametrize("table", [*TRIOS, TEAMS])
def test_statistics_count_the_outcomes_winners(table: Table) -> None:
    for seed in range(4):
        match = played_out(table, seed)
        for resigned in ((), (0,), (0, 1)):
            outcome = match_outcome(match, resigned)
            stats = seat_statistics(match, outcome)
            assert [s.win for s in stats] == [outcome.won(s) for s in range(table.players)]
            assert [s.draw for s in stats] == [outcome.drew(s) for s in range(table.players)]


def _row(table: Table, conceded_by: int | None = None) -> MatchRow:
    seats = tuple(SeatRow(seat=i, kind=SeatKind.HUMAN, user_id=100 + i, label=f"p{i}",
                          level=None) for i in range(table.players))
    return MatchRow(match_id=1, chat_id=-1, thread_id=None, settings=Settings(table=table),
                    seed=1, status=MatchStatus.FINISHED, seats=seats, move_count=0,
                    board_message_id=None, created_at=None,  # type: ignore[arg-type]
                    finished_at=None, totals=None, conceded_by=conceded_by)


@pytest.mark.parametrize("table", [*TRIOS, TEAMS, DUEL])
def test_ratings_rank_the_sides_by_the_outcomes_places(table: Table) -> None:
    model = PlackettLuce()
    for seed in range(3):
        match = played_out(table, seed)
        for resigned in ((), (0,)):
            outcome = match_outcome(match, resigned)
            got = new_ratings(_row(table), match, {}, resigned)
            teams = [[model.rating() for _ in side] for side in table.sides]
            want = model.rate(teams, ranks=list(outcome.side_places))
            for side, team in zip(table.sides, want, strict=True):
                for seat, rating in zip(side, team, strict=True):
                    assert got[100 + seat][0] == pytest.approx(rating.mu)


# The final board picture ---------------------------------------------------------------


def test_the_final_pictures_header_names_the_outcomes_winner() -> None:
    """The board posted after the last move says who won as the summary does: with the
    outcome the chat layer passes (resignations included), else by the points."""
    from dataclasses import replace

    from chat.i18n import Catalogs, picture_texts
    from chat.notices import BoardPicture
    from chat.painter import draw_board
    from krendzu.coords import frame_for
    from render.board import Position, header_segments
    from render.texts import texts_for

    # A match with three different totals: a clear order.
    match = next(m for m in (played_out(LONE_DEF, seed) for seed in range(100))
                 if len(set(m.totals())) == 3)
    view = match.observation(None)
    names = ("Ann", "Bob", "Cid")
    top = max(range(3), key=lambda s: match.totals()[s])

    def result(position: Position) -> str:
        frame = frame_for(position.placements)
        return next(text for text, _ in header_segments(position, frame, texts_for())
                    if text.startswith("Match over"))

    plain = Position.of(view, names)
    assert result(plain) == f"Match over: {names[top]} won"
    resigned = match_outcome(match, [top])
    assert result(replace(plain, outcome=resigned)) == (
        f"Match over: {names[resigned.winners[0]]} won")
    assert resigned.winners[0] != top
    nobody = match_outcome(match, [0, 1, 2])
    assert result(replace(plain, outcome=nobody)) == "Match over: nobody won"
    assert draw_board(BoardPicture(view, names, "ru", outcome=resigned),
                      picture_texts(Catalogs().get("ru")))[:2] == b"\xff\xd8"
