"""The one error handler."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import BadRequest, NetworkError, TelegramError

from chat.handlers.admission import BotContext, reply_tr, services
from chat.handlers.attempt import ATTEMPT
from chat.handlers.replies import say
from chat.services import Services

log = logging.getLogger(__name__)


def worth_retrying(error: BaseException | None) -> bool:
    """Whether processing the update again may succeed: not when the Bot API itself refused
    a call (a bad request, a blocked user): it would refuse the same call again."""
    if isinstance(error, BadRequest):
        return False
    return isinstance(error, NetworkError) or not isinstance(error, TelegramError)


async def on_error(update: object, context: BotContext) -> None:
    """Log the failure by type only (a message may hold a hand) and apologise."""
    if update is None and isinstance(context.error, NetworkError):
        # Fetching updates failed (PTB tries again by itself): one line, no traceback.
        log.warning("getting updates failed (%s); trying again", type(context.error).__name__)
        return
    log.error("handler failed: %s", type(context.error).__name__, exc_info=context.error)
    if not isinstance(update, Update):
        return
    attempt = ATTEMPT.get()
    if (attempt is not None and attempt.update_id == update.update_id
            and worth_retrying(context.error)):
        assert context.error is not None
        attempt.failures.append(context.error)
        attempt.owed = attempt.retry
        if attempt.retry:
            return  # answered 500: Telegram delivers the update again
    await apologise(services(context), update)


async def apologise(svc: Services, update: Update) -> None:
    """Tell the sender that their update failed (and is not tried again). The webhook
    says it itself when it gives up an update that failed before its ledger was read
    (``Attempt.owed``, chat/webhook.py): the tries it had made were not known then."""
    if update.effective_chat is None:
        return
    try:
        tr = await reply_tr(svc, update)
        text = tr._("Sorry, something went wrong on my side. Please try again.")
        if update.callback_query is not None:
            await update.callback_query.answer(text)
        else:
            await say(svc, update, text)
    except Exception:  # the apology itself may fail; nothing more to do
        log.warning("could not send the error reply")
