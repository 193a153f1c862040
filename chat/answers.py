"""Recent information answers in groups: asked again while the answer is still recent, the
bot points to it instead of posting a copy (issue 43).

Forty ``/rules@bot`` from one person used to make the bot post the rules and both pictures up
to four times into the group: the bot amplified the spammer. Now an information command's
answer (:data:`chat.throttle.INFO_COMMANDS`) is remembered per group and topic by what it
shows (its texts and pictures, :func:`answer_key`) for ``KRENDZU_INFO_REPEAT_MINUTES``. The
same answer asked for again in that time is not sent again:

- while the first one is still on its way, nothing (it is about to appear);
- once it is in the group, one short reply to it that points there ("the answer is just
  above"), the first time only; after that, nothing.

A different answer (``/score`` after a move, ``/stats`` of someone else) is a new answer. Only
new answers count against the chat's information budget (``KRENDZU_INFO_PER_CHAT``), so one
person repeating a command cannot use it up for everyone else.

Other replies to commands in a group (a move refused, "you are not playing in this match",
a set-up's answers) are remembered the same way, but per person: forty ``/play@bot`` from a
stranger get one reply and one pointer, while everyone else still gets their own reply.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from chat.caches import TtlCache
from chat.notices import BoardPicture, Drawing, Send

#: Answers remembered at once (the oldest forgotten first).
MAX_ANSWERS = 4096

#: (chat, topic, the person it was for or None for anyone, digest of what it shows).
AnswerKey = tuple[int, int | None, int | None, bytes]


@dataclass(slots=True)
class Answer:
    """One answer given in a group: its first message once sent, and whether a repeat was
    already pointed to it."""

    message_id: int | None = None
    pointed: bool = False


def answer_key(chat_id: int, thread_id: int | None, replies: Sequence[Send], *,
               person: int | None = None) -> AnswerKey | None:
    """What identifies an answer: its chat and topic, the person it is for (``None``: an
    information answer, the same for anyone) and the digest of every text and picture it
    shows; ``None`` if a picture cannot be named (an undescribed drawing: then it is never
    taken for a repeat)."""
    digest = hashlib.blake2b(digest_size=16)
    for send in replies:
        parts: list[object] = [send.text]
        for shown in (send.photo, send.picture, send.hand, send.document, send.animation):
            part = _named(shown)
            if part is _UNNAMED:
                return None
            parts.append(part)
        digest.update(repr(parts).encode())
    return (chat_id, thread_id, person, digest.digest())


_UNNAMED = object()


def _named(shown: object) -> object:
    """A stable name for a picture or file (bytes by their digest)."""
    if shown is None:
        return None
    if isinstance(shown, bytes):
        return hashlib.blake2b(shown, digest_size=16).hexdigest()
    if isinstance(shown, Drawing):
        if shown.key is None:
            return _UNNAMED
        return (shown.draw.__module__, shown.draw.__qualname__, shown.key)
    if isinstance(shown, BoardPicture):
        return repr(shown)  # a frozen view of the position: its repr names it
    if isinstance(shown, tuple):  # (file name, bytes | Drawing), or a hand's cards
        return tuple(_named(part) if isinstance(part, bytes | Drawing) else repr(part)
                     for part in shown)
    return repr(shown)


class RecentAnswers:
    """The answers given in groups in the last ``seconds`` (0: none remembered, every
    request answered anew)."""

    def __init__(self, seconds: float, *, size: int = MAX_ANSWERS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._answers: TtlCache[Hashable, Answer] = TtlCache(seconds, size, clock)

    def get(self, key: AnswerKey | None) -> Answer | None:
        if key is None or self.seconds <= 0:
            return None
        return self._answers.get(key)

    def remember(self, key: AnswerKey | None) -> None:
        """A new answer is on its way (:meth:`sent` learns its message)."""
        if key is not None and self.seconds > 0:
            self._answers.put(key, Answer())

    def sent(self, key: Hashable, message_id: int | None) -> None:
        """Delivery's report on an answer's first message: its id, or ``None`` when it was
        not sent after all (replaced in the queue, refused, failed): then the next request
        is answered anew rather than pointed to nothing."""
        answer = self._answers.get(key)
        if answer is None:
            return
        if message_id is None:
            self._answers.drop(key)
        else:
            answer.message_id = message_id

    def __len__(self) -> int:
        return len(self._answers)
