"""One request, one flow call: a typed ``/play`` reads the player's row once and simulates
the move once before it is stored (issue 26's proof, counted through the real stack)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chat.describe import tour_frame
from krendzu import Match, Place
from tests.bot_harness import BOT, FastClock, running_bot, start_group_duel
from tests.fakebot import FakeTelegram


async def test_a_typed_play_reads_the_user_once_and_simulates_the_move_once(
        tmp_path: Path, monkeypatch: Any) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(701, "Ann")
    bob = fake.user(702, "Bob")
    group = fake.group(-1007010, "Counted")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        row = await start_group_duel(h, group, ann, bob, "duel timer=off")
        store, flow = h.services.store, h.services.flow
        stored = await flow.load(row.match_id)
        game = stored.game
        mover = ann if row.seats[game.current_player].user_id == ann.id else bob
        step = next(a for a in game.legal_actions() if isinstance(a, Place))
        text = f"/play@{BOT} {step.card.code()} {tour_frame(game).label(step.x, step.y)}"

        reads: list[int] = []
        real_get_user = store.get_user

        async def get_user(user_id: int) -> Any:
            reads.append(user_id)
            return await real_get_user(user_id)

        applied: list[object] = []
        real_apply = Match.apply

        def apply(self: Match, action: Any, *args: Any, **kwargs: Any) -> Any:
            applied.append(action)
            return real_apply(self, action, *args, **kwargs)

        at_store: list[int] = []
        real_append = store.append_move

        async def append_move(*args: Any, **kwargs: Any) -> Any:
            at_store.append(applied.count(step))
            return await real_append(*args, **kwargs)

        monkeypatch.setattr(store, "get_user", get_user)
        monkeypatch.setattr(store, "append_move", append_move)
        monkeypatch.setattr(Match, "apply", apply)
        mover.send(group, text)
        await h.settle()
        monkeypatch.undo()
        assert (await store.get_match(row.match_id)).move_count == row.move_count + 1
        assert reads.count(mover.id) == 1, reads
        # Before it is stored: once, on the copy that checks it, which then is the kept
        # state (announcing it afterwards replays it to describe it).
        assert at_store == [1], at_store
