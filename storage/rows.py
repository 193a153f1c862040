"""Rows of either database as :mod:`storage.base`'s row types, each read by column name.

SQLite gives ``sqlite3.Row`` with flags as 0 and 1 and a match's seats as JSON text;
PostgreSQL gives dicts with booleans and the seats already decoded. Each function here reads
both, so a column added to a SELECT cannot shift another field, and a value written by one
backend reads the same through the other.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from storage.base import (
    ChatRow,
    Door,
    LobbyRow,
    LobbyStatus,
    MatchRow,
    MatchStatus,
    MovedBy,
    MoveRow,
    PanelMessage,
    PoolRow,
    RatingRow,
    SeatKind,
    SeatRow,
    StandIn,
    StatsRow,
    TimerRow,
    UserRow,
)
from storage.common import (
    STATS_FIELDS,
    at,
    at_or_none,
    chat_settings_load,
    settings_from,
)
from storage.connector import Row
from storage.model import UNKNOWN_MOVER


def match_row(r: Row) -> MatchRow:
    seats = r["seats"]
    if isinstance(seats, str):  # SQLite's json_group_array
        seats = json.loads(seats)
    return MatchRow(
        match_id=r["match_id"],
        chat_id=r["chat_id"],
        thread_id=r["thread_id"] or None,
        settings=settings_from(r["table_kind"], json.loads(r["settings"])),
        seed=r["seed"],
        status=MatchStatus(r["status"]),
        seats=tuple(sorted((seat_row(s) for s in seats or ()), key=_seat_number)),
        move_count=r["move_count"],
        board_message_id=r["board_message_id"],
        created_at=at(r["created_at"]),
        finished_at=at_or_none(r["finished_at"]),
        totals=None if r["totals"] is None else tuple(json.loads(r["totals"])),
        announced_seq=r["announced_seq"],
        conceded_by=r["conceded_by"],
    )


def seat_row(r: Row) -> SeatRow:
    return SeatRow(seat=r["seat"], kind=SeatKind(r["kind"]), user_id=r["user_id"],
                   level=r["level"], label=r["label"])


def _seat_number(seat: SeatRow) -> int:
    return seat.seat


def move_row(r: Row) -> MoveRow:
    # Positional arguments in field order (read by name all the same): a match's whole log
    # is mapped on every load, and keywords cost a third more here.
    return MoveRow(r["match_id"], r["seq"], r["action"], r["update_id"],
                   datetime.fromtimestamp(r["created_at"], UTC),
                   moved_by(r["mover"], r["door"], r["then_card"]))


def moved_by(mover: int | None, door: str | None, then: str | None) -> MovedBy:
    """Who made a stored move (:class:`MovedBy`): a move stored before the doors were
    recorded (no door) is :data:`UNKNOWN_MOVER`, one object for all of them."""
    if door is None:
        return UNKNOWN_MOVER
    return MovedBy(mover, Door(door), then)


def chat_row(r: Row) -> ChatRow:
    return ChatRow(chat_id=r["chat_id"], language=r["language"],
                   default_settings=chat_settings_load(r["default_settings"]),
                   created_at=at(r["created_at"]), updated_at=at(r["updated_at"]),
                   tidy=bool(r["tidy"]), title=r["title"],
                   panels_in_group=None if r["panels"] is None else r["panels"] == "group",
                   bot_admin=None if r["bot_admin"] is None else bool(r["bot_admin"]))


def user_row(r: Row) -> UserRow:
    return UserRow(user_id=r["user_id"], display_name=r["display_name"],
                   language=r["language"], can_write_privately=bool(r["can_write_privately"]),
                   created_at=at(r["created_at"]), updated_at=at(r["updated_at"]))


def timer_row(r: Row) -> TimerRow:
    return TimerRow(match_id=r["match_id"], seconds=r["seconds"], seq=r["seq"],
                    deadline=r["deadline"], reminded=bool(r["reminded"]))


def lobby_row(r: Row) -> LobbyRow:
    return LobbyRow(
        lobby_id=r["lobby_id"], chat_id=r["chat_id"], thread_id=r["thread_id"] or None,
        creator_id=r["creator_id"], state=json.loads(r["state"]), message_id=r["message_id"],
        status=LobbyStatus(r["status"]), match_id=r["match_id"],
        created_at=at(r["created_at"]), updated_at=at(r["updated_at"]),
    )


def stand_in(r: Row) -> StandIn:
    return StandIn(seat=r["seat"], timeouts=r["timeouts"], computer=bool(r["computer"]),
                   resigned=bool(r["resigned"]))


def rating_row(r: Row) -> RatingRow:
    return RatingRow(user_id=r["user_id"], mu=r["mu"], sigma=r["sigma"],
                     rated_matches=r["rated_matches"])


def pool_row(r: Row) -> PoolRow:
    return PoolRow(entry_id=int(r["entry_id"]), user_id=int(r["user_id"]),
                   table=str(r["table_kind"]), rating=int(r["rating"]),
                   joined_at=float(r["joined_at"]), offered=r["offered"])


def stats_row(r: Row) -> StatsRow:
    return StatsRow(**{name: r[name] for name in STATS_FIELDS})


def panel(r: Row) -> PanelMessage:
    """A panel message: its id, whether it is a photo, and the group it is ephemeral in."""
    group = r["in_chat"]
    return PanelMessage(int(r["message_id"]), bool(r["is_photo"]),
                        int(group) if group is not None else None)
