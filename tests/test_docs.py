"""The repository stands on its own: every relative link in the README and docs/ resolves
to a file in the repository, and none points outside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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
