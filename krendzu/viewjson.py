"""A seat's view of a match (:class:`krendzu.match.MatchView`) as JSON and back.

The engine protocol (``docs/engines.md``) sends it as the ``view`` of every game state, so
an outside program written in Python can hand it to the built-in players unchanged
(``python -m engines.builtin``), and one in another language reads the same fields. It is
exactly ``match.observation(seat)``: nothing hidden from that seat is in it (the protocol
names the players ``p1`` … ``p4``, as an exported record does, never by the bot's ids, which
hold Telegram ids: :func:`chat.engine_state.observation_json`). Cells are the
engine's coordinates (the opening card at 0, 0); actions are ``str(action)``
(:func:`krendzu.parse_action` reads them back).
"""

from __future__ import annotations

from typing import Any

from krendzu.actions import parse_action
from krendzu.cards import Card
from krendzu.match import MatchView
from krendzu.tables import Settings, Table, TourRoles
from krendzu.tour import Combination, TourView, Turn

JSON = dict[str, Any]


def _cells(items: Any) -> list[list[Any]]:
    return [[c.code(), x, y] for c, x, y in items]


def _cells_back(items: Any) -> tuple[tuple[Card, int, int], ...]:
    return tuple((Card.parse(c), int(x), int(y)) for c, x, y in items)


def view_to_json(view: MatchView) -> JSON:
    tour = view.tour
    return {
        "viewer": view.viewer,
        "players": list(view.players),
        "table": view.settings.table.value,
        "settings": view.settings.to_json(),
        "first_dealer": view.first_dealer,
        "tour_index": view.tour_index,
        "tour_points": [[list(p) for p in points] for points in view.tour_points],
        "totals": list(view.totals),
        "match_over": view.match_over,
        "tour": {
            "viewer": tour.viewer,
            "roles": {"dealer": tour.roles.dealer, "attackers": list(tour.roles.attackers),
                      "defenders": list(tour.roles.defenders), "order": list(tour.roles.order)},
            "phase": tour.phase,
            "current_player": tour.current_player,
            "hand": [c.code() for c in tour.hand],
            "hand_sizes": list(tour.hand_sizes),
            "placements": _cells(tour.placements),
            "turns": [{"player": t.player, "cards": _cells(t.cards)} for t in tour.turns],
            "pending": _cells(tour.pending),
            "step_in_turn": tour.step_in_turn,
            "points": tour.points,
            "combos": [{"move": c.move, "cells": [list(xy) for xy in c.cells],
                        "own_goal": c.own_goal, "player": c.player} for c in tour.combos],
            "exchange_limit": tour.exchange_limit,
            "announcements": [list(a) for a in tour.announcements],
            "discards_done": list(tour.discards_done),
            "own_discards": [c.code() for c in tour.own_discards],
            "own_draws": [c.code() for c in tour.own_draws],
            "legal": [str(a) for a in tour.legal],
        },
    }


def view_from_json(data: JSON) -> MatchView:
    """Inverse of :func:`view_to_json` (``KeyError``/``ValueError`` for anything else)."""
    t = data["tour"]
    table = Table(data["table"])
    roles = t["roles"]
    tour = TourView(
        viewer=t["viewer"], table=table,
        roles=TourRoles(int(roles["dealer"]), tuple(roles["attackers"]),
                        tuple(roles["defenders"]), tuple(roles["order"])),
        phase=str(t["phase"]), current_player=int(t["current_player"]),
        hand=tuple(Card.parse(c) for c in t["hand"]),
        hand_sizes=tuple(int(n) for n in t["hand_sizes"]),
        placements=_cells_back(t["placements"]),
        turns=tuple(Turn(int(u["player"]), _cells_back(u["cards"])) for u in t["turns"]),
        pending=_cells_back(t["pending"]),
        step_in_turn=int(t["step_in_turn"]), points=int(t["points"]),
        combos=tuple(Combination(int(c["move"]), tuple((int(x), int(y)) for x, y in c["cells"]),
                                 bool(c["own_goal"]), int(c["player"])) for c in t["combos"]),
        exchange_limit=int(t["exchange_limit"]),
        announcements=tuple((int(a), int(b)) for a, b in t["announcements"]),
        discards_done=tuple(int(n) for n in t["discards_done"]),
        own_discards=tuple(Card.parse(c) for c in t["own_discards"]),
        own_draws=tuple(Card.parse(c) for c in t["own_draws"]),
        legal=tuple(parse_action(a) for a in t["legal"]),
    )
    return MatchView(
        viewer=data["viewer"], players=tuple(data["players"]),
        settings=Settings.from_json(table, data["settings"]),
        first_dealer=int(data["first_dealer"]), tour_index=int(data["tour_index"]),
        tour_points=tuple(tuple((int(a), int(b)) for a, b in p) for p in data["tour_points"]),
        totals=tuple(int(n) for n in data["totals"]), match_over=bool(data["match_over"]),
        tour=tour,
    )
