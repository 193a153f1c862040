"""What announcing one move writes to the store (issue 39): the marker moves in the write
of the move's last record, not in a write of its own. Driven through the real
python-telegram-bot stack against the fake Bot API, in the embedded mode (SQLite)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from storage import Store
from tests.bot_harness import BOT, running_bot, start_group_duel
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


async def test_a_typed_move_moves_its_marker_with_its_last_record(tmp_path: Path) -> None:
    """Typed moves in a group duel, each announced while nothing else is under way: its
    marker reaches the move, in the write of its last record (the board post, as a rule),
    so that no write of the announcement is the marker's alone. Before, every move's
    marker was one more write of its own, after its records (about 7 writes a move in
    benchmarks/bot.py, where the SQLite writer was the bottleneck)."""
    fake = FakeTelegram(bot_username=BOT)
    ann, bob = fake.user(1, "Ann"), fake.user(2, "Bob")
    group = fake.group(-3951, "Counted", members=[ann, bob])
    for user in (ann, bob):
        fake.user_starts(user)
    async with running_bot(tmp_path, fake) as h:
        await h.settle()
        row = await start_group_duel(h, group, ann, bob)
        await h.settle()
        store = h.services.store
        counted = count_writes(store)
        moves = 4
        for _ in range(moves):
            stored = await h.services.flow.load(row.match_id)
            mover = {1: ann, 2: bob}[stored.row.seats[stored.game.current_player].user_id
                                     or 0]
            mover.send(group, f"/play@{BOT} {typed(stored.game)}")
            await h.settle()
            head = await store.get_match(row.match_id)
            assert head.announced_seq == head.move_count, fake.describe()
        assert head.move_count >= moves
        assert counted["set_announced"] == 0, counted
        assert counted["+marker"] == moves, counted
        # The records themselves: a panel each (the next player's new one, the mover's
        # dropped), the mover's record noted, the board post, the panels' lines.
        assert sum(counted[name] for name in WRITES) <= 6 * moves, counted
