"""A worker process serving only the engine protocol over a shared database, as one webhook
worker of the scaled mode does: ``python tests/engine_worker.py TARGET PORT RECHECK``.

Used by ``tests/test_engines_processes.py``: two of these on one database, an engine
following its game on one of them while moves are stored by another process. ``RECHECK``
sets how often a stream re-reads its match without news (a long one shows that news across
processes came by PostgreSQL's NOTIFY, not by re-reading). Prints ``ready`` once it listens.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import chat.engines_api as engines_api
from chat.arena import ArenaHost, QuietDelivery
from chat.computer import Thinker
from chat.flow import Flow
from chat.i18n import Catalogs
from storage import open_store


async def serve(target: str, port: int, recheck: float) -> None:
    from starlette.applications import Starlette

    from chat.webserver import start_serving, web_server

    engines_api.RECHECK = recheck
    store = await open_store(target)
    thinker = Thinker(workers=0)
    flow = Flow(store, Catalogs(), thinker.decide, bot_username="worker",
                engine_api_url="http://127.0.0.1")
    host = ArenaHost(store, flow, QuietDelivery(flow))
    api = engines_api.EngineApi(lambda: host)
    server = web_server(Starlette(routes=api.routes()), "127.0.0.1", port,
                        log_level="warning")
    task = await start_serving(server)
    print("ready", flush=True)
    await task


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], int(sys.argv[2]), float(sys.argv[3])))
