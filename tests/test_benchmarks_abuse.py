"""Smoke tests of the benchmarks about hostile load and flood waits: tiny runs of
``benchmarks/bot.py`` (its flood phase, issue 32) and ``benchmarks/abuse.py`` (issue 25), the
JSON's keys, and the figures that must hold on any machine: no move lost, no hostile seat,
no 429 outside the flooded group. Their timing targets are for the full runs (README)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.fakebot import FakeTelegram
from tests.test_ai_arena import _benchmark


def run_script(name: str, argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    """``python benchmarks/<name>.py ARGV``, in-process: its one JSON object."""
    _benchmark(name).main(argv)
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_the_bot_benchmark_measures_other_chats_during_a_flood_wait(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = run_script("bot", ["--matches", "2", "--rate", "4", "--seconds", "1",
                                "--saturation-seconds", "0.5", "--flood-seconds", "1.5",
                                "--probes", "2", "--probe-rate", "4", "--draw-workers", "0",
                                "--in-group-seconds", "0", "--dir", str(tmp_path)], capsys)
    for key in ("latency", "saturation", "flood", "check", "targets", "ok"):
        assert key in report, key
    # The CPU a move, of the bot's process and of its drawing processes (none here).
    for key in ("cpu_ms_per_move", "drawing_cpu_s", "drawing_cpu_ms_per_move"):
        assert key in report["saturation"], key
    # The bot runs on the loop `python bot.py` runs on (chat.eventloop: uvloop if installed).
    assert report["event_loop"] == ("uvloop" if importlib.util.find_spec("uvloop")
                                    else "asyncio"), report["event_loop"]
    flood = report["flood"]
    for part in ("without", "with"):
        figures = flood[part]
        assert figures["answers"] == 6 and figures["unanswered"] == 0, figures
        assert 0 < figures["p50_ms"] <= figures["p95_ms"] <= figures["max_ms"], figures
        assert figures["busy_moves"] >= 1, figures  # the busy group's match kept moving
    assert flood["with"]["busy_group_429s"] >= 1, "the busy group met its 429"
    assert flood["other_chats_429s"] == 0
    assert flood["p95_ratio"] == round(flood["with"]["p95_ms"] / flood["without"]["p95_ms"], 2)
    assert flood["post_after_pause_ms"] is not None
    check = report["check"]
    assert check["lost"] == check["duplicated"] == check["unanswered"] == 0, check
    assert check["final_boards_ok"] == 3, check  # the two matches and the busy group's


def test_the_abuse_benchmark_seats_no_attacker_and_loses_no_move(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = run_script("abuse", ["--matches", "2", "--seconds", "3", "--pace", "1",
                                  "--open-lobbies", "1", "--draw-workers", "0",
                                  "--flood-rate", "50", "--dir", str(tmp_path)], capsys)
    for key in ("p50_ms", "p95_ms", "p50_ratio", "p95_ratio", "memory_growth_mb",
                "memory_growth_without_attacker_mb", "lost_moves", "hostile_seated",
                "hostile_invited", "without",
                "with", "flood", "flooded", "targets", "ok"):
        assert key in report, key
    # The flood of issue 43: one person at 50 commands a second in a match's group.
    flood = report["flood"]
    assert flood["flood_sent"] == 150 and flood["flooder_dropped"] >= 0, flood
    assert flood["honest_dropped"] == 0 and flood["lost_moves"] == 0, flood
    assert flood["p95_ratio"] is not None and flood["flooded_group"]["moves"] >= 1, flood
    assert report["lost_moves"] == 0 and report["hostile_seated"] == 0, report
    assert report["hostile_invited"] == 0
    assert report["p95_ratio"] is not None and report["p95_ratio"] > 0
    without, with_ = report["without"], report["with"]
    assert without["attack"]["info_commands"] == 0
    attack = with_["attack"]
    assert attack["info_commands"] + attack["forged_presses"] + attack["deep_links"] == 30
    # Production limits: ten information commands in three seconds exceed 6 a minute.
    assert attack["throttle_refused"] >= 4, attack
    assert attack["rate_limited"] == 0 and attack["group_writes_max_per_60s"] <= 19, attack
    for run in (without, with_, report["flooded"]):
        assert run["honest"]["moves"] >= 4, run["honest"]
        assert run["check"]["lost"] == run["check"]["duplicated"] == 0, run["check"]
        assert run["check"]["final_boards_ok"] == 2, run["check"]  # the /board answers apart
        assert run["hostile"]["lobbies_checked"] == 3  # two started set-ups and the open one
        assert run["memory"]["rss_mb_after"] > 0
    assert with_["hostile"]["match_seats"] == with_["hostile"]["lobby_seats"] == 0


def test_a_forged_press_sends_any_data_for_a_real_message() -> None:
    """What benchmarks/abuse.py's attacker does: a modified client's callback data."""
    fake = FakeTelegram()
    mal = fake.user(7, "Mal")
    mal.start_bot()
    keyboard = {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]}
    status, _ = fake.handle("sendMessage", {"chat_id": 7, "text": "hi",
                                            "reply_markup": json.dumps(keyboard)})
    assert status == 200
    message = fake.last(mal)
    assert message is not None
    with pytest.raises(AssertionError):
        mal.press(message, data="v1:l:1:join")  # no such button
    query = mal.press(message, data="v1:l:1:join", forged=True)
    assert query.data == "v1:l:1:join"
    update = fake.pending_updates()[-1]["callback_query"]
    assert update["data"] == "v1:l:1:join"
    assert update["message"]["message_id"] == message.message_id


def test_the_in_group_benchmark_counts_writes_and_meets_no_429(
        capsys: pytest.CaptureFixture[str]) -> None:
    """``benchmarks/ephemeral.py`` (benchmarks/bot.py's ``in_group``, issue 42): press →
    ephemeral panel, the group's writes a move public and ephemeral, full speed without 429."""
    report = run_script("ephemeral", ["--seconds", "1", "--duels", "1", "--teams", "1",
                                      "--tables", "1", "--deal", "3/3"], capsys)
    duel, teams, computer = report["duel"], report["teams"], report["computer_table"]
    assert duel["presses"] > 0 and 0 < duel["press_to_panel_p50_ms"] \
        <= duel["press_to_panel_p95_ms"], duel
    assert teams["presses"] == 0, "an administrator bot pushes the panels"
    for table in (duel, teams):
        writes = table["writes_per_move"]
        assert table["moves"] > 0 and writes["ephemeral"] > 0 and writes["public"] > 0, table
    assert computer["steps"] > 0
    assert duel["429s"] == teams["429s"] == computer["429s"] == 0
