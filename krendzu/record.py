"""``krendzu-record/1``: import and the referee's replay (RULES.md §8). The export is
:mod:`krendzu.export`'s (``export_record`` is re-exported here, where it always was).

Two kinds of failure are kept apart:

* :class:`~krendzu.errors.RecordError` — the input is not a readable record (not an object,
  a missing field, a card string that is not a card). The referee exits 2.
* :class:`RuleViolation` — a readable record that breaks a rule; it knows the tour and the
  move (index in that tour's ``moves``, ``None`` for the deal or the exchange).

Extension fields written by this engine and understood on import: ``settings.deal``
(``{"attacker": n, "defender": m}``), ``tours[].dealer``, and ``"pending": true`` on the last
move of an unfinished tour when a defender has placed its first card and may still place a
second (otherwise a one-card defender turn is closed on import).
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from krendzu.actions import Announce, Discard, EndTurn, Pass, Place, Redeal
from krendzu.cards import DECK_SIZE, Card, parse_card
from krendzu.errors import CardError, IllegalMove, KrendzuError, RecordError, SettingsError
from krendzu.export import FORMAT
from krendzu.export import export_record as export_record  # re-exported: the API's home
from krendzu.match import Match
from krendzu.tables import Settings, Table, TourRoles, dealer_of_tour, tour_roles
from krendzu.tour import OVER, PLAY, REDEAL, Tour


class RuleViolation(KrendzuError):
    """A record move (or deal) that the rules do not allow."""

    def __init__(self, tour: int, move: int | None, reason: str) -> None:
        super().__init__(f"tour {tour}, move {move}: {reason}")
        self.tour = tour
        self.move = move
        self.reason = reason


def read_json(path: str) -> Any:
    """Read a JSON document from a file, or from standard input for ``-`` (the CLIs).

    Raises ``OSError``, ``UnicodeDecodeError`` or ``json.JSONDecodeError`` for the caller
    to report.
    """
    if path == "-":
        return json.load(sys.stdin)
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


# Import ---------------------------------------------------------------------------------


@dataclass
class _TourLog:
    """Per-tour facts the referee reports."""

    tour: Tour
    finished: bool


def _need(cond: bool, message: str) -> None:
    if not cond:
        raise RecordError(message)


def _card(text: Any, where: str) -> Card:
    _need(isinstance(text, str), f"{where}: a card must be a string like 'QC'")
    try:
        return parse_card(text)
    except CardError as exc:
        raise RecordError(f"{where}: {exc}") from None


def _int(value: Any, where: str) -> int:
    _need(isinstance(value, int) and not isinstance(value, bool), f"{where} must be an integer")
    return int(value)


def _name_list(value: Any, names: tuple[str, ...], where: str) -> list[int]:
    _need(isinstance(value, list), f"{where} must be a list of player names")
    seats = []
    for name in value:
        _need(isinstance(name, str) and name in names, f"{where}: unknown player {name!r}")
        seats.append(names.index(name))
    return seats


def _read_header(data: Any) -> tuple[tuple[str, ...], Settings, frozenset[str], list[Any]]:
    _need(isinstance(data, Mapping), "a record is a JSON object")
    _need(data.get("format") == FORMAT, f"not a {FORMAT} record (format field)")
    players = data.get("players")
    _need(
        isinstance(players, list) and all(isinstance(p, str) and p for p in players),
        "players must be a list of non-empty names",
    )
    _need(len(set(players)) == len(players), "player names must be distinct")
    table_text = data.get("table")
    _need(isinstance(table_text, str), "table must be a string")
    settings_data = data.get("settings", {})
    _need(isinstance(settings_data, Mapping), "settings must be an object")
    try:
        settings = Settings.from_json(table_text, dict(settings_data))
    except SettingsError as exc:
        raise RecordError(f"settings: {exc}") from None
    _need(
        len(players) == settings.table.players,
        f"a {settings.table.value} table has {settings.table.players} players",
    )
    tours = data.get("tours")
    _need(isinstance(tours, list), "tours must be a list")
    _need(len(tours) <= settings.tour_count, "more tours than the settings allow")
    for t, tour in enumerate(tours):
        _need(isinstance(tour, Mapping), f"tours[{t}] must be an object")
    return tuple(players), settings, frozenset(settings_data), tours


def _roles_for(
    t: int, raw: Mapping[str, Any], table: Table, names: tuple[str, ...], previous: int | None
) -> TourRoles:
    attackers = set(_name_list(raw.get("attackers"), names, f"tours[{t}].attackers"))
    defenders = set(_name_list(raw.get("defenders"), names, f"tours[{t}].defenders"))
    candidates = [
        d
        for d in range(table.players)
        if set(tour_roles(table, d).attackers) == attackers
        and set(tour_roles(table, d).defenders) == defenders
    ]
    if not candidates:
        raise RuleViolation(t, None, f"these attackers and defenders are not a {table.value} tour")
    if "dealer" in raw:
        dealer_name = raw["dealer"]
        _need(isinstance(dealer_name, str) and dealer_name in names, f"tours[{t}].dealer unknown")
        dealer = names.index(dealer_name)
        if dealer not in candidates:
            raise RuleViolation(t, None, f"{dealer_name} cannot deal a tour with these roles")
    elif previous is not None and dealer_of_tour(table, previous, 1) in candidates:
        dealer = dealer_of_tour(table, previous, 1)
    else:
        dealer = candidates[0]
        moves = raw.get("moves")
        if isinstance(moves, list) and moves and isinstance(moves[0], Mapping):
            opener = moves[0].get("player")
            for d in candidates:
                if opener in names and tour_roles(table, d).opener == names.index(opener):
                    dealer = d
    if previous is not None and dealer != dealer_of_tour(table, previous, 1):
        raise RuleViolation(
            t, None, "roles do not rotate as the rules say: the deal passes to the next seat"
        )
    return tour_roles(table, dealer)


def _build_tour(
    t: int,
    raw: Mapping[str, Any],
    names: tuple[str, ...],
    settings: Settings,
    settings_keys: frozenset[str],
    roles: TourRoles,
) -> Tour:
    table = settings.table
    hands_raw = raw.get("hands")
    if not isinstance(hands_raw, Mapping):
        raise RecordError(f"tours[{t}].hands must be an object")
    _need(set(hands_raw) == set(names), f"tours[{t}].hands must list every player once")
    hands: list[list[int]] = []
    for name in names:
        cards = hands_raw[name]
        _need(isinstance(cards, list), f"tours[{t}].hands.{name} must be a list")
        hands.append([_card(c, f"tours[{t}].hands.{name}").index for c in cards])
    exchange = raw.get("exchange")
    counts: dict[int, int] = {}
    discards: dict[int, list[int]] = {}
    draws: dict[int, list[int]] = {}
    if exchange is not None:
        _need(isinstance(exchange, Mapping), f"tours[{t}].exchange must be an object")
        if settings.exchange_limit == 0:
            raise RuleViolation(t, None, "this match has no card exchange")
        for name, entry in exchange.items():
            _need(name in names, f"tours[{t}].exchange: unknown player {name!r}")
            _need(isinstance(entry, Mapping), f"tours[{t}].exchange.{name} must be an object")
            seat = names.index(name)
            where = f"tours[{t}].exchange.{name}"
            counts[seat] = _int(entry.get("count", 0), f"{where}.count")
            for key, store in (("discards", discards), ("draws", draws)):
                cards = entry.get(key, [])
                _need(isinstance(cards, list), f"{where}.{key} must be a list")
                store[seat] = [_card(c, f"{where}.{key}").index for c in cards]
    # Hands before the exchange: give back the draws, take back the discards.
    before: list[list[int]] = []
    for seat, hand in enumerate(hands):
        cards = list(hand)
        for card in draws.get(seat, ()):
            if card not in cards:
                raise RuleViolation(
                    t, None, f"{names[seat]} drew {Card(card).pretty()} but does not hold it"
                )
            cards.remove(card)
        cards.extend(discards.get(seat, ()))
        before.append(cards)
    flat = [c for h in before for c in h]
    if len(flat) != len(set(flat)):
        raise RuleViolation(t, None, "a card was dealt twice")
    deal = settings.deal_sizes
    for seat, hand in enumerate(before):
        if "deal" not in settings_keys:
            break  # no deal sizes in the record: the hands it lists are the deal
        want = deal.attacker if seat in roles.attackers else deal.defender
        if len(hand) != want:
            raise RuleViolation(
                t, None, f"{names[seat]} was dealt {len(hand)} cards; the settings say {want}"
            )
    stock = [c for c in range(DECK_SIZE) if c not in set(flat)]
    try:
        tour = Tour(table, roles, before, stock, settings.exchange_limit)
    except SettingsError as exc:
        raise RuleViolation(t, None, str(exc)) from None
    if settings.exchange_limit and (exchange is not None or raw.get("moves")):
        # With moves, the exchange is complete (a missing entry announced 0); without
        # moves the record may stop part-way, so replay only what it lists.
        complete = bool(raw.get("moves"))
        try:
            for seat in tour.announce_order:
                if seat not in counts and not complete:
                    break
                tour.apply(Announce(counts.get(seat, 0)))
            for seat in tour.announce_order:
                for card in discards.get(seat, ()):
                    if tour.current_player != seat:
                        raise IllegalMove(f"{names[seat]} discards more cards than announced")
                    tour.apply(Discard(Card(card)))
            if tour.phase == REDEAL:
                groups = tuple(
                    tuple(Card(c) for c in draws.get(seat, ())) for seat in tour.announce_order
                )
                if any(groups) or complete:
                    tour.apply(Redeal(groups))
            if complete and tour.phase != PLAY:
                raise IllegalMove("the exchange does not add up: discards must match the counts")
        except IllegalMove as exc:
            raise RuleViolation(t, None, f"exchange: {exc}") from None
    return tour


def _play_moves(
    t: int, raw: Mapping[str, Any], names: tuple[str, ...], tour: Tour, history: list[Any]
) -> None:
    moves = raw.get("moves", [])
    _need(isinstance(moves, list), f"tours[{t}].moves must be a list")
    for m, move in enumerate(moves):
        where = f"tours[{t}].moves[{m}]"
        _need(isinstance(move, Mapping), f"{where} must be an object")
        name = move.get("player")
        _need(isinstance(name, str) and name in names, f"{where}.player unknown")
        cards = move.get("cards")
        _need(isinstance(cards, list), f"{where}.cards must be a list")
        parsed = []
        for i, entry in enumerate(cards):
            _need(
                isinstance(entry, list) and len(entry) == 3,
                f"{where}.cards[{i}] must be [card, x, y]",
            )
            card = _card(entry[0], f"{where}.cards[{i}]")
            parsed.append(
                Place(card, _int(entry[1], f"{where}.cards[{i}].x"),
                      _int(entry[2], f"{where}.cards[{i}].y"))
            )
        seat = names.index(name)
        if tour.phase == OVER:
            raise RuleViolation(t, m, "the tour is already over: every hand is empty")
        if tour.phase != PLAY:
            raise RuleViolation(t, m, "the exchange is not complete")
        if tour.current_player != seat:
            who = names[tour.current_player]
            raise RuleViolation(t, m, f"it is {who}'s turn, not {name}'s")
        try:
            _apply_turn(tour, seat, parsed, history)
        except IllegalMove as exc:
            raise RuleViolation(t, m, str(exc)) from None
        pending = bool(move.get("pending")) and m == len(moves) - 1
        if tour.step_in_turn == 1 and not pending:
            tour.apply(EndTurn())
            history.append(EndTurn())


def _apply_turn(tour: Tour, seat: int, places: list[Place], history: list[Any]) -> None:
    if not places:
        tour.apply(Pass())
        history.append(Pass())
        return
    turns_before = len(tour.turns_raw)
    for i, place in enumerate(places):
        if i and len(tour.turns_raw) > turns_before:
            if turns_before == 0:
                raise IllegalMove("the opening move is exactly one card")
            if tour.is_attacker[seat]:
                raise IllegalMove("an attacker places exactly one card per turn")
            raise IllegalMove("a defender places at most two cards per turn")
        tour.apply(place)
        history.append(place)


def import_record(data: Any, *, seed: int = 0) -> Match:
    """Read a record into a :class:`Match` positioned after its last move.

    Raises :class:`~krendzu.errors.RecordError` for unreadable input and
    :class:`RuleViolation` for a move the rules forbid. Chance still due (a redeal after the
    discards, the next tour's deal after a finished tour) comes from ``random.Random(seed)``.
    """
    match, _ = _import(data, seed)
    if match.tours:
        match.resolve_chance()
    return match


def _import(data: Any, seed: int) -> tuple[Match, list[_TourLog]]:
    names, settings, settings_keys, tours_raw = _read_header(data)
    logs: list[_TourLog] = []
    previous: int | None = None
    match: Match | None = None
    for t, raw in enumerate(tours_raw):
        roles = _roles_for(t, raw, settings.table, names, previous)
        if match is None:
            match = Match(
                names, settings, rng=random.Random(seed), first_dealer=roles.dealer,
                deal_first_tour=False,
            )
        if logs and not logs[-1].finished:
            raise RuleViolation(t, None, f"tour {t - 1} is not finished but tour {t} begins")
        tour = _build_tour(t, raw, names, settings, settings_keys, roles)
        match.tours.append(tour)
        _play_moves(t, raw, names, tour, match.history)
        logs.append(_TourLog(tour, tour.is_over))
        previous = roles.dealer
    if match is None:
        match = Match(names, settings, rng=random.Random(seed))
    return match, logs


# Referee --------------------------------------------------------------------------------


def replay(data: Any) -> dict[str, Any]:
    """Check a record; the referee's JSON report (``valid`` true or false).

    Raises :class:`~krendzu.errors.RecordError` when the input is not a readable record.
    """
    try:
        match, logs = _import(data, 0)
    except RuleViolation as exc:
        return {"valid": False, "error": {"tour": exc.tour, "move": exc.move, "reason": exc.reason}}
    names = match.players
    tours = []
    totals = dict.fromkeys(names, 0)
    for log in logs:
        points = {names[s]: p for s, p in log.tour.points_by_player().items()}
        for name, p in points.items():
            totals[name] += p
        tours.append(
            {
                "points": points,
                "combinations": [
                    {"move": c.move, "cells": [list(xy) for xy in c.cells], "own_goal": c.own_goal}
                    for c in log.tour.combos
                ],
                "finished": log.finished,
            }
        )
    return {"valid": True, "tours": tours, "totals": totals}
