"""The webhook workers' reply outbox (PostgreSQL): what handling an update tells is stored
before the update is answered 200, so a worker killed after its answer loses no reply.

Telegram delivers an update again only while it has no 2xx answer, and a worker cannot
answer *after* its replies are out: a group's messages wait for its 20-a-minute window,
and Telegram sends a chat's next update only after the answer to the previous one. So the
worker answers once the replies are *durable*:

1. while the update is processed, :meth:`chat.delivery.Delivery.run` holds its notices
   (:class:`chat.notices.Held`, set by chat/web.py around the update);
2. :meth:`ReplyOutbox.keep`: the notices, pickled one a row, go into ``reply_outbox`` in
   the transaction that also remembers the update in the ledger
   (:meth:`storage.postgres.PostgresStore.answer_update`); then the update is answered 200;
3. the notices are queued in this process at once (:meth:`chat.delivery.Delivery.track`),
   and each row is deleted once its notice is out: in the transaction of the worker's next
   update's answer (step 2), or within :data:`ACK_DELAY` by a statement of its own when no
   update comes (in batches, :meth:`ReplyOutbox._acks`). A worker busy with updates thus
   writes one transaction an update, not two.

A row belongs to the worker that wrote it, known alive by the advisory lock it holds for
its whole life (:meth:`storage.postgres.PostgresStore.claim_reply_owner`). A killed worker's
connection closes and its lock is gone: every worker looks each :data:`SWEEP_SECONDS` for
rows whose owner's lock is free (:meth:`storage.postgres.PostgresStore.take_orphan_replies`),
takes them over and delivers them, in the order they were stored. So a reply of a worker
killed after its 200 comes within a second or two, from a sibling or from its own
successor. A redelivered copy of an answered update is answered 200 unprocessed (the
ledger): it applies once, and its replies come from the outbox.

What remains: a reply delivered but not yet deleted when the worker dies is sent again (at
most :data:`ACK_DELAY`: the next update's answer, or the batch's delete); a change stored
with its update id and then the worker killed before the outbox's write (the handler's own
few milliseconds) leaves the redelivered update answered as processed without its replies
(the scaled mode's moves are told by their announcement job, deferred in the move's own
transaction, so not they).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import pickle
from collections.abc import Sequence
from dataclasses import MISSING, fields, is_dataclass
from typing import Any

from chat.delivery import Delivery
from chat.notices import Notice
from storage.postgres import PostgresStore

log = logging.getLogger(__name__)

#: How often a worker looks for the rows of dead workers.
SWEEP_SECONDS = 1.0
#: Most rows deleted in one statement (delivered rows are deleted in batches).
ACK_BATCH = 500
#: Seconds a delivered row may wait to be struck off with the next update's answer before
#: it is struck off alone (a worker killed meanwhile has it sent again by a sibling).
ACK_DELAY = 0.5


class ReplyOutbox:
    """One webhook worker's side of the outbox (started by :func:`start_outbox`)."""

    def __init__(self, store: PostgresStore, delivery: Delivery, owner: int) -> None:
        self.store = store
        self.delivery = delivery
        #: This worker's number in ``reply_outbox`` (alive while its lock is held).
        self.owner = owner
        self._delivered: list[int] = []
        #: :data:`ACK_DELAY` of this worker.
        self.ack_delay = ACK_DELAY
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._sweeps(), name="reply outbox sweep"),
                       asyncio.create_task(self._acks(), name="reply outbox acks")]

    async def keep(self, update_id: int, notices: Sequence[Notice]) -> None:
        """Store the update's notices with its ledger row, striking off the rows delivered
        since the last such write (one transaction), then queue them. Raises if they could
        not be stored (nothing is queued then)."""
        blobs = [pickle.dumps(n, protocol=pickle.HIGHEST_PROTOCOL) for n in notices]
        acks, self._delivered = self._delivered[:ACK_BATCH], self._delivered[ACK_BATCH:]
        try:
            ids = await self.store.answer_update(update_id, self.owner, blobs, delivered=acks)
        except BaseException:
            self._delivered[:0] = acks  # struck off later, alone
            raise
        self.send(list(zip(ids, notices, strict=True)))

    def send(self, rows: Sequence[tuple[int, Notice]]) -> None:
        """Queue stored notices; each row is deleted once its notice is out."""
        if not rows:
            return
        futures = self.delivery.track([n for _, n in rows])
        for (reply_id, _), future in zip(rows, futures, strict=True):
            future.add_done_callback(functools.partial(self._out, reply_id))

    def _out(self, reply_id: int, future: asyncio.Future[bool]) -> None:
        if future.cancelled():  # the process stops: the row waits for the next owner
            return
        if future.result() is not True:
            # Tried and given up (the delivery logged why): trying once more in another
            # process would meet the same; the row goes as a delivered one does.
            log.warning("reply %d could not be delivered; it is given up", reply_id)
        self._delivered.append(reply_id)
        self._wake.set()

    async def _acks(self) -> None:
        """Delete the delivered rows that no update's answer took along within
        :attr:`ack_delay`, in batches (one statement for whatever came out meanwhile)."""
        while True:
            await self._wake.wait()
            self._wake.clear()
            if len(self._delivered) < ACK_BATCH:
                await asyncio.sleep(self.ack_delay)
            await self._flush()

    async def _flush(self) -> None:
        while self._delivered:
            batch, self._delivered = self._delivered[:ACK_BATCH], self._delivered[ACK_BATCH:]
            try:
                await self.store.drop_replies(batch)
            except Exception:  # kept: sent again only if this worker dies before a retry
                log.warning("delivered replies could not be struck off the outbox",
                            exc_info=True)
                self._delivered[:0] = batch
                await asyncio.sleep(1.0)

    async def _sweeps(self) -> None:
        while True:
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("the reply outbox could not be swept", exc_info=True)
            await asyncio.sleep(SWEEP_SECONDS)

    async def sweep(self) -> int:
        """Take over the rows of dead workers and queue them; how many. First, if this
        worker's own lock was lost with its connection, claim a new number (the rows
        written under the old one are then taken over like a dead worker's: some may be
        sent twice, none lost)."""
        if not await self.store.holds_reply_owner():
            log.warning("reply outbox: the owner lock was lost with its connection; "
                        "claiming a new one")
            self.owner = await self.store.claim_reply_owner()
        rows = await self.store.take_orphan_replies(self.owner)
        if not rows:
            return 0
        kept: list[tuple[int, Notice]] = []
        for reply_id, update_id, blob in rows:
            try:
                kept.append((reply_id, read_kept(blob)))
            except Exception:  # written by another version of the bot: cannot be read
                log.warning("reply %d of update %d cannot be read; it is dropped",
                            reply_id, update_id, exc_info=True)
                self._delivered.append(reply_id)
                self._wake.set()
        log.warning("reply outbox: %d replies of %d updates taken over from stopped "
                    "workers", len(rows), len({u for _, u, _ in rows}))
        self.send(kept)
        return len(rows)

    async def close(self) -> None:
        """Stop looking; strike off what was delivered (the rest waits for the next owner,
        once this process's lock is gone with its store)."""
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(BaseException):
                await task
        if self._delivered:
            with contextlib.suppress(Exception):
                await self.store.drop_replies(self._delivered)
            self._delivered = []


async def start_outbox(store: object, delivery: Delivery) -> ReplyOutbox | None:
    """The outbox of a webhook worker on PostgreSQL (started); ``None`` on SQLite, whose one
    process delivers as before."""
    if not isinstance(store, PostgresStore):
        return None
    outbox = ReplyOutbox(store, delivery, await store.claim_reply_owner())
    outbox.start()
    return outbox


def read_kept(blob: bytes) -> Notice:
    """A notice as :meth:`ReplyOutbox.keep` pickled it, perhaps by the release before a
    deploy: the fields its class gained since are set to their defaults (a slotted
    dataclass restores the values it had and leaves a newer field unset), so that a reply
    waiting across a deploy still goes out rather than fail where delivery reads it."""
    notice: Notice = pickle.loads(blob)
    return completed(notice)


def completed(kept: Any) -> Any:
    """``kept`` (a notice, or a dataclass inside one) with every field it lacks set to its
    default (see :func:`read_kept`)."""
    if not is_dataclass(kept) or isinstance(kept, type):
        return kept
    for spec in fields(kept):
        if hasattr(kept, spec.name):
            completed(getattr(kept, spec.name))
        elif spec.default is not MISSING:
            object.__setattr__(kept, spec.name, spec.default)
        elif spec.default_factory is not MISSING:
            object.__setattr__(kept, spec.name, spec.default_factory())
    return kept

