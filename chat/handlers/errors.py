"""The one error handler."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.error import NetworkError

from chat.handlers.context import BotContext, reply_tr, say, services

log = logging.getLogger(__name__)


async def on_error(update: object, context: BotContext) -> None:
    """Log the failure by type only (a message may hold a hand) and apologise."""
    if update is None and isinstance(context.error, NetworkError):
        # Fetching updates failed (PTB tries again by itself): one line, no traceback.
        log.warning("getting updates failed (%s); trying again", type(context.error).__name__)
        return
    log.error("handler failed: %s", type(context.error).__name__, exc_info=context.error)
    if not isinstance(update, Update) or update.effective_chat is None:
        return
    try:
        svc = services(context)
        tr = await reply_tr(svc, update)
        text = tr._("Sorry, something went wrong on my side. Please try again.")
        if update.callback_query is not None:
            await update.callback_query.answer(text)
        else:
            await say(svc, update, text)
    except Exception:  # the apology itself may fail; nothing more to do
        log.warning("could not send the error reply")
