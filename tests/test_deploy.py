"""The operators' files of the scaled mode (deploy/): what can be checked without Docker.

``deploy/compose.yaml`` cannot run here (no Docker daemon or images on this machine or in CI),
so its parts are checked one by one: it is valid YAML; every command it runs exists and
accepts its arguments; every setting it passes is one the bot reads; every file the image
copies is in the repository; haproxy accepts ``deploy/haproxy.cfg`` with compose's own
environment (the chaos test, tests/test_chaos.py, runs the same file with 127.0.0.1
addresses). docs/deploy.md shows the balancer configurations exactly as the files hold them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.cluster import HAPROXY_CFG, ROOT, haproxy_binary

DEPLOY = ROOT / "deploy"
DOCS = ROOT / "docs" / "deploy.md"


def compose() -> dict:
    data = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    assert isinstance(data, dict)
    return data


def fenced(text: str, language: str) -> list[str]:
    return [m.group(1) for m in re.finditer(rf"```{language}\n(.*?)```", text, re.S)]


def test_the_docs_show_the_balancer_files_as_they_are() -> None:
    text = DOCS.read_text()
    assert HAPROXY_CFG.read_text() in fenced(text, "haproxy")
    assert (DEPLOY / "nginx.conf").read_text() in fenced(text, "nginx")
    assert "deploy/compose.yaml" in text


def test_every_command_in_compose_exists_and_takes_its_arguments(tmp_path: Path) -> None:
    services = compose()["services"]
    assert {"postgres", "migrate", "web1", "web2", "web3", "jobs", "computer",
            "haproxy"} <= set(services)
    bot = {name: s for name, s in services.items() if s.get("image") == "krendzu-bot"}
    assert len(bot) == 6  # migrate, web1..web3, jobs, computer
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KRENDZU_", "TELEGRAM_"))}
    env["PYTHONPATH"] = str(ROOT)
    for name, service in bot.items():
        command = service["command"]
        assert command[:2] == ["python", "-m"], (name, command)
        module = command[2]
        if module == "chat.jobs":  # argparse checks the sub-command and its options
            done = subprocess.run([sys.executable, *command[1:], "--help"], cwd=tmp_path,
                                  env=env, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, (name, done.stderr)
        else:
            assert module == "chat.web", name
            # Without a token it says how to get one and stops with EX_CONFIG (78).
            done = subprocess.run([sys.executable, *command[1:]], cwd=tmp_path, env=env,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 78, (name, done.stdout, done.stderr)
        assert service["restart"] == ("no" if name == "migrate" else "always"), name
    assert bot["jobs"]["deploy"]["replicas"] >= 1
    assert bot["computer"]["command"][-2:] == ["--queue", "computer"]


def test_compose_passes_only_settings_the_bot_reads() -> None:
    config = (ROOT / "chat" / "config.py").read_text()
    services = compose()["services"]
    for name, service in services.items():
        if service.get("image") != "krendzu-bot":
            continue
        for key in service["environment"]:
            assert f'"{key}"' in config, (name, key)
    for name in ("web1", "web2", "web3"):
        assert services[name]["environment"]["KRENDZU_WEB_LISTEN"] == "0.0.0.0:8080"


def test_the_image_copies_files_that_exist() -> None:
    for line in (DEPLOY / "Dockerfile").read_text().splitlines():
        if line.startswith("COPY "):
            for source in line.split()[1:-1]:
                assert (ROOT / source).exists(), source


def test_haproxy_accepts_the_config_with_compose_environment(tmp_path: Path) -> None:
    lb = compose()["services"]["haproxy"]
    mounted = {v.split(":")[1]: v.split(":")[0] for v in lb["volumes"]}
    assert (DEPLOY / mounted["/usr/local/etc/haproxy/haproxy.cfg"]).resolve() == HAPROXY_CFG
    key, cert = tmp_path / "bot.key", tmp_path / "bot.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=bot.example.org"],
                   check=True, capture_output=True, timeout=60)
    pem = tmp_path / "bot.pem"
    pem.write_bytes(cert.read_bytes() + key.read_bytes())
    env = {**os.environ, **{k: str(v) for k, v in lb["environment"].items()}}
    env["KRENDZU_LB_TLS"] = env["KRENDZU_LB_TLS"].replace("/etc/haproxy/bot.pem", str(pem))
    env["KRENDZU_LB_BIND"] = "127.0.0.1:8443"  # checked, not bound
    done = subprocess.run([haproxy_binary(), "-c", "-f", str(HAPROXY_CFG)], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("web1", "web2", "web3"):  # compose's names, resolved once Docker runs them
        assert f"could not resolve address '{name}'" in done.stdout + done.stderr


def test_make_test_installs_haproxy_when_it_is_missing() -> None:
    """A machine may be new: `make test` (and so CI) adds haproxy, like postgresql and chromium,
    to the Debian packages scripts/test-packages.sh installs when the command is missing."""
    script = (ROOT / "scripts" / "test-packages.sh").read_text()
    assert re.search(r"command -v haproxy[^\n]*\|\|[^\n]*/usr/sbin/haproxy", script), script
    assert "has_haproxy || missing+=(haproxy)" in script
    assert re.search(r'apt-get install[^\n]*\\\n\s*"\$\{missing\[@\]\}"', script), script


def test_compose_gives_every_bot_process_its_whole_stop() -> None:
    """Docker kills a container after stop_grace_period (10 s unless set): every process of
    the bot, webhook and job workers alike, stops within the KRENDZU_STOP_SECONDS compose
    gives it, so the grace must be longer."""
    for name, service in compose()["services"].items():
        if service.get("image") != "krendzu-bot" or name == "migrate":
            continue
        grace = service.get("stop_grace_period", "10s")
        assert grace.endswith("s"), (name, grace)
        limit = float(service["environment"]["KRENDZU_STOP_SECONDS"])
        assert int(grace[:-1]) > limit + 5, (name, grace, limit)
