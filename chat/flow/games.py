"""Running matches: the stored match read through a small cache, the finders (/board's
match, /history's, a player's), the outcome and the rating of a finished one, and the move
lines each live private panel shows (stored: any process may build the next panel).

The cache saves rebuilding a match from its moves, nothing more: every read asks the store
for the match's row and its last move number (with its turn timer and stand-ins, in the same
read) and uses the kept match only when that number is the kept one's (another process, or a
write refused here, makes it read afresh).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Hashable, Mapping

from chat.flow.base import (
    chat_key,
    early_key,
    here_key,
    panel_lines_key,
    read_once,
    stand_ins_key,
    timer_key,
    user_key,
    work_memo,
    wrote,
)
from chat.flow.people import People
from chat.ratings import rate_match
from chat.results import resigned_seats
from krendzu import Match, match_outcome
from krendzu import Outcome as MatchOutcome
from storage import MatchRow, MatchStatus, NotFound, Store, StoredMatch

log = logging.getLogger(__name__)


#: A match and the rows of its unit of work, read together by the caller (:meth:`Games.fresh`).
Read = tuple[StoredMatch, Mapping[Hashable, object]]


class Games:
    def __init__(self, store: Store, people: People) -> None:
        self.store = store
        self.people = people
        self._games: dict[int, StoredMatch] = {}

    async def load(self, match_id: int) -> StoredMatch:
        memo = work_memo()
        if memo is not None:  # read afresh: the request's read (:meth:`early`) is older now
            memo.pop(early_key(match_id), None)
        kept = self._games.get(match_id)
        if kept is not None:
            # The timer and stand-ins come along (one read): the move that follows checks
            # and times the turn with them, without asking the store again.
            row, timer, stand_ins = await self.store.match_state(match_id)
            wrote(timer_key(match_id), timer)
            wrote(stand_ins_key(match_id), stand_ins)
            # A step applied to the kept game whose write then failed also shows here.
            if (row.status is MatchStatus.ACTIVE
                    and row.move_count == len(kept.moves) == len(kept.game.history)):
                if row != kept.row:
                    kept = StoredMatch(row, kept.moves, kept.game)
                    self._games[match_id] = kept
                return kept
            self._games.pop(match_id, None)
        stored = await self.store.load_match(match_id)
        if stored.row.status is MatchStatus.ACTIVE:
            self._games[match_id] = stored
        return stored

    async def read_request(self, user_id: int, chat_id: int, thread_id: int | None, *,
                           update_id: int | None = None) -> tuple[bool, int | None] | None:
        """The one read of a request in a group (:meth:`storage.Store.request_rows`): the
        sender's row, the group's, its active match with the turn timer and stand-ins, and
        the match's log only when this process does not hold its moves. All go into the
        unit of work's memo, where the steps of the request find them: the preamble's
        user and title, :meth:`here`, :meth:`early` under the chat's lock, the deadlines.
        With ``update_id`` the update ledger's state of that update comes along and is
        returned (``Store.update_state``'s answer: the webhook's ledger read, in the same
        transaction)."""
        read = await self.store.request_rows(user_id, chat_id, thread_id,
                                             kept=self._kept_moves, update_id=update_id)
        wrote(user_key(user_id), read.user)
        wrote(chat_key(chat_id), read.chat)
        wrote(here_key(chat_id, thread_id), read.match)
        if read.match is not None:
            match_id = read.match.match_id
            wrote(timer_key(match_id), read.timer)
            wrote(stand_ins_key(match_id), read.stand_ins)
            wrote(early_key(match_id), read.stored or read.match)
        return read.update

    def _kept_moves(self, match_id: int) -> int | None:
        kept = self._games.get(match_id)
        return None if kept is None else len(kept.moves)

    async def here(self, chat_id: int, thread_id: int | None) -> MatchRow | None:
        """The row of the group's (topic's) active match: the request's read, else one
        query."""
        return await read_once(here_key(chat_id, thread_id),
                               lambda: self.store.active_match(chat_id, thread_id))

    def early(self, match_id: int) -> StoredMatch | None:
        """The match as the request's one read found it (:meth:`read_request`), taken once,
        if this process has stored none of its moves since: a move is checked on it under
        the chat's lock without reading the match again. It may be older than the lock
        (another process may have stored a move in between): the append then refuses the
        move (its number is taken), and the caller checks it again on the match read
        afresh (:meth:`chat.flow.matches.Matches.play`)."""
        memo = work_memo()
        found = memo.pop(early_key(match_id), None) if memo is not None else None
        if found is None:
            return None
        kept = self._games.get(match_id)
        if isinstance(found, StoredMatch):
            if kept is not None and len(kept.moves) > found.row.move_count:
                return None  # this process stored a move since the read
            if found.row.status is MatchStatus.ACTIVE:
                self._games[match_id] = found
            return found
        row = found
        assert isinstance(row, MatchRow)
        if (kept is None or row.status is not MatchStatus.ACTIVE
                or not row.move_count == len(kept.moves) == len(kept.game.history)):
            return None
        if row != kept.row:
            kept = StoredMatch(row, kept.moves, kept.game)
            self._games[match_id] = kept
        return kept

    async def by_number(self, match_id: int) -> StoredMatch | None:
        """``/export N``: the match numbered N, or None if there is none."""
        try:
            return await self.load(match_id)
        except NotFound:
            return None

    def keep(self, stored: StoredMatch) -> None:
        """A match just created: its first read needs no store."""
        self._games[stored.match_id] = stored

    async def fresh(self, match_id: int, read: Read | None = None) -> StoredMatch:
        """The match as stored now, another process having stored its moves: ``read``, the
        match and the rows its unit of work will ask for (by their keys in its memo:
        :func:`~chat.flow.base.timer_key`, :func:`~chat.flow.base.user_key` ...), when the
        caller has just read them in one snapshot (the scaled mode's announcement job),
        else read afresh."""
        if read is not None:
            for key, value in read[1].items():
                wrote(key, value)
            return read[0]
        self.forget(match_id)
        return await self.load(match_id)

    def forget(self, match_id: int) -> None:
        """The cached match is stale (ended, or a write was refused): read it again."""
        self._games.pop(match_id, None)

    async def find_match(self, chat_id: int, thread_id: int | None,
                         user_id: int) -> StoredMatch | None:
        """The chat's match; in a private chat, the user's match where it is their turn."""
        row = await self.store.active_match(chat_id, thread_id)
        if row is not None or chat_id < 0:
            return await self.load(row.match_id) if row else None
        return None

    async def latest_match(self, chat_id: int, thread_id: int | None,
                           user_id: int) -> StoredMatch | None:
        """The chat's active match, else the newest one the user played in this chat."""
        row = await self.store.active_match(chat_id, thread_id)
        if row is None:
            mine = await self.store.matches_of_user(user_id, status=None, chat_id=chat_id,
                                                    thread_id=thread_id, limit=1)
            row = mine[0] if mine else None
        return await self.load(row.match_id) if row else None

    async def my_matches(self, user_id: int) -> list[StoredMatch]:
        rows = await self.store.matches_of_user(user_id)
        return [await self.load(r.match_id) for r in rows]

    async def plays_in(self, match_id: int, user_id: int) -> bool:
        """Whether the user is seated in this running match: asked before anything keyed by
        a pressed button's match id is remembered (forged ids must allocate nothing)."""
        try:
            row = await self.store.get_match(match_id)
        except NotFound:
            return False
        return row.status is MatchStatus.ACTIVE and row.seat_of(user_id) is not None

    async def result(self, stored: StoredMatch) -> MatchOutcome | None:
        """The engine's outcome of a match played to the end (None before): a trio player
        who resigned ranks last here as in the statistics and ratings, whatever the points
        of the seat the computer played on for them."""
        if not stored.game.is_over:
            return None
        return match_outcome(stored.game, await resigned_seats(self.store, stored.match_id))

    async def rate(self, row: MatchRow, game: Match) -> None:
        try:
            await rate_match(self.store, row, game)
        except Exception:  # a rating must never stop the announcement; a restart retries
            log.exception("match %s: rating failed", row.match_id)

    # The lines each live panel shows --------------------------------------------------------

    async def shown(self, match_id: int, user_id: int) -> list[str]:
        """The lines the player's newest panel shows, read once per unit of work (the
        scaled mode's announcement and board jobs read them with the match, in one
        snapshot)."""
        return list(await read_once(panel_lines_key(match_id, user_id),
                                    lambda: self.store.get_panel_lines(match_id, user_id)))

    async def show(self, match_id: int, lines: Mapping[int, list[str] | None], *,
                   written: Collection[int] = ()) -> None:
        """Each player's newest panel shows ``lines[user]`` (``None``: no panel any more).
        ``written``: the users whose lines the store gets with their panel's own write
        (:func:`chat.flow.broadcast.with_lines`): only this unit of work sees them now."""
        if now := {u: shown for u, shown in lines.items() if u not in written}:
            await self.store.set_panel_lines(match_id, now)
        for user_id, shown in lines.items():
            wrote(panel_lines_key(match_id, user_id), list(shown or []))
