"""The composition root: every process of the bot is built here, and only here.

Each entry point calls it and then only runs what it got:

- ``python bot.py`` (polling): :func:`build_application`, the python-telegram-bot
  ``Application`` whose ``post_init`` builds the store, flow, delivery, computer players and
  :class:`chat.services.Services`, resumes after a restart and, when the bot is public,
  serves the engine protocol and the Mini App beside it (:func:`serve_routes`);
- the webhook worker (``python -m chat.web``): :func:`chat.compose_scaled.running`, the same
  application behind the bot's web server (:func:`http_routes`: the webhook, the engine
  protocol, the Mini App);
- the job worker (``python -m chat.jobs worker``): :func:`chat.compose_scaled.open_job_services`,
  a bot that sends but never receives, with the same flow and delivery
  (:func:`flow_and_delivery`);
- the arena (``python -m chat.arena``): its engine routes served by :func:`serve_routes`.

The scaled mode's two ways of running it are in :mod:`chat.compose_scaled`, built from the
parts here. Nothing below imports either module (the import contracts keep chat/ free of
cycles): the doors, the handlers, the flow and the job tasks are handed what they need.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from typing import Any, cast

from starlette.routing import BaseRoute
from telegram import Bot
from telegram.ext import Application
from telegram.request import BaseRequest

from chat import handlers as h
from chat.answers import RecentAnswers
from chat.computer import Pacer, Thinker
from chat.config import Config, split_listen
from chat.delivery import Delivery
from chat.engines_api import EngineApi
from chat.flow import Flow
from chat.flow.base import Locks, SharedLocks
from chat.gates import WINDOW
from chat.i18n import Catalogs
from chat.jobs import build_jobs
from chat.jobs.attach import Attached, attach
from chat.jobs.core import job_hooks
from chat.logs import RecentErrors
from chat.menus import set_commands
from chat.metrics import Metrics
from chat.miniapp import app_links, miniapp_routes
from chat.operations import instrument, operations_routes, ready_of
from chat.outbox import start_outbox
from chat.painter import Painter
from chat.ratelimit import ChatRateLimiter
from chat.services import Services
from chat.telegram_http import AiohttpRequest
from chat.throttle import Throttle
from chat.updates import ChatOrderedProcessor
from chat.webserver import serve_routes
from storage import Store, open_store
from storage.postgres import PostgresStore

log = logging.getLogger(__name__)

# A stop (SIGTERM or SIGINT, to the bot alone or to its whole process group, as Ctrl-C and
# systemd send them) takes at most ``KRENDZU_STOP_SECONDS`` (chat.config.Config.stop_seconds),
# a third of it (``Config.stop_share``) for each wait: a webhook worker's requests in progress
# (chat.webserver.web_server) or a job worker's running jobs (chat.jobs.worker.worker_options),
# the queued messages, the web server's end. The rest is the task a drawing or computer worker
# has at hand, which it finishes before it exits (a computer's move: its budget,
# ``KRENDZU_HARD_MS``).


def build_application(
    config: Config,
    *,
    request: BaseRequest | None = None,
    updates_request: BaseRequest | None = None,
    clock: Callable[[], float] = time.time,
) -> Application:
    """The application. ``request``/``updates_request`` and ``clock`` are for tests (a fake
    Bot API and a clock that may run faster than real time)."""
    if not config.token:
        raise ValueError("a bot token is required")
    # Updates of one chat in arrival order, different chats at once (chat/updates.py).
    builder = Application.builder().token(config.token).concurrent_updates(
        ChatOrderedProcessor(256)).context_types(h.CONTEXT_TYPES)
    if config.api_base_url:
        base = config.api_base_url.rstrip("/")
        builder = builder.base_url(f"{base}/bot").base_file_url(f"{base}/file/bot")
    builder = builder.request(request or AiohttpRequest(256)).get_updates_request(
        updates_request or request or AiohttpRequest(1))  # PTB's pool sizes (telegram_http)
    # The overall rate and per-chat pauses after a 429 (chat/ratelimit.py: PTB's own
    # AIORateLimiter would halt every chat for one chat's 429); per-group pacing is delivery's
    # own gate, which can coalesce board posts (a limiter could only delay them).
    limiter = ChatRateLimiter(config.overall_rate, clock=clock)
    builder = builder.rate_limiter(limiter)  # type: ignore[arg-type]  # PTB types it [None]
    # Prometheus figures (KRENDZU_METRICS=on), and the last hour's errors for /admin.
    metrics = Metrics() if config.metrics else None
    errors = RecentErrors()

    async def post_init(app: Application) -> None:
        # The scaled mode is chosen here, once: the store defers the jobs in each change's
        # transaction, and the flow leaves the announcer to them.
        jobs = build_jobs(config.database, prepare=config.pg_prepare) if config.jobs else None
        store = await open_store(config.database, clock=clock, prepare=config.pg_prepare,
                                 hooks=job_hooks(jobs, config.ai_delay) if jobs else None)
        logging.getLogger().addHandler(errors)
        thinker, flow, delivery = flow_and_delivery(config, app.bot, store, limiter, clock,
                                                    announced_by_jobs=jobs is not None)
        if metrics is not None:
            instrument(metrics, store=store, flow=flow, delivery=delivery, limiter=limiter,
                       processor=app.update_processor, thinker=thinker)

        async def computer(match_id: int, seq: int) -> None:
            outcome = await flow.computer_turn(match_id, seq)
            delivery.run(outcome.notices)

        pacer = Pacer(computer, config.ai_delay)
        # A computer's turn: this process's pacer, or (the scaled mode) the job deferred
        # with the change that brought it (chat.jobs.attach.Attached.on_computer).
        delivery.on_computer = pacer.schedule if jobs is None else Attached.on_computer

        async def cannot_write(match_id: int, user_id: int) -> None:
            delivery.run(await flow.unreachable(match_id, user_id))

        async def bot_rights(chat_id: int, admin: bool) -> None:
            delivery.run(await flow.bot_rights(chat_id, admin))

        delivery.on_forbidden = cannot_write
        delivery.sender.on_bot_admin = bot_rights
        attached = None
        if jobs is not None:  # the scaled mode: announcements, timers, computers are jobs
            assert isinstance(store, PostgresStore), "open_store refuses hooks elsewhere"
            attached = app.bot_data["jobs"] = await attach(config, jobs, store)
        throttle = Throttle(user_per_minute=config.user_per_minute,
                            info_per_user=config.info_per_user,
                            info_per_chat=config.info_per_chat)
        services = app.bot_data["services"] = Services(
            store, flow, delivery, thinker, pacer, lobby_seconds=config.lobby_minutes * 60,
            throttle=throttle, clock=clock,
            answers=RecentAnswers(config.info_repeat_minutes * 60),
            admin_ids=config.admin_ids, errors=errors)
        delivery.on_answer = services.answers.sent  # which message a repeat points to
        processor = app.update_processor
        if isinstance(processor, ChatOrderedProcessor):
            # Waiting updates of the match in progress go first; a flooder whose updates are
            # dropped is told to slow down (chat/updates.py, chat/handlers/admission.py).
            processor.urgent = functools.partial(h.urgent, services)
            processor.on_drop = functools.partial(h.dropped, services)
        try:
            await set_commands(app.bot, flow.catalogs)
        except Exception:
            log.warning("could not register the command menu", exc_info=True)
        if config.webhook_url:  # replies stored before each 200 (chat/outbox.py)
            outbox = await start_outbox(store, delivery)
            if outbox is not None:
                app.bot_data["outbox"] = outbox
        if attached is None:
            delivery.seed_groups(await store.group_writes(clock() - WINDOW))
            delivery.run(await flow.resume())
        else:  # what was stored but not announced: the job workers' (chat/jobs/)
            await attached.resume()
        if (config.public_url or metrics is not None) and not config.webhook_url:
            # The engine protocol and the Mini App while polling (when public), /readyz and
            # /metrics (when metrics are on): a web server for them alone, in this process
            # (in webhook mode :func:`running` serves them beside the webhook).
            current_services = lambda: cast(Services, app.bot_data["services"])  # noqa: E731
            api = EngineApi(current_services) if config.public_url else None
            routes = http_routes(config, current_services, api) if api is not None else []
            app.bot_data["engine_server"] = (*await serve_routes(
                [*routes, *operations_routes(ready_of(app), metrics)],
                *split_listen(config.web_listen)), api)
        assert app.job_queue is not None, "python-telegram-bot[job-queue] is required"
        app.job_queue.run_repeating(
            functools.partial(turn_timers, timers_are_jobs=jobs is not None),
            interval=config.timer_tick, first=config.timer_tick,
            name="turn timers",
            # A slow tick is skipped by the tick itself (svc.ticking), without a warning.
            job_kwargs={"max_instances": 2, "coalesce": True})

    async def post_stop(app: Application) -> None:
        """Stopping (SIGTERM): no new computer moves; give queued messages a few seconds to
        go out (a third of ``KRENDZU_STOP_SECONDS``). Whatever is still queued is announced
        again after the restart (outbox)."""
        svc: Services | None = app.bot_data.get("services")
        if svc is None:
            return
        await svc.pacer.close()
        await svc.flow.broadcast.close(within=config.stop_share)  # the announcer's moves
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(svc.delivery.idle(), config.stop_share)

    async def post_shutdown(app: Application) -> None:
        logging.getLogger().removeHandler(errors)
        svc: Services | None = app.bot_data.get("services")
        if svc is None:
            return
        engine_server = app.bot_data.pop("engine_server", None)
        if engine_server is not None:
            server, task, _api = engine_server
            server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, config.stop_share)
        await svc.pacer.close()
        await svc.delivery.close()
        outbox = app.bot_data.pop("outbox", None)
        if outbox is not None:  # after delivery: what went out is struck off
            await outbox.close()
        svc.thinker.close()
        await svc.thinker.wait_closed()
        attached = app.bot_data.pop("jobs", None)
        if attached is not None:
            await attached.close()
        await svc.store.close()

    app = (builder.post_init(post_init).post_stop(post_stop).post_shutdown(post_shutdown)
           .build())
    if metrics is not None:
        app.bot_data["metrics"] = metrics
    h.register(app)
    return app


def flow_locks(store: Store) -> Locks | None:
    """On PostgreSQL any process may serve a match: the flow's chat locks are the
    database's too (:class:`chat.flow.base.SharedLocks`); else this process's own."""
    if isinstance(store, PostgresStore):
        return SharedLocks(store.hold_chat)
    return None


def share_windows(store: Store, limiter: ChatRateLimiter, delivery: Delivery,
                  group_limit: int) -> None:
    """On PostgreSQL any number of processes serve the bot: Telegram's windows (pauses,
    the bot-wide rate, each group's writes) are kept there, shared by all of them. The
    embedded mode (SQLite, one process) keeps them in memory."""
    if isinstance(store, PostgresStore):
        limiter.share(store.windows, group_limit=group_limit)
        delivery.share(store.windows, limiter.renewing)


def flow_and_delivery(config: Config, bot: Bot, store: Store, limiter: ChatRateLimiter,
                      clock: Callable[[], float], *,
                      announced_by_jobs: bool) -> tuple[Thinker, Flow, Delivery]:
    """The flow (with the computer players' thinker) and delivery of every process serving
    the bot, alike; only who runs the announcer differs (``announced_by_jobs``, or delivery)."""
    catalogs = Catalogs()
    thinker = Thinker(workers=config.ai_workers, hard_budget_ms=config.hard_budget_ms)
    delivery = Delivery(bot, store, painter=Painter(config.draw_workers, catalogs),
                        group_limit=config.group_limit, clock=clock, limiter=limiter)
    flow = Flow(store, catalogs, thinker.decide, bot_username=bot.username,
                clock=clock, timer_grace=config.timer_grace,
                max_matches_per_user=config.max_matches_per_user,
                max_matches_per_chat=config.max_matches_per_chat,
                engine_api_url=config.engine_api_url,
                app_links=app_links(config, bot.username),
                locks=flow_locks(store), announced_by_jobs=announced_by_jobs,
                panels_in_group=config.panels_in_group,
                pool_computer_seconds=config.pool_computer_seconds,
                pool_match=config.pool_match,
                announce_to=None if announced_by_jobs else delivery.run)
    limiter.on_pause = delivery.flood_wait
    share_windows(store, limiter, delivery, config.group_limit)
    return thinker, flow, delivery


async def turn_timers(context: Any, *, timers_are_jobs: bool) -> None:
    """The job queue's tick: due reminders and timeouts (chat/flow/ticker.py) unless the
    scaled mode's jobs run them (``timers_are_jobs``), idle set-ups, "Play now", arenas."""
    svc: Services | None = context.application.bot_data.get("services")
    if svc is None or svc.ticking.locked():
        return  # the previous tick is still at work
    async with svc.ticking:
        if not timers_are_jobs:
            svc.delivery.run(await svc.flow.ticker.tick())
        svc.delivery.run(await svc.flow.ticker.expire_lobbies(svc.lobby_seconds))
        # The "Play now" pool, the arenas and leagues (their open ones read once), in both
        # modes: their store seats nobody twice, whichever processes tick them.
        found = await svc.store.open_arenas()
        svc.delivery.run([*await svc.flow.pool.tick(), *await svc.flow.arenas.tick_all(found),
                          *await svc.flow.leagues.tick_all(found)])


# The HTTP doors ------------------------------------------------------------------------------


def http_routes(config: Config, services: Callable[[], Services],
                engine_api: EngineApi | None) -> list[BaseRoute]:
    """The engine protocol (``engine_api``, when the bot serves it) and the Mini App (when
    the bot is public), on ``services`` (read when a request comes: they are built in
    ``post_init``, after the server is)."""
    routes = engine_api.routes() if engine_api is not None else []
    return routes + miniapp_routes(config, services)
