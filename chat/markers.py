"""The announcement's marker (:class:`chat.notices.Announced`) moved in the write of the
move's last record (issue 39): delivery (chat/delivery.py) keeps each marker beside the
notices it waits for, and the sender (chat/sending.py) lets the record write of the last
of them to reach its record (a panel, a board post, a told note, a dropped panel) move
the marker too, once Telegram took every other one. The marker never passes a notice
Telegram has not taken, and a move costs one write fewer than its records and then the
marker: the records of one move go to the store at about the same time, each from its
own chat's queue, so the marker waits for the last of them to be *sent*, not stored.

A kill after that write and before another record's (of a notice Telegram took) loses
that record (a panel's message id, learnt again when it is pressed; a board post's,
whose successor then leaves it standing; a told note) and tells nothing twice, where the
marker written after every record let the restart tell that one notice again.

In the scaled mode a marker may carry its announcement job's end (:class:`Ending`, a
:class:`chat.jobs.manager.JobEnd`): the record's write that moves the marker then ends the
job as well, one transaction where the marker and the job's end were one more."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from chat.notices import Announced, RecordEnd

T = TypeVar("T")


class Ending(RecordEnd, Protocol):
    """A job's end written inside another write (:class:`chat.jobs.manager.JobEnd`): it
    goes with its marker only until the job is ``withheld`` from ending there (it goes on
    telling newer moves: :meth:`chat.jobs.services.JobServices.deliver`); ``taken`` once a
    write carries it."""

    withheld: bool
    taken: bool


def usable(end: Ending | None) -> Ending | None:
    """``end`` if a write may carry it now (and it is then taken), else ``None``."""
    if end is None or end.withheld:
        return None
    end.taken = True
    return end


@dataclass
class Mark:
    """An announcement's marker waiting for the notices before it."""

    notice: Announced
    waits: list[asyncio.Future[bool]]
    #: Moved already, in the write of the last of its notices' records (:class:`Ride`).
    written: bool = False
    #: Its notices Telegram took, whose records are being written (:meth:`Ride.take`).
    sent: list[asyncio.Future[bool]] = field(default_factory=list)
    #: The job's end that goes with the marker (the scaled mode's announcement job).
    end: Ending | None = None

    def ready_beside(self, own: asyncio.Future[bool]) -> bool:
        """Whether ``own`` is the last of the marker's notices to reach its record, every
        other one out or taken by Telegram: its record's write may move the marker too."""
        return not self.written and any(w is own for w in self.waits) and all(
            w is own or any(w is s for s in self.sent)
            or (w.done() and not w.cancelled() and w.result() is True) for w in self.waits)


class Ride:
    """What one notice's record write may carry: the newest marker of the match whose
    other notices are all out (:meth:`take` before the write, :meth:`written` once it
    committed, so that delivery does not write that marker again)."""

    def __init__(self, marks: list[Mark], own: asyncio.Future[bool]) -> None:
        self._marks = marks
        self._own = own
        self._taken: list[Mark] = []

    def end(self) -> Ending | None:
        """The job's end of the newest marker :meth:`take` took, if it goes with it."""
        newest = max(self._taken, key=lambda m: m.notice.seq, default=None)
        return usable(newest.end) if newest is not None else None

    def take(self, match_id: int) -> int | None:
        """Telegram took this notice, whose record is written now: the marker it moves too
        (``None``: none)."""
        for mark in self._marks:
            if any(w is self._own for w in mark.waits) and self._own not in mark.sent:
                mark.sent.append(self._own)
        self._taken = [m for m in self._marks
                       if m.notice.match_id == match_id and m.ready_beside(self._own)]
        return max((m.notice.seq for m in self._taken), default=None)

    def written(self) -> None:
        for mark in self._taken:
            mark.written = True
        self._taken = []


async def riding(ride: Ride | None, match_id: int,
                 write: Callable[[int | None, Ending | None], Awaitable[T]]) -> T:
    """``write(announced, end)``: a record's write of the match, given the marker it moves
    too (``None``: none) and the job's end that goes with that marker (``None``: none); a
    write that raises moves none, and delivery writes it after."""
    announced = ride.take(match_id) if ride is not None else None
    end = ride.end() if ride is not None and announced is not None else None
    result = await write(announced, end)
    if ride is not None and announced is not None:
        ride.written()
    if end is not None:
        end.committed()
    return result


async def marker_alone(mark: Mark, write: Callable[[Ending | None], Awaitable[None]]) -> None:
    """``write(end)``: the marker's own write (no record's carried it), given the job's end
    that goes with it (``None``: none)."""
    end = usable(mark.end)
    await write(end)
    if end is not None:
        end.committed()


def both(first: RecordEnd | None,
         second: RecordEnd | None) -> Callable[[Any], Awaitable[None]] | None:
    """The writes of two ends in one record's write (a board post's own job's end, and an
    announcement's riding with its marker), each told :meth:`~RecordEnd.committed` by
    its own caller."""
    ends = [end for end in (first, second) if end is not None]
    if len(ends) < 2:
        return ends[0] if ends else None

    async def write(conn: Any) -> None:
        for end in ends:
            await end(conn)
    return write
