"""Pictures drawn for the chat: computer seats keep a visible mark."""

from __future__ import annotations

from chat.notices import BoardPicture
from chat.painter import draw_board
from krendzu import Match, Settings, Table
from render import board_photo


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
