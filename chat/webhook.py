"""The webhook's endpoint: one update from Telegram, checked, processed and answered; and the
web app it is served in (:func:`build_web_app`: the webhook, ``/healthz`` and the other doors'
routes) with its registration at Telegram (:func:`register_webhook`).

The request must carry ``X-Telegram-Bot-Api-Secret-Token`` (403 otherwise). The update is
processed *inside* the request (``Application.process_update`` through the app's
:class:`chat.updates.ChatOrderedProcessor`), never put on a queue and answered at once as
python-telegram-bot's custom-webhook example does: a process killed after such an answer would
lose the update. 200 means processed and remembered; when a handler failed in a way another
try may cure (the error handler records it, :class:`chat.handlers.errors.Attempt`) the answer
is 500 and Telegram delivers the update again (at once, then after 2, 4 … s).

A redelivered update applies once. A move stores its update id with itself (``append_move(...,
update_id=)``, one transaction), and every update processed without a failure is remembered
in the store's ledger (``processed_updates``, ``Store.mark_update``) before the 200: a copy
arriving later (the answer was lost on the way) is answered 200 without being processed; a
copy arriving while the first is still at work waits for its answer. Between a handler's
writes and the ledger a kill can still come: then the update runs again, so whatever changes
state applies once. A move, a set-up change (``/add``, ``/join``, a lobby button) and a seat
handed over (``/leave``, ``/kick``) put the update id in the ledger in their own transaction
(``update_id=`` of ``append_move``, ``update_lobby``, ``set_stand_in``): the copy is answered
as processed; the rest are repeats by nature (``/new``, ``/go``). A move typed in two steps
(a card and "end") is stored in one transaction (``Store.append_moves``).

What the update tells (its replies) is stored before the 200 on PostgreSQL: the notices are
held while it is processed (:class:`chat.notices.Held`), written to the reply outbox with the
update's ledger row in one transaction (:class:`chat.outbox.ReplyOutbox`), then queued; a
worker killed after its 200 leaves them to another worker. Without the outbox (SQLite) they
are queued while the update is processed and sent after the 200, from memory.

Order: Telegram sends a chat's next update only after the answer to the previous one (a
user's next button press likewise), and the processor keeps one chat's updates in order as in
polling. A chat's failing update holds back the chat's later ones, so after
:data:`MAX_ATTEMPTS` failed tries the update is given up (answered 200, the
user gets the usual apology). The tries are counted in the store where it keeps count
(PostgreSQL: every worker's tries of the update, :meth:`storage.Store.update_state`),
else by this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import cast
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Route
from telegram import Bot, Update
from telegram.error import RetryAfter, TelegramError
from telegram.ext import Application

from chat.handlers.attempt import ATTEMPT, Attempt, reads_request
from chat.handlers.errors import apologise
from chat.notices import HELD, Held
from chat.outbox import ReplyOutbox
from chat.services import Services
from storage.pg_ledger import ANSWER, Answer

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
#: Failed tries of one update in this process before it is given up (answered 200), so one
#: update that always fails cannot hold back its chat for the 24 hours Telegram keeps it.
#: With Telegram's back-off (2, 4, 8 … s) that is about four minutes of tries.
MAX_ATTEMPTS = 8
#: Update ids whose failed tries are counted (the oldest forgotten first).
FAILURES_KEPT = 10_000
#: :func:`build_web_app`'s default path, the one the docs' example URL ends with (the bot
#: serves its URL's own path, :func:`webhook_path`).
DEFAULT_PATH = "/telegram/webhook"
#: What Telegram sends when polling names no ``allowed_updates``: the webhook asks for the
#: same, so both modes see the same updates.
ALLOWED_UPDATES = tuple(t for t in Update.ALL_TYPES if t not in (
    Update.CHAT_MEMBER, Update.MESSAGE_REACTION, Update.MESSAGE_REACTION_COUNT))


class WebhookReceiver:
    """The ``POST`` endpoint: checks the secret, processes the update, answers its fate."""

    def __init__(self, application: Application, secret: str, *,
                 max_attempts: int = MAX_ATTEMPTS) -> None:
        if not secret:
            raise ValueError("a webhook needs its secret token")
        self.application = application
        self.secret = secret.encode()
        self.max_attempts = max_attempts
        #: update id → failed tries here (a bounded LRU).
        self.failures: OrderedDict[int, int] = OrderedDict()
        #: update id → the answer of the copy at work, for a copy that arrives meanwhile.
        self.in_progress: dict[int, asyncio.Future[int]] = {}

    @property
    def services(self) -> Services:
        return cast(Services, self.application.bot_data["services"])

    @property
    def outbox(self) -> ReplyOutbox | None:
        """The reply outbox (PostgreSQL; chat/outbox.py), else ``None``: replies are then
        queued while the update is processed and sent after the 200, from memory."""
        return cast("ReplyOutbox | None", self.application.bot_data.get("outbox"))

    async def endpoint(self, request: Request) -> Response:
        """The route's endpoint (a bound method: Starlette calls it with the request)."""
        given = request.headers.get(SECRET_HEADER, "").encode("latin-1")
        if not hmac.compare_digest(given, self.secret):
            log.warning("webhook: a request without the right secret token (from %s)",
                        request.client.host if request.client else "?")
            return PlainTextResponse("forbidden", status_code=403)
        try:
            body = await request.body()
        except ClientDisconnect:  # gone before its update was read: it comes again
            return Response(status_code=400)
        try:
            update = Update.de_json(json.loads(body), self.application.bot)
        except Exception:  # not an update: no use sending it again
            log.warning("webhook: a body that is not an update")
            return PlainTextResponse("not an update", status_code=400)
        status = await self.receive(update)
        return PlainTextResponse("ok" if status == 200 else "try again", status_code=status)

    async def receive(self, update: Update) -> int:
        """Process one delivered update once; the HTTP status to answer."""
        running = self.in_progress.get(update.update_id)
        if running is not None:  # the sender gave up on the first copy's answer
            return await asyncio.shield(running)
        answer: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.in_progress[update.update_id] = answer
        status = 500
        try:
            status = await self.process(update)
        finally:
            del self.in_progress[update.update_id]
            answer.set_result(status)
        return status

    async def answer_orphan(self, update: Update) -> None:
        """A copy of an update whose change was stored (with its update id) but whose
        replies were not: the worker died in between, in the handler's last milliseconds.
        The change applies once, so it is not processed again; a pressed button is at
        least answered (its spinner stops; a move's board and panels come from its
        announcement job), and the update is then marked answered."""
        outbox = self.outbox
        if outbox is None:
            return
        store = outbox.store
        try:
            if await store.update_answered(update.update_id):
                return
            log.warning("webhook: update %d was applied by a worker that died before its "
                        "replies were stored", update.update_id)
            if update.callback_query is not None:
                with contextlib.suppress(TelegramError):  # too old: nothing more to do
                    await update.callback_query.answer()
            await store.answer_update(update.update_id, outbox.owner, [])
        except Exception:
            log.exception("webhook: update %d's answer could not be made up",
                          update.update_id)

    async def process(self, update: Update) -> int:
        store = self.services.store
        update_id = update.update_id
        # Failed tries so far: this process's, until the ledger tells the store's (every
        # worker's, where it keeps count).
        attempt = Attempt(update_id, self.max_attempts, failed=self.failures.get(update_id, 0))
        if reads_request(update):
            attempt.ledger_due = True  # read with the request's one read (the preamble)
        else:
            try:
                attempt.read_ledger(*await store.update_state(update_id))
            except Exception:
                log.exception("webhook: the update ledger cannot be read")
                return 503
            if attempt.seen:
                return await self.processed_already(update)
        started = kept = False
        outbox = self.outbox
        # What the update tells is held (chat/delivery.py), to be stored before the 200.
        held = Held() if outbox is not None else None
        # Its answer rides in the transaction of the chat's lock that stores its change,
        # while it has told nothing (storage/pg_ledger.py). Not a button's: a copy of a
        # press whose change was stored and its replies not gets its spinner stopped
        # (:meth:`answer_orphan`), which an answer written with the change would skip.
        answer = (Answer(update_id, quiet=lambda: not held.notices)
                  if held is not None and update.callback_query is None else None)

        async def run() -> None:
            nonlocal started, kept
            started = True
            await self.application.process_update(update)
            if answer is not None:
                answer.open = False
            if outbox is None or held is None or attempt.seen:
                return
            held.open = False  # what the update's own tasks tell later goes at once
            if not (attempt.failures and attempt.retry):
                if answer is not None and answer.written and not held.notices:
                    kept = True  # answered with its change, and nothing told since
                    return
                # Stored and queued in the chat's turn, so one chat's replies keep the
                # order of its updates.
                try:
                    await outbox.keep(update_id, held.notices)
                    kept = True
                except Exception:  # not durable, but not lost while this process lives
                    log.exception("webhook: update %d's replies could not be stored",
                                  update_id)

        token = ATTEMPT.set(attempt)
        holding = HELD.set(held)
        answering = ANSWER.set(answer)
        try:
            # The app's processor: one chat's updates in order, at most N at once (as polling).
            await self.application.update_processor.process_update(update, run())
        finally:
            ANSWER.reset(answering)
            if answer is not None:
                answer.open = False
            HELD.reset(holding)
            if held is not None:
                held.open = False
            ATTEMPT.reset(token)
            retried, attempt.retry = attempt.retry, False  # later failures: not this request's
        if held is not None and held.notices and not kept:
            # Another try comes (a 500), or the outbox failed: told as before, in memory.
            self.services.delivery.run(held.notices)
        if attempt.seen:  # the preamble found it in the ledger, with the request's read
            return await self.processed_already(update)
        if not started:
            # Dropped unprocessed: its sender had too many updates waiting (chat/updates.py)
            # and is told to slow down. Answered 200 on purpose: Telegram would deliver a
            # flood again and again, holding the chat's other updates behind it.
            return 200
        tries = attempt.failed + 1
        if attempt.failures and retried:
            try:
                counted = await store.count_update_failure(update_id)
            except Exception:  # counted here alone then: given up later, not never
                log.exception("webhook: update %d's failure could not be counted", update_id)
                counted = None
            if counted is None:
                self.failures[update_id] = tries
                self.failures.move_to_end(update_id)
                while len(self.failures) > FAILURES_KEPT:
                    self.failures.popitem(last=False)
            else:
                tries = counted
            # One that failed before its ledger was read (so before its tries were known)
            # is given up here once they reach the limit.
            if not attempt.ledger_due or tries < self.max_attempts:
                log.warning("webhook: update %d failed (try %d): answered 500 so Telegram "
                            "delivers it again", update_id, tries)
                return 500
        if attempt.failures:
            log.error("webhook: update %d failed %d times: given up, so the chat's later "
                      "updates go through", update_id, tries)
            if attempt.owed:  # it failed not knowing it was the last try
                await apologise(self.services, update)
        self.failures.pop(update_id, None)
        if kept:  # remembered with its replies (ReplyOutbox.keep), or with its change
            return 200
        try:
            await store.mark_update(update_id)
        except Exception:  # processed all the same: a 500 would have it processed again
            log.exception("webhook: update %d could not be remembered", update_id)
        return 200

    async def processed_already(self, update: Update) -> int:
        """A copy of an update the ledger has (its answer was lost on the way): not
        processed again; answered 200."""
        log.info("webhook: update %d was processed already", update.update_id)
        if self.outbox is not None:
            await self.answer_orphan(update)
        return 200


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
