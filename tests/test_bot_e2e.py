"""End to end: the real python-telegram-bot application against the fake Bot API."""

from __future__ import annotations

import json
import random
from pathlib import Path

from krendzu import replay
from storage import MatchStatus
from tests.bot_harness import BOT, FastClock, panel, play_step_with_buttons, running_bot
from tests.fakebot import FakeTelegram


async def test_group_match_played_with_buttons(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(11, "Ann", language_code="en")
    bob = fake.user(12, "Bob", language_code="ru")
    group = fake.group(-100500, "Friends")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        assert "Krendzu" in (fake.last(ann).text or "")
        ann.send(group, f"/new@{BOT} deal=short")
        await h.settle()
        lobby = fake.last(group)
        assert lobby is not None and "Friends" not in (lobby.text or "")
        bob.press(lobby, data=lobby.button(text="Join")["callback_data"])
        await h.settle()
        assert "Bob" in (fake.message(group, lobby.message_id).text or "")
        ann.press(lobby, data=next(b for b in lobby.buttons() if b.get("callback_data", "")
                               .endswith(":go"))["callback_data"])
        await h.settle()
        for user in (ann, bob):  # hands privately, with suit symbols
            assert any("♠" in (m.caption or m.text or "") or "♣" in (m.caption or m.text or "")
                       for m in fake.sent(user))
        rng = random.Random(1)
        for _ in range(400):
            over = [m for m in fake.sent(group) if "🏁" in (m.text or "")]
            if over:
                break
            moved = False
            for user in (ann, bob):
                if panel(fake, user) is not None:
                    moved = await play_step_with_buttons(h, user, rng)
                    break
            assert moved, fake.describe()
        assert over, "the match ended"
        assert fake.max_sends_in_window(group, 60) <= 20
        ann.send(group, f"/export@{BOT}")
        await h.settle()
        docs = [m for m in fake.sent(group) if m.kind == "document"]
        assert docs, fake.describe()
        record = json.loads(docs[-1].data or b"")
        result = replay(record)
        row = (await h.services.store.active_matches())
        assert row == []
        stored = await h.services.store.matches_of_user(11, status=MatchStatus.FINISHED)
        totals = tuple(result["totals"][p] for p in record["players"])
        assert totals == stored[0].totals
        board_posts = [m for m in fake.sent(group) if m.kind == "photo"]
        assert board_posts and all(m.disable_notification for m in board_posts)
