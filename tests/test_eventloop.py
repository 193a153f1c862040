"""The processes' event loop (chat/eventloop.py): uvloop where installed, asyncio's else."""

from __future__ import annotations

import asyncio
import sys

import pytest

from chat.eventloop import new_event_loop, run


async def loop_module() -> str:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop()).__module__


@pytest.mark.skipif(sys.platform == "win32", reason="uvloop does not exist on Windows")
def test_the_processes_run_on_uvloop() -> None:
    assert run(loop_module()).startswith("uvloop")


def test_without_uvloop_the_standard_loop_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    loop = new_event_loop()
    try:
        assert type(loop).__module__.startswith("asyncio")
    finally:
        loop.close()
    assert run(loop_module()).startswith("asyncio")
