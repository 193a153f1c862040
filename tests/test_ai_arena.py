"""The arena: report shape, determinism, jobs-independence, the command line."""

from __future__ import annotations

import importlib.util
import itertools
import json
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from krendzu.arena import ArenaOptions, format_table, main, play_first_tours, run


def _benchmark(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (the scripts are not a package)."""
    path = Path(__file__).resolve().parent.parent / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{name}_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_report_keys_and_determinism() -> None:
    opts = ArenaOptions("easy", "random", deals=4, seed=3)
    report = run(opts)
    for key in ("x", "y", "deals", "mean_attack_points", "diff_mean", "diff_ci95",
                "wins_draws_losses", "decision_ms"):
        assert key in report
    assert report["deals"] == 4
    assert set(report["mean_attack_points"]) == {"easy", "random"}
    assert sum(report["wins_draws_losses"]) == 4
    low, high = report["diff_ci95"]
    assert low <= report["diff_mean"] <= high
    for stats in report["decision_ms"].values():
        assert stats["median"] <= stats["p95"] <= stats["max"]
    again = run(opts)
    assert again["mean_attack_points"] == report["mean_attack_points"]
    assert "paired difference" in format_table(report)


def test_jobs_do_not_change_results() -> None:
    one = run(ArenaOptions("normal", "easy", deals=4, seed=9, table="teams"))
    two = run(ArenaOptions("normal", "easy", deals=4, seed=9, table="teams", jobs=2))
    assert one["mean_attack_points"] == two["mean_attack_points"]
    assert one["wins_draws_losses"] == two["wins_draws_losses"]


def test_cli_json_with_oracle_and_hard(capsys) -> None:
    assert main(["hard", "oracle", "--deals", "1", "--iterations", "2", "--json",
                 "--table", "trio-lone-attacker", "--exchange", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["x"] == "hard" and report["y"] == "oracle"
    assert set(report["decision_ms"]) == {"hard", "oracle"}


def test_cli_measures_hard_against_its_baseline(capsys) -> None:
    assert main(["hard", "hard-v1", "--deals", "1", "--iterations", "2", "--json",
                 "--table", "teams", "--exchange", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["decision_ms"]) == {"hard", "hard-v1"}


def test_the_defence_benchmark_replays_the_arenas_tours() -> None:
    # benchmarks/defence.py plays the arena's first tour of each deal with the same
    # decisions: the points it counts are the attacker's arena points, and every card the
    # defenders placed after the opening is in its turn counts.
    defence = _benchmark("defence")
    for table in ("duel", "trio-lone-attacker"):
        opts = ArenaOptions("normal", "easy", deals=3, seed=5, table=table)
        report = defence.measure(opts)
        arena = run(opts)
        assert report["conceded_per_tour"] == arena["mean_attack_points"]["normal"]
        turns = report["defender_turns_by_cards"]
        assert set(turns) == {0, 1, 2} and turns[1] + 2 * turns[2] > 0


def test_the_regret_benchmark_replays_the_arenas_tours() -> None:
    # benchmarks/regret.py asks the oracle at every defence but plays the arena's own
    # decisions: the points it counts are the attacker's arena points.
    regret = _benchmark("regret")
    opts = ArenaOptions("normal", "hard", deals=2, seed=5, iterations=2)
    report = regret.measure(opts, playouts=8)
    assert report["conceded_per_tour"] == run(opts)["mean_attack_points"]["normal"]
    parts = report["parts"]
    assert report["decisions"] == sum(p["decisions"] for p in parts) > 0
    assert all(0 <= p["live"] <= 2 and 0 <= p["dead"] <= 2 for p in parts)
    assert all(p["defender_cards"] <= 2 and p["oracle_cards"] <= 2 for p in parts)


def test_the_liveness_benchmark_scores_every_playable_threat() -> None:
    # benchmarks/liveness.py sorts the playable threats a defender faces by their history
    # and scores the counting and the belief estimates against the real hands.
    liveness = _benchmark("liveness")
    opts = ArenaOptions("normal", "hard", deals=2, seed=5, iterations=2)
    report = liveness.measure(opts, draws=20)
    groups = report["groups"]
    assert report["all"]["threats"] == sum(g["threats"] for g in groups.values()) > 0
    assert report["fresh"]["threats"] + report["old"]["threats"] == report["all"]["threats"]
    for g in groups.values():
        assert 0.0 <= g["live"] <= 1.0 and 0.0 <= g["brier_belief"] <= 1.0
        assert 0.0 <= g["brier_no_rank"] <= 1.0
    # A threat no unseen card completes is dead, and both estimates know it.
    probe = liveness.LivenessProbe(20)
    for _ in play_first_tours(opts, probe.watch):
        pass
    samples = [s for group in probe.groups.values() for s in group]
    assert samples and all(not s[0] for s in samples if s[1] == 0.0)
    assert all(s[2] == s[3] == 0.0 for s in samples if s[1] == 0.0)
    # AUC: the share of (live, dead) pairs the estimate orders right, ties half.
    pairs = [(True, 0.9, 0.5, 0.0), (True, 0.4, 0.5, 0.0), (False, 0.4, 0.5, 0.0),
             (False, 0.1, 0.6, 0.0)]
    assert liveness.auc(pairs, 1) == round((2 + 1.5) / 4, 3)
    assert liveness.auc(pairs, 2) == round(1 / 4, 3)
    assert liveness.auc(pairs[:2], 1) is None


def test_the_rank_benchmark_counts_better_moves_under_the_real_hand() -> None:
    # benchmarks/rank.py reads each attacker's non-scoring card as the defender's rank
    # check does, under the real hand and under drawn ones; its curve is relative to the
    # best move and never rises.
    rank = _benchmark("rank")
    report = rank.measure(ArenaOptions("hard", "hard", deals=2, seed=5, iterations=2), draws=5)
    assert report["moves"] > 0
    for key in ("truth", "drawn"):
        assert abs(sum(report[key].values()) - 1.0) < 1e-3
    curve = report["curve"]
    assert curve[0] == 1.0 and all(a >= b for a, b in itertools.pairwise(curve))
    assert rank.fitted_curve(Counter({0: 10, 1: 2, 2: 4, 3: 1, 5: 3})) == [1.0, 0.3, 0.3, 0.1]


def test_a_journal_resumes_a_stopped_run(tmp_path) -> None:
    # A run stopped after three deals (the last line cut short by the kill) is finished by
    # the same command: the report is the uninterrupted run's, and each deal is logged once.
    journal = tmp_path / "run.jsonl"
    whole = run(ArenaOptions("easy", "random", deals=5, seed=4))
    run(ArenaOptions("easy", "random", deals=3, seed=4), str(journal))
    lines = journal.read_text(encoding="utf-8").splitlines()
    journal.write_text("\n".join(lines[:2]) + "\n" + lines[2][:20], encoding="utf-8")
    resumed = run(ArenaOptions("easy", "random", deals=5, seed=4, jobs=2), str(journal))
    for key in ("mean_attack_points", "diff_mean", "diff_ci95", "wins_draws_losses"):
        assert resumed[key] == whole[key]
    assert {d: v["decisions"] for d, v in resumed["decision_ms"].items()} == {
        d: v["decisions"] for d, v in whole["decision_ms"].items()}
    deals = [json.loads(line)["deal"] for line in journal.read_text().splitlines()[2:]
             if line.startswith("{") and line.endswith("}")]
    assert sorted(deals) == [2, 3, 4]


def test_a_journal_of_another_run_is_refused(tmp_path) -> None:
    journal = tmp_path / "run.jsonl"
    run(ArenaOptions("easy", "random", deals=1, seed=4), str(journal))
    with pytest.raises(SystemExit, match="another run"):
        run(ArenaOptions("easy", "random", deals=2, seed=5), str(journal))
