"""Run the real application in-process against the fake Bot API, and play like people do."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from telegram.ext import Application

from chat.compose import build_application
from chat.config import Config
from chat.services import Services
from storage import MatchRow
from tests.fakebot import Chat, FakeTelegram, FakeUser, Message

BOT = "krendzu_test_bot"


class FastClock:
    """Seconds that pass ``speed`` times faster than real ones (shared by bot and fake), so a
    60-second flood window lasts a fraction of a real second."""

    def __init__(self, speed: float = 60.0) -> None:
        self.speed = speed
        self.start = time.time()
        self.offset = 0.0

    def __call__(self) -> float:
        return self.start + (time.time() - self.start) * self.speed + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@dataclass
class Harness:
    fake: FakeTelegram
    app: Application
    config: Config

    @property
    def services(self) -> Services:
        return self.app.bot_data["services"]

    def busy(self) -> bool:
        return bool(self.fake.pending_updates() or not self.app.update_queue.empty()
                    or self.app.update_processor.current_concurrent_updates
                    or self.services.pacer.pending or self.services.flow.broadcast.announcing()
                    or not self.services.delivery.is_idle())

    async def settle(self, quiet: float = 0.03, timeout: float = 30.0) -> None:
        """Until every update is handled, every notice delivered, no computer pending."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while loop.time() < end:
            await self.fake.wait_until_idle(quiet=quiet, timeout=timeout)
            await self.services.pacer.idle()
            await self.services.flow.broadcast.told()
            await self.services.delivery.idle()
            if self.busy():
                await asyncio.sleep(quiet)
                continue
            await asyncio.sleep(quiet)
            if not self.busy():
                return
        raise AssertionError("the bot did not settle:\n" + self.fake.describe())


def test_config(tmp_path: Path, fake: FakeTelegram, **changes: object) -> Config:
    base = Config(token=fake.token, database=str(tmp_path / "krendzu.sqlite3"),
                  log_level="INFO", api_base_url=None, ai_delay=0.0, ai_workers=0,
                  draw_workers=0, hard_budget_ms=100.0, overall_rate=1000.0,
                  timer_tick=3600.0,  # turn timers fire only where a test asks (timer_tick=…)
                  # Simulated people tap far faster than real ones: the per-user limits
                  # apply only where a test asks for them (tests/test_abuse.py).
                  user_per_minute=1e6, info_per_user=1e6, info_per_chat=1e6,
                  # and each asks again and again: every request is answered anew
                  # unless a test asks for production's 5 minutes.
                  info_repeat_minutes=0.0,
                  # The private panels unless a test plays in the group (issue 42:
                  # tests/test_ephemeral_play.py); the bot's default is the group.
                  panels_in_group=False)
    return replace(base, **changes)  # type: ignore[arg-type]


@asynccontextmanager
async def running_bot(tmp_path: Path, fake: FakeTelegram,
                      **changes: object) -> AsyncIterator[Harness]:
    config = test_config(tmp_path, fake, **changes)
    app = build_application(config, request=fake.request(), updates_request=fake.request(),
                            clock=fake.clock)
    async with app:
        assert app.post_init is not None and app.post_shutdown is not None
        await app.post_init(app)  # run_polling would call it; the harness starts by hand
        await app.start()
        assert app.updater is not None
        await app.updater.start_polling(poll_interval=0, timeout=1)
        harness = Harness(fake, app, config)
        try:
            yield harness
        finally:
            await app.updater.stop()
            await app.stop()
            assert app.post_stop is not None
            await app.post_stop(app)
            await app.post_shutdown(app)


async def start_group_duel(h: Harness, group: Chat, creator: FakeUser, joiner: FakeUser,
                           args: str = "duel") -> MatchRow:
    """``/new@bot <args>`` by ``creator``, ``/join@bot`` by ``joiner``, ``/go@bot``: the
    running match's row (both must have started the bot, unless the group's panels open in
    the group)."""
    return await start_group_match(h, group, [creator, joiner], args)


async def start_group_match(h: Harness, group: Chat, people: list[FakeUser],
                            args: str) -> MatchRow:
    """``/new@bot <args>`` by the first of ``people``, ``/join@bot`` by each other one,
    ``/go@bot``: the running match's row (a trio or a 2 v 2 as well as a duel)."""
    creator, *others = people
    creator.send(group, f"/new@{BOT} {args}")
    await h.settle()
    for user in others:
        user.send(group, f"/join@{BOT}")
        await h.settle()
    creator.send(group, f"/go@{BOT}")
    await h.settle()
    row = await h.services.store.active_match(group.id)
    assert row is not None, h.fake.describe()
    return row


async def start_private_match(h: Harness, user: FakeUser,
                              args: str = "deal=short level=easy") -> int:
    """``/new ARGS`` in ``user``'s private chat, then ▶ Start: their match against the
    computer (they must have started the bot); its id."""
    user.send(user.chat, f"/new {args}")
    await h.settle()
    lobby = h.fake.last(user)
    assert lobby is not None, h.fake.describe()
    user.press(lobby, data=next(b["callback_data"] for b in lobby.buttons()
                                if b["callback_data"].endswith(":go")))
    await h.settle()
    row = await h.services.store.active_match(user.id)
    assert row is not None, h.fake.describe()
    return row.match_id


def panel(fake: FakeTelegram, user: FakeUser) -> Message | None:
    """The user's newest private message with match buttons (the live panel)."""
    for message in reversed(fake.sent(user, deleted=False)):
        data = [b.get("callback_data", "") for b in message.buttons()]
        if any(d.startswith("v1:m:") and not d.endswith(":rematch") for d in data):
            return message
    return None


def buttons_with(message: Message, marker: str) -> list[dict]:
    return [b for b in message.buttons()
            if panel_op(b.get("callback_data", "")).startswith(marker)]


def panel_op(data: str) -> str:
    """The op of a match button's data ``v1:m:<match>:<seq>:<op>`` (an op may hold colons:
    ``pQC@0,1:end``); other data as it is."""
    parts = data.split(":", 4)
    return parts[4] if len(parts) == 5 and parts[1] == "m" else data.split(":")[-1]


async def play_step_with_buttons(h: Harness, user: FakeUser, rng: random.Random, *,
                                 message: Message | None = None) -> bool:
    """Make one step from the user's panel with taps (``message``: that panel, e.g. an
    ephemeral one in a group; default: the private one); False if they have no panel."""
    message = message or panel(h.fake, user)
    if message is None:
        return False
    ops = {b["callback_data"].split(":")[-1][:1]: b for b in message.buttons()
           if "callback_data" in b}
    choices = [b for b in message.buttons() if b.get("callback_data", "").startswith("v1:m:")]
    ann = buttons_with(message, "a")
    drops = buttons_with(message, "d")
    cards = buttons_with(message, "c")
    if ann:
        user.press(message, data=rng.choice(ann)["callback_data"])
    elif drops:
        user.press(message, data=rng.choice(drops)["callback_data"])
        await h.settle()
        user.press(message, data=buttons_with(message, "x")[0]["callback_data"])
    elif cards:
        finish = [b for b in choices if panel_op(b["callback_data"]) in ("pass", "end")]
        if finish and rng.random() < 0.15:
            user.press(message, data=finish[0]["callback_data"])
        else:
            user.press(message, data=rng.choice(cards)["callback_data"])
            await h.settle()
            seconds = buttons_with(message, "c")  # a defender's second cards, under "+"
            if seconds and rng.random() < 0.4:
                # Two cards: the second one picked first; after the first one's cell the
                # panel asks for the second one's.
                user.press(message, data=rng.choice(seconds)["callback_data"])
                await h.settle()
                await press_a_cell(h, user, message, rng)
                if not (buttons_with(message, "p") or buttons_with(message, "k")):
                    return True
            await press_a_cell(h, user, message, rng)
            return True
    elif places := buttons_with(message, "p"):  # the tour's opening: a card key places it
        user.press(message, data=rng.choice(places)["callback_data"])
    else:
        del ops
        return False
    await h.settle()
    return True


async def play_out_with_buttons(h: Harness, users: list[FakeUser], match_id: int,
                                rng: random.Random) -> None:
    """Play the match out from its players' private panels, a step at a time."""
    for _ in range(600):
        if (await h.services.store.get_match(match_id)).status.value != "active":
            return
        for user in users:
            if await play_step_with_buttons(h, user, rng):
                break
        else:
            await h.settle()
    raise AssertionError("the match did not end:\n" + h.fake.describe())


async def press_a_cell(h: Harness, user: FakeUser, message: Message,
                       rng: random.Random) -> None:
    """On a panel asking for a card's cell: a column first if it asks for one, then a cell."""
    columns = buttons_with(message, "k")
    if columns:
        user.press(message, data=rng.choice(columns)["callback_data"])
        await h.settle()
    cells = buttons_with(message, "p")
    assert cells, f"no cell buttons after choosing a card: {message.buttons()}"
    user.press(message, data=rng.choice(cells)["callback_data"])
    await h.settle()


def live_panel(fake: FakeTelegram, group: Chat, user: FakeUser) -> Message | None:
    """The newest ephemeral message ``user`` sees in the group with match buttons."""
    for message in reversed(fake.ephemeral(group, user)):
        if any(b.get("callback_data", "").startswith("v1:m:") for b in message.buttons()):
            return message
    return None


def open_button(fake: FakeTelegram, group: Chat) -> tuple[Message, dict] | None:
    """The newest board post's "your move" button (a callback in a group whose panels open
    there, never a link to the private chat)."""
    for message in reversed(fake.sent(group, deleted=False)):
        for button in message.buttons():
            if button.get("callback_data", "").endswith(":open"):
                return message, button
            assert "?start=t" not in button.get("url", ""), "a link out of the group"
        if message.kind == "photo":
            return None
    return None
