"""A board's chat photo (``board_photo``): drawn with as little work as the picture needs,
and the same picture, byte for byte, as the general path (``board_image`` with
``photo_options``, then ``encode_jpeg``) draws."""

from __future__ import annotations

import random
from typing import Any

import pytest

import render.board
from krendzu import Match, MatchView, Place, Settings, Table
from render import board_image, board_photo, board_photos, encode_jpeg, photo_options
from render.sheet import line_match, scenario_matches


def views() -> dict[str, MatchView]:
    """Public views worth a photo: the scenarios, a 36-card line (drawn as a viewport
    around the last move) and a tour in its exchange phase."""
    out: dict[str, MatchView] = {name: match.observation(None)
                              for name, match in scenario_matches().items()}
    out["line-36"] = line_match().observation(None)
    out["fresh"] = Match(["Ann", "Bob"], seed=4).observation(None)
    return out


def test_a_photo_lays_its_board_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layout (which wraps the header's words) is computed once for a board that fits
    at full size: it was computed again for the drawing."""
    view = scenario_matches()["one-card"].observation(None)
    real = render.board._layout_for
    calls: list[int] = []

    def counting(*args: object, **kwargs: object) -> render.board.BoardLayout:
        calls.append(1)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(render.board, "_layout_for", counting)
    board_photo(view, players=("Ann", "Bob"))
    assert len(calls) == 1


@pytest.mark.parametrize("options", [
    {}, {"cell_labels": True}, {"hint_cells": False, "highlight_last": False},
    {"texts": {"tour": "Тур {n}/{total}"}, "cell_labels": True},
])
def test_a_photo_is_the_general_paths_picture_byte_for_byte(options: dict[str, Any]) -> None:
    for name, view in views().items():
        expected = encode_jpeg(board_image(view, **photo_options(view, **options)))
        assert board_photo(view, **options) == expected, name


def test_a_suggestion_photo_is_the_general_paths_picture() -> None:
    match = scenario_matches()["one-card"]
    rng = random.Random(3)
    step = rng.choice([a for a in match.legal_actions() if isinstance(a, Place)])
    view = match.observation(None)
    options: dict[str, Any] = {"suggestion": [(step.card, step.x, step.y)], "cell_labels": True}
    assert board_photo(view, **options) == encode_jpeg(
        board_image(view, **photo_options(view, **options)))


def test_an_unknown_option_is_refused_as_before() -> None:
    view = scenario_matches()["one-card"].observation(None)
    with pytest.raises(TypeError):
        board_photo(view, colour="red")


def positions() -> list[tuple[str, MatchView]]:
    """Every third position of random duels, 2 v 2 and trios to their end (combination
    lines reaching into free cells, exchanges, tours and matches over), and the views."""
    out = list(views().items())
    rng = random.Random(11)
    for table, names in ((Table.DUEL, ("Ann", "Bob")), (Table.TEAMS, ("A", "B", "C", "D")),
                         (Table.TRIO_LONE_ATTACKER, ("Ann", "Bob", "🤖 Normal"))):
        for seed in range(3):
            match = Match(list(names), Settings(table), seed=seed)
            for step in range(400):
                if match.is_over:
                    break
                match.apply(rng.choice(match.legal_actions()))
                if step % 3 == 0 or match.is_over:
                    out.append((f"{table.value} {seed} {step}", match.observation(None)))
    return out


def test_a_board_and_its_labelled_panel_drawn_together_are_the_pictures_drawn_apart() -> None:
    """``board_photos`` draws a group's board and a panel's (with the free cells' labels)
    once: each is, byte for byte, the picture ``board_photo`` draws alone; where no free
    cell is shown they are one picture (the same bytes)."""
    same = apart = 0
    for name, view in positions():
        names = {"players": view.players}
        plain, labelled = board_photos(view, **names)
        assert plain == board_photo(view, **names), name
        assert labelled == board_photo(view, cell_labels=True, **names), name
        if labelled is plain:
            same += 1
        else:
            apart += 1
    assert same and apart > 100, (same, apart)


def test_a_pair_is_not_drawn_for_a_suggestion() -> None:
    view = scenario_matches()["one-card"].observation(None)
    with pytest.raises(ValueError):
        board_photos(view, suggestion=[(view.tour.placements[0][0], 5, 5)])
