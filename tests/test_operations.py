"""The operator's side (issue 41): the metrics' exposition, and the alert rules and the
Grafana dashboard in deploy/, which must parse and name only metrics the bot exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from chat.healthcheck import readyz_url
from chat.metrics import Metrics, StoreFigures, update_kind
from tests.test_ai_arena import _benchmark

ROOT = Path(__file__).resolve().parent.parent
#: A metric's name inside a PromQL expression (ours and the process collector's).
NAME = re.compile(r"\b((?:krendzu|process)_[a-z_]+)\b")
#: Prometheus' own series, not the bot's.
BUILTIN = {"up"}


async def exported_names() -> set[str]:
    """Every sample name a fresh :class:`Metrics` exposes (histogram parts included)."""
    metrics = Metrics()
    metrics.update_handled(object(), 0.1)
    metrics.decided("easy", 0.01)
    metrics.active.labels("matches").set(1)
    text = (await metrics.render()).decode()
    return {sample.name for family in text_string_to_metric_families(text)
            for sample in family.samples}


def names_in(expr: str) -> set[str]:
    return set(NAME.findall(expr))


async def test_the_alert_rules_parse_and_name_only_exported_metrics() -> None:
    rules = yaml.safe_load((ROOT / "deploy" / "alerts.yml").read_text())
    alerts = {rule["alert"]: rule for group in rules["groups"] for rule in group["rules"]}
    assert set(alerts) == {"KrendzuNotAnswering", "KrendzuAnnouncementBacklogGrowing",
                           "KrendzuFloodWaitsSustained"}
    exported = await exported_names()
    for name, rule in alerts.items():
        used = names_in(rule["expr"])
        assert used, name
        assert used <= exported, (name, used - exported)
        assert rule["for"] and rule["annotations"]["summary"], name


async def test_the_dashboard_parses_and_names_only_exported_metrics() -> None:
    dashboard = json.loads((ROOT / "deploy" / "grafana.json").read_text())
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    exported = await exported_names()
    used = set().union(*(names_in(e) for e in exprs))
    assert used <= exported, used - exported
    # Every metric of the bot's own is on the dashboard.
    ours = {re.sub(r"_(bucket|count|sum|total|created)$", "", n) for n in exported
            if n.startswith("krendzu_")}
    shown = {re.sub(r"_(bucket|count|sum|total|created)$", "", n) for n in used}
    assert ours <= shown, ours - shown


async def test_the_exposition_follows_prometheus_conventions_and_holds_no_ids() -> None:
    metrics = Metrics()
    metrics.update_handled(object(), 0.2)
    metrics.moves_committed(2)
    metrics.flood_wait(3.0)
    metrics.ephemeral_refused("busy")
    metrics.ephemeral_refused("-100123 4261")  # never a label of its own: one of the reasons
    text = (await metrics.render()).decode()
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["krendzu_moves"].type == "counter"
    assert "krendzu_moves_total 2.0" in text
    assert "krendzu_flood_wait_seconds_total 3.0" in text
    assert families["krendzu_update_seconds"].type == "histogram"
    assert "process_resident_memory_bytes" in text
    assert 'krendzu_ephemeral_refused_total{reason="busy"} 1.0' in text
    assert 'krendzu_ephemeral_refused_total{reason="refused"} 1.0' in text
    for family in families.values():
        for sample in family.samples:
            assert set(sample.labels) <= {"kind", "level", "what", "reason", "le"}, sample
            assert sample.labels.get("reason", "busy") in ("busy", "refused"), sample


def test_an_update_kind_never_names_its_chat_or_text() -> None:
    class Msg:
        def __init__(self, text: str) -> None:
            self.text = text

    class Upd:
        def __init__(self, **kw: object) -> None:
            self.message = kw.get("message")
            self.callback_query = kw.get("callback_query")

    assert update_kind(Upd(message=Msg("/play QC M12"))) == "command"
    assert update_kind(Upd(message=Msg("QC M12"))) == "message"
    assert update_kind(Upd(callback_query=object())) == "button"
    assert update_kind(Upd()) == "other"


async def test_a_store_that_fails_leaves_the_scrape_whole() -> None:
    metrics = Metrics(process=False)

    async def broken() -> StoreFigures:
        raise OSError("database gone")

    metrics.read_store = broken
    text = (await metrics.render()).decode()
    assert "krendzu_metrics_read_errors_total 1.0" in text


def test_the_image_runs_as_a_user_and_checks_readyz() -> None:
    """deploy/Dockerfile: a non-root USER and a HEALTHCHECK running chat.healthcheck, which
    asks /readyz on KRENDZU_WEB_LISTEN; compose gives every bot process that listener with
    metrics on, and haproxy checks /readyz."""
    docker = (ROOT / "deploy" / "Dockerfile").read_text()
    users = re.findall(r"^USER (\S+)$", docker, re.M)
    assert users and users[-1] not in ("root", "0")
    check = re.search(r"^HEALTHCHECK .*\n?.*CMD \[(.*)\]$", docker, re.M)
    assert check is not None and '"chat.healthcheck"' in check.group(1)
    assert (ROOT / "chat" / "healthcheck.py").exists()
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())
    for name in ("web1", "jobs", "computer"):
        env = compose["services"][name]["environment"]
        assert env["KRENDZU_METRICS"] == "on" and env["KRENDZU_WEB_LISTEN"].endswith(":8080")
    assert "option httpchk GET /readyz" in (ROOT / "deploy" / "haproxy.cfg").read_text()


def test_the_health_check_asks_the_loopback_for_a_wildcard_listener() -> None:
    assert readyz_url("0.0.0.0:8080") == "http://127.0.0.1:8080/readyz"
    assert readyz_url("10.0.0.5:9000") == "http://10.0.0.5:9000/readyz"
    assert readyz_url("[::1]:8080") == "http://[::1]:8080/readyz"


def test_the_metrics_cost_benchmark_runs_both_ways(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A tiny run of benchmarks/metrics_cost.py: a pair of saturation runs, off then on,
    each moving; with metrics on the hooks are timed and the scrapes counted; the summary
    is the median and spread of the pairs' ratios; then one bot's windows with its hooks
    off, on, on, off (the 5 % target is the full run's: docs/benchmarks.md)."""
    _benchmark("metrics_cost").main(["--pairs", "1", "--matches", "3", "--seconds", "0.5",
                                     "--quads", "1", "--window-matches", "3",
                                     "--window-seconds", "0.5",
                                     "--draw-workers", "0", "--dir", str(tmp_path)])
    report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    pairs = report["runs"]
    assert [p["order"] for p in pairs] == ["off-on"]
    for pair in pairs:
        off, on = pair["off"], pair["on"]
        assert (off["metrics"], on["metrics"]) == (False, True)
        assert off["moves_per_s"] > 0 and on["moves_per_s"] > 0, pair
        assert pair["throughput"] == round(on["moves_per_s"] / off["moves_per_s"], 4)
        assert (off["hook_calls"], off["scrapes"]) == (0, 0)
        # every move commits (one call) and is handled as an update (another)
        assert on["hook_calls"] >= 2 * on["moves"] and on["scrapes"] >= 1, on
        assert 0 < on["own_share"] < 1, on
    assert report["throughput"]["median"] == report["throughput"]["min"] == pairs[0]["throughput"]
    # One bot, its hooks off, on, on, off: metrics on in the middle two windows alone.
    windows = report["one_bot"]["windows"]
    assert [w["metrics"] for w in windows] == [False, True, True, False]
    assert all(w["moves_per_s"] > 0 for w in windows), windows
    assert [w["hook_ms"] > 0 for w in windows] == [False, True, True, False]
    assert report["ok"] == (min(report["throughput"]["median"],
                                report["one_bot"]["throughput"]["median"]) >= 0.95)
