"""Worker processes that stop with the bot, never before it.

The drawing and computer pools are ``ProcessPoolExecutor``\\ s with the ``spawn`` start
method (:func:`worker_pool`). Two ways a worker could outlive or predecease its bot:

- **Killed with it.** Ctrl-C in a terminal and systemd's ``KillMode=control-group`` signal
  every process of the bot at once (SIGINT, SIGTERM). A worker that died of that signal
  first broke its pool (``BrokenProcessPool``: a traceback, and the pictures and computer
  moves in flight lost) while the bot was still finishing its work. So a worker is born
  with SIGINT and SIGTERM blocked (:class:`WorkerContext`: the bot blocks them in the
  thread that starts it, and the block is inherited) and ignores them from its first line
  of Python on (:func:`start_worker`), the resource tracker's way (bpo-33613). It exits
  when the bot tells it to (the pool's shutdown: it finishes the task at hand first) or
  when the bot is gone.
- **Left behind.** A worker waits for work on a pipe whose write end it holds itself, so
  when the bot is killed (SIGKILL, the OOM killer, a crash) nothing ever wakes it: it would
  live on, holding memory and (for the computer pool) a core. :func:`start_worker` starts a
  daemon thread that waits for the parent to go away and then ends the worker at once with
  ``os._exit`` (no clean-up is owed: a worker holds nothing but a half-drawn picture or a
  half-thought move). The thread blocks on ``multiprocessing.parent_process()``'s sentinel,
  a pipe the parent alone holds open, which becomes readable the moment the parent dies, so
  the worker exits within milliseconds without polling; ``os.getppid()`` changing (the
  worker re-parented to init) is checked once a second as well, for a parent that cannot be
  watched that way.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from multiprocessing import resource_tracker
from multiprocessing.context import SpawnContext, SpawnProcess

#: Seconds between the ``getppid`` checks (the sentinel wakes the thread at once anyway).
CHECK_SECONDS = 1.0
#: What a terminal's Ctrl-C and a service manager's stop send to the whole process group.
STOP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM})


class WorkerProcess(SpawnProcess):
    """A spawned process that starts with :data:`STOP_SIGNALS` blocked: a signal sent to
    the group while it boots waits, and :func:`start_worker` then discards it."""

    def start(self) -> None:
        if not hasattr(signal, "pthread_sigmask"):  # Windows: no process groups to signal
            super().start()
            return
        # The resource tracker unblocks these signals in the calling thread when it starts
        # (on a process's first spawn): start it first, so the block below holds.
        resource_tracker.ensure_running()
        before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            super().start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, before)


class WorkerContext(SpawnContext):
    """The ``spawn`` start method, with :class:`WorkerProcess` for its processes."""

    Process = WorkerProcess


def worker_pool(workers: int, warm_up: Callable[[], None] | None = None) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, deaf to the stop signals, that exit with the bot and
    run ``warm_up`` (load fonts, tables, …) once each when they start."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=WorkerContext(),
                               initializer=start_worker, initargs=(warm_up,))


def exit_with_parent() -> threading.Thread:
    """Start the daemon thread that ends this process when its parent is gone."""
    parent = multiprocessing.parent_process()
    ppid = os.getppid()

    def watch() -> None:
        while True:
            if parent is not None:
                parent.join(CHECK_SECONDS)  # returns as soon as the parent has died
                gone = not parent.is_alive()
            else:
                threading.Event().wait(CHECK_SECONDS)
                gone = False
            if gone or os.getppid() != ppid:
                os._exit(0)

    thread = threading.Thread(target=watch, name="exit-with-parent", daemon=True)
    thread.start()
    return thread


def ignore_stop_signals() -> None:
    """From now on SIGINT and SIGTERM do nothing here; one that came while the process
    started (blocked since, :class:`WorkerProcess`) is discarded."""
    for stop in STOP_SIGNALS:
        signal.signal(stop, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)


def start_worker(warm_up: Callable[[], None] | None = None) -> None:
    """A pool initializer: deaf to the stop signals, watch the parent, then ``warm_up``."""
    ignore_stop_signals()
    exit_with_parent()
    if warm_up is not None:
        warm_up()


#: How long a closing pool may take to let its manager thread go (its workers finish the
#: task at hand: a drawing, or a computer's move within ``KRENDZU_HARD_MS``).
CLOSE_SECONDS = 6.0


def close_pool(executor: Executor) -> threading.Thread | None:
    """Shut ``executor`` down without waiting (its tasks in the queue cancelled) and return
    its manager thread, for :func:`pool_closed` to wait for. Taken *before* the shutdown:
    ``ProcessPoolExecutor.shutdown`` forgets the thread (``_executor_manager_thread = None``)
    even when it does not wait for it."""
    thread = getattr(executor, "_executor_manager_thread", None)
    executor.shutdown(wait=False, cancel_futures=True)
    return thread if isinstance(thread, threading.Thread) else None


async def pool_closed(manager: threading.Thread | None, timeout: float = CLOSE_SECONDS) -> None:
    """Wait, off the event loop, until a pool closed by :func:`close_pool` has let its
    manager thread go. At interpreter exit Python 3.11 wakes every process pool's manager
    thread (``concurrent.futures.process._python_exit``) without the lock 3.12 added: a
    pool closing at that very moment had its wake-up pipe written after it was closed, and
    the process ended with an ``OSError: [Errno 9] Bad file descriptor`` traceback
    (tests/test_jobs.py's stopped worker, under load: tests/test_workers.py now stops a
    pool that is drawing and checks that its manager thread is gone)."""
    if manager is not None and manager.is_alive():
        await asyncio.to_thread(manager.join, timeout)
