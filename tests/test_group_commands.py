"""Commands answered in the private chat (``/hand``, ``/hint``, ``/exchange``, ``/discard``),
typed in a group by someone the bot cannot write to privately: they never pressed Start (the
fake Bot API answers 403 "bot can't initiate conversation", as Telegram does) or blocked the
bot. The group gets one line with a button that opens the private chat, once in a while per
person, never silence and never a card."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chat.i18n import Catalogs
from chat.services import PRIVATE_NUDGE_SECONDS
from krendzu import Card
from krendzu.cards import DECK_SIZE
from tests.bot_harness import BOT, FastClock, Harness, running_bot, start_group_duel
from tests.fakebot import Chat, FakeTelegram, FakeUser, Message

CYRILLIC = re.compile("[\u0400-\u04ff]")
CATALOGS = Catalogs()
START_LINK = f"https://t.me/{BOT}?start="
CARD = re.compile(r"\b(?:[6-9]|10|[TJQKA])[CDHS]\b|[♣♦♥♠]")

COMMANDS = [f"/hand@{BOT}", f"/hint@{BOT}", f"/exchange@{BOT} 2", f"/discard@{BOT} QC"]


def expected_line(language: str, name: str, command: str) -> str:
    tr = CATALOGS.get(language)
    return tr._("{name}, I answer {command} in our private chat, and I cannot write to you "
                "there yet: tap the button below, then Start.", name=name, command=command)


async def said_after(h: Harness, group: Chat, user: FakeUser, text: str) -> list[Message]:
    """What the bot posts in the group after ``user`` types ``text`` there."""
    before = len(h.fake.sent(group))
    user.send(group, text)
    await h.settle()
    return h.fake.sent(group)[before:]


def start_button(message: Message) -> str:
    """The one button of the line: a link to the bot's private chat with Start."""
    buttons = message.buttons()
    assert len(buttons) == 1 and "callback_data" not in buttons[0], buttons
    url = buttons[0]["url"]
    assert url.startswith(START_LINK), url
    return url


@pytest.mark.parametrize("language", ["en", "ru"])
async def test_a_private_command_from_someone_who_never_started_the_bot_gets_a_start_button(
        tmp_path: Path, language: str) -> None:
    clock = FastClock(speed=1)  # the quiet time is counted on this clock, moved by hand
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann = fake.user(801, "Ann", language_code=language)
    bob = fake.user(802, "Bob", language_code=language)
    eve = fake.user(803, "Eve", language_code=language)  # never presses Start (until the end)
    group = fake.group(-1008010, "Club", bot=False, members=(ann, bob, eve))
    async with running_bot(tmp_path, fake) as h:
        fake.add_bot(group, by=ann)  # the group speaks Ann's language
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        await start_group_duel(h, group, ann, bob, "duel timer=off")
        for text in COMMANDS:
            command = text.split()[0].split("@")[0]
            said = await said_after(h, group, eve, text)
            assert len(said) == 1, (text, [m.text for m in said])
            line = said[0].text or ""
            assert line == expected_line(language, "Eve", command), line
            assert "\n" not in line and not CARD.search(line), line
            assert bool(CYRILLIC.search(line)) == (language == "ru"), line
            assert bool(CYRILLIC.search(said[0].button_texts()[0])) == (language == "ru")
            start_button(said[0])
            # The same person again, at once: no second line (one per person per while).
            for again in COMMANDS:
                assert await said_after(h, group, eve, again) == [], again
            clock.advance(PRIVATE_NUDGE_SECONDS + 1)
        assert fake.sent(eve) == [], "nothing reached Eve's private chat"
        # Another person is told on their own, whatever Eve's quiet time.
        cy = fake.user(804, "Cy", language_code=language)
        said = await said_after(h, group, cy, f"/hint@{BOT}")
        assert [m.text for m in said] == [expected_line(language, "Cy", "/hint")]
        # Eve follows the button and presses Start: the command is answered privately now,
        # and the group hears nothing more of it.
        url = start_button(await_last_line(fake, group, "Eve"))
        eve.start_bot(url.removeprefix(START_LINK))
        await h.settle()
        assert fake.sent(eve), "Start was answered"
        clock.advance(PRIVATE_NUDGE_SECONDS + 1)
        before_private = len(fake.sent(eve))
        assert await said_after(h, group, eve, f"/hint@{BOT}") == []
        hint = [m.text for m in fake.sent(eve)[before_private:]]
        assert hint == [CATALOGS.get(language)._("A hint is given on your own turn.")], hint


def await_last_line(fake: FakeTelegram, group: Chat, name: str) -> Message:
    return next(m for m in reversed(fake.sent(group))
                if (m.text or "").startswith(f"{name}, ") and m.buttons())


async def test_a_player_who_blocked_the_bot_is_told_in_the_group_and_keeps_the_hand_secret(
        tmp_path: Path) -> None:
    """The player to move blocks the bot, then types a move with a card they do not hold
    (refused privately: it names a card) and asks for the hand and a hint in the group: one
    line with the button and no card, then quiet; Start brings the hand privately."""
    clock = FastClock(speed=1)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann, bob = fake.user(811, "Ann"), fake.user(812, "Bob")
    group = fake.group(-1008110, "Duel")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        row = await start_group_duel(h, group, ann, bob, "duel timer=off")
        stored = await h.services.flow.load(row.match_id)
        seat = stored.game.current_player
        mover = ann if row.seats[seat].user_id == ann.id else bob
        held = set(stored.game.observation(seat).tour.hand)
        stranger = next(Card(i) for i in range(DECK_SIZE) if Card(i) not in held)
        mover.block_bot()
        await h.settle()
        said = await said_after(h, group, mover, f"/play@{BOT} {stranger.code()} M12")
        assert [m.text for m in said] == [expected_line("en", mover.first_name, "/play")]
        url = start_button(said[0])
        for text in (f"/hand@{BOT}", f"/hint@{BOT}", f"/exchange@{BOT} 1",
                     f"/discard@{BOT} QC"):
            assert await said_after(h, group, mover, text) == [], text
        clock.advance(PRIVATE_NUDGE_SECONDS + 1)
        said = await said_after(h, group, mover, f"/hand@{BOT}")
        assert [m.text for m in said] == [expected_line("en", mover.first_name, "/hand")]
        assert (await h.services.flow.load(row.match_id)).next_seq == stored.next_seq
        before = len(fake.sent(mover))
        mover.start_bot(url.removeprefix(START_LINK))
        await h.settle()
        assert [m for m in fake.sent(mover)[before:] if m.kind == "photo"], \
            "Start brought the hand (and the panel) privately"
