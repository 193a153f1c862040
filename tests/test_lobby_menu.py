"""The lobby's keyboard as players see it (issue 27, item 9): a short main view (Join,
Leave, Add computer, ⚙ Settings, Start, Cancel), the computer levels and a settings sub-menu
that open on a press, only the creator changing the settings, forged choices refused, and the
old ↻ button data of lobby messages still in chats accepted."""

from __future__ import annotations

from pathlib import Path

from tests.bot_harness import BOT, FastClock, Harness, running_bot
from tests.fakebot import FakeTelegram, FakeUser, Message
from tests.fakebot.model import Chat


def lobby_message(h: Harness, group: Chat) -> Message:
    """The group's lobby message as it is now (edited in place)."""
    found = [m for m in h.fake.sent(group, deleted=False)
             if any(b.get("callback_data", "").startswith("v1:l:") for b in m.buttons())]
    assert found, h.fake.describe()
    return h.fake.message(group, found[-1].message_id)


def ops(message: Message) -> list[str]:
    """The lobby ops of the message's buttons (``v1:l:<id>:<op>`` → ``<op>``)."""
    return [b["callback_data"].split(":", 3)[3] for b in message.buttons()
            if b.get("callback_data", "").startswith("v1:l:")]


def button_for(message: Message, op: str) -> dict:
    found = [b for b in message.buttons() if b.get("callback_data", "").endswith(f":{op}")
             and b["callback_data"].split(":", 3)[3] == op]
    assert found, f"no {op!r} button: {[b.get('text') for b in message.buttons()]}"
    return found[0]


async def press(h: Harness, user: FakeUser, message: Message, op: str, *,
                forged: bool = False) -> str:
    """``user`` presses the lobby button ``op`` (or sends its data, ``forged``); the toast."""
    data = (f"v1:l:{lobby_id_of(message)}:{op}" if forged
            else button_for(message, op)["callback_data"])
    query = user.press(message, data=data, forged=forged)
    await h.settle()
    answer = h.fake.answer(query)
    assert answer.answered, h.fake.describe()
    return answer.text or ""


def lobby_id_of(message: Message) -> int:
    return int(next(b["callback_data"] for b in message.buttons()
                    if b.get("callback_data", "").startswith("v1:l:")).split(":")[2])


async def open_lobby(h: Harness, group: Chat, creator: FakeUser, args: str = "") -> Message:
    creator.send(group, f"/new@{BOT} {args}".rstrip())
    await h.settle()
    return lobby_message(h, group)


def setup(fake: FakeTelegram) -> tuple[FakeUser, FakeUser, Chat]:
    ann = fake.user(31, "Ann")
    bob = fake.user(32, "Bob")
    return ann, bob, fake.group(-100931, "Menus")


async def test_a_fresh_lobby_shows_at_most_eight_buttons(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob, group = setup(fake)
    cy = fake.user(33, "Cy")  # never started the bot: the lobby shows the private-chat link
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        lobby = await open_lobby(h, group, ann, "teams")
        assert len(lobby.buttons()) <= 8, lobby.button_texts()
        assert set(ops(lobby)) == {"join", "leave", "menu:add", "menu:settings", "go", "cancel"}
        assert not any("↻" in b["text"] for b in lobby.buttons())
        assert "⚙ Settings" in lobby.button_texts()
        # Computers: the levels show only when asked for, with a way back.
        await press(h, ann, lobby, "menu:add")
        lobby = lobby_message(h, group)
        assert {"add:easy", "add:normal", "add:hard", "menu:main"} <= set(ops(lobby))
        assert "menu:settings" not in ops(lobby) and len(lobby.buttons()) <= 8
        cy.press(lobby, data=button_for(lobby, "join")["callback_data"])
        await h.settle()
        lobby = lobby_message(h, group)  # the link row joins: still about eight
        assert any(b.get("url") for b in lobby.buttons()) and len(lobby.buttons()) <= 9
        await press(h, ann, lobby, "menu:main")
        lobby = lobby_message(h, group)
        assert len(lobby.buttons()) <= 8 and "add:hard" not in ops(lobby)
        # Alone against the computer, in Russian for a Russian-speaking player.
        dan = fake.user(34, "Дан", language_code="ru")
        dan.start_bot()
        dan.send(dan.chat, "/new")
        await h.settle()
        private = fake.last(dan)
        assert private is not None and len(private.buttons()) <= 8
        assert "⚙ Настройки" in private.button_texts(), private.button_texts()


async def test_computers_join_from_the_level_row(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, _bob, group = setup(fake)
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()
        lobby = await open_lobby(h, group, ann)
        await press(h, ann, lobby, "menu:add")
        assert "Hard" in await press(h, ann, lobby_message(h, group), "add:hard")
        lobby = lobby_message(h, group)
        assert "🤖 Hard" in (lobby.text or "")
        # The table is full: no levels, no Add computer; the settings stay reachable.
        assert {"add:hard", "menu:add"}.isdisjoint(ops(lobby)) and "menu:settings" in ops(lobby)


async def test_settings_sub_menu_sets_the_tours_of_the_match(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob, group = setup(fake)
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        lobby = await open_lobby(h, group, ann)
        await press(h, ann, lobby, "menu:settings")
        menu = lobby_message(h, group)
        texts = menu.button_texts()
        for name in ("Tours:", "Deal:", "Exchange:", "Timer:", "◀ Back", "✓ duel", "✓ 2",
                     "✓ 12/14", "✓ off", "✓ 90", "teams", "trio, lone attacker"):
            assert name in texts, (name, texts)
        assert "join" not in ops(menu) and "Settings" in (menu.text or "")
        assert "Tours: 2 ·" in (menu.text or "")
        assert "Press one of the values" in await press(h, ann, menu, "set:tours")
        await press(h, ann, menu, "set:tours:4")
        menu = lobby_message(h, group)
        assert "Tours: 4 ·" in (menu.text or "") and "✓ 4" in menu.button_texts()
        assert "✓ 2" not in menu.button_texts()
        await press(h, ann, menu, "set:timer:180")
        assert "Turn timer: 180 s" in (lobby_message(h, group).text or "")
        await press(h, ann, menu, "menu:main")
        lobby = lobby_message(h, group)
        assert "join" in ops(lobby) and not any(op.startswith("set:") for op in ops(lobby))
        assert "Tours: 4 ·" in (lobby.text or "")  # the text keeps showing the settings
        assert "seated" in await press(h, bob, lobby, "join")
        await press(h, ann, lobby_message(h, group), "go")
        row = await h.services.store.active_match(group.id)
        assert row is not None, fake.describe()
        assert row.settings.tour_count == 4


async def test_only_the_creator_changes_settings(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob, group = setup(fake)
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        lobby = await open_lobby(h, group, ann)
        await press(h, bob, lobby, "join")
        before = lobby_message(h, group)
        toast = await press(h, bob, before, "menu:settings")
        assert "Only the creator" in toast, toast
        assert ops(lobby_message(h, group)) == ops(before)
        await press(h, ann, before, "menu:settings")
        menu = lobby_message(h, group)
        text = menu.text
        for op in ("set:tours:4", "set:table:teams", "set:timer:off"):
            assert "Only the creator" in await press(h, bob, menu, op)
        assert lobby_message(h, group).text == text
        stored = await h.services.store.open_lobby(group.id)
        assert stored is not None and stored.state.get("tours") is None
        assert stored.state["table"] == "duel" and stored.state["timer"] == 90
        # Back is anyone's: a sub-menu left open never hides Join from the others.
        await press(h, bob, menu, "menu:main")
        assert "join" in ops(lobby_message(h, group))


async def test_forged_settings_are_refused_politely(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob, group = setup(fake)
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        lobby = await open_lobby(h, group, ann)
        await press(h, ann, lobby, "menu:settings")
        text = lobby_message(h, group).text
        sent = len(fake.sent(group))
        for op in ("set:tours:999", "set:tours:3", "set:tours:10", "set:deal:huge",
                   "set:deal:large", "set:timer:7", "set:exchange:9", "set:colour:red",
                   "set:table:five", "menu:nowhere"):
            toast = await press(h, ann, lobby, op, forged=True)
            assert toast and "Traceback" not in toast, (op, toast)
        assert "not offered" in await press(h, ann, lobby, "set:tours:999", forged=True)
        assert "Only the creator" in await press(h, bob, lobby, "set:tours:999", forged=True)
        assert lobby_message(h, group).text == text and len(fake.sent(group)) == sent
        stored = await h.services.store.open_lobby(group.id)
        assert stored is not None and stored.state.get("tours") is None


async def test_old_cycle_buttons_still_work(tmp_path: Path) -> None:
    """Lobby messages posted before the sub-menu still carry ↻ data (and ``add``)."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, _bob, group = setup(fake)
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()
        lobby = await open_lobby(h, group, ann)
        await press(h, ann, lobby, "tours", forged=True)
        await press(h, ann, lobby, "exchange", forged=True)
        await press(h, ann, lobby, "timer", forged=True)
        text = lobby_message(h, group).text or ""
        assert "Tours: 4 ·" in text and "Exchange: 1" in text and "Turn timer: 180 s" in text
        await press(h, ann, lobby, "add", forged=True)
        assert "🤖 Normal" in (lobby_message(h, group).text or "")
