"""One webhook delivery of an update (:class:`Attempt`), as the handlers see it while it is
processed inside its request (chat/webhook.py); polling has none."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field

from telegram import Update
from telegram.constants import ChatType
from telegram.ext import ApplicationHandlerStop

from chat.flow import Flow


@dataclass(slots=True)
class Attempt:
    """One webhook delivery of an update, being processed inside its request
    (chat/webhook.py).

    PTB hands a handler's exception to the error handler and does not raise it, so the
    webhook learns of a failure here: the failures are recorded, and while Telegram will
    deliver the update again (``retry``) no apology is sent: the redelivery is the answer.

    The update ledger (was the update processed already, how often did it fail) is read
    before the update is processed: by the webhook, or, for an update whose preamble reads
    the request (:func:`reads_request`), with that read (``ledger_due``; one transaction
    where there were two). An update found processed already stops there (``seen``)."""

    update_id: int
    #: Tries after which a failing update is given up (chat/webhook.py's ``MAX_ATTEMPTS``).
    limit: int
    #: Failed tries before this one: this process's count until the ledger is read, then
    #: the store's where it keeps one (every worker's).
    failed: int = 0
    retry: bool = True
    failures: list[BaseException] = field(default_factory=list)
    #: The ledger is to be read with the request's read (:func:`resolve`).
    ledger_due: bool = False
    seen: bool = False
    #: An apology held back by a failure while another try was expected: the webhook says
    #: it if it gives the update up after all (it failed before its ledger was read).
    owed: bool = False

    def read_ledger(self, seen: bool, failed: int | None) -> None:
        """The ledger's answer: processed already, and the failed tries the store counts
        (``None``: it keeps no count, this process's stands)."""
        self.ledger_due = False
        self.seen = seen
        if failed is not None:
            self.failed = failed
        self.retry = self.failed + 1 < self.limit


#: The delivery being processed in this task (set by chat/webhook.py only; polling has none).
ATTEMPT: ContextVar[Attempt | None] = ContextVar("krendzu_attempt", default=None)


def reads_request(update: Update) -> bool:
    """Whether the preamble (:func:`resolve`, from chat/handlers/admission.py) reads the
    request in the store's one read, which then carries the webhook's ledger read: a
    person's update in a group, but for the bot's own membership (left to its handler)."""
    chat = update.effective_chat
    return (update.effective_user is not None and update.my_chat_member is None
            and chat is not None and chat.type != ChatType.PRIVATE)


def with_ledger(flow: Flow, update: Update) -> Callable[[int, int, int | None],
                                                       Awaitable[object]]:
    """The request's one read in a group (``Flow.read_request``), carrying the webhook's
    read of the update's ledger when that is left to it (``ledger_due``): a copy of an
    update processed already stops there (the webhook answers it 200). A polling bot has
    no webhook delivery and reads with ``Flow.read_request`` alone."""

    async def read(user_id: int, chat_id: int, thread_id: int | None) -> None:
        attempt = ATTEMPT.get()
        if attempt is None or attempt.update_id != update.update_id or not attempt.ledger_due:
            await flow.read_request(user_id, chat_id, thread_id)
            return
        ledger = await flow.read_request(user_id, chat_id, thread_id,
                                         update_id=update.update_id)
        if ledger is not None:
            attempt.read_ledger(*ledger)
            if attempt.seen:
                raise ApplicationHandlerStop

    return read
