"""The composition root's scaled half: the webhook worker (``python -m chat.web``:
:func:`running`) and the job worker (``python -m chat.jobs worker``: :func:`open_job_services`).

Both build the same application as ``python bot.py`` (:func:`chat.compose.build_application`)
and the same flow and delivery (:func:`chat.compose.flow_and_delivery`); what is theirs alone
is how they run it: behind the bot's web server with the webhook set, or as a bot that sends
but never receives, beside a procrastinate worker. Apart from :mod:`chat.compose` so that
each file says one way of running the bot; nothing below imports either.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import cast

from telegram.ext import Application
from telegram.request import BaseRequest

from chat.botapi import StoppedBeforeStart, reach_bot_api
from chat.compose import build_application, flow_and_delivery, http_routes
from chat.config import Config, ConfigError, split_listen
from chat.engines_api import EngineApi
from chat.jobs import JobServices, build_jobs
from chat.jobs.core import Jobs, job_hooks
from chat.operations import operations_routes, ready_of, serve_job_doors
from chat.ratelimit import ChatRateLimiter
from chat.services import Services
from chat.webhook import build_web_app, register_webhook, webhook_path
from chat.webserver import WebServer, start_serving, web_server
from storage.postgres import PostgresStore

# The webhook worker --------------------------------------------------------------------------


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
    ``request`` and ``clock`` are for tests, as in :func:`build_application`. It waits for
    the Bot API first (:func:`reach_bot_api`, ``stop`` ends that)."""
    if not (config.webhook_url and config.webhook_secret):
        raise ConfigError("webhook mode needs KRENDZU_WEBHOOK_URL and KRENDZU_WEBHOOK_SECRET")
    host, port = split_listen(config.web_listen)
    application = build_application(config, request=request, clock=clock)
    current_services = lambda: cast(Services, application.bot_data["services"])  # noqa: E731
    routes = http_routes(config, current_services,
                         EngineApi(current_services) if config.engine_api_url else None)
    routes += operations_routes(ready_of(application), application.bot_data.get("metrics"))
    web = build_web_app(application, secret=config.webhook_secret,
                        path=webhook_path(config.webhook_url), routes=routes)
    server = web_server(web, host, port, log_level=config.log_level,
                        graceful_seconds=config.stop_share)
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


# The job worker ------------------------------------------------------------------------------


async def start_job_services(config: Config, jobs: Jobs, *,
                             request: BaseRequest | None = None,
                             clock: Callable[[], float] = time.time,
                             stop: asyncio.Event | None = None) -> JobServices:
    """The bot (built as :func:`build_application` builds it: the same rate limiter and API
    address; it sends, it never polls), the store, the flow and delivery of a job worker,
    wired to ``jobs``. ``request`` and ``clock`` are for tests; ``stop`` set while the Bot
    API cannot be reached raises :class:`StoppedBeforeStart`."""
    application = build_application(config, request=request, clock=clock)
    if not await reach_bot_api(application, stop=stop):  # getMe: the username for links
        raise StoppedBeforeStart
    store = await PostgresStore.open(config.database, clock=clock, prepare=config.pg_prepare,
                                     hooks=job_hooks(jobs, config.ai_delay))
    limiter = application.bot.rate_limiter
    assert isinstance(limiter, ChatRateLimiter)
    thinker, flow, delivery = flow_and_delivery(config, application.bot, store, limiter, clock,
                                                announced_by_jobs=True)
    return JobServices(jobs, store, flow, delivery, ai_delay=config.ai_delay, clock=clock,
                       thinker=thinker, application=application)


@contextlib.asynccontextmanager
async def open_job_services(config: Config, *, request: BaseRequest | None = None,
                            clock: Callable[[], float] = time.time,
                            stop: asyncio.Event | None = None) -> AsyncIterator[JobServices]:
    """A job worker's procrastinate app open and its services, for the ``async with``
    block (given to :meth:`procrastinate.App.run_worker_async` by
    :func:`chat.jobs.worker.worker_options`)."""
    jobs = build_jobs(config.database, prepare=config.pg_prepare)
    async with jobs.app.open_async():
        services = await start_job_services(config, jobs, request=request, clock=clock,
                                            stop=stop)
        doors = None
        try:
            if config.metrics:  # /readyz and /metrics on this worker's own listener
                doors = await serve_job_doors(config, services)
            yield services
        finally:
            if doors is not None:
                doors[0].should_exit = True
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(doors[1], config.stop_share)
            await services.close()
