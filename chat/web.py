"""Webhook mode: the bot's own web server (a Starlette app served by uvicorn).

With ``KRENDZU_WEBHOOK_URL`` set, Telegram posts every update to that URL instead of the bot
polling for it: ``python -m chat.web`` (or ``python bot.py``) starts the same application as
polling does (:func:`chat.app.build_application`, its ``post_init``, the job queue with the
turn timers), registers the webhook and serves:

- ``POST <the URL's path>`` (``/telegram/webhook`` in the docs' examples): one update,
  checked, processed and answered by :class:`chat.webhook.WebhookReceiver` (its docstring:
  the secret, processing inside the request, redelivered updates, the reply outbox, order).
- ``GET /healthz``: 200 ``ok`` (for the balancer).

The app is built by :func:`build_web_app` (nothing is built at import). The engine protocol
(chat/engines_api.py) and the Mini App (chat/miniapp/) mount their routes on the same app.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import cast
from urllib.parse import urlsplit

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from telegram import Bot, Update
from telegram.error import RetryAfter
from telegram.ext import Application
from telegram.request import BaseRequest

from chat.config import Config, ConfigError, load_config, split_listen
from chat.eventloop import run
from chat.services import Services
from chat.webhook import WebhookReceiver

log = logging.getLogger(__name__)

#: :func:`build_web_app`'s default path, the one the docs' example URL ends with (the bot
#: serves its URL's own path, :func:`webhook_path`).
DEFAULT_PATH = "/telegram/webhook"
#: Seconds uvicorn lets requests in progress finish after SIGTERM (Telegram waits 60).
GRACEFUL_SECONDS = 25
#: What Telegram sends when polling names no ``allowed_updates``: the webhook asks for the
#: same, so both modes see the same updates.
ALLOWED_UPDATES = tuple(t for t in Update.ALL_TYPES if t not in (
    Update.CHAT_MEMBER, Update.MESSAGE_REACTION, Update.MESSAGE_REACTION_COUNT))


def webhook_path(url: str | None) -> str:
    """The path Telegram posts to: the URL's own (a proxy in front passes it through)."""
    return urlsplit(url or "").path or "/"


async def healthz(request: Request) -> Response:
    return PlainTextResponse("ok")


def build_web_app(application: Application, *, secret: str, path: str = DEFAULT_PATH,
                  routes: Sequence[BaseRoute] = ()) -> Starlette:
    """The bot's web app: the webhook at ``path``, ``/healthz`` and ``routes`` (the engine
    protocol, the Mini App). ``application`` must be initialised and started (with its
    ``post_init`` run) before requests come."""
    receiver = WebhookReceiver(application, secret)
    app = Starlette(routes=[
        Route(path, receiver.endpoint, methods=["POST"], name="telegram_webhook"),
        Route("/healthz", healthz, methods=["GET"], name="healthz"),
        *routes,
    ])
    return app


class WebServer(uvicorn.Server):
    """uvicorn's server without its own signal handling: uvicorn would raise SIGTERM again
    once it stopped serving, killing the process before the application's ``post_stop`` and
    ``post_shutdown`` ran. :func:`run_webhook` handles the signals itself."""

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
               log_level: str = "info") -> WebServer:
    """A uvicorn server for ``app`` (no access log: one line per update says nothing)."""
    return WebServer(uvicorn.Config(app, host=host, port=port, log_config=None,
                                    log_level=log_level.lower(), access_log=False,
                                    lifespan="off",
                                    timeout_graceful_shutdown=GRACEFUL_SECONDS))


async def start_serving(server: WebServer) -> asyncio.Task[None]:
    """Start ``server`` in a task; return once it listens (raise if it could not)."""
    task = asyncio.create_task(server.serve(), name="web server")
    while not server.started:
        if task.done():
            task.result()  # raises what stopped it
            raise OSError("the web server stopped before it listened")
        await asyncio.sleep(0.02)
    return task


async def register_webhook(bot: Bot, url: str, secret: str) -> None:
    """Tell Telegram where to post. Setting the same webhook again changes nothing (and is
    how a changed secret reaches Telegram: ``getWebhookInfo`` does not show it), so every
    worker may do it at start; when workers start together and Telegram answers one of them
    "retry after", the webhook a sibling just set is left as it is."""
    try:
        await bot.set_webhook(url, secret_token=secret, allowed_updates=list(ALLOWED_UPDATES),
                              drop_pending_updates=False)
    except RetryAfter as exc:
        await asyncio.sleep(float(exc.retry_after if isinstance(exc.retry_after, int | float)
                                  else exc.retry_after.total_seconds()))
        info = await bot.get_webhook_info()
        if info.url != url:
            await bot.set_webhook(url, secret_token=secret,
                                  allowed_updates=list(ALLOWED_UPDATES),
                                  drop_pending_updates=False)
    log.info("webhook set: Telegram posts updates to %s", url)


@dataclass(frozen=True, slots=True)
class Running:
    """A bot in webhook mode, serving (what :func:`running` yields)."""

    application: Application
    server: WebServer
    #: The server's task: done when it stopped.
    serving: asyncio.Task[None]


@contextlib.asynccontextmanager
async def running(config: Config, *, request: BaseRequest | None = None,
                  clock: Callable[[], float] = time.time,
                  stop: asyncio.Event | None = None) -> AsyncIterator[Running]:
    """The bot in webhook mode for the ``async with`` block: the application started as
    polling starts it (``post_init``, then the job queue with the turn timers), then the web
    server, then the webhook set; leaving it stops them the other way round (requests in
    progress finish first, then ``post_stop`` and ``post_shutdown`` as after polling).
    ``request`` and ``clock`` are for tests, as in :func:`chat.app.build_application`. It
    waits for the Bot API first (:func:`chat.app.reach_bot_api`, ``stop`` ends that)."""
    from chat.app import StoppedBeforeStart, build_application, reach_bot_api

    if not (config.webhook_url and config.webhook_secret):
        raise ConfigError("webhook mode needs KRENDZU_WEBHOOK_URL and KRENDZU_WEBHOOK_SECRET")
    host, port = split_listen(config.web_listen)
    application = build_application(config, request=request, clock=clock)
    routes: list[BaseRoute] = []
    services = lambda: cast(Services, application.bot_data["services"])  # noqa: E731
    if config.engine_api_url:  # the engine protocol beside the webhook (chat/engines_api.py)
        from chat.engines_api import EngineApi

        routes += EngineApi(services).routes()
    from chat.miniapp import miniapp_routes

    routes += miniapp_routes(config, services)
    web = build_web_app(application, secret=config.webhook_secret,
                        path=webhook_path(config.webhook_url), routes=routes)
    server = web_server(web, host, port, log_level=config.log_level)
    if not await reach_bot_api(application, stop=stop):
        raise StoppedBeforeStart
    async with application:
        assert application.post_init is not None
        await application.post_init(application)
        await application.start()
        try:
            serving = await start_serving(server)
            try:
                await register_webhook(application.bot, config.webhook_url,
                                       config.webhook_secret)
                yield Running(application, server, serving)
            finally:
                server.should_exit = True
                await serving
        finally:
            await application.stop()
            if application.post_stop is not None:
                await application.post_stop(application)
    if application.post_shutdown is not None:
        await application.post_shutdown(application)


async def run_webhook(config: Config, *, request: BaseRequest | None = None,
                      clock: Callable[[], float] = time.time,
                      stop: asyncio.Event | None = None) -> None:
    """Run the bot in webhook mode until SIGTERM or SIGINT (or ``stop`` is set)."""
    from chat.app import StoppedBeforeStart
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    signals = (signal.SIGTERM, signal.SIGINT)
    for sig in signals:
        loop.add_signal_handler(sig, stop.set)
    try:
        async with running(config, request=request, clock=clock, stop=stop) as bot:
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait({bot.serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if stop.is_set():
                log.info("stopping: requests in progress finish first")
    except StoppedBeforeStart:
        log.info("stopped before the Bot API answered")
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


def serve(config: Config) -> int:
    """Run webhook mode in this process until SIGTERM (logging set up by the caller)."""
    from telegram.error import InvalidToken
    try:
        run(run_webhook(config))
    except InvalidToken:
        log.error("Telegram rejected the bot token (TELEGRAM_BOT_TOKEN): check it with "
                  "@BotFather (/mybots → API Token).")
        return 1
    return 0


def main() -> int:
    """``python -m chat.web``: a webhook worker (any number of them behind a balancer)."""
    from chat.config import HOW_TO_GET_A_TOKEN
    from chat.logs import configure as configure_logging

    try:
        config = load_config()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    if not config.token:
        print(HOW_TO_GET_A_TOKEN, file=sys.stderr)
        return 78  # EX_CONFIG, as bot.py
    if not config.webhook_url:
        print("KRENDZU_WEBHOOK_URL is not set: `python bot.py` polls for updates instead.",
              file=sys.stderr)
        return 1
    configure_logging(config.log_level, config.token, config.webhook_secret)
    return serve(config)


if __name__ == "__main__":
    sys.exit(main())
