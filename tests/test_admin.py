"""``/admin``, the owners' commands (issue 41), through the real python-telegram-bot stack
against the fake Bot API: refused to everyone else, the figures, pause and resume, and a
notice to every chat with a match being played."""

from __future__ import annotations

from pathlib import Path

import pytest

from chat.config import ConfigError, load_config
from krendzu import Match, Place
from krendzu.coords import frame_for
from tests.bot_harness import BOT, FastClock, running_bot, start_group_duel, start_private_match
from tests.fakebot import FakeTelegram

OWNER = 900


def command_for(game: Match) -> str:
    """A legal step of the player to move, typed in the group."""
    step = next((a for a in game.legal_actions() if isinstance(a, Place)), None)
    if step is not None:
        frame = frame_for(game.tour.observation(None).placements)
        return f"/play@{BOT} {step.card.code()} {frame.label(step.x, step.y)}"
    return f"/pass@{BOT}"


def texts(fake: FakeTelegram, chat: object) -> list[str]:
    return [m.text or m.caption or "" for m in fake.sent(chat)]  # type: ignore[arg-type]


async def test_admin_is_refused_to_everyone_but_the_owners_and_changes_nothing(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    owner, eve = fake.user(OWNER, "Olga"), fake.user(66, "Eve")
    group = fake.group(-1001, "Table")
    async with running_bot(tmp_path, fake, admin_ids=frozenset({OWNER})) as h:
        for person in (owner, eve):
            person.start_bot()
        await h.settle()
        eve.send(eve.chat, "/admin pause")
        eve.send(eve.chat, "/admin")
        await h.settle()
        assert texts(fake, eve)[-2:] == ["/admin is for the bot's operators."] * 2
        assert not await h.services.flow.paused()
        owner.send(group, f"/admin@{BOT}")  # the figures are nobody else's business
        await h.settle()
        assert texts(fake, group)[-1] == "/admin works in my private chat only."
        assert not any("People:" in t for t in texts(fake, group))


async def test_the_owner_pauses_new_matches_while_running_ones_finish(tmp_path: Path) -> None:
    """/admin pause: a new set-up is refused politely in a group, the match being played
    goes on (a move is accepted), the figures say paused; /admin resume: set-ups again."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    owner = fake.user(OWNER, "Olga")
    ann, bob, cat = fake.user(1, "Ann"), fake.user(2, "Bob"), fake.user(3, "Cat")
    playing, other = fake.group(-1001, "Playing"), fake.group(-1002, "Other")
    async with running_bot(tmp_path, fake, admin_ids=frozenset({OWNER})) as h:
        for person in (owner, ann, bob, cat):
            person.start_bot()
        await h.settle()
        row = await start_group_duel(h, playing, ann, bob)
        owner.send(owner.chat, "/admin pause")
        await h.settle()
        assert "New matches are refused until /admin resume" in texts(fake, owner)[-1]
        cat.send(other, f"/new@{BOT} duel")
        await h.settle()
        assert "new matches cannot start for a little while" in texts(fake, other)[-1]
        assert await h.services.store.open_lobby(other.id) is None
        stored = await h.services.flow.load(row.match_id)
        mover = {1: ann, 2: bob}[stored.row.seats[stored.game.current_player].user_id or 0]
        before = stored.row.move_count
        mover.send(playing, command_for(stored.game))  # the match goes on
        await h.settle()
        after = await h.services.flow.load(row.match_id)
        assert after.row.move_count > before, fake.describe()
        owner.send(owner.chat, "/admin")
        await h.settle()
        figures = texts(fake, owner)[-1]
        assert "New matches: refused (paused)" in figures
        assert "Being played now: 1; set-ups waiting for players: 0" in figures
        assert "People: 4" in figures and "Matches started today (UTC): 1" in figures
        owner.send(owner.chat, "/admin resume")
        await h.settle()
        assert texts(fake, owner)[-1] == "New matches may start again."
        cat.send(other, f"/new@{BOT} duel")
        await h.settle()
        assert await h.services.store.open_lobby(other.id) is not None


async def test_a_notice_reaches_every_chat_with_a_match_being_played(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    owner = fake.user(OWNER, "Olga")
    ann, bob, cat = fake.user(1, "Ann"), fake.user(2, "Bob"), fake.user(3, "Cat")
    playing, idle = fake.group(-1001, "Playing"), fake.group(-1002, "Idle")
    async with running_bot(tmp_path, fake, admin_ids=frozenset({OWNER}), ai_delay=0.0) as h:
        for person in (owner, ann, bob, cat):
            person.start_bot()
        await h.settle()
        await start_group_duel(h, playing, ann, bob)
        await start_private_match(h, cat)  # a private match with the computer
        owner.send(owner.chat, "/admin notice")
        await h.settle()
        assert texts(fake, owner)[-1] == "Write the notice after the command: /admin notice TEXT."
        owner.send(owner.chat, "/admin notice Restart at 22:00 UTC,\nback in two minutes.")
        await h.settle()
        assert texts(fake, owner)[-1] == "The notice goes to 2 chats with a match being played."
        note = "🔧 Restart at 22:00 UTC,\nback in two minutes."
        assert texts(fake, playing)[-1] == note
        assert note in texts(fake, cat)
        assert note not in texts(fake, idle) and note not in texts(fake, ann)


def test_the_owners_are_user_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KRENDZU_ADMIN_IDS", "12, 34 56")
    assert load_config(None).admin_ids == frozenset({12, 34, 56})
    monkeypatch.setenv("KRENDZU_ADMIN_IDS", "")
    assert load_config(None).admin_ids == frozenset()
    monkeypatch.setenv("KRENDZU_ADMIN_IDS", "12, @olga")
    with pytest.raises(ConfigError, match="KRENDZU_ADMIN_IDS"):
        load_config(None)
