"""The base of the store written once (:mod:`storage.store`): the connector a backend
supplies, the hooks where one backend does more, the update ledger, and the helpers every
part of the shared SQL uses (a match's rows).

A backend (``storage.sqlite``, ``storage.postgres``) supplies the four ways in
(``_query``, ``_modify``, ``_in_read``, ``_in_write``), its
:class:`~storage.queries.Dialect` and :class:`~storage.base.StoreBackend`'s lifecycle. The
hooks do nothing here; PostgreSQL's do, inside the same transaction: it locks a match across
processes (``_lock_match``, ``row_lock``), tells the other processes of a change
(``_notify``, ``_revoke``) and defers the scaled mode's jobs with a move (``_after_append``,
``_after_arm``, ``_after_computer``). SQLite's single writer needs none of them. Four
operations the bot calls are hooks too, with what a backend that keeps nothing answers:
SQLite keeps the group writes (``note_group_write``, ``group_writes``), PostgreSQL counts an
update's failed tries for every webhook worker (``update_state``, ``count_update_failure``).
"""

from __future__ import annotations

import abc
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from storage import queries as q
from storage import rows
from storage.base import DuplicateUpdate, MatchRow, NotFound, StoreBackend
from storage.common import PRUNE_EVERY
from storage.connector import Params, Row, Tx

T = TypeVar("T")
R = TypeVar("R")
#: Work inside one transaction the connector opened (it commits or rolls back after).
TxOp = Callable[[Tx], Awaitable[T]]
#: A caller's own write inside a store's write transaction, given the backend's connection
#: (:meth:`SqlCore._also`).
Also = Callable[[Any], Awaitable[None]]


class SqlCore(StoreBackend):
    """The connector and the hooks of the shared SQL (see the module's docstring)."""

    #: How this backend's database spells what the two spell differently.
    dialect: q.Dialect
    _clock: Callable[[], float]
    _update_ttl: float
    #: Update ids remembered since the ledger was last pruned (:meth:`_remember_update`).
    _inserts_since_prune: int

    # The connector: four ways in -----------------------------------------------------------

    @abc.abstractmethod
    async def _query(self, sql: str, params: Params,
                     map_row: Callable[[Row], R]) -> list[R]:
        """One query as one read (one snapshot), each row mapped by ``map_row``."""

    @abc.abstractmethod
    async def _modify(self, sql: str, params: Params) -> int:
        """One statement as one write; how many rows it changed."""

    @abc.abstractmethod
    async def _in_read(self, op: TxOp[T]) -> T:
        """``op`` in one read transaction, so that its queries agree."""

    @abc.abstractmethod
    async def _in_write(self, op: TxOp[T]) -> T:
        """``op`` in one write transaction, committed before this returns; an exception
        rolls all of it back."""

    # Hooks: what one backend does more inside the same transaction ---------------------------

    async def _lock_match(self, tx: Tx, match_id: int) -> None:
        """Order this write after every other write of the match under way (any process)."""

    async def _notify(self, tx: Tx, match_id: int) -> None:
        """Tell the other processes of the match's change at COMMIT (never if rolled back)."""

    async def _revoke(self, tx: Tx, engine_id: int) -> None:
        """Tell the other processes that the engine's token is no longer good, at COMMIT."""

    async def _after_append(self, tx: Tx, match_id: int, seq: int) -> None:
        """Move ``seq`` of the match is stored by this transaction."""

    async def _after_arm(self, tx: Tx, match_id: int, seq: int, deadline: float,
                         seconds: int) -> None:
        """The match's turn timer is armed for move ``seq`` by this transaction."""

    async def _after_computer(self, tx: Tx, match_id: int, seq: int | None) -> None:
        """A computer may be the one to make move ``seq`` (``None``: the one after the last
        stored move), though no move was stored."""

    async def _clear_failures(self, tx: Tx, update_id: int) -> None:
        """The update is processed: forget its failed tries, where they are counted."""

    async def _also(self, tx: Tx, also: Also) -> None:
        """The caller's own write inside this transaction (the scaled mode's job's end:
        procrastinate's query, on the driver's connection); here given the transaction."""
        await also(tx)

    # What one backend keeps more, asked by the bot ------------------------------------------

    async def note_group_write(self, chat_id: int, at: float) -> None:
        """The bot wrote in group ``chat_id`` at ``at`` (a post or an edit: what Telegram
        counts against the group's 20 a minute). Kept by the embedded mode so that a
        restarted process starts each group's window from it (:meth:`group_writes`); the
        scaled mode keeps its windows in storage/pg_windows.py instead, and keeps nothing
        here."""
        return None

    async def group_writes(self, since: float) -> list[tuple[int, float]]:
        """``(chat_id, at)`` of the group writes noted at ``since`` or later, oldest first
        (:meth:`note_group_write`)."""
        return []

    # Matches' rows -------------------------------------------------------------------------

    async def _match_rows(self, tx: Tx, where: str, params: Params) -> list[MatchRow]:
        """The matches ``where`` picks, with their seats, inside the caller's transaction."""
        found = await tx.fetchall(
            f"SELECT {self.dialect.match_columns()} FROM matches m {where}", params)
        return [rows.match_row(r) for r in found]

    async def _matches(self, where: str, params: Params = ()) -> list[MatchRow]:
        """The matches ``where`` picks, with their seats and move counts: one query."""
        return await self._query(
            f"SELECT {self.dialect.match_columns()} FROM matches m {where}", params,
            rows.match_row)

    async def _get_match(self, tx: Tx, match_id: int) -> MatchRow:
        found = await self._match_rows(tx, "WHERE m.match_id = ?", (match_id,))
        if not found:
            raise NotFound(f"no match {match_id}")
        return found[0]

    # The update ledger ------------------------------------------------------------------
    # The bot's own update ids are remembered by ``append_move(update_id=...)`` and pruned
    # automatically; in webhook mode (chat/web.py) every update processed is marked too
    # (``mark_update``), so that a copy Telegram delivers again is recognised, and its failed
    # tries are counted where the store keeps count (``update_state``). The rest is for
    # ``python -m storage``, operators and tests.

    async def mark_update(self, update_id: int) -> bool:
        """Remember an update id; False if it was remembered already (a redelivery)."""
        now = self._clock()

        async def work(tx: Tx) -> bool:
            await self._clear_failures(tx, update_id)
            await self._remember_update(tx, update_id, now)
            return True

        try:
            return await self._in_write(work)
        except DuplicateUpdate:
            return False

    async def prune_updates(self, older_than_seconds: float) -> int:
        """Forget update ids processed longer ago than that; returns how many."""
        before = self._clock() - older_than_seconds
        return await self._in_write(lambda tx: self._forget_updates(tx, before))

    async def seen_update(self, update_id: int) -> bool:
        """Whether the update id was processed (read only)."""
        return bool(await self._query(q.SEEN_UPDATE, (update_id,),
            lambda r: r))

    async def update_state(self, update_id: int) -> tuple[bool, int | None]:
        """Whether the update was processed, and how many times it failed so far as the
        store keeps count (``None``: it does not, the one process counts for itself; the
        PostgreSQL store does, for every webhook worker)."""
        return await self._in_read(lambda tx: self._update_state_in(tx, update_id))

    async def _update_state_in(self, tx: Tx, update_id: int) -> tuple[bool, int | None]:
        """:meth:`update_state` inside the caller's read (a request's one read carries it
        for the webhook: :meth:`request_rows`)."""
        return bool(await tx.fetchone(q.SEEN_UPDATE, (update_id,))), None

    async def count_update_failure(self, update_id: int) -> int | None:
        """One more failed try of the update; its count, or ``None`` if the store keeps
        none (see :meth:`update_state`)."""
        return None

    async def _remember_update(self, tx: Tx, update_id: int, now: float) -> None:
        """Add an update id inside the caller's write (``append_move``): DuplicateUpdate if
        it is there already (committed by any process; PostgreSQL waits for one still in
        flight). Every PRUNE_EVERY insertions, forget ids past the TTL."""
        if not await tx.execute(q.REMEMBER_UPDATE, (update_id, now)):
            raise DuplicateUpdate(update_id)
        self._inserts_since_prune += 1
        if self._inserts_since_prune >= PRUNE_EVERY:
            self._inserts_since_prune = 0
            await self._forget_updates(tx, now - self._update_ttl)

    async def _forget_updates(self, tx: Tx, before: float) -> int:
        """Forget the update ids processed before ``before``; how many."""
        return await tx.execute(q.FORGET_UPDATES, (before,))
