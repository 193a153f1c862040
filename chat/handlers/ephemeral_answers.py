"""Answers to an ephemeral command (issue 42): ``/play``, ``/pass``, ``/hand``, ``/hint``,
``/exchange``, ``/discard`` and ``/back`` typed in a group reach the bot unseen by anyone
else (a message with ``message_id`` 0, an ``ephemeral_message_id`` and ``receiver_user`` =
the bot), and every answer to its sender goes back the same way: an ephemeral reply in the
group, which they alone see. Never a public reply: its ``message_id`` is 0, so
python-telegram-bot's ``reply_text`` would answer in public, and Telegram refuses a public
reply to an ephemeral message anyway.

What the flow says publicly (a board post after an accepted move, a lobby) stays public.
An older client sends the same command publicly: it is answered as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from chat.ephemeral import EphemeralId
from chat.notices import Ephemeral, Notice, Send


def privately(source: EphemeralId, notices: Sequence[Notice],
              replies: Sequence[Send] = ()) -> list[Notice]:
    """``notices`` with every answer to the command's sender made an ephemeral reply to it:
    the ``replies`` built for it, the information replies to the group (``Send.info``),
    and whatever was addressed to the sender's private chat (a hand, a hint, a refusal
    that names a card). Everything else goes as it was."""
    out: list[Notice] = []
    for notice in notices:
        if isinstance(notice, Send) and (
                any(notice is reply for reply in replies)
                or notice.chat_id == source.receiver_id
                or (notice.chat_id == source.chat_id and notice.info is not None)):
            out.append(reply_to(source, notice))
        else:
            out.append(notice)
    return out


def reply_to(source: EphemeralId, send: Send) -> Ephemeral:
    """``send`` as the ephemeral reply to the command, within its 15 seconds."""
    return Ephemeral(replace(send, chat_id=source.chat_id, group=True, info=None, answer=None,
                             reply_to=None,
                             thread_id=send.thread_id if send.chat_id < 0 else None),
                     source.receiver_id, reply_to=source.ephemeral_message_id)
