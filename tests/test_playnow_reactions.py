"""Issue 40: "There is no free text between strangers: the only messages are game actions and
a fixed set of emoji reactions that players can turn off." Driven through the fake Bot API:
the faces under a pool match's start and summary messages reach the other player as one
line with the sender's display name; a forged press (another's match, a face that does not
exist) sends nothing and is answered politely; whoever turned reactions off (🔕, or
/settings reactions=off in the private chat, kept across a restart) neither gets nor sends
them; a block ends them; and a flood of faces is held to the per-person limit."""

from __future__ import annotations

import random
from pathlib import Path

from chat.flow.views.reactions import REACTIONS
from tests.bot_harness import BOT, FastClock, Harness, play_out_with_buttons, running_bot
from tests.fakebot import FakeTelegram
from tests.fakebot.model import FakeUser, Message
from tests.test_playnow import POOL, texts


def faces(message: Message) -> dict[str, str]:
    """The reaction buttons under a message: face → callback data."""
    return {b["text"]: b["callback_data"] for b in message.buttons()
            if b["text"] in REACTIONS}


def start_message(fake: FakeTelegram, user: FakeUser) -> Message:
    """The match's start ("⚡ Opponent found…"): the first message with the faces."""
    return next(m for m in fake.sent(user) if faces(m))


def lines_from(fake: FakeTelegram, user: FakeUser, name: str) -> list[str]:
    """The reactions ``user`` received from ``name``."""
    return [m.text or "" for m in fake.sent(user) if (m.text or "").startswith(f"{name}: ")]


async def pair(h: Harness, first: FakeUser, second: FakeUser) -> int:
    for user in (first, second):
        user.send(user.chat, "/playnow")
        await h.settle()
    rows = await h.services.store.matches_of_user(first.id)
    assert len(rows) == 1, h.fake.describe()
    return rows[0].match_id


async def test_reactions_reach_the_other_player_unless_turned_off(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(4401, "Ann", username="ann_handle")
    bob = fake.user(4402, "Bob", username="bob_handle", language_code="ru")
    cy = fake.user(4403, "Cy")
    async with running_bot(tmp_path, fake, **POOL) as h:
        for user in (ann, bob, cy):
            user.start_bot()
        await h.settle()
        match_id = await pair(h, ann, bob)
        start = start_message(fake, ann)
        assert (start.text or "").startswith("⚡ Opponent found: Bob")
        assert list(faces(start)) == list(REACTIONS)
        assert list(faces(start_message(fake, bob))) == list(REACTIONS)

        # Ann's 👍 reaches Bob as one line, her display name only, with 🔕 under it.
        query = ann.press(start, data=faces(start)["👍"])
        await h.settle()
        assert fake.answer(query).text == "Sent: 👍"
        got = [m for m in fake.sent(bob) if (m.text or "").startswith("Ann: ")]
        assert [m.text for m in got] == ["Ann: 👍"]
        assert [b["text"] for b in got[0].buttons()] == ["🔕 Выключить реакции"]
        assert lines_from(fake, ann, "Ann") == [], "nothing comes back to the sender"
        assert not any("ann_handle" in t or "tg://" in t for t in texts(fake, bob))

        # Forged presses: a stranger's for their match, a face that does not exist.
        before = (len(fake.sent(ann)), len(fake.sent(bob)))
        greeting = fake.sent(cy)[0]
        query = cy.press(greeting, data=faces(start)["🤝"], forged=True)
        await h.settle()
        assert fake.answer(query).text == "This button is not valid any more."
        query = ann.press(start, data=f"v1:m:{match_id}:0:react:9", forged=True)
        await h.settle()
        assert fake.answer(query).text == "This button is not valid any more."
        assert (len(fake.sent(ann)), len(fake.sent(bob))) == before
        assert not [m for m in fake.sent(cy) if ": " in (m.text or "")
                    and (m.text or "").split(": ")[-1] in REACTIONS]

        # Bob turns them off under the line he got: Ann's next face reaches nobody (she is
        # not told why), and Bob's own are not sent either.
        bob.press(got[0], data=got[0].buttons()[0]["callback_data"])
        await h.settle()
        query = ann.press(start, data=faces(start)["😮"])
        await h.settle()
        assert fake.answer(query).text == "Sent: 😮"
        assert lines_from(fake, bob, "Ann") == ["Ann: 👍"]
        bob_start = start_message(fake, bob)
        query = bob.press(bob_start, data=faces(bob_start)["🤝"])
        await h.settle()
        assert "/settings reactions=on" in (fake.answer(query).text or "")
        assert lines_from(fake, ann, "Bob") == []

        # /settings in the private chat shows it and turns it on again.
        bob.send(bob.chat, "/settings")
        await h.settle()
        assert "Эмодзи-реакции в матчах «Играть сейчас»: нет." in (
            fake.last(bob).text or ""), fake.last(bob)
        ann.send(ann.chat, "/settings reactions=maybe")
        await h.settle()
        assert "/settings reactions=on" in (fake.last(ann).text or "")
        bob.send(bob.chat, "/settings reactions=on")
        await h.settle()
        ann.press(start, data=faces(start)["😅"])
        await h.settle()
        assert lines_from(fake, bob, "Ann") == ["Ann: 👍", "Ann: 😅"]

        # Each player's summary carries the faces too, under 🚫 Block.
        await play_out_with_buttons(h, [ann, bob], match_id, random.Random(3))
        await h.settle()
        summary = next(m for m in reversed(fake.sent(bob)) if faces(m))
        assert [b["text"] for b in summary.buttons()] == ["🚫 Заблокировать", *REACTIONS]
        bob.press(summary, data=faces(summary)["🤝"])
        await h.settle()
        assert lines_from(fake, ann, "Bob") == ["Bob: 🤝"]
        # Once Ann blocks Bob, his faces reach her no more.
        ann_summary = next(m for m in reversed(fake.sent(ann)) if faces(m))
        ann.press(ann_summary, data=next(b["callback_data"] for b in ann_summary.buttons()
                                         if b["text"] == "🚫 Block"))
        await h.settle()
        query = bob.press(summary, data=faces(summary)["😮"])
        await h.settle()
        assert fake.answer(query).text == "Отправлено: 😮"
        assert lines_from(fake, ann, "Bob") == ["Bob: 🤝"]
        bob.send(bob.chat, "/settings reactions=off")
        await h.settle()

    # Off is kept: after a restart Bob still gets nothing, and /settings says so.
    async with running_bot(tmp_path, fake, **POOL) as h:
        ann.press(start, data=faces(start)["👍"])
        await h.settle()
        assert lines_from(fake, bob, "Ann") == ["Ann: 👍", "Ann: 😅"]
        bob.send(bob.chat, "/settings")
        await h.settle()
        assert "«Играть сейчас»: нет." in (fake.last(bob).text or "")


async def test_a_flood_of_reactions_is_held_to_the_per_person_limit(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=1.0))
    ann, bob = fake.user(4411, "Ann"), fake.user(4412, "Bob")
    async with running_bot(tmp_path, fake, info_per_user=3.0, **POOL) as h:
        for user in (ann, bob):
            user.start_bot()
        await h.settle()
        await pair(h, ann, bob)  # Ann's /playnow is one of her three a minute
        start = start_message(fake, ann)
        queries = [ann.press(start, data=faces(start)["👍"]) for _ in range(8)]
        await h.settle()
        assert lines_from(fake, bob, "Ann") == ["Ann: 👍"] * 2
        answers = [fake.answer(q).text for q in queries]
        assert answers.count("Sent: 👍") == 2
        assert sum("please wait a minute" in (a or "") for a in answers) == 1, answers
