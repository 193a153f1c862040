"""The store's contract: rows, the conflict rule, duplicate updates, queries, statistics.

Every test that takes ``store`` or ``store_target`` runs on each backend (SQLite, also in
memory, and PostgreSQL: ``tests/conftest.py``); the ``file_store`` ones look beneath the
interface at SQLite itself (``tests/test_storage_postgres.py`` does that for PostgreSQL)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from krendzu import Match, Settings, Table, export_record, match_outcome
from krendzu.stats import seat_statistics
from storage import (
    ActiveMatchExists,
    CorruptMatch,
    DuplicateUpdate,
    MatchClosed,
    MatchStatus,
    NotFound,
    OperatingFigures,
    PanelMessage,
    SeatKind,
    SeatSpec,
    SequenceConflict,
    StandIn,
    StorageError,
    Store,
    open_store,
    sqlite_path,
)
from storage.sqlite import SqliteStore
from tests.storage_helpers import add_users, play_and_store, seats_for, snapshot

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(params=["file", "memory", "postgres"])
def any_target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Every backend; SQLite also in memory, as most of the other tests use it."""
    if request.param == "postgres":
        url: str = request.getfixturevalue("pg_url")
        return url
    return str(tmp_path / "s.db") if request.param == "file" else ":memory:"


@pytest.fixture
async def store(any_target: str) -> AsyncIterator[Store]:
    s = await open_store(any_target)
    yield s
    await s.close()


@pytest.fixture
async def file_store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    s = await SqliteStore.open(tmp_path / "f.db")
    yield s
    await s.close()


def legal(game: Match, rng: random.Random) -> str:
    return str(rng.choice(game.legal_actions()))


# Chats and users ------------------------------------------------------------------------


async def test_chats_keep_fields_not_given(store: Store) -> None:
    assert await store.get_chat(5) is None
    row = await store.upsert_chat(5, language="ru")
    assert row.language == "ru" and row.default_settings is None
    defaults = Settings(table=Table.TRIO_LONE_DEFENDER, preset="cautious", exchange_limit=1)
    row = await store.upsert_chat(5, default_settings=defaults)
    assert row.language == "ru"
    assert row.default_settings == defaults  # preset name survives the round trip
    row = await store.upsert_chat(5, language="en")
    assert row.language == "en" and row.default_settings == defaults
    assert await store.get_chat(5) == row


async def test_users_keep_fields_not_given(store: Store) -> None:
    assert await store.get_user(1) is None
    row = await store.upsert_user(1, "Ann")
    assert (row.display_name, row.language, row.can_write_privately) == ("Ann", None, False)
    row = await store.upsert_user(1, "Ann B", language="ru", can_write_privately=True)
    assert (row.display_name, row.language, row.can_write_privately) == ("Ann B", "ru", True)
    row = await store.upsert_user(1, "Ann C")
    assert (row.display_name, row.language, row.can_write_privately) == ("Ann C", "ru", True)
    row = await store.upsert_user(1, "Ann C", can_write_privately=False)
    assert not row.can_write_privately and row.language == "ru"


# Creating and loading matches -----------------------------------------------------------


async def test_create_and_load(store: Store) -> None:
    await add_users(store, 1, 2)
    settings = Settings(table=Table.TEAMS, exchange_limit=2)
    seats = [SeatSpec.human(1), SeatSpec.computer(2), SeatSpec.human(2), SeatSpec.computer(4)]
    stored = await store.create_match(-10, settings, seats, seed=99, board_message_id=5)
    row = stored.row
    assert row.status is MatchStatus.ACTIVE and row.move_count == 0 and row.next_seq == 1
    assert row.labels == ["u1", "cpu2", "u2", "cpu4"]
    assert [s.kind for s in row.seats] == [
        SeatKind.HUMAN, SeatKind.COMPUTER, SeatKind.HUMAN, SeatKind.COMPUTER
    ]
    assert row.seat_of(2) == 2 and row.seat_of(3) is None
    assert export_record(stored.game) == export_record(Match(row.labels, settings, seed=99))
    loaded = await store.load_match(stored.match_id)
    assert loaded.row == row
    assert loaded.moves == ()
    assert snapshot(loaded.game) == snapshot(stored.game)
    assert await store.get_chat(-10) is not None  # created on the way


async def test_create_refuses_bad_input(store: Store) -> None:
    await add_users(store, 1)
    with pytest.raises(NotFound):
        await store.create_match(1, Settings(), [SeatSpec.human(1), SeatSpec.human(2)])
    with pytest.raises(ValueError):  # three seats at a duel
        await store.create_match(1, Settings(), seats_for(Table.TEAMS, [1])[:3])
    with pytest.raises(ValueError):  # the same user twice
        await store.create_match(1, Settings(), [SeatSpec.human(1), SeatSpec.human(1)])
    with pytest.raises(ValueError):
        SeatSpec(SeatKind.HUMAN)
    assert await store.active_match(1) is None
    with pytest.raises(NotFound):
        await store.load_match(12345)


async def test_one_active_match_per_chat_or_topic(store: Store) -> None:
    await add_users(store, 1)
    seats = seats_for(Table.DUEL, [1])
    first = await store.create_match(7, Settings(), seats)
    with pytest.raises(ActiveMatchExists):
        await store.create_match(7, Settings(), seats)
    topic = await store.create_match(7, Settings(), seats, thread_id=3)
    other_topic = await store.create_match(7, Settings(), seats, thread_id=4)
    assert (await store.active_match(7)).match_id == first.match_id  # type: ignore[union-attr]
    assert (await store.active_match(7, 3)).match_id == topic.match_id  # type: ignore[union-attr]
    assert (await store.active_match(7, 4)).thread_id == 4  # type: ignore[union-attr]
    assert await store.abandon_match(first.match_id)
    assert not await store.abandon_match(first.match_id)
    assert await store.active_match(7) is None
    again = await store.create_match(7, Settings(), seats)
    assert again.match_id not in (first.match_id, topic.match_id, other_topic.match_id)
    with pytest.raises(MatchClosed):
        await store.append_move(first.match_id, 1, legal(first.game, random.Random(1)))


async def test_one_active_match_enforced_by_the_database(file_store: SqliteStore) -> None:
    await add_users(file_store, 1)
    stored = await file_store.create_match(7, Settings(), seats_for(Table.DUEL, [1]))
    with sqlite3.connect(file_store.path) as raw, pytest.raises(sqlite3.IntegrityError):
        raw.execute(
            "INSERT INTO matches (chat_id, thread_id, table_kind, settings, seed, created_at) "
            "SELECT chat_id, thread_id, table_kind, settings, 1, 0 FROM matches "
            "WHERE match_id = ?",
            (stored.match_id,),
        )


async def test_matches_of_user_across_chats(store: Store) -> None:
    await add_users(store, 1, 2)
    a = await store.create_match(100, Settings(), seats_for(Table.DUEL, [1, 2]))
    b = await store.create_match(200, Settings(table=Table.TEAMS), seats_for(Table.TEAMS, [2]))
    c = await store.create_match(300, Settings(), seats_for(Table.DUEL, [1]))
    await store.abandon_match(c.match_id)
    mine = await store.matches_of_user(1)
    assert [m.match_id for m in mine] == [a.match_id]
    theirs = await store.matches_of_user(2)
    assert [m.match_id for m in theirs] == [b.match_id, a.match_id]  # newest first
    everything = await store.matches_of_user(1, status=None)
    assert [m.match_id for m in everything] == [c.match_id, a.match_id]
    assert [m.status for m in everything] == [MatchStatus.ABANDONED, MatchStatus.ACTIVE]
    assert [m.match_id for m in await store.active_matches()] == [a.match_id, b.match_id]
    assert await store.matches_of_user(3) == []


async def test_board_message(store: Store) -> None:
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    assert await store.board_message(stored.match_id) is None
    assert await store.set_board_message(stored.match_id, 4242, "Ann: 7♥ M13") is None
    assert (await store.get_match(stored.match_id)).board_message_id == 4242
    assert await store.board_message(stored.match_id) == (4242, "Ann: 7♥ M13")
    assert await store.set_board_message(stored.match_id, 4243, "x") == 4242
    with pytest.raises(NotFound):
        await store.set_board_message(999, 1)


async def test_a_new_board_post_replaces_the_old_and_tells_whether_the_chat_is_tidy(
        store: Store) -> None:
    """``post_board`` (one transaction where a write and a read of the chat were): the
    post it replaces, and whether the chat keeps one live board, as its row says
    (``/settings tidy=on|off``)."""
    await add_users(store, 1)
    await store.upsert_chat(-100, tidy=True)
    stored = await store.create_match(-100, Settings(), seats_for(Table.DUEL, [1]))
    assert await store.post_board(stored.match_id, 10, "first") == (None, True)
    assert await store.board_message(stored.match_id) == (10, "first")
    await store.upsert_chat(-100, tidy=False)
    assert await store.post_board(stored.match_id, 11, "second") == (10, False)
    await store.upsert_chat(-100, tidy=True)
    assert await store.post_board(stored.match_id, 12, "third") == (11, True)
    assert (await store.get_match(stored.match_id)).board_message_id == 12
    with pytest.raises(NotFound):
        await store.post_board(999, 1, "x")


async def test_a_board_post_and_a_panel_are_noted_as_told_in_their_own_write(
        store: Store) -> None:
    """``post_board`` and ``set_panel`` note what they tell (``notes``: told keys and their
    move numbers) in the same transaction as the message they remember, so that an
    announcement's post or panel costs one write, and a write that fails notes nothing."""
    await add_users(store, 1)
    await store.upsert_chat(-100, tidy=True)
    stored = await store.create_match(-100, Settings(), seats_for(Table.DUEL, [1]))
    mid = stored.match_id
    await store.note_told(mid, "board", 5)
    await store.post_board(mid, 10, "first", notes={"board": 3, "group": 4})
    # A key's number never goes down, as with note_told.
    assert await store.told(mid) == {"board": 5, "group": 4}
    await store.post_board(mid, 11, "second", notes={"board": 7})
    assert await store.told(mid) == {"board": 7, "group": 4}
    assert await store.set_panel(mid, 1, PanelMessage(20, True),
                                 notes={"panel:1:1": 0}) is None
    assert await store.get_panel(mid, 1) == PanelMessage(20, True)
    assert (await store.told(mid))["panel:1:1"] == 0
    with pytest.raises(NotFound):
        await store.post_board(999, 1, "x", notes={"board": 1})
    assert await store.told(999) == {}


async def test_a_record_write_moves_the_announcement_marker_with_it(store: Store) -> None:
    """``post_board``, ``set_panel`` and ``note_told`` move the match's marker in their own
    transaction (``announced``, issue 39): the last record of a move's announcement and its
    marker are one write. The marker never goes down, and a write that fails moves none."""
    await add_users(store, 1)
    await store.upsert_chat(-100, tidy=True)
    stored = await store.create_match(-100, Settings(), seats_for(Table.DUEL, [1]))
    mid = stored.match_id

    async def marker() -> int:
        return (await store.get_match(mid)).announced_seq

    await store.post_board(mid, 10, "first", notes={"board": 3}, announced=3)
    assert await marker() == 3 and (await store.told(mid))["board"] == 3
    await store.set_panel(mid, 1, PanelMessage(20, True), notes={"panel:5:1": 0},
                          announced=5)
    assert await marker() == 5 and await store.get_panel(mid, 1) == PanelMessage(20, True)
    await store.set_panel(mid, 1, None, announced=4)  # never lower
    assert await marker() == 5 and await store.get_panel(mid, 1) is None
    await store.note_told(mid, "record:7:1", announced=7)
    assert await marker() == 7 and (await store.told(mid))["record:7:1"] == 0
    await store.note_told(mid, "record:8:1")  # without: the marker stays
    assert await marker() == 7
    with pytest.raises(NotFound):
        await store.post_board(999, 1, "x", announced=9)


# The move log and the conflict rule -----------------------------------------------------


async def test_append_and_rebuild(store: Store) -> None:
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]), seed=3)
    game = await play_and_store(store, stored, random.Random(4), max_moves=30)
    loaded = await store.load_match(stored.match_id)
    assert [m.seq for m in loaded.moves] == list(range(1, 31))
    assert [m.action for m in loaded.moves] == [str(a) for a in game.history]
    assert loaded.row.move_count == 30 and loaded.next_seq == 31
    assert snapshot(loaded.game) == snapshot(game)


async def test_stale_sequence_number_conflicts_and_writes_nothing(store: Store) -> None:
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    rng = random.Random(2)
    game = stored.game
    first = legal(game, rng)
    await store.append_move(stored.match_id, 1, first)
    game.apply(first)
    for stale in (1, 3, 0, -1):
        with pytest.raises(SequenceConflict) as info:
            await store.append_move(stored.match_id, stale, legal(game, rng), update_id=50)
        assert info.value.expected == stale and info.value.actual == 2
    loaded = await store.load_match(stored.match_id)
    assert [m.action for m in loaded.moves] == [first]
    # The update id of a refused move was not remembered either.
    assert not await store.seen_update(50)
    await store.append_move(stored.match_id, 2, legal(game, rng), update_id=50)
    assert await store.seen_update(50)


async def test_conflict_rule_under_concurrent_tasks(store: Store) -> None:
    """Many tasks race to append move n+1 from the same stale view: exactly one wins."""
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    rng = random.Random(8)
    game = stored.game
    for _ in range(10):
        candidates = rng.sample(game.legal_actions(), k=min(8, len(game.legal_actions())))
        seq = len(game.history) + 1
        results = await asyncio.gather(
            *(store.append_move(stored.match_id, seq, a) for a in candidates),
            return_exceptions=True,
        )
        winners = [r for r in results if not isinstance(r, BaseException)]
        losers = [r for r in results if isinstance(r, BaseException)]
        assert len(winners) == 1
        assert all(isinstance(r, SequenceConflict) for r in losers)
        game.apply(winners[0].action)
    loaded = await store.load_match(stored.match_id)
    assert snapshot(loaded.game) == snapshot(game)


async def test_conflict_rule_across_connections(store_target: str) -> None:
    """Two stores on one database (as two processes would be): SQLite's write lock, or
    PostgreSQL's per-match advisory lock and the (match, seq) key, decide."""
    one, two = await open_store(store_target), await open_store(store_target)
    try:
        await add_users(one, 1)
        stored = await one.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
        game = stored.game
        rng = random.Random(11)
        for _ in range(15):
            seq = len(game.history) + 1
            acts = rng.sample(game.legal_actions(), k=min(2, len(game.legal_actions())))
            a2 = acts[-1]
            results = await asyncio.gather(
                one.append_move(stored.match_id, seq, acts[0]),
                two.append_move(stored.match_id, seq, a2),
                return_exceptions=True,
            )
            ok = [r for r in results if not isinstance(r, BaseException)]
            assert len(ok) == 1, results
            assert all(isinstance(r, SequenceConflict) for r in results if r not in ok)
            game.apply(ok[0].action)
        assert snapshot((await two.load_match(stored.match_id)).game) == snapshot(game)
    finally:
        await one.close()
        await two.close()


#: A move written by hand, as the log's first columns (those every version has).
INSERT_MOVE = "INSERT INTO moves (match_id, seq, action, update_id, created_at) VALUES "


async def test_log_rules_hold_in_the_database_itself(file_store: SqliteStore) -> None:
    """Even SQL that bypasses the store cannot leave gaps, rewrite or extend closed logs."""
    await add_users(file_store, 1)
    stored = await file_store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    await play_and_store(file_store, stored, random.Random(1), max_moves=3)
    with sqlite3.connect(file_store.path) as raw:
        raw.execute("PRAGMA foreign_keys = ON")
        for sql in (
            INSERT_MOVE + "(1, 5, 'pass', NULL, 0)",  # gap
            INSERT_MOVE + "(1, 3, 'pass', NULL, 0)",  # duplicate
            "UPDATE moves SET action = 'pass' WHERE seq = 2",
            "DELETE FROM moves WHERE seq = 3",
            INSERT_MOVE + "(999, 1, 'pass', NULL, 0)",  # no such match
        ):
            with pytest.raises(sqlite3.IntegrityError):
                raw.execute(sql)
    await file_store.abandon_match(stored.match_id)
    with sqlite3.connect(file_store.path) as raw, pytest.raises(sqlite3.IntegrityError):
        raw.execute(INSERT_MOVE + "(1, 4, 'pass', NULL, 0)")
    assert (await file_store.get_match(stored.match_id)).move_count == 3


async def test_actions_are_checked_and_canonical(store: Store) -> None:
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    for bad in ("hello", "redeal:QC", ""):
        with pytest.raises(ValueError):
            await store.append_move(stored.match_id, 1, bad)
    card_move = next(a for a in stored.game.legal_actions() if hasattr(a, "card"))
    sloppy = f" {str(card_move).lower()} "
    row = await store.append_move(stored.match_id, 1, sloppy)
    assert row.action == str(card_move)
    with pytest.raises(NotFound):
        await store.append_move(4040, 1, "pass")


async def test_corrupt_log_is_reported(store: Store) -> None:
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    await store.append_move(stored.match_id, 1, "pass")  # not legal at the opening
    with pytest.raises(CorruptMatch, match="move 1"):
        await store.load_match(stored.match_id)


# Duplicate Telegram updates -------------------------------------------------------------


async def test_duplicate_update_is_not_applied_twice(store: Store) -> None:
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    game = stored.game
    rng = random.Random(3)
    a = legal(game, rng)
    await store.append_move(stored.match_id, 1, a, update_id=900)
    game.apply(a)
    # The redelivered update arrives after a reload: its sequence number is fresh, still refused.
    with pytest.raises(DuplicateUpdate) as info:
        await store.append_move(stored.match_id, 2, legal(game, rng), update_id=900)
    assert info.value.update_id == 900
    assert (await store.get_match(stored.match_id)).move_count == 1


async def test_update_ids_are_a_set_not_a_high_water_mark(store: Store) -> None:
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    game = stored.game
    rng = random.Random(6)
    ids = [500, 20, 7_000_000, 21, 499]  # not increasing, as Telegram's may be
    for uid in ids:
        a = legal(game, rng)
        await store.append_move(stored.match_id, len(game.history) + 1, a, update_id=uid)
        game.apply(a)
    for uid in ids:
        assert await store.seen_update(uid)
        with pytest.raises(DuplicateUpdate):
            await store.append_move(
                stored.match_id, len(game.history) + 1, legal(game, rng), update_id=uid
            )
    assert not await store.seen_update(22)
    assert (await store.get_match(stored.match_id)).move_count == len(ids)
    assert await store.mark_update(22)
    assert not await store.mark_update(22)
    assert not await store.mark_update(500)


async def test_same_update_raced_by_concurrent_tasks(store: Store) -> None:
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    a = legal(stored.game, random.Random(1))
    results = await asyncio.gather(
        *(store.append_move(stored.match_id, 1, a, update_id=77) for _ in range(5)),
        return_exceptions=True,
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 1
    assert all(
        isinstance(r, DuplicateUpdate) for r in results if isinstance(r, BaseException)
    )
    assert (await store.get_match(stored.match_id)).move_count == 1


async def test_a_matchs_state_is_its_row_timer_and_stand_ins_read_together(
        store: Store) -> None:
    """``match_state``, what a move reads under the chat's lock in one call, says what the
    three reads it replaces say: the row (its move count the last move's number), the turn
    timer, the stand-ins; and no timer or stand-in where there is none."""
    await add_users(store, 1, 2)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1, 2]))
    mid = stored.match_id
    assert await store.match_state(mid) == (await store.get_match(mid), None, {})
    game = await play_and_store(store, stored, random.Random(3), max_moves=2)
    await store.set_timer(mid, 60)
    await store.arm_timer(mid, 3, 1234.5)
    await store.set_stand_in(mid, 1, timeouts=1, computer=False)
    row, timer, stand_ins = await store.match_state(mid)
    assert (row, row.move_count) == await store.match_head(mid)
    assert row.move_count == len(game.history)
    assert timer == await store.timer_of(mid) and timer is not None and timer.seq == 3
    assert stand_ins == await store.stand_ins(mid) == {1: StandIn(1, 1, False)}
    with pytest.raises(NotFound):
        await store.match_state(mid + 1000)


async def test_a_requests_one_read_says_what_the_reads_it_replaces_say(store: Store) -> None:
    """``request_rows``, a request's one read in a group: the user's and the chat's rows,
    the chat's active match with its timer and stand-ins (as ``match_state``), and the match
    rebuilt from its log only when the caller does not hold as many moves as it has."""
    await add_users(store, 1, 2)
    await store.upsert_chat(-5, title="Five")
    alone = await store.request_rows(1, -5)
    assert (alone.user, alone.chat, alone.match) == (await store.get_user(1),
                                                     await store.get_chat(-5), None)
    assert (await store.request_rows(1, 1)).chat is None  # a private chat: the user alone
    stored = await store.create_match(-5, Settings(), seats_for(Table.DUEL, [1, 2]))
    mid = stored.match_id
    game = await play_and_store(store, stored, random.Random(3), max_moves=2)
    await store.set_timer(mid, 60)
    await store.arm_timer(mid, 3, 1234.5)
    await store.set_stand_in(mid, 1, timeouts=1, computer=False)
    read = await store.request_rows(2, -5)
    assert (read.match, read.timer, read.stand_ins) == await store.match_state(mid)
    assert read.stored is not None and read.stored.moves == (await store.load_match(mid)).moves
    assert read.stored.game.history == game.history
    held = await store.request_rows(2, -5, kept=lambda match_id: len(game.history))
    assert held.match == read.match and held.stored is None
    assert (await store.request_rows(2, -5, 7)).match is None  # another forum topic


async def test_a_seat_handed_over_by_an_update_is_handed_over_once(store: Store) -> None:
    """``/leave`` and ``/kick`` store the seat's stand-in with their update id in one
    transaction: the same update run again (redelivered after a crash before the ledger's
    own write) changes nothing, even after the player came back in between."""
    await add_users(store, 1, 2)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1, 2]))
    mid = stored.match_id
    await store.set_stand_in(mid, 1, timeouts=2, computer=True, update_id=910)
    assert await store.seen_update(910)
    assert (await store.stand_ins(mid))[1] == StandIn(1, 2, True)
    await store.set_stand_in(mid, 1, timeouts=0, computer=False)  # /back
    with pytest.raises(DuplicateUpdate) as info:
        await store.set_stand_in(mid, 1, timeouts=2, computer=True, update_id=910)
    assert info.value.update_id == 910
    assert (await store.stand_ins(mid))[1] == StandIn(1, 0, False)
    results = await asyncio.gather(
        *(store.set_stand_in(mid, 0, timeouts=2, computer=True, update_id=911)
          for _ in range(4)), return_exceptions=True)
    assert sum(r is None for r in results) == 1
    assert all(isinstance(r, DuplicateUpdate) for r in results if r is not None)
    assert not await store.mark_update(911)


async def test_update_ids_are_pruned_by_age(store_target: str) -> None:
    now = [1_000_000.0]
    store = await open_store(store_target, clock=lambda: now[0])
    try:
        for uid in range(10):
            assert await store.mark_update(uid)
        now[0] += 3600
        for uid in range(10, 15):
            assert await store.mark_update(uid)
        assert await store.prune_updates(1800) == 10
        assert not await store.seen_update(3)
        assert await store.seen_update(12)
        assert await store.mark_update(3)  # forgotten, so accepted again
    finally:
        await store.close()


async def test_automatic_pruning_keeps_recent_ids(tmp_path: Path, monkeypatch) -> None:
    import storage.store_core as backend  # the ledger is pruned by the shared code

    monkeypatch.setattr(backend, "PRUNE_EVERY", 4)
    now = [0.0]
    store = await SqliteStore.open(tmp_path / "a.db", clock=lambda: now[0], update_ttl=100)
    try:
        for uid in range(3):
            await store.mark_update(uid)
        now[0] = 1000.0
        for uid in range(3, 8):
            await store.mark_update(uid)
        assert not await store.seen_update(0)  # pruned on the 4th insertion
        assert all([await store.seen_update(u) for u in range(3, 8)])
    finally:
        await store.close()


# Finishing and statistics ---------------------------------------------------------------


async def test_finishing_records_statistics_once(store: Store) -> None:
    await add_users(store, 1, 2, 3)
    settings = Settings(table=Table.TRIO_LONE_DEFENDER)
    stored = await store.create_match(50, settings, seats_for(Table.TRIO_LONE_DEFENDER, [1, 2]))
    game = await play_and_store(store, stored, random.Random(21))
    row = await store.get_match(stored.match_id)
    assert row.status is MatchStatus.FINISHED and row.finished_at is not None
    assert row.totals == game.totals()
    outcomes = seat_statistics(game, match_outcome(game))
    for uid, seat in ((1, 0), (2, 1)):
        stats = await store.user_stats(uid, 50)
        assert stats is not None
        o = outcomes[seat]
        assert (stats.matches, stats.wins, stats.draws) == (1, int(o.win), int(o.draw))
        assert stats.points_scored == game.totals()[seat]
        conceded = sum(t.points for t in game.tours if not t.is_attacker[seat])
        assert stats.points_conceded == conceded
    assert await store.user_stats(3) is None
    assert (await store.user_stats(1)).matches == 1  # type: ignore[union-attr]
    with pytest.raises(MatchClosed):
        await store.append_move(stored.match_id, row.next_seq, "pass")


async def test_the_store_adds_up_the_engines_statistics(store: Store) -> None:
    """Every figure a finished match adds is the engine's (krendzu.stats of the outcome with
    the resigned seats): the trio's top scorer resigned, so it is stored as a loss."""
    table = Table.TRIO_LONE_ATTACKER
    await add_users(store, 1, 2, 3)
    specs = seats_for(table, [1, 2, 3])
    rehearsal = Match([s.label(i) for i, s in enumerate(specs)], Settings(table=table), seed=9)
    rng = random.Random(31)
    while not rehearsal.is_over:
        rehearsal.apply(rng.choice(rehearsal.legal_actions()))
    top = max(range(3), key=lambda seat: rehearsal.totals()[seat])
    assert match_outcome(rehearsal).won(top)  # without the resignation it would have won
    stored = await store.create_match(60, Settings(table=table), specs, seed=9)
    await store.set_stand_in(stored.match_id, top, timeouts=0, computer=True, resigned=True)
    game = stored.game
    for action in rehearsal.history:
        game.apply(action)
        await store.append_move(stored.match_id, len(game.history), action,
                                final=game if game.is_over else None)
    gained = seat_statistics(game, match_outcome(game, [top]))
    for seat, uid in enumerate((1, 2, 3)):
        row = await store.user_stats(uid, 60)
        assert row is not None
        g = gained[seat]
        assert (row.matches, row.wins, row.draws) == (1, int(g.win), int(g.draw))
        assert (row.points_scored, row.points_conceded, row.tours_attacked, row.tours_defended,
                row.best_tour, row.suit_combos, row.progression_combos,
                row.own_goals_conceded) == (
            g.points_scored, g.points_conceded, g.tours_attacked, g.tours_defended,
            g.best_tour, g.suit_combos, g.progression_combos, g.own_goals_conceded)
    assert (await store.user_stats(top + 1, 60)).wins == 0  # type: ignore[union-attr]


async def test_final_must_match_the_move(store: Store) -> None:
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    with pytest.raises(ValueError):
        await store.append_move(stored.match_id, 1, "pass", final=stored.game)


async def test_statistics_per_chat_and_over_all_chats(store: Store) -> None:
    await add_users(store, 1, 2, 3)
    rng = random.Random(77)
    for chat, humans in ((10, [1, 2]), (10, [2, 3]), (20, [1, 3]), (20, [3, 1])):
        stored = await store.create_match(chat, Settings(), seats_for(Table.DUEL, humans))
        await play_and_store(store, stored, rng)
    per_chat = [await store.user_stats(u, 10) for u in (1, 2, 3)]
    assert {r.user_id: r.matches for r in per_chat if r} == {1: 1, 2: 2, 3: 1}
    everywhere = [await store.user_stats(u) for u in (1, 2, 3)]
    assert {r.user_id: r.matches for r in everywhere if r} == {1: 3, 2: 2, 3: 3}
    for rows in (per_chat, everywhere):
        for r in rows:
            assert r is not None
            assert r.wins + r.draws + r.losses == r.matches and r.losses >= 0
            assert r.display_name == f"player {r.user_id}"
    total = await store.user_stats(1)
    parts = [await store.user_stats(1, c) for c in (10, 20)]
    assert total is not None and all(p is not None for p in parts)
    assert total.matches == sum(p.matches for p in parts)  # type: ignore[union-attr]
    assert total.points_scored == sum(p.points_scored for p in parts)  # type: ignore[union-attr]
    assert await store.user_stats(1, 99) is None


# Robustness -----------------------------------------------------------------------------


async def writes_done(store: Store) -> None:
    """Until the store's writes under way have ended (each backend's own record of them,
    the one its ``close`` waits on)."""
    if isinstance(store, SqliteStore):
        flusher = store._flusher
        while flusher is not None and not flusher.done():
            await asyncio.wait([flusher])
            flusher = store._flusher
    else:
        while store._calls:  # type: ignore[attr-defined]
            await asyncio.wait(set(store._calls))  # type: ignore[attr-defined]


async def test_cancelled_caller_leaves_a_consistent_store(store: Store) -> None:
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    game = stored.game
    rng = random.Random(13)
    for _ in range(20):
        a = rng.choice(game.legal_actions())
        task = asyncio.ensure_future(
            store.append_move(stored.match_id, len(game.history) + 1, a)
        )
        await asyncio.sleep(rng.random() * 0.002)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        # The write the caller left goes on to its end (a fixed 10 ms was too short for a
        # file's commit on a loaded machine): wait for it as the store's close does.
        await writes_done(store)
        # Committed or not, never half: the store reports the truth and keeps working.
        row = await store.get_match(stored.match_id)
        if row.move_count == len(game.history) + 1:
            game.apply(a)
        assert row.move_count == len(game.history)
    assert snapshot((await store.load_match(stored.match_id)).game) == snapshot(game)
    if isinstance(store, SqliteStore):
        assert await store.integrity_check() == []


async def test_closed_store_refuses(store_target: str) -> None:
    store = await open_store(store_target)
    await store.close()
    await store.close()  # idempotent
    with pytest.raises(StorageError):
        await store.get_chat(1)


def test_store_targets() -> None:
    assert sqlite_path("x.db") == "x.db"
    assert sqlite_path(":memory:") == ":memory:"
    assert sqlite_path("sqlite:///rel/x.db") == "rel/x.db"
    assert sqlite_path("sqlite:////abs/x.db") == "/abs/x.db"
    assert sqlite_path("sqlite://:memory:") == ":memory:"
    with pytest.raises(StorageError, match="PostgreSQL"):
        sqlite_path("postgresql://localhost/krendzu")
    with pytest.raises(StorageError):
        sqlite_path("mysql://x")


async def test_open_store_uses_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("KRENDZU_DB", str(tmp_path / "env.db"))
    async with await open_store() as store:
        await store.upsert_chat(1)
    assert (tmp_path / "env.db").exists()


# Backup ---------------------------------------------------------------------------------


async def test_backup_while_writing(file_store: SqliteStore, tmp_path: Path) -> None:
    """A backup taken while another connection keeps committing is a consistent snapshot."""
    await add_users(file_store, 1)
    writer = await open_store(file_store.path)
    stop = asyncio.Event()

    async def keep_writing() -> int:
        rng = random.Random(4)
        n = 0
        while not stop.is_set():
            stored = await writer.create_match(1000 + n, Settings(), seats_for(Table.DUEL, [1]))
            await play_and_store(writer, stored, rng, max_moves=15)
            n += 1
        return n

    task = asyncio.create_task(keep_writing())
    try:
        await asyncio.sleep(0.2)
        copies = []
        for i in range(3):
            dest = tmp_path / f"backup{i}.db"
            await file_store.backup(str(dest))
            copies.append(dest)
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        written = await task
        await writer.close()
    assert written > 0
    sizes = []
    for dest in copies:
        assert not Path(f"{dest}-wal").exists()
        with sqlite3.connect(dest) as raw:
            assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        async with await open_store(dest) as copy:
            rows = await copy.active_matches()
            sizes.append(len(rows))
            for row in rows:
                await copy.load_match(row.match_id)  # every match in the copy rebuilds
    assert sizes[-1] >= sizes[0] > 0


async def test_backup_of_memory_store(tmp_path: Path) -> None:
    async with await open_store(":memory:") as store:
        await add_users(store, 1)
        stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
        await play_and_store(store, stored, random.Random(1), max_moves=5)
        await store.backup(str(tmp_path / "m.db"))
    async with await open_store(tmp_path / "m.db") as copy:
        assert (await copy.load_match(stored.match_id)).row.move_count == 5


def test_backup_command_line(tmp_path: Path) -> None:
    db, out = tmp_path / "cli.db", tmp_path / "out" / "copy.db"
    out.parent.mkdir()

    async def fill() -> None:
        async with await open_store(db) as store:
            await add_users(store, 1)
            stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
            await play_and_store(store, stored, random.Random(2), max_moves=7)

    asyncio.run(fill())
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "KRENDZU_DB": str(db)}
    done = subprocess.run(
        [sys.executable, "-m", "storage", "backup", str(out)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["schema_version"] >= 2 and report["bytes"] > 0
    with sqlite3.connect(out) as raw:
        assert raw.execute("SELECT COUNT(*) FROM moves").fetchone()[0] == 7
    done = subprocess.run(
        [sys.executable, "-m", "storage", "check", "--db", str(out)],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["problems"] == []
    missing = subprocess.run(
        [sys.executable, "-m", "storage", "backup", str(out), "--db", str(tmp_path / "no.db")],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60,
    )
    assert missing.returncode == 2 and "no database" in missing.stderr


# Group commit ---------------------------------------------------------------------------


async def test_concurrent_matches_share_commits_and_fail_alone(file_store: SqliteStore) -> None:
    """Writes from many chats at once share transactions; a bad one is undone alone."""
    await add_users(file_store, 1)
    rng = random.Random(31)
    matches = [
        await file_store.create_match(600 + i, Settings(), seats_for(Table.DUEL, [1]))
        for i in range(12)
    ]
    before = file_store.write_transactions, file_store.writes_committed

    async def play(stored, seed: int) -> list[str]:
        local = random.Random(seed)
        game = stored.game
        for _ in range(25):
            action = local.choice(game.legal_actions())
            seq = len(game.history) + 1
            game.apply(action)
            await file_store.append_move(stored.match_id, seq, action, update_id=None)
        return [str(a) for a in game.history]

    async def stale(stored) -> None:
        await asyncio.sleep(0.01)
        with pytest.raises(SequenceConflict):
            await file_store.append_move(stored.match_id, 1, "QC@0,0")

    async def duplicate() -> None:
        await file_store.mark_update(4711)
        for _ in range(5):
            await asyncio.sleep(0.003)
            assert not await file_store.mark_update(4711)

    results = await asyncio.gather(
        *(play(m, rng.getrandbits(32)) for m in matches),
        *(stale(m) for m in matches[:4]),
        duplicate(),
    )
    transactions = file_store.write_transactions - before[0]
    writes = file_store.writes_committed - before[1]
    assert writes == 12 * 25 + 1
    assert transactions < writes  # commits were shared
    for stored, history in zip(matches, results[:12], strict=True):
        loaded = await file_store.load_match(stored.match_id)
        assert [m.action for m in loaded.moves] == history
        assert [m.seq for m in loaded.moves] == list(range(1, 26))
    assert await file_store.integrity_check() == []


async def test_write_cancelled_before_it_started_writes_nothing(file_store: SqliteStore) -> None:
    await add_users(file_store, 1)
    stored = await file_store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    a = legal(stored.game, random.Random(2))
    async with file_store._lock:  # a commit in progress: the next writes queue up
        queued = asyncio.ensure_future(file_store.append_move(stored.match_id, 1, a))
        await asyncio.sleep(0.01)
        queued.cancel()
        await asyncio.sleep(0)
    with contextlib.suppress(asyncio.CancelledError):
        await queued
    await asyncio.sleep(0.05)
    assert (await file_store.get_match(stored.match_id)).move_count == 0
    await file_store.append_move(stored.match_id, 1, a)  # and the store still works
    assert (await file_store.get_match(stored.match_id)).move_count == 1


async def test_close_commits_queued_writes(tmp_path: Path) -> None:
    path = tmp_path / "q.db"
    store = await SqliteStore.open(path)
    await add_users(store, 1)
    stored = await store.create_match(1, Settings(), seats_for(Table.DUEL, [1]))
    a = legal(stored.game, random.Random(2))
    pending = asyncio.ensure_future(store.append_move(stored.match_id, 1, a))
    await asyncio.sleep(0)
    await store.close()
    assert (await pending).seq == 1
    async with await open_store(path) as again:
        assert (await again.get_match(stored.match_id)).move_count == 1


async def test_group_writes_are_kept_for_a_restart_and_pruned(file_store: SqliteStore) -> None:
    """The embedded mode notes each group write, so a restarted process starts Telegram's
    window from them (chat/delivery.py seed_groups); old ones are pruned as new ones come."""
    await file_store.note_group_write(-100, 1000.0)
    await file_store.note_group_write(-200, 1010.0)
    await file_store.note_group_write(-100, 1050.0)
    assert await file_store.group_writes(1005.0) == [(-200, 1010.0), (-100, 1050.0)]
    await file_store.note_group_write(-100, 1160.0)  # 1000 and 1010 are past keeping now
    assert await file_store.group_writes(0.0) == [(-100, 1050.0), (-100, 1160.0)]


async def test_the_scaled_store_keeps_no_group_writes(pg_url: str) -> None:
    """PostgreSQL keeps Telegram's windows in storage/pg_windows.py, shared by every
    process; the embedded mode's notes are not needed there and nothing is kept."""
    async with await open_store(pg_url) as store:
        await store.note_group_write(-100, 1000.0)
        assert await store.group_writes(0.0) == []


async def test_operating_figures_count_what_is_open_and_what_waits_to_be_told(
        store: Store) -> None:
    """Store.operating_figures (the metrics scrape's one read): open set-ups, running
    matches, and the moves stored after the last announced one, with the oldest's time."""
    assert await store.operating_figures() == OperatingFigures(0, 0, 0, None)
    await add_users(store, 1, 2)
    await store.create_lobby(-100, 1, {"table": "duel", "seats": []})
    stored = await store.create_match(-10, Settings(), [SeatSpec.human(1), SeatSpec.human(2)])
    rng = random.Random(3)
    game = stored.game
    for seq in (1, 2):
        action = legal(game, rng)
        await store.append_move(stored.match_id, seq, action)
        game.apply(action)
    figures = await store.operating_figures()
    assert (figures.open_lobbies, figures.active_matches, figures.unannounced_moves) == (1, 1, 2)
    assert figures.oldest_unannounced is not None
    assert abs(figures.oldest_unannounced - time.time()) < 60
    await store.set_announced(stored.match_id, 2)
    assert (await store.operating_figures()).unannounced_moves == 0
    # People waiting in the Play now pool (issue 40).
    assert await store.join_pool(1, "duel", 1000, time.time())
    assert (await store.operating_figures()).pool_waiting == 1


def count_trips(store: SqliteStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every round trip to the writer connection's thread from now on (aiosqlite sends each
    call there through ``_execute``), named by the function it ran."""
    trips: list[str] = []
    conn = store._conn
    run = conn._execute

    async def counted(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        trips.append(getattr(fn, "__name__", type(fn).__name__))
        return await run(fn, *args, **kwargs)

    monkeypatch.setattr(conn, "_execute", counted)
    return trips


async def test_a_statement_write_is_one_trip_to_sqlite(file_store: SqliteStore,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that is only statements goes to SQLite's thread once with its framing: alone,
    ``BEGIN``, its statements and ``COMMIT`` together; in a shared commit, its savepoint and
    release with it, ``BEGIN`` with the first and ``COMMIT`` with the last (a round trip
    each used to be: 4 for a lone group write, 38 for nine sharing a commit)."""
    trips = count_trips(file_store, monkeypatch)
    await file_store.note_group_write(-100, 1000.0)
    assert len(trips) == 1
    trips.clear()
    async with file_store._lock:  # a commit in progress: the next nine queue for one batch
        writes = [asyncio.ensure_future(file_store.note_group_write(-101 - i, 1001.0 + i))
                  for i in range(9)]
        await asyncio.sleep(0.01)
    await asyncio.gather(*writes)
    assert len(trips) == 9
    assert len(await file_store.group_writes(0.0)) == 10


async def test_a_failing_statement_write_is_undone_alone(file_store: SqliteStore) -> None:
    """In a shared commit, a statement write that fails is rolled back to its savepoint and
    reported to its caller; the writes around it commit (and a lone one fails cleanly)."""
    with pytest.raises(StorageError):
        await file_store._change("INSERT INTO no_such_table VALUES (?)", (1,))
    async with file_store._lock:
        good = [asyncio.ensure_future(file_store.note_group_write(-200 - i, 2000.0 + i))
                for i in range(3)]
        bad = asyncio.ensure_future(file_store._change(
            "INSERT INTO group_writes (chat_id, at) VALUES (?, ?)", (None, 1.0)))
        later = asyncio.ensure_future(file_store.note_group_write(-300, 2010.0))
        await asyncio.sleep(0.01)
    await asyncio.gather(*good, later)
    with pytest.raises(StorageError):
        await bad
    assert sorted(c for c, _ in await file_store.group_writes(0.0)) == [-300, -202, -201, -200]
    assert await file_store.integrity_check() == []
