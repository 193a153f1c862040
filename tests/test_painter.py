"""Pictures drawn for the chat: computer seats keep a visible mark, and a board is drawn once
wherever the same picture goes."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import chat.painter
from chat.notices import BoardPicture
from chat.painter import Painter, draw_board
from krendzu import Match, Settings, Table
from render import board_photo
from tests.bot_harness import (
    BOT,
    FastClock,
    panel,
    play_step_with_buttons,
    running_bot,
    start_group_duel,
)
from tests.fakebot import FakeTelegram


def spy_drawings(patch: pytest.MonkeyPatch, drawn: list[BoardPicture],
                 trips: list[BoardPicture] | None = None) -> None:
    """Note in ``drawn`` each board picture drawn and encoded, alone or with its twin (the
    same position labelled or not, :func:`chat.painter.draw_boards`: the twin once when its
    bytes are not the first's), and in ``trips`` what each drawing was asked for."""
    one, pair = chat.painter.draw_board, chat.painter.draw_boards

    def alone(picture: BoardPicture, texts: Mapping[str, str] | None = None) -> bytes:
        drawn.append(picture)
        if trips is not None:
            trips.append(picture)
        return one(picture, texts)

    def twins(picture: BoardPicture,
              texts: Mapping[str, str] | None = None) -> tuple[bytes, bytes]:
        plain, labelled = pair(picture, texts)
        drawn.append(replace(picture, private=False))
        if labelled is not plain:
            drawn.append(replace(picture, private=True))
        if trips is not None:
            trips.append(picture)
        return plain, labelled

    patch.setattr(chat.painter, "draw_board", alone)
    patch.setattr(chat.painter, "draw_boards", twins)


def test_computer_seats_keep_the_robot_of_the_texts_not_a_missing_emoji() -> None:
    """The chat names a computer "🤖 Normal"; its picture draws that robot (render draws it,
    the font has no emoji), not another symbol and not nothing."""
    match = Match(["a", "b"], Settings(Table.DUEL), seed=1)
    match.apply(match.legal_actions()[0])
    view = match.observation(None)
    robot = draw_board(BoardPicture(view, ("Ann", "🤖 Normal"), "en"))
    gear = draw_board(BoardPicture(view, ("Ann", "⚙ Normal"), "en"))
    bare = draw_board(BoardPicture(view, ("Ann", "Normal"), "en"))
    assert robot != gear and robot != bare and gear != bare
    assert robot == board_photo(view, players=("Ann", "🤖 Normal"))


async def test_the_same_board_is_drawn_once_for_everyone_who_waits_for_it() -> None:
    """The painter encodes a board once wherever the same picture goes (one call draws it,
    the ones that ask meanwhile or later share it); another picture is drawn anew."""
    match = Match(["a", "b"], Settings(Table.DUEL), seed=1)
    match.apply(match.legal_actions()[0])
    view = match.observation(None)
    drawn: list[BoardPicture] = []
    painter = Painter(0)

    try:
        with pytest.MonkeyPatch.context() as patch:
            spy_drawings(patch, drawn)
            picture = BoardPicture(view, ("Ann", "Bob"), "en")
            together = await asyncio.gather(*(painter.board(picture) for _ in range(3)))
            again = await painter.board(BoardPicture(view, ("Ann", "Bob"), "en"))
            labelled = await painter.board(BoardPicture(view, ("Ann", "Bob"), "en",
                                                        private=True))
    finally:
        painter.close()
    assert together == [together[0]] * 3 and again == together[0]
    assert labelled != again
    assert drawn == [picture, BoardPicture(view, ("Ann", "Bob"), "en", private=True)]


async def test_the_drawing_gets_public_facts_only_and_a_panel_is_one_picture() -> None:
    """A panel's board drawn from a seat's observation reaches the drawing with no hand, own
    discards, draws or legal steps (the workers never hold a hand, and the seat to move's
    hundreds of legal placements are not pickled to them); as it shows public facts only,
    it is one picture for either seat, drawn once, and the same as drawn from the public
    view. Another position is another picture."""
    match = Match(["a", "b"], Settings(Table.DUEL), seed=3)
    match.apply(match.legal_actions()[0])
    seats = [match.observation(seat) for seat in (0, 1)]
    assert seats[0].tour.hand and seats[1].tour.hand and seats[match.current_player].tour.legal
    drawn: list[BoardPicture] = []
    painter = Painter(0)

    try:
        with pytest.MonkeyPatch.context() as patch:
            spy_drawings(patch, drawn)
            panels = [await painter.board(BoardPicture(view, ("Ann", "Bob"), "en",
                                                       private=True)) for view in seats]
            match.apply(match.legal_actions()[0])
            later = await painter.board(BoardPicture(
                match.observation(match.current_player), ("Ann", "Bob"), "en", private=True))
    finally:
        painter.close()
    public = BoardPicture(match.observation(None), ("Ann", "Bob"), "en", private=True)
    assert panels[0] == panels[1] != later
    assert later == draw_board(public)
    # Two positions, each drawn once with its twin (the board post without the labels).
    assert [p.private for p in drawn] == [False, True, False, True] and drawn[3] == public
    for picture in drawn:
        tour = picture.view.tour
        assert picture.view.viewer is tour.viewer is None
        assert tour.hand == tour.own_discards == tour.own_draws == tour.legal == ()


@pytest.mark.parametrize("order", ["post first", "panel first", "together"])
async def test_a_board_post_and_the_next_panel_of_a_position_take_one_drawing(
        order: str) -> None:
    """A move's board post and the next player's panel show one position, without and
    with the free cells' labels: the painter draws them in one trip to a drawing process
    (the board drawn once, the labels pasted over, two encodings), whichever is asked for
    first or both at once, and each is the picture drawn alone."""
    match = Match(["a", "b"], Settings(Table.DUEL), seed=2)
    for _ in range(5):
        match.apply(match.legal_actions()[0])
    post = BoardPicture(match.observation(None), ("Ann", "Bob"), "en")
    panel = BoardPicture(match.observation(match.current_player), ("Ann", "Bob"), "en",
                         private=True)
    painter = Painter(0)
    trips: list[object] = []
    real = painter.run

    async def counting(draw: Any, *args: Any, **options: Any) -> Any:
        trips.append(draw)
        return await real(draw, *args, **options)

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(painter, "run", counting)
            if order == "together":
                got = await asyncio.gather(painter.board(post), painter.board(panel))
            elif order == "post first":
                got = [await painter.board(post), await painter.board(panel)]
            else:
                got = list(reversed([await painter.board(panel), await painter.board(post)]))
    finally:
        painter.close()
    assert len(trips) == 1, trips
    assert got == [draw_board(post), draw_board(panel)] and got[0] != got[1]


async def test_twins_are_drawn_only_while_they_are_asked_for() -> None:
    """Where the panels are not this process's to draw (another job worker's, or nobody's
    at a computer's turn), a board's labelled twin would be encoded for nothing: the
    painter stops drawing twins once most of the last ones were not asked for, and draws
    them again once boards' twins are asked for again."""
    match = Match(["a", "b"], Settings(Table.DUEL), seed=2)
    match.apply(match.legal_actions()[0])
    view = match.observation(None)
    painter = Painter(0)
    trips: list[str] = []
    real = painter.run

    async def counting(draw: Any, *args: Any, **options: Any) -> Any:
        trips.append(draw.__name__)
        return await real(draw, *args, **options)

    def post(i: int, private: bool = False) -> BoardPicture:
        return BoardPicture(view, ("Ann", f"Bob {i}"), "en", private=private)

    lonely = 120  # more than the painter watches (64 twins) and remembers (the last 48)
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(painter, "run", counting)
            for i in range(lonely):  # board posts alone: no panel asks for their twins
                await painter.board(post(i))
            alone = trips[-20:]
            trips.clear()
            for i in range(lonely, lonely + 100):
                await painter.board(post(i))  # each post's panel, now asked for
                await painter.board(post(i, private=True))
    finally:
        painter.close()
    assert set(alone) == {"draw_board"}, alone
    assert set(trips[-10:]) == {"draw_boards"}, trips
    assert len(trips) < 2 * 100 - 40  # pairs again, one trip each


async def test_a_group_duel_played_to_its_end_draws_each_board_once(tmp_path: Path) -> None:
    """Through the bot: a duel played with the panels' buttons to its end. A panel redrawn
    on the same position (a press that changes no position, the panel after a move that
    showed it already) and a final board shown in more than one place are the same picture:
    every board of the match is drawn (and encoded) once however many messages show it
    (before, two of its 114 drawings were of a picture drawn already). A move's board post
    and the next player's panel take one trip to the drawing between them (before, one
    each)."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(321, "Ann"), fake.user(322, "Bob")
    group = fake.group(-100321, "Drawn once")
    drawn: list[BoardPicture] = []
    trips: list[BoardPicture] = []

    with pytest.MonkeyPatch.context() as patch:
        spy_drawings(patch, drawn, trips)
        async with running_bot(tmp_path, fake) as h:
            ann.start_bot()
            bob.start_bot()
            await start_group_duel(h, group, ann, bob, "duel deal=short timer=off")
            rng = random.Random(5)
            for _ in range(600):
                if any("🏁" in (m.text or "") for m in fake.sent(group)):
                    break
                mover = next((u for u in (ann, bob) if panel(fake, u) is not None), None)
                assert mover is not None, fake.describe()
                assert await play_step_with_buttons(h, mover, rng)
            else:
                raise AssertionError("the match did not end")
    assert drawn, "no board was drawn"
    assert len(set(drawn)) == len(drawn), [p for p in drawn if drawn.count(p) > 1][:1]
    assert sum(p.outcome is not None for p in drawn) == 1, "the final board, once"
    assert len(trips) < 0.6 * len(drawn), (len(trips), len(drawn))
