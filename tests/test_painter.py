"""Pictures drawn for the chat: computer seats keep a visible mark."""

from __future__ import annotations

from chat.notices import BoardPicture
from chat.painter import draw_board
from krendzu import Match, Settings, Table


def test_computer_seats_are_drawn_with_a_gear_not_a_missing_emoji() -> None:
    match = Match(["a", "b"], Settings(Table.DUEL), seed=1)
    match.apply(match.legal_actions()[0])
    view = match.observation(None)
    robot = draw_board(BoardPicture(view, ("Ann", "🤖 Normal"), "en"))
    gear = draw_board(BoardPicture(view, ("Ann", "⚙ Normal"), "en"))
    bare = draw_board(BoardPicture(view, ("Ann", "Normal"), "en"))
    assert robot == gear != bare
