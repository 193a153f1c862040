"""What the SQL backends share and that knows no SQL: conversions of stored values, the
statistics a finished match adds, and the checks a call makes before it writes.

``storage.sqlite`` and ``storage.postgres`` store the same values the same way (settings and
lobby states as JSON text, times as Unix seconds), so a value written by one reads the same
through the other; keeping the conversions here keeps them from drifting apart.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from krendzu import DEAL_PRESETS, Settings
from krendzu.stats import SeatStatistics
from storage.base import SeatRow, SeatSpec, StatsRow

log = logging.getLogger("storage")

#: Telegram redelivers an update for at most a day; keep ids two days, then forget them.
UPDATE_TTL_SECONDS = 2 * 24 * 3600
#: Prune processed update ids every this many insertions (inside that write).
PRUNE_EVERY = 512
#: Seeds are 0 .. 2**63 - 1 (a signed 64-bit column in either database).
MAX_SEED = 2**63


def at(ts: float) -> datetime:
    """A stored time (Unix seconds) as a UTC datetime."""
    return datetime.fromtimestamp(ts, UTC)


def at_or_none(ts: float | None) -> datetime | None:
    return None if ts is None else at(ts)


def settings_json(settings: Settings) -> dict[str, Any]:
    """A match's settings as stored: the engine's JSON plus the deal preset's name."""
    data = settings.to_json()
    data["preset"] = settings.preset
    return data


def settings_from(table: str, data: dict[str, Any]) -> Settings:
    """Stored settings back (the preset name kept only while it still names that deal)."""
    settings = Settings.from_json(table, data)
    preset = data.get("preset")
    presets = DEAL_PRESETS[settings.table]
    if isinstance(preset, str) and presets.get(preset) == settings.deal:
        return Settings(
            table=settings.table,
            tours=settings.tours,
            exchange_limit=settings.exchange_limit,
            preset=preset,
        )
    return settings


def chat_settings_dump(settings: Settings) -> str:
    """A chat's default settings as stored (JSON text with the table in it)."""
    return json.dumps({"table": settings.table.value, **settings_json(settings)})


def chat_settings_load(text: str | None) -> Settings | None:
    if text is None:
        return None
    data = json.loads(text)
    return settings_from(data.pop("table"), data)


def panel_lines_dump(lines: Sequence[str]) -> str:
    return json.dumps(list(lines), ensure_ascii=False)


def panel_lines_load(text: str) -> list[str]:
    """Stored panel lines; anything unreadable reads as none (they are only a courtesy)."""
    try:
        lines = json.loads(text)
    except ValueError:
        return []
    return [str(x) for x in lines] if isinstance(lines, list) else []


def new_seats(seats: Sequence[SeatSpec]) -> tuple[SeatRow, ...]:
    """The rows of a new match's seats, numbered in order."""
    return tuple(SeatRow(i, spec.kind, spec.user_id, spec.level, spec.label(i))
                 for i, spec in enumerate(seats))


def check_new_match(seed: int, thread_id: int | None) -> None:
    """Arguments of ``create_match`` the database would store but nothing could use."""
    if not 0 <= seed < MAX_SEED:
        raise ValueError(f"a seed is in 0..2**63-1, not {seed}")
    if thread_id is not None and thread_id <= 0:
        raise ValueError("a forum topic id is positive")


#: The columns of ``user_stats`` a finished match adds to (``matches`` is counted apart).
STATS_SUMS = ("wins", "draws", "points_scored", "points_conceded", "tours_attacked",
              "tours_defended", "suit_combos", "progression_combos", "own_goals_conceded")
#: The fields of :class:`StatsRow`, each a column of the statistics queries.
STATS_FIELDS = tuple(f.name for f in dataclasses.fields(StatsRow))


def stats_params(user_id: int, chat_id: int, gained: SeatStatistics) -> dict[str, Any]:
    """What a seat's statistics gain (the engine's figures, stored as they are), as named
    parameters: one per column of ``STATS_SUMS`` plus user_id, chat_id and best_tour."""
    return {**dataclasses.asdict(gained), "user_id": user_id, "chat_id": chat_id,
            "wins": int(gained.win), "draws": int(gained.draw)}


def consume_exception(task: asyncio.Task[Any]) -> None:
    """Retrieve the outcome of a shielded task whose caller may have gone (no warnings)."""
    if not task.cancelled() and task.exception() is not None:
        log.debug("storage: call failed: %r", task.exception())
