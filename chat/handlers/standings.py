"""``/history``, ``/stats [NAME]`` (or in reply to a player), ``/top [global|pool]``: parse, ask
:class:`chat.standings.Standings`, deliver."""

from __future__ import annotations

from chat.handlers.context import Call, handler
from chat.notices import Send
from chat.standings import EVERYWHERE, POOL_SCOPE, POOL_WORDS, Card


@handler
async def history(call: Call) -> None:
    """``/history``: the chat's recent matches with their results."""
    await call.say(await call.svc.standings.history(call.chat.id, call.thread, call.tr))


@handler
async def stats(call: Call) -> None:
    """``/stats [name]``: a card with a player's figures and rating plot (yours by default;
    in a group the figures of that group, in private over all chats)."""
    user_id = call.actor.user_id
    message = call.update.effective_message
    replied = message.reply_to_message if message is not None else None
    typed = None
    if replied is not None and replied.from_user is not None and not replied.from_user.is_bot:
        user_id = replied.from_user.id
    elif call.args:
        typed = " ".join(call.args).strip().lstrip("@")[:64]
    group = not call.private
    found = await call.svc.standings.stats(user_id, call.tr,
                                           scope=call.chat.id if group else None,
                                           scope_title=call.chat.title or "" if group else "",
                                           typed_name=typed)
    await send_card(call, found)


@handler
async def top(call: Call) -> None:
    """``/top``: the chat's leaderboard; ``/top global``: over all chats; ``/top pool``:
    the players of "Play now" matches, their wins and losses there."""
    word = call.args[0].lower() if call.args else ""
    overall = word in EVERYWHERE
    scope = POOL_SCOPE if word in POOL_WORDS else (
        None if overall or call.private else call.chat.id)
    card = await call.svc.standings.top(call.tr, scope=scope,
                                        scope_title=call.chat.title or "")
    await send_card(call, card)


async def send_card(call: Call, card: Card | str) -> None:
    if isinstance(card, str):
        await call.say(card)
        return
    await call.inform([Send(call.chat.id, card.caption, thread_id=call.thread,
                            photo=card.picture, group=not call.private,
                            info=call.reply_kind())])
