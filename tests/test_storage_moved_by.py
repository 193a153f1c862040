"""Each stored move says who made it and through which door (issue 39): written with the
move, read back in :class:`storage.MoveRow`, on both backends; a database made before the
change migrates, and its old moves read as unknown."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import psycopg
from psycopg.rows import dict_row

from krendzu import Match, Settings, Table
from storage import (
    Door,
    MovedBy,
    SeatSpec,
    Store,
    open_store,
)
from storage.common import settings_json
from storage.model import UNKNOWN_MOVER


async def duel(store: Store) -> int:
    for user_id, name in ((1, "Ann"), (2, "Bob")):
        await store.upsert_user(user_id, name)
    stored = await store.create_match(-100, Settings(table=Table.DUEL),
                                      [SeatSpec.human(1), SeatSpec.human(2)], seed=7)
    return stored.match_id


def first_steps(game: Match, count: int) -> list[tuple[int, str]]:
    """The first ``count`` legal steps from ``game``, numbered as the store takes them."""
    trial, steps = game.clone(), []
    for i in range(count):
        step = trial.legal_actions()[0]
        trial.apply(step)
        steps.append((len(game.history) + i + 1, str(step)))
    return steps


async def test_a_move_is_stored_with_its_mover_and_door(store: Store) -> None:
    match_id = await duel(store)
    stored = await store.load_match(match_id)
    [one] = first_steps(stored.game, 1)
    row = await store.append_move(match_id, one[0], one[1],
                                  by=MovedBy(1, Door.BUTTON, "QC"))
    assert row.by == MovedBy(1, Door.BUTTON, "QC")
    # Two steps of one move: both name the mover and door; the second card named (``then``)
    # goes with the last step only.
    stored = await store.load_match(match_id)
    added = await store.append_moves(match_id, first_steps(stored.game, 2),
                                     by=MovedBy(2, Door.TYPED, "AS"))
    assert [r.by for r in added] == [MovedBy(2, Door.TYPED), MovedBy(2, Door.TYPED, "AS")]
    stored = await store.load_match(match_id)
    more = first_steps(stored.game, 1)
    await store.append_moves(match_id, more, by=MovedBy(None, Door.TIMER))
    loaded = await store.load_match(match_id)
    assert [m.by for m in loaded.moves] == [
        MovedBy(1, Door.BUTTON, "QC"), MovedBy(2, Door.TYPED), MovedBy(2, Door.TYPED, "AS"),
        MovedBy(None, Door.TIMER)]
    # Without ``by`` (a caller of the store alone): unknown, as an old row.
    stored = await store.load_match(match_id)
    [last] = first_steps(stored.game, 1)
    assert (await store.append_move(match_id, last[0], last[1])).by == UNKNOWN_MOVER
    assert (await store.load_match(match_id)).moves[-1].by == UNKNOWN_MOVER
    assert Door.BUTTON.from_panel and Door.MINIAPP.from_panel
    assert not any(d.from_panel for d in Door if d not in (Door.BUTTON, Door.MINIAPP))


async def test_an_old_sqlite_file_migrates_and_its_moves_read_as_unknown(
        tmp_path: Path) -> None:
    from storage import sqlite
    from storage.migrations import HISTORY

    path = tmp_path / "old.db"
    conn = await sqlite.connect(str(path))
    try:
        assert await sqlite.migrate(conn, target=HISTORY[-1].version) == HISTORY[-1].version
    finally:
        await conn.close()
    await old_moves_read_as_unknown(str(path), HISTORY[-1].version, upgrade_to=sqlite.LATEST)


async def test_an_old_postgresql_database_migrates_and_its_moves_read_as_unknown(
        empty_pg_url: str) -> None:
    from storage import postgres
    from storage.pg_migrations import HISTORY

    async with await psycopg.AsyncConnection.connect(empty_pg_url, autocommit=True,
                                                       row_factory=dict_row) as conn:
        assert await postgres.migrate(conn, target=HISTORY[-1].version) == \
            HISTORY[-1].version
    await old_moves_read_as_unknown(empty_pg_url, HISTORY[-1].version,
                                    upgrade_to=postgres.LATEST)


async def old_moves_read_as_unknown(target: str, old: int, *, upgrade_to: int) -> None:
    """A database at its history's last version (before the change) gets a match and a
    move written as the old code wrote them (no mover, no door); opening it migrates it,
    the old move reads as unknown and a new one keeps its mover and door."""
    assert upgrade_to > old
    write_as_before(target)
    async with await open_store(target) as store:
        assert await store.schema_version() == upgrade_to
        match_id = (await store.active_match(-100)).match_id  # type: ignore[union-attr]
        stored = await store.load_match(match_id)
        assert [m.by for m in stored.moves] == [UNKNOWN_MOVER]
        [step] = first_steps(stored.game, 1)
        await store.append_move(match_id, step[0], step[1], by=MovedBy(2, Door.MINIAPP))
        moves = (await store.load_match(match_id)).moves
        assert [m.by for m in moves] == [UNKNOWN_MOVER, MovedBy(2, Door.MINIAPP)]


def write_as_before(target: str) -> None:
    """A match and its first move, with the SQL of the schema before the change."""
    match = Match(["u1", "u2"], Settings(table=Table.DUEL), seed=7)
    step = str(match.legal_actions()[0])
    statements: list[tuple[str, tuple[object, ...]]] = [
        ("INSERT INTO chats (chat_id, created_at, updated_at) VALUES (-100, 0, 0)", ()),
        ("INSERT INTO users (user_id, display_name, created_at, updated_at) "
         "VALUES (1, 'Ann', 0, 0), (2, 'Bob', 0, 0)", ()),
        ("INSERT INTO matches (match_id, chat_id, thread_id, table_kind, settings, seed, "
         "status, created_at) VALUES (1, -100, 0, 'duel', ?, 7, 'active', 0)",
         (settings_text(),)),
        ("INSERT INTO seats (match_id, seat, kind, user_id, level, label) VALUES "
         "(1, 0, 'human', 1, NULL, 'u1'), (1, 1, 'human', 2, NULL, 'u2')", ()),
        ("INSERT INTO moves (match_id, seq, action, update_id, created_at) "
         "VALUES (1, 1, ?, NULL, 0)", (step,)),
    ]
    if target.startswith("postgres"):
        with psycopg.connect(target, autocommit=True) as pg:
            for sql, params in statements:
                pg.execute(sql.replace("?", "%s"), params)  # type: ignore[arg-type]
    else:
        with sqlite3.connect(target) as lite:
            for sql, params in statements:
                lite.execute(sql, params)


def settings_text() -> str:
    return json.dumps(settings_json(Settings(table=Table.DUEL)))
