"""The operator's doors on the bot's web listener (issue 41): ``GET /readyz`` and
``GET /metrics``, and the hooks that feed :class:`chat.metrics.Metrics`.

``/readyz`` answers 200 ``ready`` once the process finished its start-up and can reach its
store (and, in the scaled mode, its job queue); otherwise 503 with the reason in one line
(``starting``, ``store unreachable``, ``job queue unreachable``), never a traceback, a
connection string or an id. haproxy checks it (deploy/haproxy.cfg), as the container's
HEALTHCHECK does: a worker whose database went away stops getting updates, which Telegram
then delivers to a sibling, and gets them again when the database is back. ``/healthz``
stays the liveness answer (the process runs).

``/metrics`` is served when ``KRENDZU_METRICS=on``: the text of :meth:`Metrics.render`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Protocol

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from telegram.ext import Application

from chat.computer import Thinker
from chat.config import Config, split_listen
from chat.delivery import Delivery
from chat.flow import Flow
from chat.jobs.services import JobServices
from chat.metrics import CONTENT_TYPE, Metrics
from chat.ratelimit import ChatRateLimiter
from chat.updates import ChatOrderedProcessor
from chat.webserver import WebServer, serve_routes
from storage import Store

log = logging.getLogger(__name__)

#: A reason not to be ready, or ``None`` when ready.
Readiness = Callable[[], Awaitable[str | None]]


class Pingable(Protocol):
    async def ping(self) -> None: ...


def readiness(started: Callable[[], bool], store: Callable[[], Pingable | None],
              jobs: Callable[[], Pingable | None] = lambda: None) -> Readiness:
    """Ready when ``started()`` and the store (and the job queue, when there is one) answer
    a trivial query; each is read when the check comes (they are built after the server)."""

    async def check() -> str | None:
        if not started():
            return "starting"
        found = store()
        if found is None:
            return "starting"
        try:
            await found.ping()
        except Exception as exc:  # any failure is "not ready", said without its details
            log.warning("readyz: the store does not answer (%s)", type(exc).__name__)
            return "store unreachable"
        queue = jobs()
        if queue is not None:
            try:
                await queue.ping()
            except Exception as exc:
                log.warning("readyz: the job queue does not answer (%s)", type(exc).__name__)
                return "job queue unreachable"
        return None

    return check


def operations_routes(ready: Readiness, metrics: Metrics | None) -> list[BaseRoute]:
    """``/readyz`` always; ``/metrics`` when metrics are on."""

    async def readyz(request: Request) -> Response:
        reason = await ready()
        if reason is None:
            return PlainTextResponse("ready")
        return PlainTextResponse(reason, status_code=503)

    routes: list[BaseRoute] = [Route("/readyz", readyz, methods=["GET"], name="readyz")]
    if metrics is not None:
        async def exposition(request: Request) -> Response:
            return Response(await metrics.render(), media_type=CONTENT_TYPE)

        routes.append(Route("/metrics", exposition, methods=["GET"], name="metrics"))
    return routes


def instrument(metrics: Metrics, *, store: Store, flow: Flow, delivery: Delivery,
               limiter: ChatRateLimiter | None = None, processor: object = None,
               thinker: Thinker | None = None) -> None:
    """Feed ``metrics`` from the parts a process has: the moves it commits and the board
    posts it makes of them, the ephemeral messages it could not send, the updates it
    handles, the 429s it meets, its computer decisions, and (read at each scrape) the
    store's figures."""
    metrics.read_store = store.operating_figures
    flow.matches.on_committed = metrics.moves_committed
    delivery.on_board_posted = metrics.board_posted
    delivery.sender.on_ephemeral_refused = metrics.ephemeral_refused
    if isinstance(processor, ChatOrderedProcessor):
        processor.on_handled = metrics.update_handled
    if limiter is not None:
        limiter.on_flood_wait = metrics.flood_wait
    if thinker is not None:
        thinker.on_decided = metrics.decided


class JobQueue:
    """The scaled mode's job queue as readiness sees it: procrastinate's connector."""

    def __init__(self, connector: object) -> None:
        self.connector = connector

    async def ping(self) -> None:
        await self.connector.execute_query_one_async("SELECT 1 AS one")  # type: ignore[attr-defined]


def ready_of(app: Application) -> Readiness:
    """``/readyz`` of ``app``: started once its Services are built, then its store (and in
    the scaled mode its job queue) must answer."""
    def store() -> Store | None:
        svc = app.bot_data.get("services")
        return svc.store if svc is not None else None

    def jobs() -> JobQueue | None:
        attached = app.bot_data.get("jobs")
        return JobQueue(attached.jobs.app.connector) if attached is not None else None

    return readiness(lambda: "services" in app.bot_data, store, jobs)


async def serve_job_doors(config: Config, services: JobServices
                          ) -> tuple[WebServer, asyncio.Task[None]]:
    """A job worker's ``/readyz`` and ``/metrics`` (``KRENDZU_METRICS=on``): its figures are
    its own (the jobs' 429s and computer decisions, the store's gauges)."""
    metrics = Metrics()
    limiter = services.application.bot.rate_limiter if services.application else None
    instrument(metrics, store=services.store, flow=services.flow, delivery=services.delivery,
               limiter=limiter if isinstance(limiter, ChatRateLimiter) else None,
               thinker=services.thinker)
    ready = readiness(lambda: True, lambda: services.store,
                      lambda: JobQueue(services.jobs.app.connector))
    return await serve_routes(operations_routes(ready, metrics),
                              *split_listen(config.web_listen), log_level=config.log_level)
