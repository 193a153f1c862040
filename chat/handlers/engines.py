"""``/engine new|list|token|delete|set``: outside engines (issue 31), managed in the private
chat only (a token is never shown in a group). The logic is :mod:`chat.flow.engines`."""

from __future__ import annotations

from chat.handlers.context import Call, handler
from chat.notices import Send


@handler
async def engine(call: Call) -> None:
    answer = await call.flow.engine_command(call.actor, call.args[:4], private=call.private)
    if answer.secret and not call.private:  # never: the flow shows tokens privately only
        return
    # Written as a plain message (not an information reply that a newer one may replace):
    # a token is shown once.
    call.deliver([Send(call.chat.id, answer.text, thread_id=call.thread,
                       group=not call.private)])
