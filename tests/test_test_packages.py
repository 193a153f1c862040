"""`make test`'s install step (issue 43, item 4): ``scripts/test-packages.sh`` on made-up
machines.

Each test builds a machine in a temporary directory: a root (``KRENDZU_SYSROOT``) holding the
programs that are "installed", and a PATH of stand-ins for ``id``, ``getent``, ``apt-get`` and
``sudo`` that record how they were called. The script itself runs unchanged under bash.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "test-packages.sh"
BASH = shutil.which("bash") or "/bin/bash"
PACKAGES = ("postgresql", "chromium", "haproxy")


@dataclass
class Machine:
    """A made-up machine: its file system root, its PATH and the stand-ins' call log."""

    root: Path
    bin: Path
    calls: Path

    def install(self, *packages: str) -> None:
        """Put the programs each named package brings where the tests look for them."""
        programs = {"postgresql": ["usr/lib/postgresql/15/bin/initdb",
                                   "usr/lib/postgresql/15/bin/pg_ctl"],
                    "chromium": ["usr/bin/chromium"],
                    "haproxy": ["usr/sbin/haproxy"]}
        for package in packages:
            for path in programs[package]:
                self.program(self.root / path, "exit 0")

    def program(self, path: Path, body: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"#!{BASH}\n{body}\n")
        path.chmod(0o755)

    def stand_in(self, name: str, body: str) -> None:
        """A command on PATH that logs its name and arguments, then runs ``body``."""
        self.program(self.bin / name, f'echo "{name} $*" >> {self.calls}\n{body}')

    def run(self) -> subprocess.CompletedProcess[str]:
        env = {"PATH": str(self.bin), "KRENDZU_SYSROOT": str(self.root), "HOME": str(self.root)}
        return subprocess.run([BASH, str(SCRIPT)], capture_output=True, text=True, env=env,
                              timeout=30)

    def logged(self) -> list[str]:
        return self.calls.read_text().splitlines() if self.calls.exists() else []


def machine(tmp_path: Path, *, uid: int, postgres_user: bool = True, apt: bool = True,
            sudo: str | None = None) -> Machine:
    """A machine where ``id -u`` says ``uid``; ``sudo`` is None (absent), "ok" or "password"."""
    made = Machine(tmp_path / "root", tmp_path / "bin", tmp_path / "calls.log")
    made.root.mkdir()
    made.bin.mkdir()
    for tool in ("cat", "env", "true"):
        found = shutil.which(tool)
        assert found, tool
        os.symlink(found, made.bin / tool)
    made.stand_in("id", f"echo {uid}")
    made.stand_in("getent", "exit 0" if postgres_user else "exit 2")
    if apt:
        made.stand_in("apt-get", "exit 0")
    if sudo == "ok":
        made.stand_in("sudo", 'shift; exec "$@"')  # sudo -n CMD…: runs CMD
    elif sudo == "password":
        made.stand_in("sudo", "exit 1")  # -n: a password would be needed
    return made


@pytest.mark.parametrize("uid", [0, 1000])
def test_nothing_is_done_when_every_package_is_there(tmp_path: Path, uid: int) -> None:
    made = machine(tmp_path, uid=uid, sudo="ok")
    made.install(*PACKAGES)
    done = made.run()
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("", "")
    assert not [call for call in made.logged() if call.startswith(("apt-get", "sudo"))]


def test_root_installs_exactly_the_missing_packages_and_says_so(tmp_path: Path) -> None:
    made = machine(tmp_path, uid=0)
    made.install("postgresql")
    done = made.run()
    assert done.returncode == 0, done.stderr
    assert "chromium haproxy" in done.stdout and "postgresql" not in done.stdout
    installs = [call for call in made.logged() if call.startswith("apt-get")]
    assert installs[0] == "apt-get update -qq"
    assert installs[1].startswith("apt-get install")
    assert installs[1].endswith("--no-install-recommends chromium haproxy")


def test_a_user_with_password_less_sudo_installs_through_it(tmp_path: Path) -> None:
    made = machine(tmp_path, uid=1000, sudo="ok")
    made.install("postgresql", "chromium")
    done = made.run()
    assert done.returncode == 0, done.stderr
    assert "haproxy" in done.stdout
    logged = made.logged()
    assert any(call.startswith("sudo -n env DEBIAN_FRONTEND=noninteractive apt-get install")
               and call.endswith(" haproxy") for call in logged)
    assert any(call.startswith("apt-get install") for call in logged)


@pytest.mark.parametrize("case", ["no apt-get", "no sudo", "sudo wants a password"])
def test_it_names_each_missing_package_when_it_cannot_install(tmp_path: Path,
                                                               case: str) -> None:
    made = machine(tmp_path, uid=0 if case == "no apt-get" else 1000, apt=case != "no apt-get",
                   sudo="password" if case == "sudo wants a password" else None)
    made.install("chromium")
    done = made.run()
    assert done.returncode == 1
    assert "missing here: postgresql haproxy." in done.stderr
    assert "    sudo apt-get install postgresql haproxy\n" in done.stderr  # Debian's command
    assert "chromium" not in done.stderr.split("missing here:")[1].split(".")[0]
    assert not [call for call in made.logged() if call.startswith("apt-get")]


def test_root_without_the_postgres_user_needs_the_package(tmp_path: Path) -> None:
    """PostgreSQL will not run as root: tests/pg.py needs the package's ``postgres`` user."""
    made = machine(tmp_path, uid=0, postgres_user=False, apt=False)
    made.install(*PACKAGES)
    done = made.run()
    assert done.returncode == 1
    assert "missing here: postgresql." in done.stderr


def test_this_machine_has_everything_the_tests_need() -> None:
    """`make test` ran the script before pytest: here it must now find nothing to do."""
    done = subprocess.run([BASH, str(SCRIPT)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert (done.stdout, done.stderr) == ("", "")


def test_make_test_and_ci_take_the_same_install_path() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "test: $(STAMP) test-packages\n" in makefile
    assert "\t@bash scripts/test-packages.sh\n" in makefile
    ci = (ROOT / ".ci" / "run").read_text()
    assert "\nmake test" in ci
    assert "apt-get install" not in "".join(line for line in ci.splitlines()
                                            if not line.lstrip().startswith("#"))
