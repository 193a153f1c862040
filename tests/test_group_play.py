"""Issue 27: a group chat that stays readable (one live board, a one-tap turn button, clocks),
driven through the fake Bot API as two friends and their group would play."""

from __future__ import annotations

import random
from pathlib import Path

from tests.bot_harness import (
    BOT,
    FastClock,
    panel,
    play_out_with_buttons,
    play_step_with_buttons,
    running_bot,
    start_group_duel,
)
from tests.fakebot import FakeTelegram
from tests.fakebot.model import Chat, Message


def turn_link(message: Message) -> str | None:
    urls = [b.get("url", "") for b in message.buttons() if b.get("url")]
    return next((u for u in urls if "?start=t" in u), None)


async def test_a_whole_duel_leaves_one_board_the_summaries_and_the_lobby(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(901, "Ann"), fake.user(902, "Bob")
    group = fake.group(-1009010, "Friends")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        row = await start_group_duel(h, group, ann, bob, "duel tours=2 deal=short timer=off")
        await play_out_with_buttons(h, [ann, bob], row.match_id, random.Random(11))
        await h.settle()
        everything = fake.sent(group)
        visible = fake.sent(group, deleted=False)
        boards = [m for m in everything if m.kind == "photo"]
        kept_boards = [m for m in visible if m.kind == "photo"]
        # Figures for the note: board posts sent, bot messages still visible.
        print(f"\nboard posts sent: {len(boards)}; visible at the end: {len(visible)}")
        assert len(boards) > 10
        assert len(kept_boards) == 1 and "over" in (kept_boards[0].caption or "")
        summaries = [m for m in visible if "📋" in (m.text or "")]
        final = [m for m in visible if "🏁" in (m.text or "")]
        lobby = [m for m in visible if "Krendzu — a new match" in (m.text or "")]
        assert len(summaries) == 2 and len(final) == 1 and len(lobby) == 1
        assert len(visible) == 1 + len(summaries) + len(final) + len(lobby), [
            (m.kind, (m.text or m.caption or "")[:40]) for m in visible]
        # A defender's two-card turn is one post, never a "may place a second card" one.
        assert not any("second card" in (m.caption or "") for m in boards)


async def test_every_board_post_carries_the_turn_button_that_brings_the_panel(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob, eve = fake.user(911, "Ann"), fake.user(912, "Bob"), fake.user(913, "Eve")
    group = fake.group(-1009110, "Friends")
    async with running_bot(tmp_path, fake) as h:
        for user in (ann, bob, eve):
            user.start_bot()
        row = await start_group_duel(h, group, ann, bob, "duel deal=short timer=off")
        rng = random.Random(5)
        users = {ann.id: ann, bob.id: bob}
        for _ in range(8):
            stored = await h.services.flow.load(row.match_id)
            mover_id = stored.row.seats[stored.game.current_player].user_id
            post = [m for m in fake.sent(group, deleted=False) if m.kind == "photo"][-1]
            link = turn_link(post)
            assert link == f"https://t.me/{BOT}?start=t{row.match_id}", post.buttons()
            mover = users[mover_id]  # type: ignore[index]
            assert mover.first_name in post.buttons()[0]["text"]
            assert f"Next: {mover.first_name}" in (post.caption or "")  # no @mention
            # One tap: the link starts the private chat with the payload; the panel comes
            # to the bottom, and the one above it is retired.
            old = panel(fake, mover)
            mover.start_bot(link.rsplit("=", 1)[1])
            await h.settle()
            newest = fake.sent(mover)[-1]
            assert panel(fake, mover) is newest and newest is not old
            if old is not None:
                assert not [b for b in fake.message(mover, old.message_id).buttons()
                            if b.get("callback_data")]
            assert await play_step_with_buttons(h, mover, rng)
        # A stranger who opens the link learns nothing.
        eve.start_bot(f"t{row.match_id}")
        await h.settle()
        assert "not playing" in (fake.sent(eve)[-1].text or "")
        eve.start_bot("t999999")
        await h.settle()
        assert "not playing" in (fake.sent(eve)[-1].text or "")
        assert not fake.errors


async def test_the_clock_shows_on_the_board_and_the_panel_and_refreshes_at_the_reminder(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=30))
    ann, bob = fake.user(921, "Ann"), fake.user(922, "Bob", language_code="ru")
    group: Chat = fake.group(-1009210, "Clocks")
    async with running_bot(tmp_path, fake, timer_tick=0.05) as h:
        ann.start_bot()
        bob.start_bot()
        row = await start_group_duel(h, group, ann, bob, "duel deal=short timer=60")
        stored = await h.services.flow.load(row.match_id)
        mover = ann if stored.row.seats[stored.game.current_player].user_id == ann.id else bob
        post = [m for m in fake.sent(group, deleted=False) if m.kind == "photo"][-1]
        assert (post.caption or "").splitlines()[-1].startswith("⏱ "), post.caption
        assert "to move" in (post.caption or "")
        live = panel(fake, mover)
        assert live is not None
        word = "компьютер" if mover is bob else "computer"
        caption = live.caption or ""
        assert "⏱" in caption and ("1:00" in caption or "0:5" in caption), caption
        assert word in caption
        # Two thirds of the minute later the reminder: the board's clock edited in place (its
        # button kept) and a fresh panel that says what happens at zero.
        await fake.wait_for_message(mover, "⏰", timeout=10)
        await h.settle()
        edited = fake.message(group, post.message_id)
        last = (edited.caption or "").splitlines()[-1]
        assert last.startswith("⏱ 0:"), edited.caption
        assert int(last.split("0:")[1][:2]) <= 25
        assert turn_link(edited) is not None
        reminded = panel(fake, mover)
        assert reminded is not None and "⏰" in (reminded.caption or "")
        assert word in (reminded.caption or "")
        assert fake.max_sends_in_window(group, 60, edits=True) <= 20
        # The same reminder again (a job run twice in the scaled mode, another process's
        # tick) says nothing more: no second panel, no second edit of the board's clock.
        again = await h.services.flow.ticker.remind(row.match_id, stored.next_seq)
        assert again == []
