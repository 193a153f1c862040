"""One announcer tells every stored move from its rows (issue 39), whoever runs it: the
process that stored the move (the embedded mode), a job worker (the scaled mode) or the
restart. Driven through the real python-telegram-bot stack against the fake Bot API."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from chat.flow.broadcast import Broadcast
from krendzu import Place
from krendzu.coords import frame_for
from storage import Door, MovedBy
from tests.bot_harness import BOT, running_bot, start_group_duel
from tests.fakebot import FakeTelegram


class Killed(Exception):
    """Stands for the process dying between the store and the announcement."""


async def test_a_move_stored_but_never_announced_is_told_once_after_the_restart(
        tmp_path: Path, monkeypatch: Any) -> None:
    """A typed move is stored, then the process dies before telling anyone (an exception
    in its place, raised right after the store committed). The restarted bot tells it once,
    and names the mover as the process that stored it would have: the record of the typed
    move below, in their private chat. Before the mover and door were stored with the
    move, the restart told it with no mover (the mover was in the dead process's memory):
    the player got no record of the move they made."""
    fake = FakeTelegram(bot_username=BOT)
    ann, bob = fake.user(1, "Ann"), fake.user(2, "Bob")
    group = fake.group(-3901, "Restarted", members=[ann, bob])
    for user in (ann, bob):
        fake.user_starts(user)
    async with running_bot(tmp_path, fake) as h:
        await h.settle()
        row = await start_group_duel(h, group, ann, bob)
        await h.settle()
        stored = await h.services.flow.load(row.match_id)
        game = stored.game
        mover = {1: ann, 2: bob}[stored.row.seats[game.current_player].user_id or 0]
        step = random.Random(3).choice(
            [a for a in game.legal_actions() if isinstance(a, Place)])
        cell = frame_for(game.tour.observation(None).placements).label(step.x, step.y)

        async def die(self: Broadcast, *args: Any, **kwargs: Any) -> Any:
            raise Killed("the process died after the store, before the announcement")

        monkeypatch.setattr(Broadcast, "stored", die)
        posts = len(fake.sent(group))
        records = len(fake.sent(mover))
        mover.send(group, f"/play@{BOT} {step.card.code()} {cell}")
        await h.settle()
        head = await h.services.store.get_match(row.match_id)
        assert head.move_count == 1 and head.announced_seq == 0, fake.describe()
        card = step.card.pretty()
        assert not [m for m in fake.sent(group)[posts:] if card in (m.caption or "")], \
            "the move is not told before the restart"
        monkeypatch.undo()
    async with running_bot(tmp_path, fake) as h:  # the same database: a restart
        await h.settle()
        loaded = await h.services.store.load_match(row.match_id)
        assert [m.by for m in loaded.moves] == [MovedBy(mover.id, Door.TYPED)]
        assert loaded.row.announced_seq == 1, fake.describe()
    boards = [m for m in fake.sent(group)[posts:] if card in (m.caption or m.text or "")]
    assert len(boards) == 1, fake.describe()  # told once
    told = [m for m in fake.sent(mover)[records:] if card in (m.caption or m.text or "")]
    assert len(told) == 1, fake.describe()
    record = told[0]
    assert not record.buttons(), "the record of the typed move, below in the private chat"
