"""The webhook workers' update ledger on PostgreSQL (chat/webhook.py), where it costs no
transaction of its own on a typed move: the ledger's state of an update is read with the
request's one read (``Store.request_rows(..., update_id=)``, :data:`UPDATE_STATE`), and the
update's answer is written in the transaction of the chat's lock that stores the update's
change (:func:`answer_in`, from :meth:`storage.postgres.PostgresStore.hold_chat`). Each was a
transaction of its own: a typed move cost its webhook worker four, it costs two.

Kept apart from the driver, which stays under the package's 800 lines; it imports nothing
of the driver's."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import DictRow

log = logging.getLogger(__name__)

#: Whether update ``:u`` was processed, and its failed tries so far (every worker's).
UPDATE_STATE = (
    "SELECT EXISTS (SELECT 1 FROM processed_updates WHERE update_id = :u) AS seen, "
    "COALESCE((SELECT failures FROM update_failures WHERE update_id = :u), 0) AS failures")


def ledger_state(row: Mapping[str, Any] | None) -> tuple[bool, int | None]:
    """:data:`UPDATE_STATE`'s row (it has one) as ``Store.update_state`` answers it."""
    assert row is not None
    return bool(row["seen"]), int(row["failures"])


@dataclass(slots=True)
class Answer:
    """A webhook update's answer that may ride in its chat's lock's transaction (set in
    :data:`ANSWER` by the webhook while the update is processed).

    It is written there (:func:`answer_in`) when that transaction finds the update in the
    ledger (the change it stores carried the update's id, ``append_move(update_id=)`` and
    the like: a copy of the update is answered as processed from its commit on, whatever
    comes after) and nothing the update tells is held yet (``quiet()``: what an update
    tells is stored with its answer, chat/outbox.py). Then the answer is the ledger's row
    with its mark that the update was answered (``update_answers``) and its failed tries
    forgotten, as ``PostgresStore.answer_update`` writes it; ``written`` once committed.
    The webhook writes it again after the handler only if the update came to tell
    something after all (the same rows, with what it tells)."""

    update_id: int
    #: Whether nothing the update tells is held so far.
    quiet: Callable[[], bool]
    #: Cleared once the update is processed: a task it started, which copied the context,
    #: answers nothing of it.
    open: bool = True
    written: bool = False


#: The answer of the update this task processes (chat/webhook.py sets it).
ANSWER: ContextVar[Answer | None] = ContextVar("krendzu_update_answer", default=None)

#: The answered mark and the failed tries' end, if the ledger has the update (visible to
#: the lock's transaction: stored by it, or committed before); one statement.
ANSWER_IN_LOCK = """
    WITH done AS (SELECT 1 FROM processed_updates WHERE update_id = %(u)s),
    answered AS (INSERT INTO update_answers (update_id, answered_at)
                 SELECT %(u)s, %(now)s FROM done ON CONFLICT (update_id) DO NOTHING),
    cleared AS (DELETE FROM update_failures
                WHERE update_id = %(u)s AND EXISTS (SELECT 1 FROM done))
    SELECT EXISTS (SELECT 1 FROM done) AS done"""


async def answer_in(conn: AsyncConnection[DictRow], now: float) -> Answer | None:
    """This task's update's answer written in the open transaction of ``conn`` (the chat's
    lock's, its block ended without a failure), if it is due (see :class:`Answer`): the
    answer, to be marked written once that transaction commits; else ``None``. In a
    savepoint: if it fails, the block's work commits all the same and the webhook writes
    the answer after the handler, as it did."""
    answer = ANSWER.get()
    if answer is None or not answer.open or answer.written or not answer.quiet():
        return None
    try:
        async with conn.transaction():
            cur = await conn.execute(ANSWER_IN_LOCK, {"u": answer.update_id, "now": now})
            row = await cur.fetchone()
    except Exception:
        log.warning("update %d's answer could not ride in its chat's lock's transaction",
                    answer.update_id, exc_info=True)
        return None
    return answer if row is not None and row["done"] else None
