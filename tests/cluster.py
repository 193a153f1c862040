"""A local cluster of the scaled mode on 127.0.0.1, for the chaos test and
``benchmarks/cluster.py``: haproxy (``deploy/haproxy.cfg``, the file docs/deploy.md and
``deploy/compose.yaml`` use, configured by environment variables only) in front of webhook
workers (``python -m chat.web``), job workers (``python -m chat.jobs worker``) and computer
workers (``python -m chat.jobs worker --queue computer``), every one a real process as an
operator runs it, sharing one PostgreSQL database and one fake Bot API served over HTTP
(``tests/fakebot``), which delivers updates by webhook through haproxy the way Telegram does.

:class:`Cluster` starts, SIGKILLs and restarts the processes and records when each kill
happened and when the restarted process was ready again (:class:`Kill`), so the test can
tell measurements taken inside a kill window from the others.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests.fakebot import FakeTelegram

ROOT = Path(__file__).resolve().parent.parent
HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
WEBHOOK_PATH = "/telegram/webhook"  # the path deploy/haproxy.cfg lets through
SECRET = "cluster-webhook-secret_0123456789"
#: Webhook workers deploy/haproxy.cfg names (web1..web3).
WEB_WORKERS = 3


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def haproxy_binary() -> str:
    found = shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if os.path.exists(p)), None)
    if found is None:
        raise RuntimeError("haproxy was not found: install it (Debian: apt-get install haproxy; "
                           "`make test` does it)")
    return found


@dataclass
class Kill:
    """One SIGKILL: which process, when (``time.time()``), and when its successor was ready."""

    name: str
    kind: str
    at: float
    ready: float | None = None


@dataclass
class Proc:
    name: str
    kind: str  # "web", "jobs" or "computer"
    argv: list[str]
    env: dict[str, str]
    log: Path
    port: int | None = None
    popen: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    starts: int = 0
    #: procrastinate's newest worker id before this one started, and how many newer rows
    #: mean it runs (every job worker of a cold start registers at once).
    after_id: int = 0
    expect_rows: int = 1

    def spawn(self, cwd: Path) -> None:
        self.started = time.time()
        self.starts += 1
        with self.log.open("ab") as out:
            out.write(f"\n=== start {self.starts} at {self.started:.3f}\n".encode())
            out.flush()
            self.popen = subprocess.Popen(self.argv, cwd=cwd, env=self.env, stdout=out,
                                          stderr=subprocess.STDOUT)

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None


@dataclass
class Cluster:
    """haproxy, webhook workers, job workers and computer workers against ``fake`` and the
    PostgreSQL database at ``database``. ``env`` adds or overrides the processes' settings."""

    root: Path
    fake: FakeTelegram
    database: str
    web: int = WEB_WORKERS
    jobs: int = 2
    computers: int = 1
    env: dict[str, str] = field(default_factory=dict)
    procs: list[Proc] = field(default_factory=list)
    kills: list[Kill] = field(default_factory=list)
    haproxy: subprocess.Popen[bytes] | None = None
    lb_port: int = 0
    api_base: str = ""
    #: Kills and restarts happen one at a time (the killer and the watcher run in threads).
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Every process ever started, so none outlives :meth:`stop`.
    spawned: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def webhook_url(self) -> str:
        return f"http://127.0.0.1:{self.lb_port}{WEBHOOK_PATH}"

    def base_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("KRENDZU_", "TELEGRAM_"))}
        env.update({
            "PYTHONPATH": str(ROOT), "TELEGRAM_BOT_TOKEN": self.fake.token,
            "TELEGRAM_API_BASE_URL": self.api_base, "KRENDZU_DATABASE_URL": self.database,
            "KRENDZU_JOBS": "procrastinate", "KRENDZU_WEBHOOK_URL": self.webhook_url,
            "KRENDZU_WEBHOOK_SECRET": SECRET, "KRENDZU_AI_DELAY": "0",
            "KRENDZU_AI_WORKERS": "0", "KRENDZU_DRAW_WORKERS": "0", "LOG_LEVEL": "WARNING",
            # The cluster's people play from private panels (tests/cluster_play.py); the
            # bot's default opens them in the group (issue 42).
            "KRENDZU_PANELS": "private",
        })
        env.update(self.env)
        return env

    def start(self, *, timeout: float = 90.0) -> None:
        if self.web > WEB_WORKERS:
            raise ValueError(f"deploy/haproxy.cfg names {WEB_WORKERS} webhook workers")
        self.root.mkdir(parents=True, exist_ok=True)
        self.api_base = self.fake.serve_http()
        self.lb_port = free_port()
        env = self.base_env()
        ports = [free_port() for _ in range(self.web)]
        python = sys.executable
        for i, port in enumerate(ports, 1):
            self.procs.append(Proc(f"web{i}", "web", [python, "-m", "chat.web"],
                                   {**env, "KRENDZU_WEB_LISTEN": f"127.0.0.1:{port}"},
                                   self.root / f"web{i}.log", port=port))
        for i in range(1, self.jobs + 1):
            self.procs.append(Proc(f"jobs{i}", "jobs", [python, "-m", "chat.jobs", "worker"],
                                   env, self.root / f"jobs{i}.log"))
        for i in range(1, self.computers + 1):
            self.procs.append(Proc(f"computer{i}", "computer",
                                   [python, "-m", "chat.jobs", "worker", "--queue",
                                    "computer"], env, self.root / f"computer{i}.log"))
        # Create procrastinate's tables once before the workers race to (they would wait on
        # the same advisory lock; this only makes the start quieter).
        subprocess.run([python, "-m", "chat.jobs", "migrate"], cwd=self.root, env=env,
                       check=True, timeout=120, capture_output=True)
        lb_env = {**os.environ, "KRENDZU_LB_BIND": f"127.0.0.1:{self.lb_port}",
                  "KRENDZU_LB_TLS": ""}
        for i in range(1, WEB_WORKERS + 1):  # unused servers point at a closed port
            lb_env[f"KRENDZU_WEB{i}"] = (f"127.0.0.1:{ports[i - 1]}" if i <= self.web
                                         else f"127.0.0.1:{free_port()}")
        check = subprocess.run([haproxy_binary(), "-c", "-q", "-f", str(HAPROXY_CFG)],
                               env=lb_env, capture_output=True, text=True, timeout=30)
        if check.returncode != 0:
            raise RuntimeError(f"deploy/haproxy.cfg is refused:\n{check.stdout}{check.stderr}")
        with (self.root / "haproxy.log").open("ab") as out:
            self.haproxy = subprocess.Popen([haproxy_binary(), "-db", "-f", str(HAPROXY_CFG)],
                                            env=lb_env, cwd=self.root, stdout=out,
                                            stderr=subprocess.STDOUT)
        workers = sum(1 for p in self.procs if p.kind != "web")
        for proc in self.procs:
            self.spawn(proc, expect_rows=workers)
        end = time.time() + timeout
        for proc in self.procs:
            self.wait_ready(proc, end)
        while not self.fake.webhook_url:
            self.check_alive()
            if time.time() > end:
                raise RuntimeError("no webhook worker set the webhook")
            time.sleep(0.1)

    def wait_ready(self, proc: Proc, end: float) -> float:
        """Until ``proc`` serves (a webhook worker answers /healthz; a job worker wrote its
        start line): the time it was ready."""
        while time.time() < end:
            if not proc.alive():
                raise RuntimeError(f"{proc.name} stopped:\n{self.tail(proc)}")
            if self.is_ready(proc):
                return time.time()
            time.sleep(0.05)
        raise RuntimeError(f"{proc.name} did not start in time:\n{self.tail(proc)}")

    def is_ready(self, proc: Proc) -> bool:
        if proc.kind == "web":
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{proc.port}/healthz",
                                            timeout=1) as answer:
                    return answer.status == 200
            except OSError:
                return False
        # A worker is serving once it registered in procrastinate's table of workers
        # (procrastinate 3 does that when its run starts): a row newer than its spawn.
        count = self._workers_after(proc.after_id)
        return count is not None and count >= proc.expect_rows

    def _workers_after(self, worker_id: int) -> int | None:
        import psycopg

        try:
            with psycopg.connect(self.database, autocommit=True, connect_timeout=2) as conn:
                row = conn.execute("SELECT count(*) FROM procrastinate_workers WHERE id > %s",
                                   (worker_id,)).fetchone()
        except psycopg.Error:
            return None
        return int(row[0]) if row else 0

    def _last_worker_id(self) -> int:
        import psycopg

        with psycopg.connect(self.database, autocommit=True, connect_timeout=5) as conn:
            row = conn.execute("SELECT coalesce(max(id), 0) FROM procrastinate_workers"
                               ).fetchone()
        return int(row[0]) if row else 0

    def spawn(self, proc: Proc, expect_rows: int = 1) -> None:
        if proc.kind != "web":
            proc.after_id, proc.expect_rows = self._last_worker_id(), expect_rows
        proc.spawn(self.root)
        assert proc.popen is not None
        self.spawned.append(proc.popen)

    def check_alive(self) -> None:
        if self.haproxy is not None and self.haproxy.poll() is not None:
            raise RuntimeError(f"haproxy stopped:\n{self.tail_file(self.root / 'haproxy.log')}")

    def kill(self, proc: Proc) -> Kill:
        """SIGKILL ``proc`` and start it again at once, as a supervisor would."""
        with self.lock:
            assert proc.popen is not None
            record = Kill(proc.name, proc.kind, time.time())
            proc.popen.send_signal(signal.SIGKILL)
            proc.popen.wait(timeout=30)
            self.kills.append(record)
            self.spawn(proc)
            return record

    def restart_dead(self) -> list[str]:
        """Start again any process that stopped by itself (a supervisor's job too); their
        names."""
        with self.lock:
            dead = [p for p in self.procs if not p.alive()]
            for proc in dead:
                self.spawn(proc)
            return [p.name for p in dead]

    def note_ready(self) -> None:
        """Mark the kills whose process is serving again."""
        for record in self.kills:
            if record.ready is None:
                proc = next(p for p in self.procs if p.name == record.name)
                if proc.alive() and self.is_ready(proc):
                    record.ready = time.time()

    def stop(self) -> None:
        """SIGTERM everything (workers finish what they hold), SIGKILL what lingers."""
        for popen in self.spawned:
            if popen.poll() is None:
                popen.send_signal(signal.SIGTERM)
        for popen in self.spawned:
            if popen.poll() is None:
                try:
                    popen.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    popen.kill()
                    popen.wait()
        if self.haproxy is not None and self.haproxy.poll() is None:
            self.haproxy.terminate()
            try:
                self.haproxy.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.haproxy.kill()
                self.haproxy.wait()
        with contextlib.suppress(Exception):
            self.fake.stop()

    def tail(self, proc: Proc, chars: int = 3000) -> str:
        return self.tail_file(proc.log, chars)

    @staticmethod
    def tail_file(path: Path, chars: int = 3000) -> str:
        return path.read_text(errors="replace")[-chars:] if path.exists() else ""

    def logs(self) -> dict[str, str]:
        return {p.name: p.log.read_text(errors="replace") for p in self.procs if p.log.exists()}
