"""krendzu-record/1 export/import and the referee (RULES.md §8)."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from krendzu import Match, RecordError, Settings, Table, export_record, import_record, replay

SPEC_EXAMPLE = {
    "format": "krendzu-record/1",
    "players": ["ann", "bob"],
    "table": "duel",
    "settings": {"tours": 2, "exchange_limit": 0},
    "tours": [
        {
            "attackers": ["ann"],
            "defenders": ["bob"],
            "hands": {"ann": ["KH", "6C", "8D"], "bob": ["QC", "9D", "6H", "7S"]},
            "moves": [
                {"player": "bob", "cards": [["QC", 0, 0]]},
                {"player": "ann", "cards": [["KH", 1, 0]]},
                {"player": "bob", "cards": [["9D", 2, 0]]},
                {"player": "ann", "cards": [["6C", 1, 1]]},
                {"player": "bob", "cards": []},
            ],
        }
    ],
}


def scoring_record() -> dict:
    """A finished duel tour with a normal goal and an own goal."""
    return {
        "format": "krendzu-record/1",
        "players": ["ann", "bob"],
        "table": "duel",
        "settings": {"tours": 2, "exchange_limit": 0},
        "tours": [
            {
                "attackers": ["ann"],
                "defenders": ["bob"],
                "hands": {"ann": ["7S", "8C", "TH"], "bob": ["6H", "9D", "QS", "JS"]},
                "moves": [
                    {"player": "bob", "cards": [["6H", 0, 0]]},
                    {"player": "ann", "cards": [["7S", 1, 0]]},
                    {"player": "bob", "cards": []},
                    {"player": "ann", "cards": [["8C", 2, 0]]},
                    {"player": "bob", "cards": [["9D", 3, 0]]},
                    {"player": "ann", "cards": [["TH", 4, 0]]},
                    {"player": "bob", "cards": [["QS", 0, 1], ["JS", 0, 2]]},
                ],
            }
        ],
    }


def test_spec_example_is_valid() -> None:
    report = replay(SPEC_EXAMPLE)
    assert report == {
        "valid": True,
        "tours": [{"points": {"ann": 0, "bob": 0}, "combinations": [], "finished": False}],
        "totals": {"ann": 0, "bob": 0},
    }


def test_combinations_reported_with_own_goals() -> None:
    report = replay(scoring_record())
    assert report["valid"] is True
    tour = report["tours"][0]
    assert tour["finished"] is True
    assert tour["points"] == {"ann": 2, "bob": 0}
    assert tour["combinations"] == [
        {"move": 4, "cells": [[0, 0], [1, 0], [2, 0], [3, 0]], "own_goal": True},
        {"move": 5, "cells": [[1, 0], [2, 0], [3, 0], [4, 0]], "own_goal": False},
    ]
    assert report["totals"] == {"ann": 2, "bob": 0}


def _break(record: dict, path: list, value) -> dict:
    broken = copy.deepcopy(record)
    target = broken
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return broken


MOVES = ["tours", 0, "moves"]


@pytest.mark.parametrize(
    ("path", "value", "move", "fragment"),
    [
        ([*MOVES, 0, "player"], "ann", 0, "bob's turn"),
        ([*MOVES, 0, "cards"], [["QC", 1, 0]], 0, "opening card goes at"),
        ([*MOVES, 0, "cards"], [], 0, "opening move"),
        ([*MOVES, 0, "cards"], [["QC", 0, 0], ["9D", 1, 0]], 0, "opening move is exactly one"),
        ([*MOVES, 1, "cards"], [["KH", 1, 0], ["6C", 2, 0]], 1, "exactly one card"),
        ([*MOVES, 1, "cards"], [["QC", 1, 0]], 1, "do not hold"),
        ([*MOVES, 1, "cards"], [["KH", 2, 0]], 1, "does not touch"),
        ([*MOVES, 1, "cards"], [["KH", 1, 1]], 1, "does not touch"),
        ([*MOVES, 1, "cards"], [["KH", 0, 0]], 1, "already taken"),
        ([*MOVES, 1, "cards"], [], 1, "cannot pass"),
        ([*MOVES, 2, "cards"], [["9D", 2, 0], ["6H", 3, 0], ["7S", 4, 0]], 2, "at most two"),
    ],
)
def test_rule_violations_are_located(path: list, value, move: int, fragment: str) -> None:
    report = replay(_break(SPEC_EXAMPLE, path, value))
    assert report["valid"] is False
    assert report["error"]["tour"] == 0
    assert report["error"]["move"] == move
    assert fragment in report["error"]["reason"]


def test_move_after_the_tour_ended() -> None:
    record = scoring_record()
    record["tours"][0]["moves"].append({"player": "ann", "cards": []})
    report = replay(record)
    assert report["error"] == {"tour": 0, "move": 7, "reason": report["error"]["reason"]}
    assert "already over" in report["error"]["reason"]


def test_deal_violations() -> None:
    dup = _break(SPEC_EXAMPLE, ["tours", 0, "hands", "ann"], ["KH", "6C", "QC"])
    assert "dealt twice" in replay(dup)["error"]["reason"]
    sized = _break(SPEC_EXAMPLE, ["settings", "deal"], {"attacker": 12, "defender": 14})
    err = replay(sized)["error"]
    assert err["move"] is None and "settings say 12" in err["reason"]
    roles = _break(SPEC_EXAMPLE, ["tours", 0, "attackers"], ["bob"])
    assert "not a duel tour" in replay(roles)["error"]["reason"]


def test_unfinished_tour_before_another_and_rotation() -> None:
    record = copy.deepcopy(SPEC_EXAMPLE)
    second = copy.deepcopy(record["tours"][0])
    second["attackers"], second["defenders"] = ["bob"], ["ann"]
    second["moves"] = []
    record["tours"].append(second)
    assert "not finished" in replay(record)["error"]["reason"]
    finished = scoring_record()
    same_roles = copy.deepcopy(finished["tours"][0])
    same_roles["moves"] = []
    finished["tours"].append(same_roles)
    assert "rotate" in replay(finished)["error"]["reason"]


def test_exchange_in_records() -> None:
    match = Match(["ann", "bob"], Settings(exchange_limit=3), seed=12)
    rng = random.Random(2)
    while not match.is_over:
        match.apply(rng.choice(match.legal_actions()))
    record = export_record(match)
    ex = record["tours"][0]["exchange"]
    assert set(ex) == {"ann", "bob"}
    assert all(len(e["discards"]) == len(e["draws"]) == e["count"] for e in ex.values())
    assert replay(record)["valid"] is True
    over = _break(record, ["tours", 0, "exchange", "ann", "count"], 4)
    assert replay(over)["valid"] is False
    no_exchange = _break(record, ["settings", "exchange_limit"], 0)
    if any(e["count"] for e in ex.values()):
        assert "no card exchange" in replay(no_exchange)["error"]["reason"]


@pytest.mark.parametrize(
    "bad",
    [
        [],
        {"format": "something-else"},
        {**SPEC_EXAMPLE, "players": "ann"},
        {**SPEC_EXAMPLE, "table": "pentagon"},
        {**SPEC_EXAMPLE, "tours": {}},
        _break(SPEC_EXAMPLE, [*MOVES, 0, "cards"], [["ZZ", 0, 0]]),
        _break(SPEC_EXAMPLE, [*MOVES, 0, "cards"], [["QC", "a", 0]]),
        _break(SPEC_EXAMPLE, [*MOVES, 0, "cards"], [["QC", 0]]),
        _break(SPEC_EXAMPLE, [*MOVES, 0, "player"], "zed"),
        _break(SPEC_EXAMPLE, ["tours", 0, "hands"], {"ann": ["KH"]}),
        _break(SPEC_EXAMPLE, ["settings", "tours"], 3),
    ],
)
def test_unreadable_records_raise_record_error(bad) -> None:
    with pytest.raises(RecordError):
        replay(bad)


@pytest.mark.parametrize("table", list(Table))
def test_export_import_round_trip_mid_tour(table: Table) -> None:
    players = ["ann", "bob", "cy", "dee"][: table.players]
    match = Match(players, Settings(table=table, exchange_limit=1), seed=5)
    rng = random.Random(9)
    for step in range(80):
        record = json.loads(json.dumps(export_record(match)))
        again = import_record(record)
        assert export_record(again) == record, step
        assert again.current_player == match.current_player
        assert again.tour.step_in_turn == match.tour.step_in_turn
        assert again.tour.hands == match.tour.hands
        if match.is_over:
            break
        match.apply(rng.choice(match.legal_actions()))


def run_cli(tmp_path: Path, content: str) -> subprocess.CompletedProcess:
    path = tmp_path / "record.json"
    path.write_text(content, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "krendzu", "replay", str(path)],
        capture_output=True, text=True, timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )


def test_cli_exit_codes(tmp_path: Path) -> None:
    ok = run_cli(tmp_path, json.dumps(scoring_record()))
    assert ok.returncode == 0
    assert json.loads(ok.stdout)["totals"] == {"ann": 2, "bob": 0}
    bad = run_cli(tmp_path, json.dumps(_break(SPEC_EXAMPLE, [*MOVES, 1, "cards"], [])))
    assert bad.returncode == 1
    assert json.loads(bad.stdout)["error"]["move"] == 1
    for garbage in ["{not json", "[1, 2]", '{"format": "krendzu-record/1"}', "\x00\x01"]:
        broken = run_cli(tmp_path, garbage)
        assert broken.returncode == 2, garbage
        assert broken.stdout == ""
        assert broken.stderr.count("\n") == 1 and broken.stderr.strip()
    missing = subprocess.run(
        [sys.executable, "-m", "krendzu", "replay", str(tmp_path / "nope.json")],
        capture_output=True, text=True, timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert missing.returncode == 2 and "cannot read" in missing.stderr
