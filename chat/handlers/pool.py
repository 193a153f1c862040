"""``/playnow [duel]``: the "Play now" pool (issue 40; the logic is chat/flow/pool.py)."""

from __future__ import annotations

from chat.handlers.context import Call, handler


@handler
async def playnow(call: Call) -> None:
    """Join the pool from the private chat, or leave it when already waiting."""
    if not call.private:
        await call.say(call.tr._("Play now works in my private chat: open it and send "
                                 "/playnow."))
        return
    await call.answer(await call.flow.playnow(call.actor, call.args))
