"""What a job needs: a worker's :class:`JobServices` (its bot, store, flow and delivery),
and how a job's notices go out through them (:meth:`JobServices.deliver`)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from telegram.ext import Application

from chat.computer import Thinker
from chat.delivery import Delivery
from chat.flow import Flow
from chat.jobs.core import Jobs, defer_computer
from chat.jobs.manager import JobEnd
from chat.jobs.news import MatchNews
from chat.notices import Announced, BoardPost, ComputerTurn, Notice, Send, untold
from storage.postgres import PostgresStore

log = logging.getLogger(__name__)

#: While an announcement's delivery waits longer than this (a group's window), the job
#: looks for moves stored since and tells them alongside (:meth:`JobServices.deliver`).
EXTEND_AFTER = 0.25
#: What an announcement's ``more`` finds (:meth:`JobServices.deliver`): the notices of the
#: moves stored since, and the told keys read with them (``None``: none read).
Pending = tuple[list[Notice], Mapping[str, int] | None]


@dataclass(slots=True)
class JobServices:
    """A worker's bot, store, flow and delivery (one set per worker process)."""

    jobs: Jobs
    store: PostgresStore
    flow: Flow
    delivery: Delivery
    #: Seconds a computer waits before moving (``KRENDZU_AI_DELAY``).
    ai_delay: float = 0.0
    clock: Callable[[], float] = time.time
    #: Closed with the rest (the computer players' processes, the bot's connections).
    thinker: Thinker | None = None
    application: Application | None = None
    #: The changes of the matches whose announcements wait for their posts.
    news: MatchNews = field(default_factory=MatchNews)

    async def deliver(self, notices: Sequence[Notice],
                      more: Callable[[int], Awaitable[Pending]] | None = None, *,
                      match_id: int | None = None, told: Mapping[str, int] | None = None,
                      end: JobEnd | None = None) -> bool:
        """Send ``notices``; computers' turns become jobs; the announcement marker moves
        only once everything before it went out. False if something could not be
        delivered (the marker stays, so the job's retry announces it again).

        With ``more`` (an announcement): while its delivery still waits (a group's board
        post for its 20-a-minute window), the moves stored since are asked for
        (``more(seq)``: the moves after ``seq``, with the told keys read in the same
        snapshot, or ``None`` when it had to read none) and delivered alongside, as the embedded
        mode does: the next player's panel goes out at once and the waiting board post
        takes the newer position with every line, instead of the match waiting for its
        group's window move by move (one match's announcements run one at a time).

        With ``match_id`` (an announcement of that match): what the store says was
        delivered already is skipped (:data:`chat.notices.Told`; ``told``: the store's
        notes as the caller just read them, for the first notices), and the group's notices
        are the match's board job's (deferred with each move in the move's transaction,
        :func:`chat.jobs.core.defer_move_jobs`), so that no private panel ever waits behind
        a group's post for its window. (An announcement that posted the group's
        board itself, when its window was open, saved the board job's transactions but
        posted some boards twice under the chaos test's kills: a board job for newer moves
        could run while that post was still out. Every group post is the board job's
        again until that is solved.)

        With ``end`` (the job's own end, :class:`~chat.jobs.manager.JobEnd`): written with the
        last marker, when one moves (the first batch's rides in the record of its last
        notice, :mod:`chat.markers`); the job returns right after."""
        marks: list[Announced] = []
        tasks: list[asyncio.Task[list[object]]] = []

        async def hand_over(batch: Sequence[Notice],
                            known: Mapping[str, int] | None = None) -> None:
            if not batch:
                return  # nothing to check against the store's notes
            rest: list[Notice] = []
            if match_id is not None:
                # The group's notices are the board job's, deferred with the move.
                batch, _group = await self.untold(match_id, batch, known)
            newest: dict[int, Announced] = {}
            for notice in batch:
                if isinstance(notice, ComputerTurn):
                    await defer_computer(self.jobs, notice.match_id, notice.seq,
                                         self.ai_delay)
                elif isinstance(notice, Announced):
                    marks.append(notice)
                    if notice.seq >= newest.get(notice.match_id, notice).seq:
                        newest[notice.match_id] = notice
                else:
                    rest.append(notice)
            if tasks:  # a later batch: its markers are written below, after every post
                task = self.delivery.run(rest)
            else:
                # The first batch's newest markers go after its notices, to move in the
                # record of the last of them to be taken by Telegram (chat.markers), with
                # the job's end.
                task = all_of(self.delivery.track([*rest, *newest.values()], end=end))
                first_marks.extend(newest.values())
            if task is not None:
                tasks.append(task)

        first_marks: list[Announced] = []
        await hand_over(notices, told)
        # Only while this job's own notices wait: a newer board merges into the waiting
        # one, so the job ends when that post goes out, however fast the match moves (it
        # holds one of the worker's slots; the match's waiting job tells what follows).
        first = list(tasks)
        while more is not None and marks and first and not all(t.done() for t in first):
            await asyncio.wait(first, timeout=EXTEND_AFTER)
            if all(t.done() for t in first):
                break
            if end is not None:
                if end.taken:
                    break  # the job ends with its first marker's write: nothing after it
                end.withheld = True  # it ends with the newest marker written below
            newer, known = await more(max(m.seq for m in marks))
            await hand_over(newer, known)
        results = [r for t in tasks for r in await t]
        if not all(r is True for r in results):
            return False
        # Each match's newest marker alone of the later batches (the first batch's were
        # written by delivery): the marker never goes back, so the older ones written
        # first changed nothing the newest does not.
        later = [m for m in marks if all(m is not f for f in first_marks)]
        newest_later = {m.match_id: m.seq for m in sorted(later, key=lambda m: m.seq)}
        last = list(newest_later.items())
        for marked, seq in last[:-1]:
            await self.store.set_announced(marked, seq)
        if last and end is not None and end.withheld:
            # The job's last write: its end goes with it.
            await self.store.set_announced(*last[-1], also=end)
            end.committed()
        elif last:
            await self.store.set_announced(*last[-1])
        return True

    async def untold(self, match_id: int, notices: Sequence[Notice],
                     told: Mapping[str, int] | None = None
                     ) -> tuple[list[Notice], list[Send | BoardPost]]:
        """``notices`` without those delivered already (their told keys are in the
        store, or in ``told`` when the caller has just read them), split into the private
        ones and the group's (a group's board post, tour summaries and the summary, whose
        key is the post's last move)."""
        private: list[Notice] = []
        group: list[Send | BoardPost] = []
        if told is None:
            told = await self.store.told(match_id)
        for notice in untold(notices, told):
            if isinstance(notice, Send | BoardPost) and notice.chat_id < 0:
                group.append(notice)
            else:
                private.append(notice)
        return private, group

    async def close(self) -> None:
        await self.delivery.close()
        await self.store.close()
        if self.thinker is not None:
            self.thinker.close()
            await self.thinker.wait_closed()
        if self.application is not None:
            await self.application.shutdown()


def all_of(futures: Sequence[asyncio.Future[bool]]) -> asyncio.Task[list[object]]:
    """A task done when every one of ``futures`` is, with their results."""
    async def gathered() -> list[object]:
        return list(await asyncio.gather(*futures, return_exceptions=True))
    return asyncio.create_task(gathered())


