"""The fake Telegram Bot API (tests/fakebot) driven by the real python-telegram-bot stack."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dtm
import json
import struct
import time
import warnings
import zlib
from collections.abc import AsyncIterator, Awaitable

import httpx
import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, InputMediaPhoto, Update
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Conflict,
    EndPointNotFound,
    Forbidden,
    InvalidToken,
    RetryAfter,
)
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from tests.fakebot import FakeClock, FakeTelegram, Message, errors

pytestmark = [
    pytest.mark.timeout(30),
    # PTB warns about RetryAfter.retry_after becoming a timedelta; not our concern here
    pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning"),
]

START = 1_700_000_000.75  # a fractional clock: dates must still be whole seconds


def png(width: int, height: int) -> bytes:
    """A valid grey PNG of the given size, made with the standard library."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def seconds(value: int | dtm.timedelta) -> float:
    return value.total_seconds() if isinstance(value, dtm.timedelta) else float(value)


def retry_after(exc: RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return seconds(exc.retry_after)


async def expect(fake: FakeTelegram, kind: type[Exception], description: str,
                 call: Awaitable[object]) -> Exception:
    """``call`` fails with PTB's ``kind`` and the emulator answered Telegram's ``description``
    (PTB itself drops "Bad Request: " and lower-cases the rest of the text)."""
    with pytest.raises(kind) as caught:
        await call
    assert fake.calls[-1].description == description
    return caught.value


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


# --- a tiny bot -----------------------------------------------------------------------------
def keyboard(*labels: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(x, callback_data=f"pick:{x}")
                                  for x in labels]])


async def echo(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    context.bot_data.setdefault("commands", []).append(update.effective_message.text)
    await update.effective_message.reply_text("echo " + " ".join(context.args or []))


async def menu(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await update.effective_chat.send_message("choose", reply_markup=keyboard("a", "b"))


async def picked(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    query = update.callback_query
    await query.answer(f"you chose {query.data}", show_alert=query.data == "pick:b")
    await query.edit_message_text(f"chosen {query.data}")


async def heard(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    await update.effective_message.reply_text(f"heard {update.effective_message.text}")


async def membership(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    change = update.my_chat_member
    context.bot_data.setdefault("membership", []).append(
        (change.chat.id, change.old_chat_member.status, change.new_chat_member.status))


def build(application: Application) -> Application:
    application.add_handler(CommandHandler("echo", echo))
    application.add_handler(CommandHandler("menu", menu))
    application.add_handler(CallbackQueryHandler(picked))
    application.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, heard))
    application.add_handler(ChatMemberHandler(membership, ChatMemberHandler.MY_CHAT_MEMBER))
    return application


@contextlib.asynccontextmanager
async def running(application: Application) -> AsyncIterator[Application]:
    async with application:
        await application.start()
        await application.updater.start_polling(poll_interval=0,
                                                timeout=dtm.timedelta(seconds=2))
        try:
            yield application
        finally:
            await application.updater.stop()
            await application.stop()


@pytest.fixture
async def app(fake: FakeTelegram) -> AsyncIterator[Application]:
    application = build(Application.builder().token(fake.token).request(fake.request())
                        .get_updates_request(fake.request()).build())
    async with running(application):
        yield application


# --- the real PTB Application in-process -----------------------------------------------------
async def test_commands_reach_command_handlers(fake: FakeTelegram, app: Application) -> None:
    alice = fake.user(101, "Alice", username="alice")
    alice.start_bot()  # /start has no handler here
    alice.send(None, "/echo hello there")
    reply = await fake.wait_for_message(alice, "echo")
    assert reply.text == "echo hello there"
    assert reply.from_bot and isinstance(reply.date, int)

    group = fake.group(-500, "Table")
    sent = alice.send(group, "/echo@krendzu_test_bot QC M13")
    assert sent is not None
    assert sent.entities == [{"type": "bot_command", "offset": 0, "length": 22}]
    reply = await fake.wait_for_message(group, "echo")
    assert reply.text == "echo QC M13"
    assert reply.reply_to == sent.message_id  # PTB quotes in groups
    assert app.bot_data["commands"] == ["/echo hello there", "/echo@krendzu_test_bot QC M13"]
    assert all(isinstance(u["message"]["date"], int) for u in fake.update_log if "message" in u)


async def test_callback_presses_reach_the_callback_handler(fake: FakeTelegram,
                                                           app: Application) -> None:
    bob = fake.user(102, "Bob")
    bob.start_bot()
    bob.send(None, "/menu")
    panel = await fake.wait_for_message(bob, "choose")
    assert panel.button_texts() == ["a", "b"]

    query = bob.press(panel, text="b")
    answered = await fake.wait_for(lambda: fake.answer(query).answered and fake.answer(query))
    assert (answered.text, answered.show_alert) == ("you chose pick:b", True)
    await fake.wait_for(lambda: panel.text == "chosen pick:b")
    assert panel.edits[0]["text"] == "choose"
    assert panel.reply_markup is None  # editMessageText without a keyboard removes it
    update = fake.update_log[-1]["callback_query"]
    assert update["data"] == "pick:b" and update["message"]["message_id"] == panel.message_id
    assert update["from"]["id"] == 102 and update["chat_instance"]

    with pytest.raises(AssertionError, match="no inline button"):
        bob.press(panel, text="a")  # the keyboard is gone


async def test_plain_text_and_membership_updates(fake: FakeTelegram, app: Application) -> None:
    carol = fake.user(103, "Carol")
    carol.start_bot()
    carol.send(None, "good morning")
    assert (await fake.wait_for_message(carol, "heard")).text == "heard good morning"

    group = fake.group(-501, "Later", bot=False, creator=carol)
    fake.add_bot(group, by=carol)
    fake.remove_bot(group, by=carol)
    carol.block_bot()
    await fake.wait_for(lambda: len(app.bot_data.get("membership", [])) == 3)
    assert app.bot_data["membership"] == [(-501, "left", "member"), (-501, "member", "kicked"),
                                          (103, "member", "kicked")]
    await fake.wait_until_idle(quiet=0.05)


async def test_privacy_mode_filters_group_messages(fake: FakeTelegram, bot: Bot) -> None:
    dave = fake.user(104, "Dave")
    group = fake.group(-502, "Private talk")
    assert dave.send(group, "hello everyone") is None
    assert dave.send(group, "/echo") is None  # the last message was not the bot's
    assert dave.send(group, "/echo@other_bot") is None
    assert dave.send(group, "/echo@krendzu_test_bot") is not None
    assert dave.send(group, "/echo@KRENDZU_TEST_BOT") is not None

    mine = await bot.send_message(group.id, "bot speaks")
    assert dave.send(group, "/echo") is not None  # the bot spoke last
    assert dave.send(group, "/echo") is None  # now Dave did
    assert dave.send(group, "a reply", reply_to=mine.message_id) is not None
    dave_private = fake.private_chat(dave)
    assert dave.send(dave_private, "anything goes here") is not None

    newcomer = fake.user(120, "Nell")
    assert newcomer.join(group).service == {"new_chat_members": [newcomer.api()]}
    assert newcomer.leave(group).service["left_chat_member"]["id"] == 120
    fake.privacy = False
    assert dave.send(group, "everything now") is not None
    fake.privacy = True
    fake.set_bot_admin(group)
    assert dave.send(group, "an admin bot sees all") is not None
    notes = [u["message"] for u in fake.pending_updates() if "message" in u]
    assert [n["new_chat_members"][0]["id"] for n in notes if "new_chat_members" in n] == [120]
    texts = [n["text"] for n in notes if "text" in n]
    assert texts == ["/echo@krendzu_test_bot", "/echo@KRENDZU_TEST_BOT", "/echo", "a reply",
                     "anything goes here", "everything now", "an admin bot sees all"]
    assert (await bot.get_me()).can_read_all_group_messages is False


async def test_get_updates_offsets_limits_and_long_polling(fake: FakeTelegram, bot: Bot) -> None:
    erin = fake.user(105, "Erin")
    for i in range(3):
        erin.send(None, f"m{i}")
    first = await bot.get_updates(limit=2)
    assert [u.message.text for u in first] == ["m0", "m1"]
    again = await bot.get_updates()
    assert [u.message.text for u in again] == ["m0", "m1", "m2"]  # not confirmed yet
    rest = await bot.get_updates(offset=first[-1].update_id + 1)
    assert [u.message.text for u in rest] == ["m2"]
    assert rest[0].update_id == first[-1].update_id + 1
    assert await bot.get_updates(offset=rest[-1].update_id + 1) == ()

    # long polling waits on the loop without blocking it, and wakes up on a new update
    started = time.monotonic()
    poll = asyncio.create_task(bot.get_updates(offset=rest[-1].update_id + 1, timeout=3))
    await asyncio.sleep(0.1)
    assert not poll.done()
    erin.send(None, "wake up")
    woke = await asyncio.wait_for(poll, 2)
    assert [u.message.text for u in woke] == ["wake up"]
    assert time.monotonic() - started < 1.5

    started = time.monotonic()
    assert await bot.get_updates(offset=woke[-1].update_id + 1, timeout=0.2) == ()
    assert time.monotonic() - started >= 0.15

    # allowed_updates filters, and a second poller ends the first with 409 Conflict
    group = fake.group(-503, "Filters", bot=False)
    fake.add_bot(group, by=erin)
    only = await bot.get_updates(offset=woke[-1].update_id + 1, allowed_updates=["message"])
    assert [u.message.new_chat_members[0].username for u in only] == ["krendzu_test_bot"]
    first_poll = asyncio.create_task(bot.get_updates(offset=only[-1].update_id + 1, timeout=3))
    await asyncio.sleep(0.05)
    second = await bot.get_updates(offset=only[-1].update_id + 1, timeout=0.1)
    with pytest.raises(Conflict, match="terminated by other getUpdates request"):
        await first_poll
    assert second == ()


async def test_photos_documents_and_animations(fake: FakeTelegram, bot: Bot) -> None:
    frank = fake.user(106, "Frank")
    frank.start_bot()
    picture = png(120, 80)
    sent = await bot.send_photo(frank.id, picture, caption="<b>board</b>", parse_mode="HTML",
                                filename="board.png", disable_notification=True)
    assert (sent.photo[-1].width, sent.photo[-1].height) == (120, 80)
    assert (sent.photo[0].width, sent.photo[0].height) == (90, 60)
    assert sent.caption == "board" and sent.caption_entities[0].type == "bold"
    stored = fake.last(frank)
    assert stored.kind == "photo" and stored.data == picture
    assert stored.raw_caption == "<b>board</b>" and stored.disable_notification
    downloaded = await (await bot.get_file(sent.photo[-1].file_id)).download_as_bytearray()
    assert bytes(downloaded) == picture

    again = await bot.send_photo(frank.id, sent.photo[-1].file_id)
    assert again.photo[-1].file_id == sent.photo[-1].file_id
    await expect(fake, BadRequest, errors.WRONG_FILE_ID,
                 bot.send_photo(frank.id, "AgACno-such-file"))
    await expect(fake, BadRequest, "Bad Request: IMAGE_PROCESS_FAILED",
                 bot.send_photo(frank.id, b"not an image", filename="x.png"))
    await expect(fake, BadRequest, "Bad Request: invalid file_id", bot.get_file("nothing"))

    document = await bot.send_document(frank.id, b"1. QC@M13\n", filename="record.txt",
                                       caption="the record")
    assert document.document.file_name == "record.txt"
    assert fake.last(frank).document.data == b"1. QC@M13\n"
    gif = b"GIF89a" + struct.pack("<HH", 32, 16) + b"\x00" * 20
    animation = await bot.send_animation(frank.id, gif, filename="replay.gif")
    assert (animation.animation.width, animation.animation.file_name) == (32, "replay.gif")

    edited = await bot.edit_message_media(InputMediaPhoto(png(30, 30), caption="new"),
                                          frank.id, sent.message_id)
    assert edited.photo[-1].width == 30 and edited.caption == "new"
    assert fake.message(frank, sent.message_id).edits[0]["caption"] == "board"
    recaptioned = await bot.edit_message_caption(frank.id, sent.message_id, caption="newer")
    assert recaptioned.caption == "newer"
    text = await bot.send_message(frank.id, "text")
    await expect(fake, BadRequest, "Bad Request: there is no media in the message to edit",
                 bot.edit_message_media(InputMediaPhoto(picture), frank.id, text.message_id))


async def test_text_and_edit_rejections(fake: FakeTelegram, bot: Bot,
                                        clock: FakeClock) -> None:
    gina = fake.user(107, "Gina")
    gina.start_bot()
    error = await expect(fake, BadRequest, "Bad Request: message text is empty",
                         bot.send_message(gina.id, "   "))
    assert error.message == "Message text is empty"
    await expect(fake, BadRequest, "Bad Request: message is too long",
                 bot.send_message(gina.id, "x" * 4097))
    assert (await bot.send_message(gina.id, "x" * 4096)).text == "x" * 4096
    await expect(fake, BadRequest, "Bad Request: message caption is too long",
                 bot.send_photo(gina.id, png(10, 10), caption="y" * 1025))
    await expect(fake, BadRequest, "Bad Request: can't parse entities: Can't find end tag "
                                   'corresponding to start tag "b"',
                 bot.send_message(gina.id, "<b>bold", parse_mode="HTML"))
    await expect(fake, BadRequest, "Bad Request: can't parse entities: Unsupported start tag "
                                   '"foo" at byte offset 2',
                 bot.send_message(gina.id, "a <foo>", parse_mode="HTML"))
    await expect(fake, BadRequest, "Bad Request: chat not found", bot.send_message(999, "hi"))

    msg = await bot.send_message(gina.id, "<i>panel</i> &amp; more", parse_mode="HTML",
                                 reply_markup=keyboard("a"))
    assert msg.text == "panel & more" and msg.entities[0].type == "italic"
    error = await expect(fake, BadRequest, errors.MESSAGE_NOT_MODIFIED,
                         bot.edit_message_text("<i>panel</i> &amp; more", gina.id,
                                               msg.message_id, parse_mode="HTML",
                                               reply_markup=keyboard("a")))
    assert error.message.startswith("Message is not modified: specified new message content")
    await expect(fake, BadRequest, errors.MESSAGE_NOT_MODIFIED,
                 bot.edit_message_reply_markup(gina.id, msg.message_id,
                                               reply_markup=keyboard("a")))
    changed = await bot.edit_message_reply_markup(gina.id, msg.message_id,
                                                  reply_markup=keyboard("b"))
    assert changed.reply_markup.inline_keyboard[0][0].text == "b"
    assert (await bot.edit_message_text("panel", gina.id, msg.message_id)).text == "panel"
    assert fake.message(gina, msg.message_id).reply_markup is None
    assert [e["text"] for e in fake.message(gina, msg.message_id).edits] == ["panel & more"] * 2

    await expect(fake, BadRequest, "Bad Request: message to edit not found",
                 bot.edit_message_text("x", gina.id, 9999))
    own = gina.send(None, "my own words")
    await expect(fake, BadRequest, "Bad Request: message can't be edited",
                 bot.edit_message_text("x", gina.id, own.message_id))
    photo = await bot.send_photo(gina.id, png(10, 10))
    await expect(fake, BadRequest, "Bad Request: there is no text in the message to edit",
                 bot.edit_message_text("x", gina.id, photo.message_id))
    await expect(fake, BadRequest, "Bad Request: there is no caption in the message to edit",
                 bot.edit_message_caption(gina.id, msg.message_id, caption="x"))
    await expect(fake, BadRequest, "Bad Request: message to be replied not found",
                 bot.send_message(gina.id, "re", reply_to_message_id=4242))
    assert (await bot.send_message(gina.id, "re", reply_to_message_id=4242,
                                   allow_sending_without_reply=True)).reply_to_message is None

    assert await bot.delete_message(gina.id, msg.message_id) is True
    assert fake.message(gina, msg.message_id).deleted
    await expect(fake, BadRequest, "Bad Request: message to delete not found",
                 bot.delete_message(gina.id, msg.message_id))
    old = await bot.send_message(gina.id, "old news")
    clock.advance(48 * 3600 + 1)
    await expect(fake, BadRequest, "Bad Request: message can't be deleted",
                 bot.delete_message(gina.id, old.message_id))


async def test_markdown_parse_modes(fake: FakeTelegram, bot: Bot) -> None:
    pia = fake.user(119, "Pia")
    pia.start_bot()
    await expect(fake, BadRequest, "Bad Request: can't parse entities: Character '.' is reserved "
                                   "and must be escaped with the preceding '\\'",
                 bot.send_message(pia.id, "1. done", parse_mode="MarkdownV2"))
    done = await bot.send_message(pia.id, r"*bold* and __under__ 1\. [link](https://t.me/x)",
                                  parse_mode="MarkdownV2")
    assert done.text == "bold and under 1. link"
    assert [(e.type, e.offset, e.length) for e in done.entities] == [
        ("bold", 0, 4), ("underline", 9, 5), ("text_link", 18, 4)]
    await expect(fake, BadRequest, "Bad Request: can't parse entities: Can't find end of the "
                                   "entity starting at byte offset 4",
                 bot.send_message(pia.id, "see *this", parse_mode="Markdown"))
    legacy = await bot.send_message(pia.id, "*b* a.b", parse_mode="Markdown")
    assert legacy.text == "b a.b" and legacy.entities[0].type == "bold"


async def test_keyboard_rejections(fake: FakeTelegram, bot: Bot) -> None:
    hugo = fake.user(108, "Hugo")
    hugo.start_bot()
    too_long = InlineKeyboardMarkup([[InlineKeyboardButton("x", callback_data="d" * 65)]])
    await expect(fake, BadRequest, "Bad Request: BUTTON_DATA_INVALID",
                 bot.send_message(hugo.id, "k", reply_markup=too_long))
    await expect(fake, BadRequest, "Bad Request: reply markup is too long",
                 bot.send_message(hugo.id, "k", reply_markup=keyboard(*"abcdefghi")))
    hundred_one = InlineKeyboardMarkup(
        [[InlineKeyboardButton(f"{r}.{c}", callback_data=f"{r}.{c}") for c in range(8)]
         for r in range(12)] + [[InlineKeyboardButton("z", callback_data="z")] * 5])
    await expect(fake, BadRequest, "Bad Request: reply markup is too long",
                 bot.send_message(hugo.id, "k", reply_markup=hundred_one))
    await expect(fake, BadRequest, errors.TEXT_BUTTONS_UNALLOWED,
                 bot.send_message(hugo.id, "k",
                                  reply_markup=InlineKeyboardMarkup([[InlineKeyboardButton("t")]])))
    exactly = await bot.send_message(hugo.id, "k", reply_markup=keyboard(*"abcdefgh"))
    assert len(fake.message(hugo, exactly.message_id).buttons()) == 8
    panel = await bot.send_message(hugo.id, "k", reply_markup=keyboard("a"))
    await expect(fake, BadRequest, "Bad Request: BUTTON_DATA_INVALID",
                 bot.edit_message_reply_markup(hugo.id, panel.message_id, reply_markup=too_long))


async def test_callback_answers_once_and_in_time(fake: FakeTelegram, bot: Bot,
                                                 clock: FakeClock) -> None:
    iris = fake.user(109, "Iris")
    iris.start_bot()
    panel = await bot.send_message(iris.id, "p", reply_markup=keyboard("a", "b"))
    first = iris.press(fake.message(iris, panel.message_id), data="pick:a")
    assert await bot.answer_callback_query(first.id, "ok") is True
    await expect(fake, BadRequest, errors.QUERY_TOO_OLD, bot.answer_callback_query(first.id))
    late = iris.press(fake.last(iris), text="b")
    clock.advance(15 * 60 + 1)
    await expect(fake, BadRequest, errors.QUERY_TOO_OLD, bot.answer_callback_query(late.id))
    third = iris.press(fake.last(iris), text="a")
    await expect(fake, BadRequest, "Bad Request: MESSAGE_TOO_LONG",
                 bot.answer_callback_query(third.id, "w" * 201))
    assert await bot.answer_callback_query(third.id, "w" * 200)
    with pytest.raises(AssertionError, match="no inline button"):
        iris.press(fake.last(iris), text="c")


async def test_forbidden_migrated_and_media_rights(fake: FakeTelegram, bot: Bot) -> None:
    jack = fake.user(110, "Jack")
    await expect(fake, Forbidden, "Forbidden: bot can't initiate conversation with a user",
                 bot.send_message(jack.id, "hi"))
    jack.start_bot()
    await bot.send_message(jack.id, "hi")
    jack.block_bot()
    await expect(fake, Forbidden, "Forbidden: bot was blocked by the user",
                 bot.send_message(jack.id, "hi"))
    jack.start_bot()
    assert (await bot.send_message(jack.id, "welcome back")).text == "welcome back"

    group = fake.group(-504, "Old group", creator=jack)
    await bot.send_message(group.id, "before")
    fake.forbid_media(group)
    await expect(fake, BadRequest, "Bad Request: not enough rights to send photos to the chat",
                 bot.send_photo(group.id, png(10, 10)))
    await expect(fake, BadRequest,
                 "Bad Request: not enough rights to send documents to the chat",
                 bot.send_document(group.id, b"doc", filename="a.txt"))
    await expect(fake, BadRequest,
                 "Bad Request: not enough rights to send animations to the chat",
                 bot.send_animation(group.id, png(10, 10), filename="a.gif"))
    fake.allow_media(group)
    await bot.send_photo(group.id, png(10, 10))

    supergroup = fake.migrate(group)
    assert supergroup.id == -1_000_000_000_504 and supergroup.type == "supergroup"
    migrated = await expect(fake, ChatMigrated,
                            "Bad Request: group chat was upgraded to a supergroup chat",
                            bot.send_message(group.id, "after"))
    assert migrated.new_chat_id == supergroup.id
    with pytest.raises(ChatMigrated):
        await bot.edit_message_text("x", group.id, 1)
    moved = await bot.send_message(supergroup.id, "after")
    assert moved.message_id == 2  # the migrate_from service message is number 1
    service = [u["message"] for u in fake.pending_updates() if "message" in u]
    assert service[-2]["migrate_to_chat_id"] == supergroup.id
    assert service[-1]["migrate_from_chat_id"] == group.id

    fake.remove_bot(supergroup, by=jack)
    await expect(fake, Forbidden, "Forbidden: bot was kicked from the supergroup chat",
                 bot.send_message(supergroup.id, "still here?"))
    small = fake.group(-505, "Small", creator=jack)
    fake.remove_bot(small)
    await expect(fake, Forbidden, "Forbidden: bot was kicked from the group chat",
                 bot.send_message(small.id, "still here?"))
    kicked = [u["my_chat_member"] for u in fake.pending_updates() if "my_chat_member" in u]
    assert [k["new_chat_member"]["status"] for k in kicked] == ["kicked", "member", "kicked",
                                                                "kicked"]


async def test_flood_control_per_group(fake: FakeTelegram, bot: Bot, clock: FakeClock) -> None:
    kate = fake.user(111, "Kate")
    group = fake.group(-1_000_000_000_506, "Busy", forum=True)
    first = await bot.send_message(group.id, "0", message_thread_id=7)
    assert first.message_thread_id == 7 and first.is_topic_message
    for i in range(1, 19):
        clock.advance(1)
        await bot.send_message(group.id, str(i))
    clock.advance(1)
    # An edit counts like a new message (Telegram: tdlib/td issues 2592 and 3034).
    await bot.edit_message_text("edited", group.id, first.message_id)
    flood = await expect(fake, RetryAfter, "Too Many Requests: retry after 41",
                         bot.send_message(group.id, "one too many"))
    assert retry_after(flood) == 41  # the first send leaves the window in 41 s
    assert fake.calls[-1].status == 429
    await expect(fake, RetryAfter, "Too Many Requests: retry after 41",
                 bot.edit_message_text("again", group.id, first.message_id))
    await expect(fake, RetryAfter, "Too Many Requests: retry after 41",
                 bot.send_photo(group.id, png(10, 10)))
    kate.start_bot()
    await bot.send_message(kate.id, "private chats are not limited per minute")
    clock.advance(41)
    await bot.send_message(group.id, "fine again")
    assert fake.max_sends_in_window(group, 60) == 19
    assert fake.max_sends_in_window(group, 60, edits=True) == 20
    assert len(fake.rate_limited(group)) == 3 and not fake.rate_limited(kate)
    fake.flood(kate, 5)  # a forced pause of one chat only
    await expect(fake, RetryAfter, "Too Many Requests: retry after 5",
                 bot.send_message(kate.id, "paused"))
    clock.advance(5)
    await bot.send_message(kate.id, "and back")
    assert all(isinstance(m.date, int) for m in fake.sent(group))
    assert fake.sent(group)[0].date == int(START)

    fast = FakeTelegram(clock=clock, global_limit=30, group_limit=1000)
    burst = fast.group(-507, "Burst")
    async with Bot(fast.token, request=fast.request()) as other:
        for _ in range(30):
            await other.send_message(burst.id, "x")
        await expect(fast, RetryAfter, "Too Many Requests: retry after 1",
                     other.send_message(burst.id, "x"))


async def test_commands_chats_members_and_misc(fake: FakeTelegram, bot: Bot) -> None:
    from telegram import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats

    assert await bot.set_my_commands([BotCommand("play", "place cards")],
                                     scope=BotCommandScopeAllPrivateChats())
    assert await bot.set_my_commands([BotCommand("play", "выложить карты")],
                                     scope=BotCommandScopeAllPrivateChats(), language_code="ru")
    assert await bot.set_my_commands([BotCommand("join", "take a seat")],
                                     scope=BotCommandScopeAllGroupChats())
    assert fake.commands("all_private_chats") == [{"command": "play",
                                                   "description": "place cards"}]
    assert fake.commands({"type": "all_private_chats"}, "ru")[0]["description"] == (
        "выложить карты")
    assert fake.commands() is None
    got = await bot.get_my_commands(scope=BotCommandScopeAllGroupChats())
    assert [c.command for c in got] == ["join"]
    assert await bot.delete_my_commands(scope=BotCommandScopeAllGroupChats())
    assert fake.commands("all_group_chats") is None
    await expect(fake, BadRequest, "Bad Request: BOT_COMMAND_INVALID",
                 bot.set_my_commands([BotCommand("Bad-Name", "x")]))

    owner, admin, member = fake.user(112, "Olga"), fake.user(113, "Adam"), fake.user(114, "Mia")
    group = fake.group(-508, "Club", creator=owner, members=[member])
    fake.set_admin(group, admin)
    statuses = [(await bot.get_chat_member(group.id, u.id)).status for u in (owner, admin, member)]
    assert statuses == ["creator", "administrator", "member"]
    assert (await bot.get_chat_member(group.id, fake.bot_id)).status == "member"
    assert [m.user.id for m in await bot.get_chat_administrators(group.id)] == [112, 113]
    await expect(fake, BadRequest, "Bad Request: user not found",
                 bot.get_chat_member(group.id, 1))
    info = await bot.get_chat(group.id)
    assert (info.title, info.type) == ("Club", "group")
    assert (await bot.get_chat(owner.id)).first_name == "Olga"

    owner.start_bot()
    assert await bot.send_chat_action(owner.id, "upload_photo") is True
    assert await bot.set_chat_menu_button() is True
    assert (await bot.get_chat_menu_button()).type == "commands"
    assert await bot.delete_webhook() is True
    assert (await bot.get_webhook_info()).url == ""
    inline = fake.inline_message("inline", reply_markup=keyboard("a").to_dict())
    assert await bot.edit_message_text("changed", inline_message_id=inline.inline_message_id)
    assert inline.text == "changed"
    with pytest.raises(EndPointNotFound):
        await bot.do_api_request("noSuchMethod")
    assert fake.calls[-1].status == 404 and fake.calls[-1].description == "Not Found"

    stranger = Bot("654321:WRONG", request=fake.request())
    with pytest.raises(InvalidToken, match="rejected by the server"):
        await stranger.initialize()
    status, body = await fake.request().do_request(
        "https://api.telegram.org/bot654321:WRONG/getMe", "POST")
    assert (status, json.loads(body)) == (401, {"ok": False, "error_code": 401,
                                                "description": "Unauthorized"})


async def test_wait_for_explains_a_timeout(fake: FakeTelegram, bot: Bot) -> None:
    lena = fake.user(115, "Lena")
    lena.start_bot()
    await bot.send_message(lena.id, "something else")
    with pytest.raises(AssertionError, match=r"(?s)timed out after 0\.05s.*something else"):
        await fake.wait_for_message(lena, "never said", timeout=0.05)
    message = await fake.wait_for_message(lena, "something")
    assert isinstance(message, Message)


# --- over real HTTP --------------------------------------------------------------------------
async def test_over_http_with_a_real_bot_and_application(fake: FakeTelegram) -> None:
    base = fake.serve_http()
    assert base.startswith("http://127.0.0.1:")
    mike = fake.user(116, "Mike", username="mike")
    mike.start_bot()
    async with Bot(fake.token, base_url=f"{base}/bot",
                   base_file_url=f"{base}/file/bot") as client:
        assert (await client.get_me()).username == "krendzu_test_bot"
        picture = png(200, 100)
        sent = await client.send_photo(mike.id, picture, caption="over http",
                                       filename="board.png", reply_markup=keyboard("x"))
        assert sent.photo[-1].width == 200 and sent.reply_markup.inline_keyboard
        assert fake.last(mike).photo.data == picture
        assert fake.last(mike).photo.filename == "board.png"
        file = await client.get_file(sent.photo[-1].file_id)
        assert file.file_path.startswith(f"{base}/file/bot{fake.token}/photos/")
        assert bytes(await file.download_as_bytearray()) == picture
        odd = png(8, 8) + b"\r\n--boundary\r\n\r\n" + bytes(range(256))
        await client.send_document(mike.id, odd, filename='запись "1".bin', caption="две\nстроки")
        assert fake.last(mike).document.filename == 'запись "1".bin'
        assert (fake.last(mike).data, fake.last(mike).caption) == (odd, "две\nстроки")
        await expect(fake, BadRequest, "Bad Request: message text is empty",
                     client.send_message(mike.id, ""))
        await expect(fake, Forbidden, "Forbidden: bot can't initiate conversation with a user",
                     client.send_message(fake.user(117, "Nora").id, "hi"))
        mike.send(None, "polled")
        updates = await client.get_updates(timeout=1)
        assert [u.message.text for u in updates][-1] == "polled"
        await client.get_updates(offset=updates[-1].update_id + 1, timeout=0)

    async with httpx.AsyncClient(base_url=base) as http:
        plain = await http.get(f"/bot{fake.token}/getMe")
        assert plain.json()["result"]["id"] == fake.bot_id
        form = await http.post(f"/bot{fake.token}/sendMessage", data={
            "chat_id": str(mike.id), "text": "form",
            "reply_markup": '{"inline_keyboard": [[{"text": "a", "callback_data": "a"}]]}'})
        assert form.json()["result"]["reply_markup"]["inline_keyboard"][0][0]["text"] == "a"
        body = await http.post(f"/bot{fake.token}/sendMessage",
                               json={"chat_id": mike.id, "text": "json"})
        assert body.json()["result"]["text"] == "json"
        denied = await http.get("/bot1:nope/getMe")
        assert denied.status_code == 401 and denied.json()["description"] == "Unauthorized"
        missing = await http.post(f"/bot{fake.token}/fooBar")
        assert missing.status_code == 404 and missing.json()["description"] == "Not Found"
        assert (await http.get(f"/file/bot{fake.token}/photos/none.png")).status_code == 404

    # a whole Application over HTTP, as bot.py runs it with TELEGRAM_API_BASE_URL
    application = build(Application.builder().token(fake.token).base_url(f"{base}/bot")
                        .base_file_url(f"{base}/file/bot").build())
    async with running(application):
        mike.send(None, "/echo from afar")
        assert (await fake.wait_for_message(mike, "echo")).text == "echo from afar"
        panel_owner = fake.user(118, "Olive")
        panel_owner.start_bot()
        panel_owner.send(None, "/menu")
        panel = await fake.wait_for_message(panel_owner, "choose")
        query = panel_owner.press(panel, data="pick:a")
        await fake.wait_for(lambda: fake.answer(query).answered)
        await fake.wait_for(lambda: panel.text == "chosen pick:a")
        await fake.wait_until_idle(quiet=0.1)
    fake.stop()
