"""The simulated world: users, chats, messages, files, callback queries and the call log."""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fakebot.emulator import FakeTelegram


class FakeClock:
    """An injectable clock for ``FakeTelegram(clock=...)``: time moves only when told to
    (``advance``), or by ``step`` seconds on every reading."""

    def __init__(self, start: float = 1_700_000_000.0, step: float = 0.0):
        self.now = start
        self.step = step

    def __call__(self) -> float:
        now = self.now
        self.now += self.step
        return now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class FileRecord:
    """A file the bot uploaded (or a user sent): bytes, name and the ids Telegram gave it."""

    file_id: str
    file_unique_id: str
    kind: str  # "photo" | "document" | "animation"
    data: bytes
    filename: str | None = None
    mime_type: str | None = None
    width: int = 0
    height: int = 0
    file_path: str | None = None  # set by getFile
    thumb: FileRecord | None = None  # photos: the small PhotoSize (same bytes)

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass
class Message:
    """One message in a chat, as the emulator keeps it (the bot's or a simulated user's).

    ``text``/``caption`` are what users see (after ``parse_mode``); ``raw_text``/``raw_caption``
    are what the bot sent. ``edits`` holds the earlier versions (``snapshot()`` dicts), oldest
    first. ``reply_markup`` is the plain JSON dict (``{"inline_keyboard": [[{...}]]}``).
    """

    chat_id: int
    message_id: int
    date: int
    seq: int  # global creation order across chats
    from_bot: bool
    sender_id: int | None  # the simulated user's id; None for the bot
    kind: str = "text"  # "text" | "photo" | "document" | "animation" | "service"
    text: str | None = None
    raw_text: str | None = None
    caption: str | None = None
    raw_caption: str | None = None
    parse_mode: str | None = None
    entities: list[dict] = field(default_factory=list)
    caption_entities: list[dict] = field(default_factory=list)
    file: FileRecord | None = None
    reply_markup: dict | None = None
    disable_notification: bool = False
    protect_content: bool = False
    message_thread_id: int | None = None
    reply_to: int | None = None  # message_id in the same chat
    edit_date: int | None = None
    edits: list[dict] = field(default_factory=list)
    deleted: bool = False
    service: dict | None = None  # e.g. {"migrate_to_chat_id": ...}
    method: str | None = None  # the API method that created it
    inline_message_id: str | None = None  # inline messages (chat_id is 0)
    #: Ephemeral messages (Bot API 10.2/10.3): ``message_id`` is 0, this is their id inside
    #: the chat; ``receiver_id`` is who sees it (the bot for an incoming ephemeral command).
    ephemeral_message_id: int | None = None
    receiver_id: int | None = None
    created: float = 0.0  # clock time (ephemeral: the 15-second reply window starts here)
    delivered: bool = True  # False: an ephemeral send Telegram accepted but never showed
    expired: bool = False  # an ephemeral message that vanished on its own
    replaced_message_id: int | None = None  # replace_callback_query_message: shown instead

    # --- convenient views -------------------------------------------------------------
    @property
    def content(self) -> str | None:
        """The visible text: ``text`` for text messages, ``caption`` for media."""
        return self.text if self.kind == "text" else self.caption

    @property
    def photo(self) -> FileRecord | None:
        return self.file if self.kind == "photo" else None

    @property
    def document(self) -> FileRecord | None:
        return self.file if self.kind == "document" else None

    @property
    def animation(self) -> FileRecord | None:
        return self.file if self.kind == "animation" else None

    @property
    def data(self) -> bytes | None:
        """The bytes of the photo/document/animation, if any."""
        return self.file.data if self.file else None

    @property
    def filename(self) -> str | None:
        return self.file.filename if self.file else None

    @property
    def edited(self) -> bool:
        return bool(self.edits)

    def buttons(self) -> list[dict]:
        """The inline keyboard's buttons, row by row, flattened (empty without a keyboard)."""
        rows = (self.reply_markup or {}).get("inline_keyboard") or []
        return [button for row in rows for button in row]

    def button_texts(self) -> list[str]:
        return [button.get("text", "") for button in self.buttons()]

    def button(self, text: str | None = None, data: str | None = None) -> dict:
        """The inline button with this text or callback_data; AssertionError if none."""
        for button in self.buttons():
            if (text is None or button.get("text") == text) and (
                data is None or button.get("callback_data") == data
            ):
                return button
        known = [(b.get("text"), b.get("callback_data")) for b in self.buttons()]
        raise AssertionError(
            f"no inline button text={text!r} data={data!r} on message {self.message_id} in chat "
            f"{self.chat_id}; buttons: {known}"
        )

    @property
    def ephemeral(self) -> bool:
        return self.ephemeral_message_id is not None

    def snapshot(self) -> dict[str, Any]:
        """The editable state: what editMessage* compares and what ``edits`` records."""
        return {
            "text": self.text,
            "entities": copy.deepcopy(self.entities),
            "caption": self.caption,
            "caption_entities": copy.deepcopy(self.caption_entities),
            "file_id": self.file.file_id if self.file else None,
            "kind": self.kind,
            "reply_markup": copy.deepcopy(self.reply_markup),
            "raw_text": self.raw_text,
            "raw_caption": self.raw_caption,
            "parse_mode": self.parse_mode,
            "edit_date": self.edit_date,
        }

    def __repr__(self) -> str:  # short: tests print lists of these
        flags = " deleted" if self.deleted else ""
        if self.ephemeral:
            flags += f" ephemeral {self.ephemeral_message_id} for {self.receiver_id}"
        who = "bot" if self.from_bot else f"user {self.sender_id}"
        return (f"<Message {self.chat_id}/{self.message_id} {self.kind} from {who}{flags}: "
                f"{(self.content or '')[:60]!r}>")


@dataclass
class Chat:
    """A private chat, a group or a supergroup (``forum`` supergroups have topics)."""

    id: int
    type: str  # "private" | "group" | "supergroup"
    title: str | None = None
    username: str | None = None
    is_forum: bool = False
    user_id: int | None = None  # private chats: the user
    bot_status: str = "member"  # "member" | "administrator" | "left" | "kicked"
    creator_id: int | None = None
    admins: set[int] = field(default_factory=set)
    members: set[int] = field(default_factory=set)
    forbidden_media: set[str] = field(default_factory=set)
    migrated_to: int | None = None
    migrated_from: int | None = None
    next_message_id: int = 1
    messages: dict[int, Message] = field(default_factory=dict)
    last_from_bot: bool = False
    send_times: deque = field(default_factory=deque)  # clock times of the bot's messages/edits
    paused_until: float = 0.0  # fake.flood(): every write answers 429 until then
    #: Ephemeral messages, both ways, oldest first (never in ``messages``: the group does
    #: not see them); looked up by (the member's user id, ephemeral_message_id).
    ephemeral: list[Message] = field(default_factory=list)

    @property
    def is_group(self) -> bool:
        return self.type in ("group", "supergroup")

    def api(self, users: dict[int, FakeUser] | None = None) -> dict[str, Any]:
        """The ``Chat`` object of the Bot API."""
        if self.type == "private":
            user = (users or {}).get(self.user_id or 0)
            data: dict[str, Any] = {"id": self.id, "type": "private"}
            if user is not None:
                data["first_name"] = user.first_name
                if user.last_name:
                    data["last_name"] = user.last_name
                if user.username:
                    data["username"] = user.username
            return data
        data = {"id": self.id, "type": self.type, "title": self.title}
        if self.username:
            data["username"] = self.username
        if self.is_forum:
            data["is_forum"] = True
        return data


@dataclass
class CallbackQuery:
    """A button press and the bot's answer to it (``answered`` once answerCallbackQuery ran)."""

    id: str
    user_id: int
    chat_id: int
    message_id: int
    data: str
    created: float  # clock time
    ephemeral_message_id: int | None = None  # pressed on an ephemeral message
    answered: bool = False
    text: str | None = None
    show_alert: bool = False
    url: str | None = None
    cache_time: int | None = None
    answer_attempts: int = 0


@dataclass
class Call:
    """One Bot API call as the emulator saw it."""

    method: str  # as sent, e.g. "sendMessage"
    chat_id: int | str | None
    time: float  # injected clock
    wall: float  # time.monotonic()
    status: int  # HTTP status: 200, 400, 403, 429, ...
    description: str | None
    params: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.status == 200


class FakeUser:
    """A simulated Telegram user; its methods enqueue updates for the bot."""

    def __init__(self, fake: FakeTelegram, user_id: int, first_name: str,
                 last_name: str | None = None, username: str | None = None,
                 language_code: str | None = "en"):
        self.fake = fake
        self.id = user_id
        self.first_name = first_name
        self.last_name = last_name
        self.username = username
        self.language_code = language_code
        self.started = False
        self.blocked = False

    def api(self) -> dict[str, Any]:
        """The ``User`` object of the Bot API."""
        data: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.last_name:
            data["last_name"] = self.last_name
        if self.username:
            data["username"] = self.username
        if self.language_code:
            data["language_code"] = self.language_code
        return data

    @property
    def chat(self) -> Chat:
        """The private chat with the bot (same as ``fake.private_chat(user)``)."""
        return self.fake.private_chat(self)

    def send(self, chat: Chat | int | None, text: str, *, thread_id: int | None = None,
             reply_to: Message | int | None = None) -> Message | None:
        """Write ``text`` in ``chat`` (None: the private chat with the bot).

        Returns the message, or None when the bot does not receive it (privacy mode, or the
        bot is not in the group)."""
        return self.fake.user_sends(self, chat, text, thread_id=thread_id, reply_to=reply_to)

    def start_bot(self, payload: str | None = None) -> Message | None:
        """Press Start in the private chat: ``/start`` or ``/start <payload>``."""
        return self.fake.user_starts(self, payload)

    def press(self, message: Message, text: str | None = None,
              data: str | None = None, *, forged: bool = False) -> CallbackQuery:
        """Press the inline button (by text or callback_data) on a message the bot sent (an
        ephemeral one too, if it is this user's);
        ``forged=True`` sends ``data`` whatever the message's buttons (a modified client)."""
        return self.fake.user_presses(self, message, text=text, data=data, forged=forged)

    def send_ephemeral(self, chat: Chat | int, text: str) -> Message:
        """Send an ephemeral command in a group (one the bot registered with
        ``is_ephemeral``): only this user and the bot see it."""
        return self.fake.user_sends_ephemeral(self, chat, text)

    def join(self, group: Chat | int) -> Message:
        """Join a group (a new_chat_members service message the bot receives)."""
        return self.fake.user_joins(self, group)

    def leave(self, group: Chat | int) -> Message:
        """Leave a group (a left_chat_member service message the bot receives)."""
        return self.fake.user_leaves(self, group)

    def block_bot(self) -> None:
        """Block the bot: sends to this user fail with 403, a my_chat_member update follows."""
        self.fake.user_blocks(self)

    def __repr__(self) -> str:
        return f"<FakeUser {self.id} {self.first_name!r}>"
