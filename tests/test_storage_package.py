"""The storage package's shape, kept in CI: SQL written once, thin drivers, small modules.

Issue 39 asked for it: the two backends used to mirror each other (``storage/sqlite.py`` and
``storage/postgres.py`` were 1,710 and 1,670 lines, most of their SQL the same once ``?``
became ``%s``). Their shared SQL is now :class:`storage.store.Store`, over a thin
connector (:mod:`storage.connector`), and each driver keeps only what differs. These tests
keep it so: no module of ``storage/`` grows past 800 lines, the two drivers share no run of
six lines, and a statement written once in SQLite's style reads the same to psycopg.

The same issue asked for a store interface small enough to read on one screen: the abstract
``Store`` used to declare 94 abstract methods, 91 of them operations (signature and
contract) that the shared SQL then wrote again. The operations and their contracts are now
in the store written once alone, and what a backend provides is
:class:`storage.base.StoreBackend`, which these tests keep small.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

import storage
from storage.base import StoreBackend
from storage.connector import format_style
from storage.postgres import PostgresStore
from storage.queries import POSTGRES, SQLITE
from storage.sqlite import SqliteStore
from storage.store import Store
from storage.store_matches import MatchSql

STORAGE = Path(__file__).resolve().parent.parent / "storage"
#: The longest a module of storage/ may be, in lines.
MAX_LINES = 800
#: Two drivers that share this many lines in a row (normalised) repeat each other.
RUN = 6
#: One screen: the most lines the backend's interface may take, docstrings included.
SCREEN = 60
#: The most methods a backend must write itself (the rest are written once, or defaults).
MAX_ABSTRACT = 4
#: The connector's four ways in, which a backend writes too (storage/store_core.py).
CONNECTOR = {"_query", "_modify", "_in_read", "_in_write"}


def test_no_storage_module_is_over_800_lines() -> None:
    sizes = {path.name: len(path.read_text().splitlines()) for path in STORAGE.glob("*.py")}
    assert sizes, "no modules found"
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}


def code_lines(text: str) -> list[tuple[int, str]]:
    """The lines of a module that carry code, with their numbers, white space folded: blank
    lines, comments, lone punctuation and imports are passed over (as `duplicates` does)."""
    kept = []
    for number, line in enumerate(text.splitlines(), start=1):
        folded = " ".join(line.split())
        if (not folded or folded.startswith("#") or re.fullmatch(r"[()\[\]{},:]+", folded)
                or folded.startswith(("import ", "from "))):
            continue
        kept.append((number, folded))
    return kept


def shared_runs(a: str, b: str, run: int = RUN) -> list[tuple[int, int, str]]:
    """Every place where ``run`` code lines of ``a`` stand, in order, in ``b`` too:
    (line in a, line in b, the run's first line)."""
    lines_a, lines_b = code_lines(a), code_lines(b)
    windows: dict[tuple[str, ...], int] = {}
    for j in range(len(lines_b) - run + 1):
        windows.setdefault(tuple(text for _, text in lines_b[j:j + run]), lines_b[j][0])
    found = []
    for i in range(len(lines_a) - run + 1):
        window = tuple(text for _, text in lines_a[i:i + run])
        if window in windows:
            found.append((lines_a[i][0], windows[window], window[0]))
    return found


def test_the_check_finds_a_shared_run() -> None:
    body = "\n".join(f"x{i} = {i}" for i in range(RUN))
    assert shared_runs(f"a = 1\n{body}\n", f"# other\n\n{body}\nb = 2\n") == [(2, 3, "x0 = 0")]
    assert shared_runs(body, "\n".join(body.splitlines()[:-1])) == []


def test_the_two_backends_share_no_run_of_six_lines() -> None:
    sqlite = (STORAGE / "sqlite.py").read_text()
    postgres = (STORAGE / "postgres.py").read_text()
    assert shared_runs(sqlite, postgres) == []


def test_both_backends_are_the_store_written_once() -> None:
    assert issubclass(SqliteStore, Store) and issubclass(PostgresStore, Store)
    assert (SqliteStore.dialect, PostgresStore.dialect) == (SQLITE, POSTGRES)
    # What the shared classes implement, neither driver writes again; the one stated
    # exception is PostgreSQL's load_match in one statement (arrays), and the hooks are
    # there to be overridden: storage.store_core's, and append_moves' own beside it.
    shared = {name for cls in (Store, MatchSql) for name, value in vars(cls).items()
              if callable(value)}
    assert shared & set(vars(SqliteStore)) == set()
    assert shared & set(vars(PostgresStore)) == {"_match_and_moves", "_notify_column"}


def test_the_backends_interface_reads_on_one_screen() -> None:
    lines = inspect.getsource(StoreBackend).splitlines()
    assert len(lines) <= SCREEN, f"StoreBackend takes {len(lines)} lines"
    abstract = StoreBackend.__abstractmethods__
    assert 0 < len(abstract) <= MAX_ABSTRACT, sorted(abstract)
    # Each is written by both backends themselves, not by the shared code in between.
    assert {name for name in abstract
            if name not in vars(SqliteStore) or name not in vars(PostgresStore)} == set()


def test_every_operation_is_written_once_with_its_contract() -> None:
    # The store the bot sees is the store written once: nothing in it is left to a backend
    # but the connector and the backend's interface.
    assert storage.Store is Store
    assert Store.__abstractmethods__ == CONNECTOR | StoreBackend.__abstractmethods__
    operations = [name for name in dir(Store) if not name.startswith("_")
                  and inspect.iscoroutinefunction(getattr(Store, name))]
    assert len(operations) > 90, "the store's operations are found"
    # Its own docstring (not one inherited from an abstract twin) is the contract.
    assert [name for name in operations if not (getattr(Store, name).__doc__ or "").strip()
            ] == []


@pytest.mark.parametrize(("shared", "psycopg"), [
    ("SELECT a FROM t WHERE b = ? AND c = ?", "SELECT a FROM t WHERE b = %s AND c = %s"),
    ("UPDATE t SET d = :t WHERE d < :t", "UPDATE t SET d = %(t)s WHERE d < %(t)s"),
    ("SELECT x::bigint, '%' || ? FROM t", "SELECT x::bigint, '%%' || %s FROM t"),
])
def test_shared_sql_reads_the_same_to_psycopg(shared: str, psycopg: str) -> None:
    assert format_style(shared) == psycopg
