"""First minutes: the bot says hello when added to a group, with a button that sets up a
match, and describes itself (in both languages) before anyone presses Start."""

from __future__ import annotations

from pathlib import Path

from tests.bot_harness import BOT, FastClock, running_bot
from tests.fakebot import FakeTelegram


async def test_added_to_a_group_it_greets_in_three_lines_with_a_new_match_button(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(601, "Анна", language_code="ru")
    group = fake.group(-1006010, "Друзья", bot=False, members=(ann,))
    async with running_bot(tmp_path, fake) as h:
        fake.add_bot(group, by=ann)
        await h.settle()
        hello = fake.last(group)
        assert hello is not None and len((hello.text or "").split("\n")) == 3
        assert "Крэндзю" in (hello.text or "") and "/new" in (hello.text or "")
        button = hello.button(text="▶ Новый матч")
        ann.press(hello, data=button["callback_data"])
        await h.settle()
        lobby = await h.services.store.open_lobby(group.id)
        assert lobby is not None and lobby.creator_id == ann.id
        assert "Крэндзю — новый матч" in (fake.last(group).text or "")
        # Pressed again: the same lobby is shown, no second one.
        ann.press(hello, data=button["callback_data"])
        await h.settle()
        assert (await h.services.store.open_lobby(group.id)).lobby_id == lobby.lobby_id


async def test_the_bot_describes_itself_in_both_languages(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    async with running_bot(tmp_path, fake):
        pass
    for language in ("", "ru"):
        description = fake.descriptions[("description", language)]
        short = fake.descriptions[("short_description", language)]
        assert 0 < len(description) <= 512 and 0 < len(short) <= 120
        assert "/new" in description
    assert "друзьями" in fake.descriptions[("description", "ru")]
    assert "friends" in fake.descriptions[("description", "")]
