"""Setting a match up: ``/new``, ``/join``, ``/leave``, ``/add``, ``/go``, a lobby's ``/cancel``."""

from __future__ import annotations

from chat.flow import visible
from chat.handlers.context import Call, Handler, handler
from chat.handlers.match import leave_match, match_op
from chat.model import InputError


@handler
async def new(call: Call) -> None:
    try:
        outcome = await call.flow.new_lobby(call.chat.id, call.thread, call.actor,
                                            call.args[:10], title=visible(call.chat.title or ""))
    except InputError as exc:
        await call.say(call.tr._(exc.key, **exc.values))
        return
    await call.answer(outcome)


async def lobby_op(call: Call, op: str) -> None:
    """``/join``, ``/leave``, ``/add LEVEL``, ``/go``, ``/cancel`` on the set-up here."""
    chosen = op
    if op == "add":
        word = (call.args or ["normal"])[0]
        # ``/add @NAME``: an outside engine (chat/flow/engines.py); names keep their case.
        chosen = f"add:@{word[1:41]}" if word.startswith("@") else f"add:{word.lower()[:10]}"
    if op == "leave" and not await call.flow.is_set_up(call.chat.id, call.thread):
        await leave_match(call)
        return
    admin = await call.is_admin() if op == "cancel" else False
    await call.answer(await call.flow.lobby_action(call.chat.id, call.thread, call.actor,
                                                   chosen, is_admin=admin,
                                                   update_id=call.update.update_id))


def lobby_command(op: str) -> Handler:
    async def body(call: Call) -> None:
        await lobby_op(call, op)

    body.__name__ = f"lobby_{op}"
    return handler(body)


@handler
async def cancel_any(call: Call) -> None:
    """``/cancel``: the lobby being set up, or else the match being played."""
    if await call.flow.is_set_up(call.chat.id, call.thread):
        await lobby_op(call, "cancel")
    else:
        await match_op(call, "cancel")
