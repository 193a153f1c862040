"""What announcing one move writes to the store (issue 39): the marker moves in the write
of the move's last record, not in a write of its own. Driven through the real
python-telegram-bot stack against the fake Bot API, in the embedded mode (SQLite)."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from storage import Store
from tests.bot_harness import BOT, Harness, running_bot, start_group_duel
from tests.fakebot import FakeTelegram
from tests.test_one_verdict import typed

#: The store's writes an announcement may make (every write of a move's notices).
WRITES = ("set_announced", "set_panel", "set_panel_lines", "post_board", "note_told",
          "set_board_message")


def count_writes(store: Store) -> Counter[str]:
    """The store's announcement writes, by name, from now on (and each ``announced``
    marker a record's write carried, as ``+marker``)."""
    counted: Counter[str] = Counter()
    for name in WRITES:
        plain = getattr(store, name)

        async def write(*args: Any, _name: str = name, _plain: Any = plain,
                        **kwargs: Any) -> Any:
            counted[_name] += 1
            if kwargs.get("announced") is not None:
                counted["+marker"] += 1
            return await _plain(*args, **kwargs)

        setattr(store, name, write)
    return counted


@asynccontextmanager
async def counted_duel(tmp_path: Path, group_id: int) -> AsyncIterator[
        tuple[Harness, FakeTelegram, Any, Any, Counter[str]]]:
    """A running bot with a group duel between Ann (1) and Bob (2) who pressed Start, its
    store's announcement writes counted from the start on (:func:`count_writes`): the
    bot, the fake, the group, the match's row and the counts."""
    fake = FakeTelegram(bot_username=BOT)
    ann, bob = fake.user(1, "Ann"), fake.user(2, "Bob")
    group = fake.group(group_id, "Counted", members=[ann, bob])
    for user in (ann, bob):
        fake.user_starts(user)
    async with running_bot(tmp_path, fake) as h:
        await h.settle()
        row = await start_group_duel(h, group, ann, bob)
        await h.settle()
        yield h, fake, group, row, count_writes(h.services.store)


async def play_typed(h: Harness, fake: FakeTelegram, group: Any, match_id: int,
                     users: dict[int, Any]) -> tuple[Any, Any]:
    """The player to move types a legal move in the group; it is announced before this
    returns. (mover, next player)."""
    stored = await h.services.flow.load(match_id)
    mover = users[stored.row.seats[stored.game.current_player].user_id or 0]
    mover.send(group, f"/play@{BOT} {typed(stored.game)}")
    await h.settle()
    head = await h.services.store.get_match(match_id)
    assert head.announced_seq == head.move_count, fake.describe()
    stored = await h.services.flow.load(match_id)
    return mover, users[stored.row.seats[stored.game.current_player].user_id or 0]


async def test_a_typed_move_moves_its_marker_with_its_last_record(tmp_path: Path) -> None:
    """Typed moves in a group duel, each announced while nothing else is under way: its
    marker reaches the move, in the write of its last record (the board post, as a rule),
    so that no write of the announcement is the marker's alone. Before, every move's
    marker was one more write of its own, after its records (about 7 writes a move in
    benchmarks/bot.py, where the SQLite writer was the bottleneck)."""
    async with counted_duel(tmp_path, -3951) as (h, fake, group, row, counted):
        store = h.services.store
        moves = 4
        for _ in range(moves):
            await play_typed(h, fake, group, row.match_id, fake.users)
        head = await store.get_match(row.match_id)
        assert head.move_count >= moves
        assert counted["set_announced"] == 0, counted
        assert counted["+marker"] == moves, counted
        # The records themselves: a panel each (the next player's new one, the mover's
        # dropped), the mover's record noted, the board post, the panels' lines.
        assert sum(counted[name] for name in WRITES) <= 6 * moves, counted


async def test_the_panels_lines_are_written_with_the_panels(tmp_path: Path) -> None:
    """The move lines a panel shows (the next move's record starts from them) go to the
    store in the write that remembers the panel's message (the next player's new panel)
    or drops it (the mover's typed move), not in a write of their own: a typed move's
    announcement in a group duel is four writes (the mover's panel dropped, the mover's
    record noted, the next player's panel, the board post with the marker), where it was
    six (those, the panels' lines and the marker). What is stored is what was: the next
    player's panel shows the move, the mover's shows nothing any more."""
    async with counted_duel(tmp_path, -3952) as (h, fake, group, row, counted):
        store = h.services.store
        moves = 4
        for _ in range(moves):
            mover, after = await play_typed(h, fake, group, row.match_id, fake.users)
            if after is not mover:
                shown = await store.get_panel_lines(row.match_id, after.id)
                assert shown and mover.first_name in "\n".join(shown), shown
                assert await store.get_panel_lines(row.match_id, mover.id) == []
        assert counted["set_panel_lines"] == 0, counted
        assert sum(counted[name] for name in WRITES) <= 4 * moves, counted


async def test_a_typed_moves_record_forgets_the_movers_panel_in_its_write(
        tmp_path: Path) -> None:
    """A move typed in the group: the mover's private panel (the one that asked for it)
    is forgotten, with its lines, in the write that notes the record of the move sent to
    them below it, and the old panel loses its keyboard and says it is closed, as before:
    three writes a move (the record with the drop, the next player's panel, the board post
    with the marker) where the drop was a write of its own."""
    async with counted_duel(tmp_path, -3953) as (h, fake, group, row, counted):
        store = h.services.store
        moves, dropped = 4, 0
        for _ in range(moves):
            stored = await h.services.flow.load(row.match_id)
            to_move = stored.row.seats[stored.game.current_player].user_id or 0
            panel = await store.get_panel(row.match_id, to_move)
            assert panel is not None, fake.describe()
            mover, _after = await play_typed(h, fake, group, row.match_id, fake.users)
            assert mover.id == to_move
            if (await store.get_panel(row.match_id, mover.id)) is None:
                old = fake.message(mover, panel.message_id)
                assert not old.buttons(), fake.describe()
                record = fake.sent(mover)[-1]
                assert record.message_id != panel.message_id and not record.buttons()
                assert await store.get_panel_lines(row.match_id, mover.id) == []
                dropped += 1
        assert dropped, "no typed move ended its mover's turn"
        assert counted["set_panel_lines"] == 0 and counted["set_announced"] == 0, counted
        assert sum(counted[name] for name in WRITES) <= 3 * moves, counted
