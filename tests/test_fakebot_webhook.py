"""The fake Bot API's webhook delivery (tests/fakebot/webhook.py) against a plain HTTP server:
one update at a time per chat and per user's presses, queues in parallel, failures retried,
every try recorded, getUpdates refused while the webhook is set."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.fakebot import FakeTelegram
from tests.fakebot.webhook import SECRET_HEADER, queue_of

pytestmark = pytest.mark.timeout(60)


class Receiver:
    """A webhook endpoint that records what it got and answers as told."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        #: (update, secret header, received at, answered at), in the order answered.
        self.got: list[tuple[dict, str | None, float, float]] = []
        self.fail_once: set[int] = set()
        #: The first update of the group waits for the private chat's first update: the
        #: queues must be served at once.
        self.private_arrived = threading.Event()
        self.group_id = 0

    def handle(self, update: dict, secret: str | None) -> int:
        start = time.monotonic()
        if queue_of(update)[1] > 0 and "message" in update:
            self.private_arrived.set()
        elif queue_of(update) == ("chat", self.group_id):
            assert self.private_arrived.wait(5), "the private chat waited behind the group"
        time.sleep(0.02)
        with self.lock:
            failing = update["update_id"] in self.fail_once
            self.fail_once.discard(update["update_id"])
            self.got.append((update, secret, start, time.monotonic()))
        return 500 if failing else 200


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, str]]:
    target = Receiver()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return None

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status = target.handle(body, self.headers.get(SECRET_HEADER))
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield target, f"http://127.0.0.1:{server.server_address[1]}/hook"
    finally:
        server.shutdown()
        server.server_close()


def test_webhook_delivery_like_telegram(receiver: tuple[Receiver, str]) -> None:
    target, url = receiver
    fake = FakeTelegram()
    fake.webhook_retry_first, fake.webhook_retry_cap = 0.05, 0.2  # real seconds here
    ann, bob = fake.user(1, "Ann"), fake.user(2, "Bob")
    group = fake.group(-100500, "Hooks", members=[ann, bob])
    target.group_id = group.id
    fake.privacy = False
    keyboard = {"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]}
    status, body = fake.handle("sendMessage", {"chat_id": group.id, "text": "pick",
                                               "reply_markup": keyboard})
    assert status == 200
    pick = fake.message(group, body["result"]["message_id"])
    ann.start_bot()
    bob.start_bot()
    for i in range(3):
        ann.send(group, f"group {i}")
        bob.send(group, f"bob {i}")
    ann.send(None, "private")
    ann.press(pick, data="a")
    ann.press(pick, data="a")
    failing = fake.update_log[2]["update_id"]  # a group message
    target.fail_once.add(failing)
    assert fake.handle("setWebhook", {"url": url, "secret_token": "s3cret-token-of-16"})[0] == 200
    fake.wait_until_idle_sync(quiet=0.1, timeout=20)

    # Every update arrived, with the secret; the failed one twice, then not again.
    ids = [u["update_id"] for u, *_ in target.got]
    assert sorted(set(ids)) == [u["update_id"] for u in fake.update_log]
    assert ids.count(failing) == 2 and len(ids) == len(fake.update_log) + 1
    assert {secret for _, secret, *_ in target.got} == {"s3cret-token-of-16"}
    assert [a.status for a in fake.webhook_attempts(failing)] == [500, 200]
    assert fake.webhook_attempts(failing)[1].time >= fake.webhook_attempts(failing)[0].time
    # One queue at a time and in order: each update of a queue went after the answer to the
    # previous one (the failed update held its chat back until its redelivery succeeded).
    by_queue: dict[tuple[str, int], list[tuple[dict, float, float]]] = {}
    for update, _, start, end in target.got:
        by_queue.setdefault(queue_of(update), []).append((update, start, end))
    assert set(by_queue) == {("chat", group.id), ("chat", ann.id), ("chat", bob.id),
                             ("user", ann.id)}
    for queue, got in by_queue.items():
        for (_, _, end), (_, start, _) in itertools.pairwise(got):
            assert end <= start, queue
        order = [u["update_id"] for u, *_ in got]
        assert order == sorted(order), queue
    info = fake.handle("getWebhookInfo", {})[1]["result"]
    assert info["url"] == url and info["pending_update_count"] == 0
    assert "500" in info["last_error_message"]

    # getUpdates is refused while a webhook is set, as Telegram does.
    status, body = fake.handle("getUpdates", {"timeout": 0})
    assert status == 409 and "webhook is active" in body["description"]
    assert fake.handle("deleteWebhook", {})[0] == 200
    ann.send(None, "after")
    status, body = fake.handle("getUpdates", {"timeout": 0})
    assert status == 200 and body["result"][-1]["message"]["text"] == "after"
    fake.stop()


def test_a_dropped_connection_is_a_failed_try(receiver: tuple[Receiver, str]) -> None:
    target, url = receiver
    fake = FakeTelegram()
    fake.webhook_retry_first = 0.05
    ann = fake.user(1, "Ann")
    fake.drop_webhook(answered=True)
    fake.drop_webhook(answered=False)
    fake.handle("setWebhook", {"url": url})
    ann.start_bot()
    fake.wait_until_idle_sync(quiet=0.1, timeout=20)
    tries = fake.webhook_attempts()
    assert [(a.status, a.error is not None) for a in tries] == [
        (None, True), (None, True), (200, False)]
    assert len({a.update_id for a in tries}) == 1
    time.sleep(0.1)  # the closed connection's request is still answered by the server
    with target.lock:
        assert [secret for _, secret, *_ in target.got] == [None] * len(target.got)
        assert len(target.got) >= 2
    bad = fake.handle("setWebhook", {"url": url, "secret_token": "no spaces allowed"})
    assert bad[0] == 400
    fake.stop()
