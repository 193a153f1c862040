"""Pictures drawn for the chat: computer seats keep a visible mark, and a board is drawn once
wherever the same picture goes."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping
from pathlib import Path

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

    def counting(picture: BoardPicture, texts: Mapping[str, str] | None = None) -> bytes:
        drawn.append(picture)
        return draw_board(picture, texts)

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(chat.painter, "draw_board", counting)
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

    def counting(picture: BoardPicture, texts: Mapping[str, str] | None = None) -> bytes:
        drawn.append(picture)
        return draw_board(picture, texts)

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(chat.painter, "draw_board", counting)
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
    assert len(drawn) == 2 and drawn[1] == public
    for picture in drawn:
        tour = picture.view.tour
        assert picture.view.viewer is tour.viewer is None
        assert tour.hand == tour.own_discards == tour.own_draws == tour.legal == ()


async def test_a_group_duel_played_to_its_end_draws_each_board_once(tmp_path: Path) -> None:
    """Through the bot: a duel played with the panels' buttons to its end. A panel redrawn
    on the same position (a press that changes no position, the panel after a move that
    showed it already) and a final board shown in more than one place are the same picture:
    every board of the match is drawn (and encoded) once however many messages show it
    (before, two of its 114 drawings were of a picture drawn already)."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(321, "Ann"), fake.user(322, "Bob")
    group = fake.group(-100321, "Drawn once")
    drawn: list[BoardPicture] = []
    real = chat.painter.draw_board

    def counting(picture: BoardPicture, texts: Mapping[str, str] | None = None) -> bytes:
        drawn.append(picture)
        return real(picture, texts)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(chat.painter, "draw_board", counting)
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
