"""Builds the python-telegram-bot Application: handlers, services, command menus, restart."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from typing import Any

from telegram import (
    BotCommand,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
)
from telegram.error import BadRequest, NetworkError
from telegram.ext import (
    Application,
)
from telegram.request import BaseRequest

from chat import handlers as h
from chat.answers import RecentAnswers
from chat.computer import Pacer, Thinker
from chat.config import Config
from chat.delivery import Delivery
from chat.flow import Flow
from chat.flow.locks import Locks, SharedLocks
from chat.flow.views.webapp import AppLinks, secret_from_token
from chat.gates import WINDOW
from chat.i18n import Catalogs, Tr
from chat.menus import GROUP_COMMANDS, PRIVATE_COMMANDS, command_descriptions
from chat.notices import Send
from chat.painter import Painter
from chat.ratelimit import ChatRateLimiter
from chat.throttle import Throttle
from chat.updates import ChatOrderedProcessor
from storage import open_store

log = logging.getLogger(__name__)

#: How long a stopping bot waits for queued messages before it lets the restart send them.
DRAIN_SECONDS = 5.0
#: How long a stop (SIGTERM or SIGINT, to the bot alone or to its whole process group, as
#: Ctrl-C and systemd send them) takes at most: the drain above, the engine server's end
#: (as long again) and the task a drawing or computer worker has at hand, which it finishes
#: before it exits (a computer's move: its budget, ``KRENDZU_HARD_MS``). A webhook worker
#: first lets the requests in progress finish (``chat.web.GRACEFUL_SECONDS``), a job worker
#: its running jobs (``chat.jobs.worker.GRACEFUL_SECONDS``, within this). Well within the
#: 90 s a service manager waits before it kills (systemd's ``TimeoutStopSec``).
STOP_SECONDS = 15.0

async def set_commands(app: Application, catalogs: Catalogs) -> None:
    """The command menu per scope (private, groups) and per language."""
    for language in catalogs.languages:
        tr = catalogs.get(language)
        text = command_descriptions(tr)
        code = None if language == "en" else language
        for scope, names in ((BotCommandScopeAllPrivateChats(), PRIVATE_COMMANDS),
                             (BotCommandScopeAllGroupChats(), GROUP_COMMANDS)):
            await app.bot.set_my_commands([BotCommand(n, text[n]) for n in names], scope=scope,
                                          language_code=code)
        # What a person sees before pressing Start (an invitation link, the bot's profile).
        await app.bot.set_my_description(bot_description(tr), language_code=code)
        await app.bot.set_my_short_description(bot_short_description(tr), language_code=code)


def bot_description(tr: Tr) -> str:
    """The bot's description (at most 512 characters): shown in an empty private chat."""
    return tr._("Krendzu («Крэндзю», card renju, «four in a row») with a 36-card deck, for 2 "
                "to 4 players. Add me to a group and send /new to play with friends, or press "
                "Start to play the computer (easy, normal or hard). Your cards always come "
                "here, privately; the group sees only the board.")


def bot_short_description(tr: Tr) -> str:
    """The short description (at most 120 characters): the bot's profile and shared links."""
    return tr._("Card renju, «four in a row»: play in groups with friends or alone against "
                "the computer.")


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
    if request is not None:
        builder = builder.request(request).get_updates_request(updates_request or request)
    # The overall rate and per-chat pauses after a 429 (chat/ratelimit.py: PTB's own
    # AIORateLimiter would halt every chat for one chat's 429); per-group pacing is delivery's
    # own gate, which can coalesce board posts (a limiter could only delay them).
    limiter = ChatRateLimiter(config.overall_rate, clock=clock)
    builder = builder.rate_limiter(limiter)  # type: ignore[arg-type]  # PTB types it [None]

    async def post_init(app: Application) -> None:
        store = await open_store(config.database, clock=clock, prepare=config.pg_prepare)
        catalogs = Catalogs()
        thinker = Thinker(workers=config.ai_workers, hard_budget_ms=config.hard_budget_ms)
        flow = Flow(store, catalogs, thinker.decide, bot_username=app.bot.username,
                    clock=clock, timer_grace=config.timer_grace,
                    max_matches_per_user=config.max_matches_per_user,
                    max_matches_per_chat=config.max_matches_per_chat,
                    engine_api_url=config.engine_api_url,
                    app_links=app_links(config, app.bot.username),
                    locks=flow_locks(store))
        painter = Painter(config.draw_workers, catalogs)
        delivery = Delivery(app.bot, store, painter=painter, group_limit=config.group_limit,
                            clock=clock, limiter=limiter)
        limiter.on_pause = delivery.flood_wait
        share_windows(store, limiter, delivery, config.group_limit)

        async def computer(match_id: int, seq: int) -> None:
            outcome = await flow.computer_turn(match_id, seq)
            delivery.run(outcome.notices)

        pacer = Pacer(computer, config.ai_delay)
        delivery.on_computer = pacer.schedule

        async def cannot_write(match_id: int, user_id: int) -> None:
            row = await store.get_match(match_id)
            if row.chat_id > 0:
                return
            tr = await flow.chat_tr(row.chat_id)
            name = await flow.name_of(user_id)
            delivery.run([Send(row.chat_id, tr._(
                "I cannot write to {name} privately, so their cards cannot reach them. "
                "{name}, please open my private chat and press Start: your seat is kept.",
                name=name) + f"\nhttps://t.me/{app.bot.username}", thread_id=row.thread_id,
                group=True)])

        delivery.on_forbidden = cannot_write
        attached = None
        if config.jobs:  # the scaled mode: announcements, timers, computers are jobs
            from chat.jobs import attach

            attached = app.bot_data["jobs"] = await attach(config, store, flow, delivery)
        throttle = Throttle(user_per_minute=config.user_per_minute,
                            info_per_user=config.info_per_user,
                            info_per_chat=config.info_per_chat)
        services = app.bot_data["services"] = h.Services(
            store, flow, delivery, thinker, pacer, lobby_seconds=config.lobby_minutes * 60,
            throttle=throttle, clock=clock,
            answers=RecentAnswers(config.info_repeat_minutes * 60))
        delivery.on_answer = services.answers.sent  # which message a repeat points to
        processor = app.update_processor
        if isinstance(processor, ChatOrderedProcessor):
            # Waiting updates of the match in progress go first; a flooder whose updates are
            # dropped is told to slow down (chat/updates.py, chat/handlers/admission.py).
            processor.urgent = functools.partial(h.urgent, services)
            processor.on_drop = functools.partial(h.dropped, services)
        try:
            await set_commands(app, catalogs)
        except Exception:
            log.warning("could not register the command menu", exc_info=True)
        if config.webhook_url:  # replies stored before each 200 (chat/outbox.py)
            from chat.outbox import start_outbox

            outbox = await start_outbox(store, delivery)
            if outbox is not None:
                app.bot_data["outbox"] = outbox
        if attached is None:
            delivery.seed_groups(await store.group_writes(clock() - WINDOW))
            delivery.run(await flow.resume())
        else:  # what was stored but not announced: the job workers' (chat/jobs.py)
            await attached.resume()
        if config.public_url and not config.webhook_url:
            # The engine protocol and the Mini App while polling: a web server for them
            # alone, in this process (in webhook mode chat/web.py serves them beside the
            # webhook).
            from chat.engines_api import run_in_polling

            app.bot_data["engine_server"] = await run_in_polling(
                lambda: app.bot_data["services"], config.web_listen, config=config)
        assert app.job_queue is not None, "python-telegram-bot[job-queue] is required"
        app.job_queue.run_repeating(
            turn_timers, interval=config.timer_tick, first=config.timer_tick,
            name="turn timers",
            # A slow tick is skipped by the tick itself (svc.ticking), without a warning.
            job_kwargs={"max_instances": 2, "coalesce": True})

    async def post_stop(app: Application) -> None:
        """Stopping (SIGTERM): no new computer moves; give queued messages a few seconds to
        go out. Whatever is still queued is announced again after the restart (outbox)."""
        svc: h.Services | None = app.bot_data.get("services")
        if svc is None:
            return
        await svc.pacer.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(svc.delivery.idle(), DRAIN_SECONDS)

    async def post_shutdown(app: Application) -> None:
        svc: h.Services | None = app.bot_data.get("services")
        if svc is None:
            return
        engine_server = app.bot_data.pop("engine_server", None)
        if engine_server is not None:
            server, task, _api = engine_server
            server.should_exit = True
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, DRAIN_SECONDS)
        await svc.pacer.close()
        await svc.delivery.close()
        outbox = app.bot_data.pop("outbox", None)
        if outbox is not None:  # after delivery: what went out is struck off
            await outbox.close()
        svc.thinker.close()
        attached = app.bot_data.pop("jobs", None)
        if attached is not None:
            await attached.close()
        await svc.store.close()

    app = (builder.post_init(post_init).post_stop(post_stop).post_shutdown(post_shutdown)
           .build())
    h.register(app)
    return app


class StoppedBeforeStart(Exception):
    """Asked to stop while waiting for the Bot API to answer (nothing was started)."""


async def reach_bot_api(application: Application, *, stop: asyncio.Event | None = None,
                        first_wait: float = 1.0, longest_wait: float = 30.0) -> bool:
    """Initialise ``application`` (its ``getMe``) as soon as the Bot API answers.

    A worker started while Telegram or the network is away waits for it, saying so at each
    try (waits doubling up to ``longest_wait``), instead of exiting and being restarted in a
    loop by its supervisor. A token Telegram rejects (``InvalidToken``) or a request it
    refuses is raised at once: waiting would not change the answer. ``False`` if ``stop``
    was set first (SIGTERM while waiting)."""
    wait = first_wait
    while True:
        try:
            await application.initialize()
            return True
        except BadRequest:
            raise
        except NetworkError as exc:  # TimedOut too; InvalidToken is not a NetworkError
            log.warning("the Bot API cannot be reached (%s: %s); trying again in %.0f s",
                        type(exc).__name__, exc, wait)
        if stop is None:
            await asyncio.sleep(wait)
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)
            if stop.is_set():
                return False
        wait = min(longest_wait, wait * 2)


def app_links(config: Config, bot_username: str) -> AppLinks | None:
    """The Mini App's links (issue 29) when the web server is public (over https, as Telegram
    requires), else ``None``: then no panel or board post carries a Mini App button and the
    bot behaves as without it."""
    if not (config.public_url and config.token):
        return None
    if not config.public_url.startswith("https://"):
        # Telegram opens Mini Apps from https:// only (and refuses a message whose web_app
        # button has another URL): an http:// server still serves the engine protocol.
        log.warning("KRENDZU_PUBLIC_URL is not https://, so no message offers the Mini App")
        return None
    return AppLinks(secret_from_token(config.token), config.public_url, bot_username,
                    config.miniapp_name)


def flow_locks(store: object) -> Locks | None:
    """On PostgreSQL any process may serve a match: the flow's chat locks are the
    database's too (:class:`chat.flow.locks.SharedLocks`); else this process's own."""
    from storage.postgres import PostgresStore

    if isinstance(store, PostgresStore):
        return SharedLocks(store.hold_chat)
    return None


def share_windows(store: object, limiter: ChatRateLimiter, delivery: Delivery,
                  group_limit: int) -> None:
    """On PostgreSQL any number of processes serve the bot: Telegram's windows (pauses,
    the bot-wide rate, each group's writes) are kept there, shared by all of them. The
    embedded mode (SQLite, one process) keeps them in memory."""
    from storage.postgres import PostgresStore

    if isinstance(store, PostgresStore):
        limiter.share(store.windows, group_limit=group_limit)
        delivery.share(store.windows)


async def turn_timers(context: Any) -> None:
    """The job queue's tick: reminders and timeouts that are due (see chat/flow/ticker.py)."""
    svc: h.Services | None = context.application.bot_data.get("services")
    if svc is None or svc.ticking.locked():
        return  # the previous tick is still at work
    async with svc.ticking:
        if "jobs" not in context.application.bot_data:  # else the timers are jobs
            svc.delivery.run(await svc.flow.ticker.tick())
        svc.delivery.run(await svc.flow.ticker.expire_lobbies(svc.lobby_seconds))
