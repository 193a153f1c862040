"""Webhook delivery, the way Telegram does it: updates POSTed to the bot's URL.

While a webhook is set (``setWebhook``), :class:`Deliverer` posts every queued update as JSON
to the URL with ``X-Telegram-Bot-Api-Secret-Token`` (when one was given) and keeps it queued
until the bot answers 2xx:

- strictly one update at a time per queue (a chat's messages and member changes; a user's
  button presses): the next one of that chat or user goes only after the answer to the
  previous, so a failing update holds back the rest of its chat, as on Telegram;
- different queues at once, at most ``max_connections`` (setWebhook's, default 40);
- a non-2xx answer, a closed connection or no answer within ``timeout`` is tried again
  after ``retry_first`` · 2^(n-1) clock seconds (1, 2, 4 …), at most ``retry_cap``, or after
  the answer's ``Retry-After``;
- every try is recorded (:class:`WebhookAttempt`), answered or not.

Telegram retries at once and then after 2, 4 … 64 s, capped at a random 60–120 s; the fake's
delays are in the emulator's clock, so they pass quickly under a fast test clock.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from tests.fakebot.emulator import FakeTelegram

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"


@dataclass
class WebhookAttempt:
    """One delivery try of an update."""

    update_id: int
    attempt: int  # 1 for the first try of this update
    queue: tuple[str, int]  # ("chat", id) or ("user", id)
    time: float  # the emulator's clock when it was sent
    wall: float  # time.monotonic() when it was sent
    status: int | None = None  # the HTTP answer; None: no answer (connection closed, timeout)
    error: str | None = None  # why there was no answer
    answered_at: float | None = None  # time.monotonic() of the answer (or of giving up)

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300


def queue_of(update: dict) -> tuple[str, int]:
    """The queue an update waits in: a button press its user's, anything else its chat's."""
    if "callback_query" in update:
        return ("user", int(update["callback_query"]["from"]["id"]))
    for kind, payload in update.items():
        if kind == "update_id" or not isinstance(payload, dict):
            continue
        chat = payload.get("chat") or (payload.get("message") or {}).get("chat")
        if chat:
            return ("chat", int(chat["id"]))
        sender = payload.get("from")
        if sender:
            return ("user", int(sender["id"]))
    return ("update", int(update["update_id"]))


class Deliverer:
    """Posts the emulator's queued updates to its webhook (one thread per try in flight)."""

    def __init__(self, fake: FakeTelegram) -> None:
        self.fake = fake
        self.busy: set[tuple[str, int]] = set()
        #: update id → tries so far, and the clock time before which it is not tried again.
        self.tries: dict[int, int] = {}
        self.not_before: dict[int, float] = {}
        self.thread: threading.Thread | None = None
        self.running = False

    # Called with the emulator's lock held -----------------------------------------------
    def start(self) -> None:
        self.running = True  # a thread told to stop and not gone yet carries on
        if self.thread is not None and self.thread.is_alive():
            return
        self.thread = threading.Thread(target=self._loop, name="fakebot-webhook", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.running = False
        self.fake._notify()

    @property
    def idle(self) -> bool:
        return not self.busy

    # The dispatcher thread -----------------------------------------------------------
    def _loop(self) -> None:
        fake = self.fake
        with fake._cond:
            while self.running and fake.webhook_url:
                self._dispatch()
                fake._cond.wait(0.01)  # the clock may move on its own: look again soon

    def _dispatch(self) -> None:
        fake = self.fake
        allowed = fake._allowed or _default_allowed()
        fake._updates = [u for u in fake._updates if set(u) - {"update_id"} <= allowed]
        now = fake.clock()
        heads: dict[tuple[str, int], dict] = {}
        for update in fake._updates:
            heads.setdefault(queue_of(update), update)
        for queue, update in heads.items():
            if len(self.busy) >= fake.webhook_max_connections:
                return
            if queue in self.busy or self.not_before.get(update["update_id"], 0.0) > now:
                continue
            self.busy.add(queue)
            update_id = update["update_id"]
            self.tries[update_id] = self.tries.get(update_id, 0) + 1
            attempt = WebhookAttempt(update_id, self.tries[update_id], queue, now,
                                     time.monotonic())
            fake.webhook_log.append(attempt)
            fault = fake._webhook_faults.pop(0) if fake._webhook_faults else None
            body = json.dumps(update).encode()
            url = fake.webhook_route(update) if fake.webhook_route else fake.webhook_url
            threading.Thread(target=self._post, args=(attempt, body, url,
                                                      fake.webhook_secret, fault),
                             name=f"fakebot-webhook-{update_id}", daemon=True).start()

    # One try, in a thread of its own -------------------------------------------------
    def _post(self, attempt: WebhookAttempt, body: bytes, url: str, secret: str,
              fault: str | None) -> None:
        status: int | None = None
        error: str | None = None
        retry_after: float | None = None
        parts = urlsplit(url)
        headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
        if secret:
            headers[SECRET_HEADER] = secret
        conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port or 80,
                                          timeout=self.fake.webhook_timeout)
        try:
            conn.request("POST", (parts.path or "/") + (f"?{parts.query}" if parts.query
                                                        else ""), body=body, headers=headers)
            if fault == "drop":
                error = "the connection was closed before the answer (fake.drop_webhook)"
            else:
                response = conn.getresponse()
                response.read()
                if fault == "lose":
                    error = "the answer was lost on the way (fake.drop_webhook)"
                else:
                    status = response.status
                    header = response.getheader("Retry-After")
                    if header and header.strip().isdigit():
                        retry_after = float(header)
        except (OSError, http.client.HTTPException) as exc:
            error = f"{type(exc).__name__}: {exc}"
        finally:
            conn.close()
        self._answered(attempt, status, error, retry_after)

    def _answered(self, attempt: WebhookAttempt, status: int | None, error: str | None,
                  retry_after: float | None) -> None:
        fake = self.fake
        with fake._lock:
            attempt.status, attempt.error = status, error
            attempt.answered_at = time.monotonic()
            self.busy.discard(attempt.queue)
            update_id = attempt.update_id
            if attempt.ok:
                fake._updates = [u for u in fake._updates if u["update_id"] != update_id]
                fake._delivered_upto = max(fake._delivered_upto, update_id)
                fake.webhook_done.add(update_id)
                self.not_before.pop(update_id, None)
            else:
                delay = min(fake.webhook_retry_first * 2 ** (attempt.attempt - 1),
                            fake.webhook_retry_cap)
                if retry_after is not None:
                    delay = max(delay, retry_after)
                self.not_before[update_id] = fake.clock() + delay
                fake.webhook_last_error = (int(fake.clock()), error or f"Wrong response from "
                                           f"the webhook: {status}")
            fake._last_activity = time.monotonic()
            fake._notify()


def _default_allowed() -> frozenset[str]:
    from tests.fakebot.emulator import DEFAULT_ALLOWED

    return DEFAULT_ALLOWED
