"""chat/workers.py: pool workers are deaf to the stop signals their bot handles."""

from __future__ import annotations

import os
import signal
import time

from chat.workers import worker_pool


def test_a_pool_worker_ignores_sigterm_and_sigint_and_stops_when_shut_down() -> None:
    """The signals a terminal's Ctrl-C or a service manager send the whole process group
    leave the worker (and its pool) at work; the pool's shutdown ends it."""
    pool = worker_pool(1)
    try:
        pid = pool.submit(os.getpid).result(timeout=60)
        for stop in (signal.SIGTERM, signal.SIGINT):
            os.kill(pid, stop)
        time.sleep(0.3)
        assert pool.submit(os.getpid).result(timeout=10) == pid
    finally:
        pool.shutdown(wait=True)
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the worker outlived its pool's shutdown")
