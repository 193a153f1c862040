"""Setting a match up: ``/new``, ``/join``, ``/leave``, ``/add``, ``/go``, a lobby's ``/cancel``."""

from __future__ import annotations

from telegram import Update

from chat.describe import visible
from chat.handlers.context import (
    BotContext,
    Handler,
    actor_of,
    answer,
    is_admin,
    reply_tr,
    say,
    services,
    thread_of,
)
from chat.handlers.match import leave_match, match_command
from chat.model import (
    InputError,
)


async def new(update: Update, context: BotContext) -> None:
    svc = services(context)
    chat = update.effective_chat
    if chat is None:
        return
    tr = await reply_tr(svc, update)
    try:
        outcome = await svc.flow.new_lobby(chat.id, thread_of(update), actor_of(update),
                                           (context.args or [])[:10],
                                           title=visible(chat.title or ""))
    except InputError as exc:
        await say(svc, update, tr._(exc.key, **exc.values))
        return
    await answer(svc, update, outcome, tr)


def lobby_command(op: str) -> Handler:
    async def handler(update: Update, context: BotContext) -> None:
        svc = services(context)
        chat = update.effective_chat
        if chat is None:
            return
        chosen = op
        if op == "add":
            level = (context.args or ["normal"])[0].lower()[:10]
            chosen = f"add:{level}"
        if op == "leave" and not await svc.flow.is_set_up(chat.id, thread_of(update)):
            await leave_match(svc, update)
            return
        outcome = await svc.flow.lobby_action(chat.id, thread_of(update), actor_of(update),
                                              chosen, is_admin=await is_admin(update, context)
                                              if op == "cancel" else False)
        await answer(svc, update, outcome)

    handler.__name__ = f"lobby_{op}"
    return handler


async def cancel_any(update: Update, context: BotContext) -> None:
    """``/cancel``: the lobby being set up, or else the match being played."""
    svc = services(context)
    chat = update.effective_chat
    if chat is None:
        return
    if await svc.flow.is_set_up(chat.id, thread_of(update)):
        await lobby_command("cancel")(update, context)
    else:
        await match_command("cancel")(update, context)
