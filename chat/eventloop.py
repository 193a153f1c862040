"""The event loop the bot's processes run on: uvloop where it is installed.

uvloop (libuv under asyncio's interface) does the same work with less CPU: in the scaled
mode's cluster benchmark a move cost about 6 % less CPU over all processes (webhook workers
13.2 → 11.4 ms, job workers 33.3 → 31.5 ms a move) and p95 update → board post fell from
129 to 86 ms at 25 moves/s. It does not exist on Windows, so it is optional: without it the
standard loop runs, unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A new loop: uvloop's if it is installed, else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def run(main: Coroutine[Any, Any, T]) -> T:
    """:func:`asyncio.run` on :func:`new_event_loop`."""
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(main)
