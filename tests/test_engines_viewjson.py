"""A seat's view as JSON (krendzu.viewjson, the engine protocol's ``view``) reads back equal,
on every table and through the exchange, and shows nothing of another hand."""

from __future__ import annotations

import json
import random

import pytest

from krendzu import Match, Settings, Table
from krendzu.ai import make_player
from krendzu.viewjson import view_from_json, view_to_json


@pytest.mark.parametrize("table", list(Table))
def test_views_read_back_equal_for_every_seat_and_move(table: Table) -> None:
    players = ["a", "b", "c", "d"][: table.players]
    game = Match(players, Settings(table=table, exchange_limit=2), seed=7)
    player = make_player("easy")
    rng = random.Random(7)
    checked = 0
    while not game.is_over and checked < 400:
        for seat in range(table.players):
            view = game.observation(seat)
            data = json.loads(json.dumps(view_to_json(view)))
            back = view_from_json(data)
            assert back.tour == view.tour and back.totals == view.totals
            assert back.settings.to_json() == view.settings.to_json()
            others = {c.code() for s in range(table.players) if s != seat
                      for c in game.observation(s).tour.hand}
            assert not others & set(data["tour"]["hand"])
            checked += 1
        for action in player.decide(game.observation(game.current_player), rng):
            game.apply(action)
    assert checked > 20
