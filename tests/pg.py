"""A throwaway PostgreSQL server for the tests: started once per session, a database per
test, stopped at the end.

``initdb`` and ``pg_ctl`` come from PATH or Debian's ``/usr/lib/postgresql/<version>/bin``.
As root they run as the ``postgres`` user (PostgreSQL refuses to run as root); the cluster
and its Unix socket live in a fresh directory under /tmp, with no TCP port, so parallel
sessions cannot collide. Durability is switched off (``fsync=off``): these databases are
thrown away. Nothing is skipped when PostgreSQL is missing: the fixture fails and says how to
install it (``make test`` installs Debian's ``postgresql`` package when it is missing).

Each test gets a new database copied from a template the newest schema was migrated into
once (``CREATE DATABASE ... TEMPLATE``, a few milliseconds); ``empty_pg_url`` is a database
with no schema at all, for the migration tests.
"""

from __future__ import annotations

import asyncio
import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

INSTALL_HINT = ("PostgreSQL's server programs (initdb, pg_ctl) were not found on PATH or in "
                "/usr/lib/postgresql/*/bin: install them (Debian: apt-get install postgresql; "
                "`make test` does it)")
TEMPLATE = "krendzu_template"


def find_bindir() -> Path:
    """The directory holding initdb and pg_ctl: PATH first, then Debian's newest version."""
    on_path = shutil.which("initdb")
    candidates = [Path(on_path).resolve().parent] if on_path else []
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                      key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    candidates += [Path(p) for p in reversed(versions)]
    for bindir in candidates:
        if (bindir / "initdb").exists() and (bindir / "pg_ctl").exists():
            return bindir
    raise RuntimeError(INSTALL_HINT)


class PgServer:
    """One PostgreSQL cluster in a temporary directory, reached through its Unix socket."""

    def __init__(self) -> None:
        self.bindir = find_bindir()
        self.as_root = os.geteuid() == 0
        if self.as_root:
            try:
                self.owner = pwd.getpwnam("postgres")
            except KeyError as exc:
                raise RuntimeError("running as root, PostgreSQL needs a 'postgres' user to run "
                                   "as (Debian's postgresql package creates it)") from exc
        base = "/tmp" if os.path.isdir("/tmp") else None  # a short path: sockets have a limit
        self.root = Path(tempfile.mkdtemp(prefix="krendzu-pg-", dir=base))
        self.data = self.root / "data"
        self._names = itertools.count(1)
        self._started = False

    def _run(self, *argv: str) -> None:
        command = [str(self.bindir / argv[0]), *argv[1:]]
        if self.as_root:
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n"
                               f"{done.stdout}{done.stderr}{tail}")

    def start(self) -> None:
        if self.as_root:
            os.chown(self.root, self.owner.pw_uid, self.owner.pw_gid)
        os.chmod(self.root, 0o700)
        self._run("initdb", "-D", str(self.data), "--auth=trust", "--username=postgres",
                  "--encoding=UTF8", "--no-locale", "--no-sync")
        options = (f"-k {self.root} -c listen_addresses='' -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300")
        self._run("pg_ctl", "-D", str(self.data), "-o", options,
                  "-l", str(self.root / "server.log"), "-w", "-t", "60", "start")
        self._started = True
        self.create_database(TEMPLATE, template="template0")
        self._migrate(self.url(TEMPLATE))

    def stop(self) -> None:
        try:
            if self._started:
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str) -> str:
        return f"postgresql://postgres@/{database}?host={self.root}"

    def _admin(self, sql: str) -> None:
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(sql)

    def create_database(self, name: str, *, template: str = TEMPLATE) -> str:
        self._admin(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        return name

    def new_database(self, *, empty: bool = False) -> str:
        """A database of its own: the newest schema already in it, or (``empty``) none."""
        name = f"t{os.getpid()}_{next(self._names)}"
        return self.create_database(name, template="template0" if empty else TEMPLATE)

    def drop_database(self, name: str) -> None:
        self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    @staticmethod
    def _migrate(url: str) -> None:
        """Migrate with the store itself, on a thread of its own (no event loop of the
        caller's is disturbed)."""
        from storage.postgres import PostgresStore

        async def run() -> None:
            store = await PostgresStore.open(url, max_size=1)
            await store.close()

        failure: list[BaseException] = []

        def main() -> None:
            try:
                asyncio.run(run())
            except BaseException as exc:  # reported in the caller's thread
                failure.append(exc)

        thread = threading.Thread(target=main)
        thread.start()
        thread.join()
        if failure:
            raise failure[0]


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PgServer]:
    """The session's PostgreSQL server; a clear failure (never a skip) when it cannot run."""
    try:
        server = PgServer()
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        server.start()
    except BaseException:
        server.stop()
        raise
    yield server
    server.stop()


@pytest.fixture
def pg_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh database with the newest schema, dropped after the test."""
    name = pg_server.new_database()
    yield pg_server.url(name)
    pg_server.drop_database(name)


@pytest.fixture
def empty_pg_url(pg_server: PgServer) -> Iterator[str]:
    """A fresh database without any schema, dropped after the test."""
    name = pg_server.new_database(empty=True)
    yield pg_server.url(name)
    pg_server.drop_database(name)
