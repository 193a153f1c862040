"""Each chat's worker, the part of delivery that posts a chat's queue: one notice at a time,
play (board posts, lobbies, panels) before information replies, every group write through
the group's gate (:mod:`chat.group_windows`), and what the network lost tried again with
back-off in its place; an information answer's message id reported (chat/answers.py).

Apart from :mod:`chat.delivery` (what is queued, merged and tracked until it is out:
:class:`~chat.delivery.Delivery`, built on this) because posting is the other half of it: it
takes the queue as it finds it, and how a notice is sent is :mod:`chat.sending`'s."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from telegram.error import NetworkError, RetryAfter, TelegramError

from chat.group_windows import GroupBusy, GroupWindows
from chat.markers import Mark, Ride
from chat.notices import BoardPost, Ephemeral, Notice, Send

log = logging.getLogger(__name__)

#: Tries of one notice whose delivery failed for a passing reason (network, flood wait).
MAX_ATTEMPTS = 6
#: Back-off between them: 1, 2, 4, ... seconds, at most this.
MAX_BACKOFF = 30.0


@dataclass
class Queued:
    """A notice in its chat's queue, and the future its sender waits on."""

    notice: Notice
    #: True once delivered or definitively refused; False if it could not be delivered.
    done: asyncio.Future[bool] = field(default_factory=lambda: asyncio.get_running_loop()
                                       .create_future())
    attempts: int = 0

    @property
    def info(self) -> str | None:
        return self.notice.info if isinstance(self.notice, Send) else None

    def finish(self, delivered: bool) -> None:
        if not self.done.done():
            self.done.set_result(delivered)


class ChatWorkers(GroupWindows):
    """The part of delivery that posts each chat's queue (see the module)."""

    max_attempts: int
    on_answer: Callable[[Hashable, int | None], None]
    on_board_posted: Callable[[float], None]
    _queues: dict[int, deque[Queued]]
    _marks: list[Mark]

    async def _work(self, chat: int) -> None:
        queue = self._queues[chat]
        while queue:
            # Play (board posts, lobbies, panels) before information replies.
            item = next((i for i in queue if i.info is None), queue[0])
            if chat < 0:
                if self._urgent.get(chat):
                    # An ephemeral answer to a press waits for a slot: it goes first.
                    await asyncio.sleep(0.02)
                    continue
                # Every group write (post, lobby edit) counts against the group's limit, and
                # replies leave part of it to play. While the gate is shut, look again after
                # a short nap: something more urgent may have arrived meanwhile.
                gate = self._gate(chat)
                try:
                    wait = await gate.claim(self.reserve_for_play(chat)
                                            if item.info is not None else 0)
                except Exception:  # the shared window cannot be read: wait, never flood
                    log.warning("group %s: its window cannot be read", chat, exc_info=True)
                    wait = 1.0
                if wait > 0:
                    await asyncio.sleep(min(wait, 0.2))
                    continue
            queue.remove(item)
            message = None
            try:
                try:
                    message = await self.sender.deliver(item.notice,
                                                        Ride(self._marks, item.done))
                finally:
                    if chat < 0:
                        await self._gate(chat).done()
                        self._note_group_write(chat)
                        if item.info is None:
                            self._play_writes.setdefault(chat, deque()).append(self.clock())
            except asyncio.CancelledError:
                queue.appendleft(item)  # still owed; the restart's outbox announces it
                raise
            except (NetworkError, RetryAfter) as exc:
                # Telegram neither got nor refused it: try again later, in its place.
                item.attempts += 1
                if item.attempts < self.max_attempts:
                    wait = min(MAX_BACKOFF, 2.0 ** (item.attempts - 1))
                    log.warning("could not deliver %s to chat %s (%s); trying again in %.0f s",
                                type(item.notice).__name__, chat, type(exc).__name__, wait)
                    queue.appendleft(item)
                    await self._nap(wait)
                    continue
                log.error("gave up delivering %s to chat %s after %d tries (%s)",
                          type(item.notice).__name__, chat, item.attempts, type(exc).__name__)
                self._answered(item, None)
                item.finish(False)
            except GroupBusy:  # an ephemeral answer whose 15 seconds ran out waiting
                log.info("group window full: an ephemeral answer to %s was not sent", chat)
                self.sender.ephemeral_refused("busy")
                self._answered(item, None)
                item.finish(True)
            except TelegramError as exc:  # refused for good (bad request, ...)
                log.warning("Telegram refused %s for chat %s: %s", type(item.notice).__name__,
                            chat, type(exc).__name__)
                if isinstance(item.notice, Ephemeral):
                    self.sender.ephemeral_refused("refused")
                self._answered(item, None)
                item.finish(True)
            except Exception:
                log.exception("could not deliver %s", type(item.notice).__name__)
                self._answered(item, None)
                item.finish(False)
            else:
                self._answered(item, message.message_id if message is not None else None)
                if isinstance(item.notice, BoardPost) and item.notice.moved_at is not None:
                    self.on_board_posted(item.notice.moved_at)
                item.finish(True)

    def _answered(self, item: Queued, message_id: int | None) -> None:
        """Report an information answer's first message (chat/answers.py)."""
        notice = item.notice
        if isinstance(notice, Send) and notice.answer is not None:
            try:
                self.on_answer(notice.answer, message_id)
            except Exception:
                log.exception("an answer's message could not be noted")

    async def _nap(self, seconds: float) -> None:
        """Sleep ``seconds`` of the delivery clock (a test's may run faster than real time)."""
        end = self.clock() + seconds
        while (left := end - self.clock()) > 0:
            await asyncio.sleep(min(left, 0.2))
