"""Which matches PostgreSQL said changed, for the announcements waiting for their posts:
such a job looks for the moves stored meanwhile when one is notified rather than every
quarter of a second (:func:`chat.jobs.tasks._announce`'s ``more``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from storage.postgres import PostgresStore

#: An announcement waiting for its posts looks for newer moves in the store at least this
#: often (in seconds) even when no notification said one came (:meth:`MatchNews.watch`).
LOOK_ANYWAY = 1.0


class MatchNews:
    """The changes PostgreSQL's ``NOTIFY`` reported of the matches watched (every stored
    move is notified in its own transaction, :meth:`PostgresStore.listen`), counted by
    match while it is watched: one per job worker process."""

    def __init__(self) -> None:
        self._counts: dict[int, int] = {}
        self._listening = False

    async def watch(self, store: PostgresStore, match_id: int) -> Callable[[], bool]:
        """Follow the match's changes until :meth:`forget` (the store's listener started on
        the first watch); returns a check: whether a newer move may have been stored since
        it last said so. It says so at least every :data:`LOOK_ANYWAY` seconds as well: a
        notification lost (the listener's connection down) costs a newer move only its own
        job's wait, never its announcement."""
        if not self._listening:
            self._listening = True
            await store.listen(self._changed)
        self._counts.setdefault(match_id, 0)
        loop = asyncio.get_running_loop()
        seen, looked = self._counts[match_id], loop.time()

        def changed() -> bool:
            nonlocal seen, looked
            count, now = self._counts.get(match_id, 0), loop.time()
            if count == seen and now - looked < LOOK_ANYWAY:
                return False
            seen, looked = count, now
            return True

        return changed

    def forget(self, match_id: int) -> None:
        """Stop following the match's changes (:meth:`watch`)."""
        self._counts.pop(match_id, None)

    def _changed(self, match_id: int) -> None:
        if match_id in self._counts:
            self._counts[match_id] += 1
