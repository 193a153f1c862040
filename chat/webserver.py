"""The bot's HTTP server: uvicorn serving a Starlette app in the bot's own event loop.

One kind of server for every door the bot opens over HTTP: the webhook worker's (the webhook,
``/healthz``, the engine protocol and the Mini App: chat/web.py), the one a polling bot opens
for the engine protocol and the Mini App alone, and the arena's (chat/arena.py). Which routes
it serves is the composition root's choice (chat/compose.py); this module knows none of them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence

import uvicorn
from starlette.applications import Starlette
from starlette.routing import BaseRoute

#: Seconds uvicorn lets requests in progress finish after SIGTERM, unless told (a webhook
#: worker gives them a third of ``KRENDZU_STOP_SECONDS``, chat/compose.py; a polling bot
#: waits that long for its engine server's end).
GRACEFUL_SECONDS = 25.0


class WebServer(uvicorn.Server):
    """uvicorn's server without its own signal handling: uvicorn would raise SIGTERM again
    once it stopped serving, killing the process before the application's ``post_stop`` and
    ``post_shutdown`` ran. :func:`chat.web.run_webhook` handles the signals itself."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    @property
    def port(self) -> int:
        """The port it listens on (the real one when it was asked for port 0)."""
        for server in self.servers:
            for sock in server.sockets:
                return int(sock.getsockname()[1])
        raise RuntimeError("not listening")


def web_server(app: Starlette, host: str, port: int, *,
               log_level: str = "info",
               graceful_seconds: float = GRACEFUL_SECONDS) -> WebServer:
    """A uvicorn server for ``app`` (no access log: one line per update says nothing) that
    gives the requests in progress ``graceful_seconds`` when it stops."""
    return WebServer(uvicorn.Config(app, host=host, port=port, log_config=None,
                                    log_level=log_level.lower(), access_log=False,
                                    lifespan="off",
                                    # typed int; uvicorn gives it to asyncio.wait_for
                                    timeout_graceful_shutdown=graceful_seconds))  # type: ignore[arg-type]


async def start_serving(server: WebServer) -> asyncio.Task[None]:
    """Start ``server`` in a task; return once it listens (raise if it could not)."""
    task = asyncio.create_task(server.serve(), name="web server")
    while not server.started:
        if task.done():
            task.result()  # raises what stopped it
            raise OSError("the web server stopped before it listened")
        await asyncio.sleep(0.02)
    return task


async def serve_routes(routes: Sequence[BaseRoute], host: str, port: int, *,
                       log_level: str = "info") -> tuple[WebServer, asyncio.Task[None]]:
    """A web server for ``routes`` alone on ``host`` and ``port`` (0: any free one) in this
    process and loop: the engine protocol and the Mini App while polling, the arena's
    engine routes. The server's ``should_exit`` and the task stop it."""
    server = web_server(Starlette(routes=list(routes)), host, port, log_level=log_level)
    return server, await start_serving(server)
