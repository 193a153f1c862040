"""PostgreSQL's reads of one snapshot: a match with its move log in one statement, and what
an announcement job reads before it tells a match's news (:func:`read_for_announcement`,
called by :meth:`storage.postgres.PostgresStore.announce_reads`), pipelined in one
read-only transaction. Kept apart from the driver, which stays under the package's
800 lines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import DictRow

from storage import queries as q
from storage.base import (
    ChatRow,
    MatchRow,
    MoveRow,
    NotFound,
    StandIn,
    StoredMatch,
    TimerRow,
    UserRow,
    rebuild_game,
)
from storage.common import at, panel_lines_load
from storage.connector import format_style
from storage.queries import POSTGRES
from storage.rows import chat_row, match_row, moved_by, stand_in, timer_row, user_row

Conn = AsyncConnection[DictRow]
Row = dict[str, Any]


#: A match's row and its whole move log, as arrays: one statement, one snapshot.
MATCH_AND_MOVES = (
    f"SELECT {POSTGRES.match_columns()}, log.* FROM matches m, LATERAL ("
    "SELECT array_agg(seq ORDER BY seq) AS log_seq, "
    "array_agg(action ORDER BY seq) AS log_action, "
    "array_agg(update_id ORDER BY seq) AS log_update, "
    "array_agg(created_at ORDER BY seq) AS log_at, "
    "array_agg(mover ORDER BY seq) AS log_mover, "
    "array_agg(door ORDER BY seq) AS log_door, "
    "array_agg(then_card ORDER BY seq) AS log_then "
    "FROM moves WHERE moves.match_id = m.match_id) AS log "
    "WHERE m.match_id = %s")
#: What was told of a match (its keys) and its ``announced`` marker (the key NULL).
TOLD_AND_ANNOUNCED = ("SELECT key, seq FROM told WHERE match_id = %(m)s UNION ALL "
                       "SELECT NULL, announced_seq FROM matches WHERE match_id = %(m)s")


def match_and_log(r: Row) -> tuple[MatchRow, list[MoveRow]]:
    """A row of :data:`MATCH_AND_MOVES`: the match's row and its moves."""
    match_id = int(r["match_id"])
    log = zip(r["log_seq"] or [], r["log_action"] or [], r["log_update"] or [],
              r["log_at"] or [], r["log_mover"] or [], r["log_door"] or [],
              r["log_then"] or [], strict=True)
    return match_row(r), [MoveRow(match_id, seq, action, update, at(created),
                                  moved_by(mover, door, then))
                          for seq, action, update, created, mover, door, then in log]


@dataclass(frozen=True, slots=True)
class AnnounceReads:
    """What :func:`read_for_announcement` read, in one snapshot."""

    told: dict[str, int]
    announced: int
    stored: StoredMatch
    timer: TimerRow | None
    stand_ins: dict[int, StandIn]
    users: dict[int, UserRow]
    chat: ChatRow | None
    #: The move lines each player's newest panel shows, by user id (none: no lines).
    panel_lines: dict[int, list[str]]


async def read_for_announcement(conn: Conn, match_id: int) -> AnnounceReads:
    async with conn.pipeline(), conn.transaction():
        await conn.execute("SET TRANSACTION READ ONLY")
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (match_id,))
        told = await conn.execute(TOLD_AND_ANNOUNCED, {"m": match_id})
        match = await conn.execute(MATCH_AND_MOVES, (match_id,))
        timer = await conn.execute(format_style(q.GET_TIMER), (match_id,))
        stand_ins = await conn.execute(format_style(q.GET_STAND_INS), (match_id,))
        users = await conn.execute(
            f"SELECT {q.USER_COLUMNS} FROM users WHERE user_id IN "
            "(SELECT user_id FROM seats WHERE match_id = %s)", (match_id,))
        chat = await conn.execute(
            f"SELECT {q.CHAT_COLUMNS} FROM chats WHERE chat_id = "
            "(SELECT chat_id FROM matches WHERE match_id = %s)", (match_id,))
        panels = await conn.execute(
            "SELECT user_id, lines FROM panel_lines WHERE match_id = %s", (match_id,))
        told_rows = await told.fetchall()
        match_found = await match.fetchone()
        timer_found = await timer.fetchone()
        stand_in_rows = await stand_ins.fetchall()
        user_rows = await users.fetchall()
        chat_found = await chat.fetchone()
        panel_rows = await panels.fetchall()
    if match_found is None:
        raise NotFound(f"no match {match_id}")
    row, moves = match_and_log(match_found)
    keys = {str(r["key"]): int(r["seq"]) for r in told_rows if r["key"] is not None}
    marker = [int(r["seq"]) for r in told_rows if r["key"] is None]
    return AnnounceReads(
        keys, marker[0] if marker else row.announced_seq,
        StoredMatch(row, tuple(moves), rebuild_game(row, [m.action for m in moves])),
        timer_row(timer_found) if timer_found is not None else None,
        {s.seat: s for s in map(stand_in, stand_in_rows)},
        {u.user_id: u for u in map(user_row, user_rows)},
        chat_row(chat_found) if chat_found is not None else None,
        {int(r["user_id"]): panel_lines_load(r["lines"]) for r in panel_rows})
