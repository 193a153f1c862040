"""Worker processes that die with the bot.

The drawing and computer pools are ``ProcessPoolExecutor``\\ s with the ``spawn`` start
method. A worker waits for work on a pipe whose write end it holds itself, so when the bot
is killed (SIGKILL, the OOM killer, a crash) nothing ever wakes it: it would live on,
holding memory and (for the computer pool) a core, until someone killed it by hand.

:func:`start_worker` is the pools' initializer: it starts a daemon thread that waits for
the parent to go away and then ends the worker at once with ``os._exit`` (no clean-up is
owed: a worker holds nothing but a half-drawn picture or a half-thought move). The thread
blocks on ``multiprocessing.parent_process()``'s sentinel, a pipe the parent alone holds
open, which becomes readable the moment the parent dies, so the worker exits within
milliseconds without polling; ``os.getppid()`` changing (the worker re-parented to init)
is checked once a second as well, for a parent that cannot be watched that way.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable

#: Seconds between the ``getppid`` checks (the sentinel wakes the thread at once anyway).
CHECK_SECONDS = 1.0


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


def start_worker(warm_up: Callable[[], None] | None = None) -> None:
    """A pool initializer: watch the parent, then ``warm_up`` (load fonts, tables, …)."""
    exit_with_parent()
    if warm_up is not None:
        warm_up()
