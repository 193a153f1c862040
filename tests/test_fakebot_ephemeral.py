"""The fake Bot API's ephemeral messages (Bot API 10.2/10.3), driven through python-telegram-bot.

PTB 22.8 stops at Bot API 10.0: the new parameters go through its documented escape hatches,
``api_kwargs`` on the send methods and ``Bot.do_api_request`` for the new methods, and the new
fields come back in ``Message.api_kwargs``. Each test pins one rule of the official text (or one
choice the emulator makes where the text is silent; see tests/fakebot/__init__.py).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import AsyncIterator, Awaitable
from typing import Any

import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, InputMediaPhoto, Update
from telegram.error import BadRequest, RetryAfter
from telegram.ext import Application, CallbackQueryHandler, CommandHandler, ContextTypes

from tests.fakebot import Chat, FakeClock, FakeTelegram, FakeUser, Message, errors

pytestmark = [
    pytest.mark.timeout(30),
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBUserWarning"),
]

START = 1_700_000_000.0
GROUP = -1001234567890


def png(width: int, height: int) -> bytes:
    """A valid grey PNG of the given size, made with the standard library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def fake(clock: FakeClock) -> FakeTelegram:
    emulator = FakeTelegram(clock=clock)
    yield emulator
    emulator.stop()
    assert not emulator.errors, emulator.errors


@pytest.fixture
async def bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    async with Bot(fake.token, request=fake.request(),
                   get_updates_request=fake.request()) as client:
        yield client


@pytest.fixture
def ann(fake: FakeTelegram) -> FakeUser:
    return fake.user(201, "Ann")


@pytest.fixture
def bob(fake: FakeTelegram) -> FakeUser:
    return fake.user(202, "Bob")


@pytest.fixture
def group(fake: FakeTelegram, ann: FakeUser, bob: FakeUser) -> Chat:
    return fake.group(GROUP, "Table", members=[ann, bob])


def panel_keyboard(*labels: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(x, callback_data=f"card:{x}")
                                  for x in labels]])


def to(user: FakeUser, **extra: Any) -> dict[str, Any]:
    """``api_kwargs`` of an ephemeral send to ``user`` (Bot API 10.3's shape)."""
    return {"ephemeral_message_parameters": {"receiver_user_id": user.id, **extra}}


async def expect(fake: FakeTelegram, description: str, call: Awaitable[object]) -> None:
    """``call`` fails with 400 and the emulator answered ``description``."""
    with pytest.raises(BadRequest):
        await call
    assert fake.calls[-1].status == 400
    assert fake.calls[-1].description == description


async def board(fake: FakeTelegram, bot: Bot, group: Chat) -> Message:
    """A public post with a button, as the bot's board post."""
    await bot.send_message(group.id, "board", reply_markup=panel_keyboard("open"))
    return fake.last(group)


async def test_the_10_2_flat_parameters_are_refused(fake: FakeTelegram, bot: Bot, group: Chat,
                                                    ann: FakeUser) -> None:
    """A request in 10.2's shape could show a hand to the whole group: it is refused and
    nothing is posted."""
    fake.set_bot_admin(group)
    await expect(fake, errors.EPHEMERAL_FLAT_PARAMS,
                 bot.send_message(group.id, "Q♦ K♠", api_kwargs={"receiver_user_id": ann.id}))
    press = ann.press(await board(fake, bot, group), text="open")
    await expect(fake, errors.EPHEMERAL_FLAT_PARAMS,
                 bot.send_message(group.id, "Q♦ K♠",
                                  api_kwargs={"receiver_user_id": ann.id,
                                              "callback_query_id": press.id}))
    await expect(fake, errors.EPHEMERAL_FLAT_PARAMS,
                 bot.send_photo(group.id, png(4, 4), api_kwargs={"receiver_user_id": ann.id}))
    assert [m.text for m in fake.sent(group)] == ["board"]
    assert fake.ephemeral_log(group) == []


async def test_refused_in_private_chats(fake: FakeTelegram, bot: Bot, ann: FakeUser) -> None:
    ann.start_bot()
    await expect(fake, errors.EPHEMERAL_PRIVATE,
                 bot.send_message(ann.id, "hand", api_kwargs=to(ann)))
    assert [m.from_bot for m in fake.messages(ann)] == [False]


async def test_a_press_opens_a_15_second_window(fake: FakeTelegram, bot: Bot, clock: FakeClock,
                                                group: Chat, ann: FakeUser,
                                                bob: FakeUser) -> None:
    """A bot that is not an administrator needs the receiver's own press in that chat, and
    sends within 15 clock seconds of it."""
    await expect(fake, errors.EPHEMERAL_NO_ACTION,
                 bot.send_message(group.id, "hand", api_kwargs=to(ann)))
    post = await board(fake, bot, group)
    press = ann.press(post, text="open")
    await expect(fake, errors.EPHEMERAL_QUERY_INVALID,  # Ann's press does not open Bob's
                 bot.send_message(group.id, "hand", api_kwargs=to(bob, callback_query_id=press.id)))
    await expect(fake, errors.EPHEMERAL_QUERY_INVALID,
                 bot.send_message(group.id, "hand", api_kwargs=to(ann, callback_query_id="42")))
    clock.advance(15)
    sent = await bot.send_message(group.id, "your hand: Q♦", api_kwargs=to(
        ann, callback_query_id=press.id), reply_markup=panel_keyboard("Q♦"))
    assert sent.message_id == 0
    assert sent.api_kwargs["ephemeral_message_id"] == 1
    assert sent.api_kwargs["receiver_user"]["id"] == ann.id
    clock.advance(0.5)
    await expect(fake, errors.EPHEMERAL_ACTION_EXPIRED,
                 bot.send_message(group.id, "late", api_kwargs=to(ann, callback_query_id=press.id)))
    # What Ann sees, and that nobody else sees it.
    assert [m.text for m in fake.ephemeral(group, ann)] == ["your hand: Q♦"]
    assert fake.ephemeral(group, bob) == []
    assert [m.text for m in fake.sent(group)] == ["board"]
    assert [m.content for m in fake.visible(group, bob)] == ["board"]
    assert [m.content for m in fake.visible(group, ann)] == ["board", "your hand: Q♦"]
    assert fake.last(group) is post


async def test_a_press_answered_first_no_longer_allows_it(fake: FakeTelegram, bot: Bot,
                                                          group: Chat, ann: FakeUser) -> None:
    """Undocumented; the emulator's safe reading (configurable): answering the callback query
    closes it, so the ephemeral answer must go first."""
    press = ann.press(await board(fake, bot, group), text="open")
    await bot.answer_callback_query(press.id)
    await expect(fake, errors.EPHEMERAL_QUERY_INVALID,
                 bot.send_message(group.id, "hand", api_kwargs=to(ann, callback_query_id=press.id)))
    fake.ephemeral_after_answer = True
    sent = await bot.send_message(group.id, "hand",
                                  api_kwargs=to(ann, callback_query_id=press.id))
    assert sent.api_kwargs["ephemeral_message_id"] == 1


async def test_an_administrator_bot_pushes_to_any_member(fake: FakeTelegram, bot: Bot,
                                                         clock: FakeClock, group: Chat,
                                                         ann: FakeUser, bob: FakeUser) -> None:
    fake.set_bot_admin(group)
    clock.advance(3600)
    first = await bot.send_message(group.id, "Ann's panel", api_kwargs=to(ann))
    second = await bot.send_message(group.id, "Ann's next panel", api_kwargs=to(ann))
    other = await bot.send_photo(group.id, png(8, 8), caption="Bob's panel", api_kwargs=to(bob))
    # Ids count per chat and receiver; the message id is always 0.
    assert [m.message_id for m in (first, second, other)] == [0, 0, 0]
    assert [m.api_kwargs["ephemeral_message_id"] for m in (first, second, other)] == [1, 2, 1]
    assert [m.caption for m in fake.ephemeral(group, bob)] == ["Bob's panel"]
    stranger = fake.user(299, "Stranger")
    await expect(fake, errors.EPHEMERAL_RECEIVER_INVALID,
                 bot.send_message(group.id, "hand", api_kwargs=to(stranger)))
    await expect(fake, errors.EPHEMERAL_RECEIVER_INVALID,
                 bot.send_message(group.id, "hand", api_kwargs={
                     "ephemeral_message_parameters": {"receiver_user_id": fake.bot_id}}))
    assert fake.sent(group) == []
    fake.set_bot_admin(group, admin=False)
    await expect(fake, errors.EPHEMERAL_NO_ACTION,
                 bot.send_message(group.id, "hand", api_kwargs=to(ann)))


async def test_edits_and_deletes_by_the_triple(fake: FakeTelegram, bot: Bot, group: Chat,
                                               ann: FakeUser, bob: FakeUser) -> None:
    fake.set_bot_admin(group)
    sent = await bot.send_message(group.id, "pick a card", api_kwargs=to(ann),
                                  reply_markup=panel_keyboard("Q♦", "K♠"))
    triple = {"chat_id": group.id, "receiver_user_id": ann.id,
              "ephemeral_message_id": sent.api_kwargs["ephemeral_message_id"]}
    keyboard = panel_keyboard("M13").to_dict()
    assert await bot.do_api_request("editEphemeralMessageText", api_kwargs={
        **triple, "text": "pick a cell", "reply_markup": keyboard}) is True
    [panel] = fake.ephemeral(group, ann)
    assert (panel.text, panel.button_texts()) == ("pick a cell", ["M13"])
    assert await bot.do_api_request("editEphemeralMessageReplyMarkup", api_kwargs={
        **triple, "reply_markup": panel_keyboard("Pass").to_dict()}) is True
    assert panel.button_texts() == ["Pass"]
    # An edit without a keyboard removes it, as for public messages.
    assert await bot.do_api_request("editEphemeralMessageText",
                                     api_kwargs={**triple, "text": "played Q♦ to M13"}) is True
    assert (panel.text, panel.reply_markup) == ("played Q♦ to M13", None)
    assert len(panel.edits) == 3
    # The regular methods do not reach it (its message_id is 0), nor does another receiver.
    await expect(fake, errors.MESSAGE_TO_EDIT_NOT_FOUND,
                 bot.edit_message_text("leak", chat_id=group.id, message_id=0))
    await expect(fake, errors.MESSAGE_TO_EDIT_NOT_FOUND, bot.do_api_request(
        "editEphemeralMessageText", api_kwargs={**triple, "receiver_user_id": bob.id,
                                                "text": "x"}))
    await expect(fake, errors.MESSAGE_NOT_MODIFIED, bot.do_api_request(
        "editEphemeralMessageText", api_kwargs={**triple, "text": "played Q♦ to M13"}))
    assert await bot.do_api_request("deleteEphemeralMessage", api_kwargs=triple) is True
    assert fake.ephemeral(group, ann) == [] and panel.deleted
    await expect(fake, errors.MESSAGE_TO_DELETE_NOT_FOUND,
                 bot.do_api_request("deleteEphemeralMessage", api_kwargs=triple))
    await expect(fake, errors.MESSAGE_TO_EDIT_NOT_FOUND, bot.do_api_request(
        "editEphemeralMessageText", api_kwargs={**triple, "text": "again"}))


async def test_caption_and_media_edits(fake: FakeTelegram, bot: Bot, group: Chat,
                                       ann: FakeUser) -> None:
    fake.set_bot_admin(group)
    sent = await bot.send_photo(group.id, png(8, 8), caption="your board",
                                api_kwargs=to(ann), reply_markup=panel_keyboard("Pass"))
    triple = {"chat_id": group.id, "receiver_user_id": ann.id,
              "ephemeral_message_id": sent.api_kwargs["ephemeral_message_id"]}
    assert await bot.do_api_request("editEphemeralMessageCaption",
                                     api_kwargs={**triple, "caption": "your move"}) is True
    [panel] = fake.ephemeral(group, ann)
    assert (panel.caption, panel.reply_markup) == ("your move", None)
    file_id = sent.photo[-1].file_id
    await expect(fake, errors.NO_TEXT_TO_EDIT, bot.do_api_request(
        "editEphemeralMessageText", api_kwargs={**triple, "text": "x"}))
    other = await bot.send_photo(group.id, png(16, 16), api_kwargs=to(ann))
    new_id = other.photo[-1].file_id
    assert await bot.do_api_request("editEphemeralMessageMedia", api_kwargs={
        **triple, "media": InputMediaPhoto(new_id, caption="new board").to_dict()}) is True
    assert panel.photo.file_id == new_id != file_id and panel.caption == "new board"


async def test_a_press_on_an_ephemeral_message(fake: FakeTelegram, bot: Bot, group: Chat,
                                               ann: FakeUser, bob: FakeUser) -> None:
    """It arrives as a callback query whose message carries message_id 0, the ephemeral id
    and the receiver; it must be answered by editing, never with
    replace_callback_query_message."""
    post = await board(fake, bot, group)
    opened = ann.press(post, text="open")
    await bot.send_message(group.id, "your hand", reply_markup=panel_keyboard("Q♦"),
                           api_kwargs=to(ann, callback_query_id=opened.id))
    [panel] = fake.ephemeral(group, ann)
    with pytest.raises(AssertionError, match="does not see"):
        bob.press(panel, text="Q♦")
    press = ann.press(panel, text="Q♦")
    assert (press.message_id, press.ephemeral_message_id, press.chat_id) == (0, 1, group.id)
    updates = await bot.get_updates()
    query = [u.callback_query for u in updates if u.callback_query is not None][-1]
    assert isinstance(updates[-1], Update) and query.id == press.id
    assert query.message.message_id == 0
    assert query.message.api_kwargs["ephemeral_message_id"] == 1
    assert query.message.api_kwargs["receiver_user"]["id"] == ann.id
    await expect(fake, errors.EPHEMERAL_REPLACE_EPHEMERAL, bot.send_message(
        group.id, "new panel", api_kwargs=to(ann, callback_query_id=press.id,
                                             replace_callback_query_message=True)))
    # Within the window the press may still open a new ephemeral message, and a press on a
    # public message may replace that message for its presser.
    assert (await bot.send_message(group.id, "next", api_kwargs=to(
        ann, callback_query_id=press.id))).api_kwargs["ephemeral_message_id"] == 2
    public = ann.press(post, text="open")
    await bot.send_message(group.id, "instead of the board", api_kwargs=to(
        ann, callback_query_id=public.id, replace_callback_query_message=True))
    assert fake.ephemeral(group, ann)[-1].replaced_message_id == post.message_id
    await expect(fake, errors.EPHEMERAL_QUERY_INVALID, bot.send_message(
        group.id, "x", api_kwargs=to(ann, replace_callback_query_message=True)))


async def register_hand(bot: Bot) -> None:
    await bot.do_api_request("setMyCommands", api_kwargs={
        "commands": [{"command": "hand", "description": "your hand", "is_ephemeral": True},
                     {"command": "rules", "description": "the rules"}],
        "scope": {"type": "all_group_chats"}})


async def test_an_ephemeral_command_and_its_reply(fake: FakeTelegram, bot: Bot,
                                                  clock: FakeClock, group: Chat,
                                                  ann: FakeUser, bob: FakeUser) -> None:
    with pytest.raises(AssertionError, match="is_ephemeral"):
        ann.send_ephemeral(group, "/hand")  # not registered yet: a client sends it publicly
    await register_hand(bot)
    assert fake.commands("all_group_chats")[0]["is_ephemeral"] is True
    with pytest.raises(AssertionError, match="is_ephemeral"):
        ann.send_ephemeral(group, "/rules")
    command = ann.send_ephemeral(group, f"/hand@{fake.bot_username}")
    [update] = await bot.get_updates()
    incoming = update.message
    assert incoming.message_id == 0 and incoming.text == f"/hand@{fake.bot_username}"
    assert incoming.from_user.id == ann.id
    assert incoming.api_kwargs["ephemeral_message_id"] == command.ephemeral_message_id == 1
    assert incoming.api_kwargs["receiver_user"] == {
        "id": fake.bot_id, "is_bot": True, "first_name": fake.bot_name,
        "username": fake.bot_username}
    assert fake.messages(group) == [] and fake.visible(group, bob) == []
    # A public reply is refused, whichever way it names the command.
    await expect(fake, errors.EPHEMERAL_REPLY_NOT_EPHEMERAL, bot.send_message(
        group.id, "your hand: Q♦", reply_parameters={"ephemeral_message_id": 1}))
    await expect(fake, errors.REPLY_NOT_FOUND, incoming.reply_text("your hand: Q♦",
                                                                   do_quote=True))
    # Only the sender gets the reply, within 15 seconds of the command.
    await expect(fake, errors.EPHEMERAL_REPLY_NOT_FOUND, bot.send_message(
        group.id, "hand", api_kwargs=to(bob), reply_parameters={"ephemeral_message_id": 1}))
    clock.advance(15)
    reply = await bot.send_message(group.id, "your hand: Q♦", api_kwargs=to(ann),
                                   reply_parameters={"ephemeral_message_id": 1})
    assert reply.message_id == 0 and reply.api_kwargs["ephemeral_message_id"] == 2
    assert [m.text for m in fake.ephemeral(group, ann)] == ["your hand: Q♦"]
    assert fake.sent(group) == []
    clock.advance(0.5)
    await expect(fake, errors.EPHEMERAL_ACTION_EXPIRED, bot.send_message(
        group.id, "late", api_kwargs=to(ann), reply_parameters={"ephemeral_message_id": 1}))


async def test_ephemeral_commands_follow_the_most_specific_scope(fake: FakeTelegram, bot: Bot,
                                                                 group: Chat,
                                                                 ann: FakeUser) -> None:
    await register_hand(bot)
    await bot.do_api_request("setMyCommands", api_kwargs={
        "commands": [{"command": "hand", "description": "public here"}],
        "scope": {"type": "chat", "chat_id": group.id}})
    with pytest.raises(AssertionError, match="is_ephemeral"):
        ann.send_ephemeral(group, "/hand")
    other = fake.group(-1009999999999, "Other", members=[ann])
    assert ann.send_ephemeral(other, "/hand").ephemeral_message_id == 1


async def test_ephemeral_writes_count_in_the_group_limit(clock: FakeClock) -> None:
    """Undocumented; counted by default (the safe reading), and configurable."""
    for counted in (True, False):
        fake = FakeTelegram(clock=clock, group_limit=3, ephemeral_in_group_limit=counted)
        ann = fake.user(201, "Ann")
        group = fake.group(GROUP, "Table", members=[ann], bot_admin=True)
        async with Bot(fake.token, request=fake.request()) as bot:
            for n in range(2):
                await bot.send_message(group.id, f"panel {n}", api_kwargs=to(ann))
            assert await bot.do_api_request("editEphemeralMessageText", api_kwargs={
                "chat_id": group.id, "receiver_user_id": ann.id, "ephemeral_message_id": 1,
                "text": "edited"})
            if counted:
                with pytest.raises(RetryAfter):
                    await bot.send_message(group.id, "public")
                assert fake.max_sends_in_window(group, edits=True) == 3
            else:
                for n in range(3):
                    await bot.send_message(group.id, f"public {n}")
                assert fake.max_sends_in_window(group, edits=True, ephemeral=False) == 3
                assert fake.max_sends_in_window(group, edits=True) == 6
        fake.stop()
        assert not fake.errors


async def test_dropped_deliveries_and_expiry(fake: FakeTelegram, bot: Bot, clock: FakeClock,
                                             group: Chat, ann: FakeUser) -> None:
    """Delivery "is not guaranteed", and ephemeral messages "may disappear"."""
    fake.set_bot_admin(group)
    fake.drop_ephemeral()
    dropped = await bot.send_message(group.id, "lost", api_kwargs=to(ann))
    assert dropped.api_kwargs["ephemeral_message_id"] == 1  # Telegram still says ok
    assert fake.ephemeral(group, ann) == []
    assert [m.text for m in fake.ephemeral(group, ann, gone=True)] == ["lost"]
    await bot.send_message(group.id, "shown", api_kwargs=to(ann),
                           reply_markup=panel_keyboard("Q♦"))
    [shown] = fake.ephemeral(group, ann)
    fake.expire_ephemeral(group, ann, shown.ephemeral_message_id)
    assert fake.ephemeral(group, ann) == []
    with pytest.raises(AssertionError, match="not on"):
        ann.press(shown, text="Q♦")
    await expect(fake, errors.MESSAGE_TO_EDIT_NOT_FOUND, bot.do_api_request(
        "editEphemeralMessageText", api_kwargs={
            "chat_id": group.id, "receiver_user_id": ann.id,
            "ephemeral_message_id": shown.ephemeral_message_id, "text": "x"}))
    fake.ephemeral_lifetime = 60
    await bot.send_message(group.id, "short-lived", api_kwargs=to(ann))
    assert [m.text for m in fake.ephemeral(group, ann)] == ["short-lived"]
    clock.advance(60)
    assert fake.ephemeral(group, ann) == []
    assert len(fake.ephemeral(group, ann, gone=True)) == 3


async def hand(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Answers an ephemeral /hand with an ephemeral panel, as the bot will."""
    message = update.effective_message
    await context.bot.send_message(
        message.chat_id, "your hand", reply_markup=panel_keyboard("Q♦"),
        reply_parameters={"ephemeral_message_id": message.api_kwargs["ephemeral_message_id"]},
        api_kwargs={"ephemeral_message_parameters": {"receiver_user_id": message.from_user.id}})


async def card(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A press on the panel edits it by the triple, then answers the query."""
    query = update.callback_query
    panel = query.message
    await context.bot.do_api_request("editEphemeralMessageText", api_kwargs={
        "chat_id": panel.chat.id, "receiver_user_id": panel.api_kwargs["receiver_user"]["id"],
        "ephemeral_message_id": panel.api_kwargs["ephemeral_message_id"],
        "text": f"picked {query.data}"})
    await query.answer()


async def test_a_ptb_application_plays_through_ephemeral_messages(fake: FakeTelegram,
                                                                  bot: Bot, group: Chat,
                                                                  ann: FakeUser,
                                                                  bob: FakeUser) -> None:
    """The real Application's handlers get the ephemeral command and the press, and what
    they send and edit reaches Ann alone."""
    await register_hand(bot)
    application = (Application.builder().token(fake.token).request(fake.request())
                   .get_updates_request(fake.request()).build())
    application.add_handler(CommandHandler("hand", hand))
    application.add_handler(CallbackQueryHandler(card))
    async with application:
        await application.start()
        await application.updater.start_polling(poll_interval=0)
        try:
            ann.send_ephemeral(group, "/hand")
            panel = await fake.wait_for_ephemeral(group, ann, "your hand")
            press = ann.press(panel, text="Q♦")
            await fake.wait_for(lambda: fake.answer(press).answered)
        finally:
            await application.updater.stop()
            await application.stop()
    assert (panel.text, panel.reply_markup) == ("picked card:Q♦", None)
    assert fake.sent(group) == [] and fake.ephemeral(group, bob) == []
    assert [m.content for m in fake.visible(group, ann)] == ["/hand", "picked card:Q♦"]
