"""tournaments/ stays pure: state in, decision out. Its modules import only a few modules of
the standard library that do no I/O and keep no clock, and take randomness only from a
``random.Random`` built from a seed they are given (import-linter keeps the project out:
the ``tournaments-alone`` contract)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tournaments"
MODULES = sorted(PACKAGE.glob("*.py"))
ALLOWED = {
    "__future__", "bisect", "collections", "collections.abc", "dataclasses", "enum",
    "fractions", "random", "typing",
}


def test_the_package_has_its_modules() -> None:
    names = {path.stem for path in MODULES}
    assert {"arena", "swiss", "pool", "matching", "common"} <= names


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_a_module_imports_only_pure_standard_modules(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        else:
            continue
        for name in names:
            assert name in ALLOWED or name.startswith("tournaments."), f"{path.name}: {name}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_randomness_comes_only_from_a_seeded_generator(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_name(node.value, "random"):
            assert node.attr == "Random", f"{path.name}: random.{node.attr}"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            assert not _is_name(node.func.value, "random") or node.args, (
                f"{path.name}: random.Random() without a seed"
            )


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
