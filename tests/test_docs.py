"""The repository stands on its own: every relative link in the README and docs/ resolves
to a file in the repository, and none points outside it. The README leads with what players
and operators need, keeps every configuration variable and command, and leaves the figures to
docs/; `make run` without a token answers with its guide, not with a make error."""

from __future__ import annotations

import ast
import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from chat.config import HOW_TO_GET_A_TOKEN

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def links(page: Path) -> list[str]:
    return [m.group(1) for m in LINK.finditer(page.read_text(encoding="utf-8"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve_inside_the_repository(page: Path) -> None:
    for target in links(page):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (page.parent / target.split("#", 1)[0]).resolve()
        assert path.is_relative_to(ROOT), f"{page.name} links outside the repo: {target}"
        assert path.exists(), f"{page.name}: broken link {target}"


def test_rules_pages_exist_in_both_languages_with_their_pictures() -> None:
    for name, lang in (("rules.md", "en"), ("rules.ru.md", "ru")):
        targets = links(ROOT / "docs" / name)
        assert f"img/rules-{lang}.png" in targets
        assert f"img/board-example-{lang}.png" in targets
        assert f"img/coordinates-{lang}.png" in targets
    assert "docs/rules.md" in links(ROOT / "README.md")


# The README leads with what players and operators need; the rest lives in docs/.

README_SECTIONS = ["Quick start", "Setting up the bot in Telegram", "How to play", "Configuration",
                   "For developers"]


def sections(page: Path) -> dict[str, str]:
    """The page's ``## `` sections by title, in order (lines inside code blocks ignored)."""
    found: dict[str, list[str]] = {}
    current: list[str] = []
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        fenced ^= line.startswith("```")
        if not fenced and line.startswith("## "):
            current = found.setdefault(line[3:].strip(), [])
        else:
            current.append(line)
    return {title: "\n".join(lines) for title, lines in found.items()}


def test_readme_sections_come_in_the_order_a_newcomer_needs_them() -> None:
    readme = ROOT / "README.md"
    assert list(sections(readme)) == README_SECTIONS
    intro = readme.read_text(encoding="utf-8").split("\n## ", 1)[0]
    what_it_is = intro.split("\n\n")[1]  # the paragraph under the title
    assert 2 <= len(re.findall(r"[.!?](?:\s|$)", what_it_is)) <= 3, what_it_is
    quick = sections(readme)["Quick start"]
    assert "make run" in quick and "make test" in quick
    assert "docs/architecture.md" in links(readme) and "docs/benchmarks.md" in links(readme)


def config_variables() -> dict[str, object]:
    """Every variable ``load_config`` reads, with its default (None: required)."""
    tree = ast.parse((ROOT / "chat" / "config.py").read_text(encoding="utf-8"))
    found: dict[str, object] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in {"get", "number"} and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            default = ast.literal_eval(node.args[1]) if len(node.args) > 1 else None
            found[node.args[0].value] = default
    return found


def test_configuration_table_names_every_variable_with_its_default() -> None:
    variables = config_variables()
    assert {"TELEGRAM_BOT_TOKEN", "KRENDZU_DB", "KRENDZU_INFO_PER_CHAT"} <= set(variables)
    rows = [line for line in sections(ROOT / "README.md")["Configuration"].splitlines()
            if line.startswith("| `")]
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    for name, default in variables.items():
        row = next((r for r in rows if f"`{name}`" in r.split("|")[1]), None)
        assert row is not None, f"README's Configuration does not list {name}"
        if default is not None:
            shown = f"{default:g}" if isinstance(default, float) else str(default)
            assert f"`{shown}`" in row.split("|")[-2], f"{name}: default {shown} not in {row}"
        assert f"\n{name}=" in example, f".env.example does not list {name}"


def test_how_to_play_names_every_command_of_the_menus() -> None:
    from chat.menus import GROUP_COMMANDS, PRIVATE_COMMANDS

    how_to_play = sections(ROOT / "README.md")["How to play"]
    for command in {*GROUP_COMMANDS, *PRIVATE_COMMANDS}:
        assert re.search(rf"`/{command}\b", how_to_play), f"/{command} is not in How to play"


def test_benchmark_figures_live_in_docs_benchmarks() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    bench = makefile.split("\nbench:", 1)[1].split("\n\n", 1)[0]
    scripts = re.findall(r"benchmarks/\w+\.py", bench)
    assert len(scripts) >= 6
    page = sections(ROOT / "docs" / "benchmarks.md")
    for script in scripts:
        assert any(f"`{script}`" in title for title in page), f"no section for {script}"
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    for figure in ("10,525", "12.8 ms", "1,368", "999.86 ms", "p95 23.8 ms", "×1.11"):
        assert figure in text
    # The README keeps a summary: no benchmark table (a column of targets) is left in it.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert not [line for line in readme.splitlines()
                if line.startswith("|") and "target" in line.lower()]


# `make run` without a token: the guide, and no "make: *** ... Error" line after it.
MAKE_ERROR = re.compile(r"make(\[\d+\])?: \*\*\*")

def make_run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``make run`` as a newcomer types it: the repository's own Makefile and bot.py, copied
    into a folder with no ``.env`` (a developer's checkout may hold a real token there), with
    this interpreter's bin as the venv's and the install stamp taken as fresh (``-o``), so
    nothing is reinstalled."""
    make = shutil.which("make")
    assert make is not None, "make is part of the quick start"
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    for name in ("Makefile", "bot.py"):
        shutil.copy(ROOT / name, checkout / name)
    environ = {k: v for k, v in os.environ.items() if k != "TELEGRAM_BOT_TOKEN"}
    environ.update(KRENDZU_DB=str(tmp_path / "bot.sqlite3"), PYTHONPATH=str(ROOT), **env)
    return subprocess.run(
        [make, "--no-print-directory", "-o", ".venv/.installed",
         f"BIN={Path(sys.executable).parent}", "run"],
        cwd=checkout, env=environ, capture_output=True, text=True, timeout=120,
    )


def test_make_run_without_a_token_prints_the_guide_and_no_make_error(tmp_path: Path) -> None:
    done = make_run(tmp_path)
    output = done.stdout + done.stderr
    assert HOW_TO_GET_A_TOKEN.strip() in output
    # Under CI the tests run inside `make test`: a nested make says "make[1]: ***".
    assert not MAKE_ERROR.search(output) and "Error" not in output, output
    assert done.returncode == 0, output


def test_make_run_still_fails_when_the_bot_fails(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on: the Bot API is unreachable
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = make_run(tmp_path, TELEGRAM_BOT_TOKEN="123:abc",
                    TELEGRAM_API_BASE_URL=f"http://127.0.0.1:{port}")
    output = done.stdout + done.stderr
    assert done.returncode != 0
    assert MAKE_ERROR.search(output) and "Error" in output
    assert HOW_TO_GET_A_TOKEN.strip() not in output
