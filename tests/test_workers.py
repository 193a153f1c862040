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


async def test_a_closed_pool_lets_its_manager_thread_go_before_the_interpreter_exits() -> None:
    """Python 3.11 writes to every live pool's wake-up pipe at exit; a pool whose manager
    thread was still closing then ended the process with an ``OSError`` traceback. After
    ``close_pool`` and ``pool_closed``, the manager thread is gone, even while a task ran."""
    import threading

    from chat.workers import close_pool, pool_closed

    pool = worker_pool(1)
    pool.submit(os.getpid).result(timeout=60)
    running = pool.submit(time.sleep, 0.5)
    manager = close_pool(pool)
    assert isinstance(manager, threading.Thread) and manager.is_alive()
    await pool_closed(manager)
    assert not manager.is_alive()
    assert running.done()
