"""Updates of one chat in the order they arrived; different chats at the same time.

python-telegram-bot's ``concurrent_updates(True)`` runs every update as soon as it arrives,
so a ``/new`` followed at once by three ``/add`` could be handled out of order (an ``/add``
finding no lobby yet). :class:`ChatOrderedProcessor` is PTB's extension point for this,
:class:`telegram.ext.BaseUpdateProcessor`: it keeps PTB's bound on updates in progress and adds
one FIFO lock per chat (per user for updates without a chat). A chat whose updates pile up
(someone flooding it) has the excess dropped, so one chat can never hold every slot.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

from telegram import Update
from telegram.ext import BaseUpdateProcessor

log = logging.getLogger(__name__)

#: Updates of one chat waiting behind the one in progress; more are dropped.
MAX_WAITING_PER_CHAT = 32


def chat_key(update: object) -> tuple[str, int] | None:
    """What orders an update: its chat, else its user; ``None`` for neither."""
    if not isinstance(update, Update):
        return None
    if update.effective_chat is not None:
        return ("chat", update.effective_chat.id)
    if update.effective_user is not None:
        return ("user", update.effective_user.id)
    return None


class ChatOrderedProcessor(BaseUpdateProcessor):
    """At most ``max_concurrent_updates`` at once; one chat's updates one after another."""

    def __init__(self, max_concurrent_updates: int = 256, *,
                 max_waiting: int = MAX_WAITING_PER_CHAT) -> None:
        super().__init__(max_concurrent_updates)
        self.max_waiting = max_waiting
        #: chat → (its lock, updates holding or waiting for it). Only busy chats are here.
        self._chats: dict[tuple[str, int], tuple[asyncio.Lock, int]] = {}
        self.dropped = 0

    async def initialize(self) -> None:
        """Nothing to set up."""

    async def shutdown(self) -> None:
        """Nothing to release."""

    async def do_process_update(self, update: object, coroutine: Awaitable[Any]) -> None:
        key = chat_key(update)
        if key is None:
            await coroutine
            return
        lock, users = self._chats.get(key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        if users > self.max_waiting:
            self.dropped += 1
            log.warning("%s %s: %d updates waiting, one more dropped", key[0], key[1], users)
            if asyncio.iscoroutine(coroutine):
                coroutine.close()  # never awaited: no "was never awaited" warning
            return
        self._chats[key] = (lock, users + 1)
        try:
            async with lock:
                await coroutine
        finally:
            lock, users = self._chats[key]
            if users <= 1:
                del self._chats[key]
            else:
                self._chats[key] = (lock, users - 1)

    @property
    def busy_chats(self) -> int:
        return len(self._chats)
