"""FakeTelegram: the emulated Bot API server, its simulated world and the test helpers."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import json
import math
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from tests.fakebot import errors as E
from tests.fakebot.errors import ApiError, bad, too_many
from tests.fakebot.media import extension, guess_mime, image_size, scaled
from tests.fakebot.model import Call, CallbackQuery, Chat, FakeUser, FileRecord, Message
from tests.fakebot.text import (
    EntityError,
    command_entities,
    parse_html,
    parse_markdown,
    parse_markdown_v2,
    trim,
)
from tests.fakebot.webhook import Deliverer, WebhookAttempt

UPDATE_TYPES = (
    "message", "edited_message", "channel_post", "edited_channel_post", "business_connection",
    "business_message", "edited_business_message", "deleted_business_messages",
    "message_reaction", "message_reaction_count", "inline_query", "chosen_inline_result",
    "callback_query", "shipping_query", "pre_checkout_query", "purchased_paid_media", "poll",
    "poll_answer", "my_chat_member", "chat_member", "chat_join_request", "chat_boost",
    "removed_chat_boost",
)
# What getUpdates delivers when allowed_updates was never given (or given as []).
DEFAULT_ALLOWED = frozenset(UPDATE_TYPES) - {"chat_member", "message_reaction",
                                             "message_reaction_count"}
# Parameters that carry JSON when sent as form fields.
JSON_PARAMS = frozenset({
    "reply_markup", "entities", "caption_entities", "scope", "allowed_updates", "media",
    "reply_parameters", "link_preview_options", "commands", "menu_button", "message_ids",
    "ephemeral_message_parameters",
})
EDIT_METHODS = frozenset({"editmessagetext", "editmessagecaption", "editmessagemedia",
                          "editmessagereplymarkup"})
EPHEMERAL_EDIT_METHODS = frozenset({"editephemeralmessagetext", "editephemeralmessagecaption",
                                    "editephemeralmessagemedia",
                                    "editephemeralmessagereplymarkup"})
SEND_KINDS = {"sendphoto": "photo", "senddocument": "document", "sendanimation": "animation"}
MEDIA_KINDS = ("photo", "document", "animation", "video", "audio")
BUTTON_ACTIONS = (
    "url", "callback_data", "web_app", "login_url", "switch_inline_query",
    "switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "copy_text",
    "callback_game", "pay",
)
_COMMAND_NAME = re.compile(r"[a-z0-9_]{1,32}")


def _int(params: dict, key: str, default: int | None = None) -> int | None:
    value = params.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    try:
        return int(str(value).strip())
    except ValueError:
        raise bad(f"invalid {key} specified") from None


def _float(params: dict, key: str, default: float = 0.0) -> float:
    value = params.get(key)
    if value is None or value == "":
        return default
    try:
        return float(value)
    except (TypeError, ValueError):
        raise bad(f"invalid {key} specified") from None


def _bool(params: dict, key: str) -> bool:
    value = params.get(key)
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    return str(value).strip().lower() in ("true", "1")


def _str(params: dict, key: str) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def normalize_params(params: dict[str, Any]) -> dict[str, Any]:
    """Decode JSON-valued form fields (reply_markup, entities, scope, ...)."""
    out = dict(params)
    for key in JSON_PARAMS & out.keys():
        value = out[key]
        if isinstance(value, str):
            try:
                out[key] = json.loads(value)
            except ValueError:
                if key == "reply_markup":
                    raise ApiError(400, E.REPLY_MARKUP_JSON) from None
                raise bad(f"can't parse {key} JSON object") from None
    return out


def _markup_equal(a: dict | None, b: dict | None) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


class FakeTelegram:
    """An in-memory Telegram Bot API server with simulated users and chats.

    See the package docstring (``tests/fakebot/__init__.py``) for the whole API.
    """

    def __init__(
        self,
        token: str = "123456:TEST-token",
        bot_username: str = "krendzu_test_bot",
        bot_id: int | None = None,
        clock: Callable[[], float] | None = None,
        *,
        bot_name: str = "Krendzu Test Bot",
        privacy: bool = True,
        group_limit: int = 20,
        group_window: float = 60.0,
        global_limit: int | None = 30,
        callback_timeout: float = 15 * 60,
        ephemeral_window: float = 15.0,
        ephemeral_in_group_limit: bool = True,
        ephemeral_after_answer: bool = False,
        ephemeral_lifetime: float | None = None,
    ):
        self.token = token
        self.bot_username = bot_username
        prefix = token.split(":", 1)[0]
        self.bot_id = bot_id if bot_id is not None else (int(prefix) if prefix.isdigit() else 1)
        self.bot_name = bot_name
        self.clock: Callable[[], float] = clock or time.time
        self.privacy = privacy
        self.group_limit = group_limit
        self.group_window = group_window
        self.global_limit = global_limit
        self.callback_timeout = callback_timeout
        #: Ephemeral messages (package docstring, "Ephemeral messages"): the clock seconds a
        #: non-administrator bot has after the user's eligible action (Telegram: 15) ...
        self.ephemeral_window = ephemeral_window
        #: ... whether ephemeral sends and edits count in the group's ``group_limit``
        #: (undocumented; counted, as the safe reading) ...
        self.ephemeral_in_group_limit = ephemeral_in_group_limit
        #: ... whether a callback query already answered still allows an ephemeral send
        #: (undocumented; not, as the safe reading: send first, then answer) ...
        self.ephemeral_after_answer = ephemeral_after_answer
        #: ... and after how many clock seconds they vanish on their own (None: never).
        self.ephemeral_lifetime = ephemeral_lifetime
        self._ephemeral_drops = 0
        self._ephemeral_ids: dict[tuple[int, int], int] = {}

        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self.users: dict[int, FakeUser] = {}
        self.chats: dict[int, Chat] = {}
        self.files: dict[str, FileRecord] = {}
        self._file_paths: dict[str, FileRecord] = {}
        self.callbacks: dict[str, CallbackQuery] = {}
        self.inline_messages: dict[str, Message] = {}
        self._commands: dict[tuple[str, str], list[dict]] = {}
        #: setMyDescription / setMyShortDescription: (kind, language code or "") → text.
        self.descriptions: dict[tuple[str, str], str] = {}
        self.menu_buttons: dict[int | None, dict] = {}
        self.calls: list[Call] = []
        self.update_log: list[dict] = []  # every update ever queued, in order
        self.errors: list[BaseException] = []  # emulator bugs (answered with HTTP 500)
        self.webhook_url = ""
        #: setWebhook's secret_token (sent back in X-Telegram-Bot-Api-Secret-Token).
        self.webhook_secret = ""
        self.webhook_max_connections = 40
        #: Seconds (wall) a delivery waits for the bot's answer (Telegram: 60).
        self.webhook_timeout = 60.0
        #: Back-off of redeliveries in clock seconds: first, doubling, at most cap.
        #: Where each update is posted instead of the webhook's URL, when set (a load
        #: balancer in front of several webhook workers sending each person to one of them:
        #: tests/test_playnow_scaled.py); it is given the update.
        self.webhook_route: Callable[[dict], str] | None = None
        self.webhook_retry_first = 1.0
        self.webhook_retry_cap = 60.0
        #: Every delivery try (tests/fakebot/webhook.py), oldest first.
        self.webhook_log: list[WebhookAttempt] = []
        #: Update ids a webhook delivery got a 2xx answer for (``webhook_delivered``).
        self.webhook_done: set[int] = set()
        self.webhook_last_error: tuple[int, str] | None = None
        self._webhook_faults: list[str] = []
        self._deliverer = Deliverer(self)
        #: While True the in-process transport fails every call but getUpdates with a
        #: NetworkError (the bot's requests never reach "Telegram").
        self.outage = False

        self._updates: list[dict] = []
        self._next_update_id = 10_001
        self._delivered_upto = 0
        self._allowed: frozenset[str] | None = None
        self._poll_gen = 0
        self._async_waiters: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()
        self._global_times: deque[float] = deque()
        self._seq = 0
        self._action_seq = 0
        self._file_counter = 0
        self._callback_counter = 0
        self._inline_counter = 0
        self._last_activity = time.monotonic()
        self._stopping = False
        self._server: Any = None
        self._server_thread: threading.Thread | None = None
        self._handlers: dict[str, Callable[[dict, dict], Any]] = {
            name[3:]: getattr(self, name) for name in dir(self) if name.startswith("_m_")
        }

    # ================================================================================
    # The simulated world
    # ================================================================================
    def user(self, user_id: int, first_name: str, last_name: str | None = None,
             username: str | None = None, language_code: str | None = "en") -> FakeUser:
        """A simulated user (and their private chat with the bot, id == user id)."""
        with self._lock:
            if user_id in self.users:
                raise ValueError(f"user {user_id} exists already")
            user = FakeUser(self, user_id, first_name, last_name, username, language_code)
            self.users[user_id] = user
            self.chats[user_id] = Chat(id=user_id, type="private", user_id=user_id)
            return user

    def private_chat(self, user: FakeUser | int) -> Chat:
        user_id = user.id if isinstance(user, FakeUser) else user
        return self.chats[user_id]

    def group(self, chat_id: int, title: str, forum: bool = False, *,
              username: str | None = None, bot: bool = True, bot_admin: bool = False,
              creator: FakeUser | None = None, members: Iterable[FakeUser] = ()) -> Chat:
        """A group (ids above -10**12) or a supergroup (-100...); the bot is in it unless
        ``bot=False`` (then add it with :meth:`add_bot`, which sends the updates)."""
        if chat_id >= 0:
            raise ValueError("group ids are negative")
        kind = "supergroup" if chat_id <= -(10**12) else "group"
        if forum and kind != "supergroup":
            raise ValueError("forums are supergroups: use an id like -100xxxxxxxxxx")
        with self._lock:
            if chat_id in self.chats:
                raise ValueError(f"chat {chat_id} exists already")
            chat = Chat(id=chat_id, type=kind, title=title, username=username, is_forum=forum,
                        bot_status=("administrator" if bot_admin else "member") if bot else "left")
            if creator is not None:
                chat.creator_id = creator.id
                chat.members.add(creator.id)
            chat.members.update(m.id for m in members)
            self.chats[chat_id] = chat
            return chat

    def chat(self, chat: Chat | FakeUser | int) -> Chat:
        """The Chat for a Chat, a user (their private chat) or a chat id."""
        if isinstance(chat, Chat):
            return chat
        if isinstance(chat, FakeUser):
            return self.chats[chat.id]
        try:
            return self.chats[chat]
        except KeyError:
            raise KeyError(f"no chat {chat} in the emulator") from None

    def set_admin(self, group: Chat | int, user: FakeUser, admin: bool = True) -> None:
        """Make ``user`` an administrator of the group (or not)."""
        with self._lock:
            chat = self.chat(group)
            chat.members.add(user.id)
            if admin:
                chat.admins.add(user.id)
            else:
                chat.admins.discard(user.id)

    def set_bot_admin(self, group: Chat | int, admin: bool = True) -> None:
        """Promote the bot (an admin bot gets every group message, privacy or not)."""
        with self._lock:
            chat = self.chat(group)
            old = chat.bot_status
            chat.bot_status = "administrator" if admin else "member"
            if old != chat.bot_status:
                self._my_chat_member(chat, self._someone(chat), old, chat.bot_status)

    def add_bot(self, group: Chat | int, by: FakeUser | None = None, *,
                admin: bool = False) -> None:
        """Add the bot to a group: a my_chat_member update and a new_chat_members message."""
        with self._lock:
            chat = self.chat(group)
            actor = by or self._someone(chat)
            old = chat.bot_status
            chat.bot_status = "administrator" if admin else "member"
            self._action_seq = self._seq
            self._my_chat_member(chat, actor, old, chat.bot_status)
            msg = self._new_message(chat, from_bot=False, sender_id=actor.id, kind="service")
            msg.service = {"new_chat_members": [self._bot_user()]}
            self._enqueue("message", self._message_api(msg))

    def remove_bot(self, group: Chat | int, by: FakeUser | None = None) -> None:
        """Kick the bot: a my_chat_member update; later sends fail with 403 'kicked'."""
        with self._lock:
            chat = self.chat(group)
            old = chat.bot_status
            chat.bot_status = "kicked"
            self._action_seq = self._seq
            self._my_chat_member(chat, by or self._someone(chat), old, "kicked")

    def migrate(self, group: Chat | int, by: FakeUser | None = None) -> Chat:
        """Upgrade a group to a supergroup; returns the new chat (id -100...).

        The bot gets the two service messages (migrate_to_chat_id in the old chat,
        migrate_from_chat_id in the new); later writes to the old id fail with 400
        'group chat was upgraded to a supergroup chat' and parameters.migrate_to_chat_id."""
        with self._lock:
            old = self.chat(group)
            if old.type != "group":
                raise ValueError("only basic groups migrate")
            new_id = -(10**12 + abs(old.id))
            new = Chat(id=new_id, type="supergroup", title=old.title, username=old.username,
                       bot_status=old.bot_status, creator_id=old.creator_id,
                       admins=set(old.admins), members=set(old.members),
                       forbidden_media=set(old.forbidden_media), migrated_from=old.id)
            self.chats[new_id] = new
            actor = by or self._someone(old)
            self._action_seq = self._seq
            note = self._new_message(old, from_bot=False, sender_id=actor.id, kind="service")
            note.service = {"migrate_to_chat_id": new_id}
            old.migrated_to = new_id
            first = self._new_message(new, from_bot=False, sender_id=actor.id, kind="service")
            first.service = {"migrate_from_chat_id": old.id}
            if old.bot_status in ("member", "administrator"):
                self._enqueue("message", self._message_api(note))
                self._enqueue("message", self._message_api(first))
            return new

    def forbid_media(self, group: Chat | int,
                     kinds: Iterable[str] = ("photo", "document", "animation")) -> None:
        """Members (the bot included) may not send these media kinds to the group."""
        with self._lock:
            self.chat(group).forbidden_media.update(kinds)

    def allow_media(self, group: Chat | int) -> None:
        with self._lock:
            self.chat(group).forbidden_media.clear()

    def inline_message(self, text: str, reply_markup: dict | None = None) -> Message:
        """An inline message (as if sent via the bot); edit it with inline_message_id."""
        with self._lock:
            self._inline_counter += 1
            self._seq += 1
            inline_id = f"AQAAA{self._inline_counter:010d}"
            msg = Message(chat_id=0, message_id=0, date=int(self.clock()), seq=self._seq,
                          from_bot=True, sender_id=None, text=text, raw_text=text,
                          reply_markup=copy.deepcopy(reply_markup), inline_message_id=inline_id)
            self.inline_messages[inline_id] = msg
            return msg

    # --- users' actions --------------------------------------------------------------
    def user_sends(self, user: FakeUser, chat: Chat | int | None, text: str, *,
                   thread_id: int | None = None,
                   reply_to: Message | int | None = None) -> Message | None:
        with self._lock:
            target = self.chat(user if chat is None else chat)
            if target.type == "private":
                if target.user_id != user.id:
                    raise ValueError(f"{user} cannot write in {target.user_id}'s private chat")
                if user.blocked:
                    raise RuntimeError(f"{user} blocked the bot: call start_bot() first")
                user.started = True
            else:
                if target.migrated_to is not None:
                    raise RuntimeError(f"group {target.id} became {target.migrated_to}")
                target.members.add(user.id)
            replied = None
            if reply_to is not None:
                rid = reply_to.message_id if isinstance(reply_to, Message) else reply_to
                replied = target.messages.get(rid)
                if replied is None or replied.deleted:
                    raise ValueError(f"no message {rid} in chat {target.id} to reply to")
            self._action_seq = self._seq
            msg = self._new_message(target, from_bot=False, sender_id=user.id)
            msg.text = msg.raw_text = text
            msg.entities = command_entities(text)
            msg.reply_to = replied.message_id if replied else None
            msg.message_thread_id = thread_id
            delivered = self._bot_receives(target, msg, replied)
            target.last_from_bot = False
            if not delivered:
                return None
            self._enqueue("message", self._message_api(msg))
            return msg

    def user_sends_ephemeral(self, user: FakeUser, chat: Chat | int, text: str) -> Message:
        """An ephemeral command in a group: a ``message`` update with message_id 0, an
        ephemeral_message_id and receiver_user = the bot, seen by nobody else. The command
        must be one the bot registered with ``is_ephemeral`` for this chat and user (else a
        client sends it publicly: use ``send``)."""
        with self._lock:
            target = self.chat(chat)
            if not target.is_group:
                raise ValueError("ephemeral commands exist only in groups")
            if target.migrated_to is not None:
                raise RuntimeError(f"group {target.id} became {target.migrated_to}")
            if target.bot_status not in ("member", "administrator"):
                raise RuntimeError(f"the bot is not in group {target.id}")
            entities = command_entities(text)
            if not entities or entities[0]["offset"] != 0:
                raise ValueError(f"{text!r} is not a command")
            token = text[1:entities[0]["length"]]
            name, _, username = token.partition("@")
            if username and username.lower() != self.bot_username.lower():
                raise ValueError(f"{text!r} is addressed to another bot")
            if not self._is_ephemeral_command(target, user, name.lower()):
                raise AssertionError(f"/{name} is not registered with is_ephemeral for {user} "
                                     f"in chat {target.id}: a client sends it publicly")
            target.members.add(user.id)
            self._action_seq = self._seq
            msg = self._new_ephemeral(target, member_id=user.id, from_bot=False,
                                      sender_id=user.id, receiver_id=self.bot_id)
            msg.text = msg.raw_text = text
            msg.entities = entities
            self._enqueue("message", self._message_api(msg))
            return msg

    def _is_ephemeral_command(self, chat: Chat, user: FakeUser, name: str) -> bool:
        """Whether ``name`` is ephemeral in the command list this user sees in this group
        (the most specific scope with a list wins, as the Bot API documents)."""
        admin = user.id in chat.admins or user.id == chat.creator_id
        scopes: list[dict] = [{"type": "chat_member", "chat_id": chat.id, "user_id": user.id}]
        if admin:
            scopes.append({"type": "chat_administrators", "chat_id": chat.id})
        scopes.append({"type": "chat", "chat_id": chat.id})
        if admin:
            scopes.append({"type": "all_chat_administrators"})
        scopes += [{"type": "all_group_chats"}, {"type": "default"}]
        for scope in scopes:
            for language in (user.language_code or "", ""):
                found = self._commands.get((self._scope_key(scope), language))
                if found is not None:
                    return any(c["command"] == name and c.get("is_ephemeral") for c in found)
        return False

    def user_joins(self, user: FakeUser, group: Chat | int) -> Message:
        """``user`` joins the group: a new_chat_members service message (always delivered)."""
        return self._membership_note(user, group, joined=True)

    def user_leaves(self, user: FakeUser, group: Chat | int) -> Message:
        """``user`` leaves the group: a left_chat_member service message."""
        return self._membership_note(user, group, joined=False)

    def _membership_note(self, user: FakeUser, group: Chat | int, *, joined: bool) -> Message:
        with self._lock:
            chat = self.chat(group)
            if not chat.is_group or chat.migrated_to is not None:
                raise ValueError(f"chat {chat.id} is not an active group")
            self._action_seq = self._seq
            msg = self._new_message(chat, from_bot=False, sender_id=user.id, kind="service")
            if joined:
                chat.members.add(user.id)
                msg.service = {"new_chat_members": [user.api()]}
            else:
                chat.members.discard(user.id)
                chat.admins.discard(user.id)
                msg.service = {"left_chat_member": user.api()}
            if chat.bot_status in ("member", "administrator"):
                self._enqueue("message", self._message_api(msg))
            return msg

    def _bot_receives(self, chat: Chat, msg: Message, replied: Message | None) -> bool:
        """Privacy mode, as documented: what a bot in a group gets to see."""
        if chat.type == "private":
            return True
        if chat.bot_status not in ("member", "administrator"):
            return False
        if not self.privacy or chat.bot_status == "administrator":
            return True
        if replied is not None and replied.from_bot:
            return True
        commands = [e for e in msg.entities if e["offset"] == 0 and e["type"] == "bot_command"]
        if not commands:
            return False
        token = (msg.text or "")[: commands[0]["length"]]
        if "@" in token:
            return token.split("@", 1)[1].lower() == self.bot_username.lower()
        return chat.last_from_bot

    def user_starts(self, user: FakeUser, payload: str | None = None) -> Message | None:
        with self._lock:
            chat = self.chats[user.id]
            if user.blocked:
                user.blocked = False
                self._my_chat_member(chat, user, "kicked", "member")
            user.started = True
            text = "/start" if not payload else f"/start {payload}"
            return self.user_sends(user, chat, text)

    def user_blocks(self, user: FakeUser) -> None:
        with self._lock:
            if user.blocked:
                return
            user.blocked = True
            self._action_seq = self._seq
            self._my_chat_member(self.chats[user.id], user, "member", "kicked")

    def user_presses(self, user: FakeUser, message: Message, *, text: str | None = None,
                     data: str | None = None, forged: bool = False) -> CallbackQuery:
        with self._lock:
            if text is None and data is None:
                raise ValueError("press(): give the button's text or data")
            if forged and data is None:
                raise ValueError("press(forged=True): give the data to send")
            if message.inline_message_id is not None:
                current = self.inline_messages[message.inline_message_id]
            elif message.ephemeral:
                if message.receiver_id != user.id:
                    raise AssertionError(f"{user} does not see ephemeral message "
                                         f"{message.ephemeral_message_id} (it is "
                                         f"{message.receiver_id}'s)")
                found = self._find_ephemeral(self.chat(message.chat_id), user.id,
                                             message.ephemeral_message_id or 0)
                if found is not message or not found.delivered or not found.from_bot:
                    raise AssertionError(f"ephemeral message {message.ephemeral_message_id} "
                                         f"is not on {user}'s screen (deleted, expired or "
                                         "never delivered)")
                current = found
            else:
                chat = self.chat(message.chat_id)
                current = chat.messages.get(message.message_id)
                if current is None or current.deleted:
                    raise AssertionError(f"message {message.message_id} in chat {chat.id} "
                                         "is gone (deleted)")
                if chat.type == "private" and user.blocked:
                    raise RuntimeError(f"{user} blocked the bot")
            if not current.from_bot:
                raise AssertionError("only the bot's messages have inline buttons")
            # A modified client may send any data for a real message (Telegram does not
            # check it against the keyboard): ``forged`` skips the look-up.
            button = {"callback_data": data} if forged else current.button(text=text, data=data)
            if "callback_data" not in button:
                raise AssertionError(f"button {button.get('text')!r} has no callback_data "
                                     f"(it is {sorted(button)})")
            self._callback_counter += 1
            query_id = str(4_611_686_018_427_387_904 + self._callback_counter * 7_919)
            record = CallbackQuery(id=query_id, user_id=user.id, chat_id=current.chat_id,
                                   message_id=current.message_id,
                                   data=button["callback_data"], created=self.clock(),
                                   ephemeral_message_id=current.ephemeral_message_id)
            self.callbacks[query_id] = record
            self._action_seq = self._seq
            payload: dict[str, Any] = {
                "id": query_id,
                "from": user.api(),
                "chat_instance": self._chat_instance(current.chat_id),
                "data": button["callback_data"],
            }
            if current.inline_message_id is not None:
                payload["inline_message_id"] = current.inline_message_id
            else:
                payload["message"] = self._message_api(current)
            self._enqueue("callback_query", payload)
            return record

    # ================================================================================
    # Inspection
    # ================================================================================
    def messages(self, chat: Chat | FakeUser | int) -> list[Message]:
        """Every message in the chat (the bot's and users'), oldest first."""
        with self._lock:
            return list(self.chat(chat).messages.values())

    def sent(self, chat: Chat | FakeUser | int, *, deleted: bool = True) -> list[Message]:
        """The bot's messages in the chat, oldest first (``deleted=False`` skips deleted)."""
        with self._lock:
            return [m for m in self.chat(chat).messages.values()
                    if m.from_bot and (deleted or not m.deleted)]

    def ephemeral(self, chat: Chat | FakeUser | int, user: FakeUser | int, *,
                  gone: bool = False) -> list[Message]:
        """The bot's ephemeral messages ``user`` sees in ``chat`` now, oldest first (not
        deleted, expired or dropped); ``gone=True``: every one ever sent to them."""
        user_id = user.id if isinstance(user, FakeUser) else user
        with self._lock:
            return [m for m in self.chat(chat).ephemeral
                    if m.from_bot and m.receiver_id == user_id
                    and (gone or (m.delivered and self._live(m)))]

    def ephemeral_log(self, chat: Chat | FakeUser | int) -> list[Message]:
        """Every ephemeral message of the chat both ways (incoming commands too), oldest
        first, whatever became of them."""
        with self._lock:
            return list(self.chat(chat).ephemeral)

    def visible(self, chat: Chat | FakeUser | int, user: FakeUser | int) -> list[Message]:
        """What ``user`` sees in ``chat`` now: its messages not deleted and the ephemeral
        messages between the user and the bot, in order (for leak checks per receiver)."""
        user_id = user.id if isinstance(user, FakeUser) else user
        with self._lock:
            target = self.chat(chat)
            public = [m for m in target.messages.values() if not m.deleted]
            own = [m for m in target.ephemeral if self._member_of(m) == user_id
                   and m.delivered and self._live(m)]
            return sorted(public + own, key=lambda m: m.seq)

    def drop_ephemeral(self, count: int = 1) -> None:
        """The next ``count`` ephemeral sends are accepted (Telegram answers with the
        message) but never reach the receiver ("delivery is not guaranteed")."""
        with self._lock:
            self._ephemeral_drops += count

    def expire_ephemeral(self, chat: Chat | FakeUser | int, user: FakeUser | int,
                         ephemeral_message_id: int | None = None) -> None:
        """The user's ephemeral messages in ``chat`` (or only this one) vanish, as after an
        app restart: edits and deletes of them then fail as for a message not found."""
        user_id = user.id if isinstance(user, FakeUser) else user
        with self._lock:
            for m in self.chat(chat).ephemeral:
                if self._member_of(m) == user_id and ephemeral_message_id in (
                        None, m.ephemeral_message_id):
                    m.expired = True

    async def wait_for_ephemeral(self, chat: Chat | FakeUser | int, user: FakeUser | int,
                                 contains: str | None = None, *, since: int | None = None,
                                 timeout: float = 5.0) -> Message:
        """The first ephemeral bot message ``user`` sees in ``chat`` newer than ``since``
        (default: the latest simulated user action) containing ``contains``."""
        with self._lock:
            after = self._action_seq if since is None else since

        def find() -> Message | None:
            for m in self.ephemeral(chat, user):
                if m.seq > after and (contains is None or contains in (m.content or "")):
                    return m
            return None

        find.__name__ = f"an ephemeral bot message for {user} in {chat}"
        return await self.wait_for(find, timeout)

    def last(self, chat: Chat | FakeUser | int) -> Message | None:
        """The bot's newest message in the chat that is not deleted, or None."""
        sent = self.sent(chat, deleted=False)
        return sent[-1] if sent else None

    def message(self, chat: Chat | FakeUser | int, message_id: int) -> Message:
        with self._lock:
            return self.chat(chat).messages[message_id]

    def answer(self, query: CallbackQuery | str) -> CallbackQuery:
        """The callback query record (``answered``, ``text``, ``show_alert``)."""
        with self._lock:
            return self.callbacks[query.id if isinstance(query, CallbackQuery) else query]

    def commands(self, scope: str | dict | None = None,
                 language_code: str | None = None) -> list[dict] | None:
        """Commands set by setMyCommands for (scope, language_code), or None if never set.

        ``scope``: None/"default", a type name ("all_private_chats", ...) or a scope dict."""
        with self._lock:
            found = self._commands.get((self._scope_key(scope), language_code or ""))
            return copy.deepcopy(found) if found is not None else None

    def all_commands(self) -> dict[tuple[str, str], list[dict]]:
        """Every command list: {(scope JSON, language_code): [{"command", "description"}]}."""
        with self._lock:
            return copy.deepcopy(self._commands)

    def calls_to(self, method: str | None = None, chat: Chat | FakeUser | int | None = None,
                 *, ok: bool | None = None) -> list[Call]:
        """The call log filtered by method (case-insensitive), chat and success."""
        with self._lock:
            chat_id = self.chat(chat).id if chat is not None else None
            return [c for c in self.calls
                    if (method is None or c.method.lower() == method.lower())
                    and (chat_id is None or c.chat_id == chat_id)
                    and (ok is None or c.ok == ok)]

    def max_sends_in_window(self, chat: Chat | FakeUser | int, window: float = 60.0, *,
                            edits: bool = False, ephemeral: bool = True) -> int:
        """The most successful new-message calls to ``chat`` inside any ``window`` seconds
        (with ``edits=True`` counting edits too, as Telegram's flood limit does;
        ``ephemeral=False`` leaves out ephemeral sends and edits)."""
        methods = {"sendmessage", *SEND_KINDS} | (EDIT_METHODS if edits else set())
        if ephemeral and edits:
            methods |= EPHEMERAL_EDIT_METHODS
        times = sorted(c.time for c in self.calls_to(chat=chat, ok=True)
                       if c.method.lower() in methods
                       and (ephemeral or "ephemeral_message_parameters" not in c.params))
        best, start = 0, 0
        for end, t in enumerate(times):
            while t - times[start] >= window:
                start += 1
            best = max(best, end - start + 1)
        return best

    def flood(self, chat: Chat | FakeUser | int, retry_after: float) -> None:
        """Answer every send and edit to ``chat`` with 429 for ``retry_after`` clock seconds
        (as Telegram does after a burst the emulator's counters would not see)."""
        with self._lock:
            self.chat(chat).paused_until = self.clock() + retry_after

    def rate_limited(self, chat: Chat | FakeUser | int | None = None) -> list[Call]:
        """The calls answered 429 (to ``chat``, or to any)."""
        return [c for c in self.calls_to(chat=chat, ok=False) if c.status == 429]

    def webhook_attempts(self, update_id: int | None = None) -> list[WebhookAttempt]:
        """The webhook delivery tries (of one update), oldest first."""
        with self._lock:
            return [a for a in self.webhook_log if update_id in (None, a.update_id)]

    def webhook_delivered(self, update_id: int) -> bool:
        """Whether the bot answered a webhook delivery of ``update_id`` with 2xx (cheap: for
        drivers that wait on one update among thousands)."""
        with self._lock:
            return update_id in self.webhook_done

    def drop_webhook(self, count: int = 1, *, answered: bool = True) -> None:
        """The next ``count`` webhook deliveries break: with ``answered`` the bot's answer is
        lost on the way (the bot processed the update; Telegram sends it again), else the
        connection closes right after the request was sent (the bot may still be at it when
        the copy comes)."""
        with self._lock:
            self._webhook_faults.extend(["lose" if answered else "drop"] * count)

    def pending_updates(self) -> list[dict]:
        """Updates queued and not yet confirmed by an offset."""
        with self._lock:
            return copy.deepcopy(self._updates)

    def mark(self) -> int:
        """A position in the message history, for ``wait_for_message(since=...)``."""
        with self._lock:
            return self._seq

    def describe(self, calls: int = 12) -> str:
        """The last calls and the newest bot messages, for failure messages."""
        with self._lock:
            lines = ["last API calls:"]
            for c in self.calls[-calls:]:
                if c.method.lower() == "getupdates" and c.ok:
                    continue
                lines.append(f"  {c.method} chat={c.chat_id} -> {c.status} {c.description or ''}")
            lines.append("newest messages:")
            newest = sorted((m for ch in self.chats.values()
                             for m in (*ch.messages.values(), *ch.ephemeral)),
                            key=lambda m: m.seq)[-8:]
            lines.extend(f"  {m!r}" for m in newest)
            if self.errors:
                lines.append(f"emulator errors: {self.errors!r}")
            return "\n".join(lines)

    # --- waiting ---------------------------------------------------------------------
    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 5.0, *,
                       interval: float = 0.01, message: str | None = None) -> Any:
        """Poll ``predicate()`` until it returns something truthy, and return that."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                value = predicate()
            if value:
                return value
            if time.monotonic() >= deadline:
                what = message or getattr(predicate, "__name__", repr(predicate))
                raise AssertionError(f"timed out after {timeout}s waiting for {what}\n"
                                     + self.describe())
            await asyncio.sleep(interval)

    def wait_for_sync(self, predicate: Callable[[], Any], timeout: float = 5.0, *,
                      interval: float = 0.01, message: str | None = None) -> Any:
        """:meth:`wait_for` for synchronous tests (e.g. with the bot in a subprocess)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                value = predicate()
            if value:
                return value
            if time.monotonic() >= deadline:
                what = message or getattr(predicate, "__name__", repr(predicate))
                raise AssertionError(f"timed out after {timeout}s waiting for {what}\n"
                                     + self.describe())
            time.sleep(interval)

    def _message_matcher(self, chat: Chat | FakeUser | int, contains: str | None,
                         since: int | None,
                         where: Callable[[Message], bool] | None) -> Callable[[], Message | None]:
        target = self.chat(chat)
        after = self._action_seq if since is None else since

        def find() -> Message | None:
            for m in target.messages.values():
                if (m.from_bot and m.seq > after and not m.deleted
                        and (contains is None or contains in (m.content or ""))
                        and (where is None or where(m))):
                    return m
            return None

        find.__name__ = f"a bot message in {target.id}" + (
            f" containing {contains!r}" if contains else "")
        return find

    async def wait_for_message(self, chat: Chat | FakeUser | int, contains: str | None = None,
                               *, since: int | None = None,
                               where: Callable[[Message], bool] | None = None,
                               timeout: float = 5.0) -> Message:
        """The first bot message in ``chat`` newer than ``since`` (default: the latest
        simulated user action) whose text/caption contains ``contains``."""
        with self._lock:
            find = self._message_matcher(chat, contains, since, where)
        return await self.wait_for(find, timeout)

    def wait_for_message_sync(self, chat: Chat | FakeUser | int, contains: str | None = None,
                              *, since: int | None = None,
                              where: Callable[[Message], bool] | None = None,
                              timeout: float = 5.0) -> Message:
        with self._lock:
            find = self._message_matcher(chat, contains, since, where)
        return self.wait_for_sync(find, timeout)

    def _idle(self, quiet: float) -> bool:
        if self.webhook_url:  # delivered means answered 2xx
            undelivered = bool(self._updates) or not self._deliverer.idle
        else:
            undelivered = any(u["update_id"] > self._delivered_upto for u in self._updates)
        return not undelivered and time.monotonic() - self._last_activity >= quiet

    async def wait_until_idle(self, quiet: float = 0.2, timeout: float = 10.0) -> None:
        """Until every queued update was fetched and no API call came for ``quiet`` s."""
        await self.wait_for(lambda: self._idle(quiet), timeout,
                            message=f"the bot to go idle for {quiet}s")

    def wait_until_idle_sync(self, quiet: float = 0.2, timeout: float = 10.0) -> None:
        self.wait_for_sync(lambda: self._idle(quiet), timeout,
                           message=f"the bot to go idle for {quiet}s")

    # ================================================================================
    # Connecting
    # ================================================================================
    def request(self) -> Any:
        """A telegram.request.BaseRequest that talks to this emulator in-process."""
        from tests.fakebot.transport import FakeRequest

        return FakeRequest(self)

    def serve_http(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Serve the Bot API over HTTP in a background thread; returns the base URL
        (``{base}/bot<token>/<method>``, ``{base}/file/bot<token>/<path>``)."""
        from tests.fakebot.transport import start_server

        if self._server is not None:
            raise RuntimeError("already serving")
        self._stopping = False
        self._server, self._server_thread = start_server(self, host, port)
        address = self._server.server_address
        return f"http://{address[0]}:{address[1]}"

    def stop(self) -> None:
        """Stop the HTTP server (if any), webhook deliveries and every waiting getUpdates."""
        with self._lock:
            self._stopping = True
            self._deliverer.stop()
            self._notify()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            if self._server_thread is not None:
                self._server_thread.join(timeout=5)
            self._server = None
            self._server_thread = None

    # --- request handling (used by the transports) ---------------------------------
    def handle(self, method: str, params: dict[str, Any],
               files: dict[str, tuple[str | None, bytes, str | None]] | None = None,
               ) -> tuple[int, dict]:
        """One API call from a thread; getUpdates long-polls by blocking this thread."""
        started = time.monotonic()
        try:
            if method.lower() == "getupdates":
                result = self._get_updates_blocking(normalize_params(params))
            else:
                result = self._dispatch(method, params, files or {})
            status, body = 200, {"ok": True, "result": result}
        except ApiError as exc:
            status, body = exc.code, exc.payload()
        except Exception as exc:
            status, body = self._internal_error(exc)
        self._log(method, params, status, body, started)
        return status, body

    async def handle_async(self, method: str, params: dict[str, Any],
                           files: dict[str, tuple[str | None, bytes, str | None]] | None = None,
                           ) -> tuple[int, dict]:
        """One API call from an event loop; getUpdates waits without blocking the loop."""
        started = time.monotonic()
        try:
            if method.lower() == "getupdates":
                result = await self._get_updates_async(normalize_params(params))
            else:
                result = self._dispatch(method, params, files or {})
            status, body = 200, {"ok": True, "result": result}
        except ApiError as exc:
            status, body = exc.code, exc.payload()
        except Exception as exc:
            status, body = self._internal_error(exc)
        self._log(method, params, status, body, started)
        return status, body

    def download(self, file_path: str) -> bytes | None:
        with self._lock:
            record = self._file_paths.get(file_path)
            return record.data if record else None

    def _internal_error(self, exc: Exception) -> tuple[int, dict]:
        self.errors.append(exc)
        return 500, {"ok": False, "error_code": 500,
                     "description": f"Internal Server Error: emulator bug: {exc!r}"}

    def _dispatch(self, method: str, params: dict, files: dict) -> Any:
        handler = self._handlers.get(method.lower())
        if handler is None:
            raise ApiError(404, E.NOT_FOUND)
        normalized = normalize_params(params)
        with self._lock:
            return handler(normalized, files)

    def _log(self, method: str, params: dict, status: int, body: dict, started: float) -> None:
        chat_id: int | str | None = params.get("chat_id")
        if isinstance(chat_id, str):
            with contextlib.suppress(ValueError):
                chat_id = int(chat_id)
        logged = {k: v for k, v in params.items() if not isinstance(v, bytes | bytearray)}
        with self._lock:
            self.calls.append(Call(method=method, chat_id=chat_id, time=self.clock(),
                                   wall=started, status=status,
                                   description=body.get("description"), params=logged))
            if method.lower() != "getupdates" or (status == 200 and body.get("result")):
                self._last_activity = time.monotonic()

    # --- getUpdates ------------------------------------------------------------------
    def _notify(self) -> None:
        self._cond.notify_all()
        for loop, event in list(self._async_waiters):
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the loop is closed
                self._async_waiters.discard((loop, event))

    def _new_poll(self) -> int:
        with self._lock:
            self._poll_gen += 1
            self._notify()
            return self._poll_gen

    def _take_updates(self, params: dict, gen: int) -> list[dict]:
        with self._lock:
            if self.webhook_url:
                raise ApiError(409, "Conflict: can't use getUpdates method while webhook is "
                                    "active; use deleteWebhook to delete the webhook first")
            if gen != self._poll_gen:
                raise ApiError(409, E.CONFLICT_GET_UPDATES)
            offset = _int(params, "offset")
            limit = min(max(_int(params, "limit", 100) or 100, 1), 100)
            allowed = params.get("allowed_updates")
            if allowed is not None:
                self._allowed = frozenset(allowed) if allowed else None
            if offset:
                if offset > 0:
                    self._updates = [u for u in self._updates if u["update_id"] >= offset]
                else:
                    self._updates = self._updates[offset:]
            types = self._allowed or DEFAULT_ALLOWED
            self._updates = [u for u in self._updates if set(u) - {"update_id"} <= types]
            out = copy.deepcopy(self._updates[:limit])
            if out:
                self._delivered_upto = max(self._delivered_upto, out[-1]["update_id"])
            return out

    def _get_updates_blocking(self, params: dict) -> list[dict]:
        timeout = max(_float(params, "timeout"), 0.0)
        gen = self._new_poll()
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                out = self._take_updates(params, gen)
                remaining = deadline - time.monotonic()
                if out or self._stopping or remaining <= 0:
                    return out
                self._cond.wait(remaining)

    async def _get_updates_async(self, params: dict) -> list[dict]:
        timeout = max(_float(params, "timeout"), 0.0)
        gen = self._new_poll()
        deadline = time.monotonic() + timeout
        waiter = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._async_waiters.add(waiter)
        try:
            while True:
                waiter[1].clear()
                out = self._take_updates(params, gen)
                remaining = deadline - time.monotonic()
                if out or self._stopping or remaining <= 0:
                    return out
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter[1].wait(), remaining)
        finally:
            with self._lock:
                self._async_waiters.discard(waiter)

    # ================================================================================
    # Internals: updates, messages, files, checks
    # ================================================================================
    def _enqueue(self, kind: str, payload: dict) -> None:
        update = {"update_id": self._next_update_id, kind: payload}
        self._next_update_id += 1
        self._updates.append(update)
        self.update_log.append(copy.deepcopy(update))
        self._last_activity = time.monotonic()
        self._notify()

    def _bot_user(self) -> dict:
        return {"id": self.bot_id, "is_bot": True, "first_name": self.bot_name,
                "username": self.bot_username}

    def _someone(self, chat: Chat) -> FakeUser:
        for uid in (chat.creator_id, *sorted(chat.admins), *sorted(chat.members)):
            if uid is not None and uid in self.users:
                return self.users[uid]
        if not self.users:
            raise ValueError("create a user first: group actions need someone to do them")
        return next(iter(self.users.values()))

    def _chat_instance(self, chat_id: int) -> str:
        digest = hashlib.sha1(f"{self.bot_id}:{chat_id}".encode()).hexdigest()
        return str(int(digest[:15], 16) - 2**59)

    def _member_api(self, user: dict, status: str) -> dict:
        if status == "creator":
            return {"status": "creator", "user": user, "is_anonymous": False}
        if status == "administrator":
            return {"status": "administrator", "user": user, "can_be_edited": False,
                    "is_anonymous": False, "can_manage_chat": True,
                    "can_delete_messages": True, "can_manage_video_chats": True,
                    "can_restrict_members": True, "can_promote_members": False,
                    "can_change_info": True, "can_invite_users": True,
                    "can_post_stories": False, "can_edit_stories": False,
                    "can_delete_stories": False, "can_pin_messages": True}
        if status == "kicked":
            return {"status": "kicked", "user": user, "until_date": 0}
        return {"status": status, "user": user}

    def _my_chat_member(self, chat: Chat, actor: FakeUser, old: str, new: str) -> None:
        bot = self._bot_user()
        self._enqueue("my_chat_member", {
            "chat": chat.api(self.users), "from": actor.api(), "date": int(self.clock()),
            "old_chat_member": self._member_api(bot, old),
            "new_chat_member": self._member_api(bot, new),
        })

    def _new_message(self, chat: Chat, *, from_bot: bool, sender_id: int | None,
                     kind: str = "text", method: str | None = None) -> Message:
        self._seq += 1
        msg = Message(chat_id=chat.id, message_id=chat.next_message_id,
                      date=int(self.clock()), seq=self._seq, from_bot=from_bot,
                      sender_id=sender_id, kind=kind, method=method)
        chat.next_message_id += 1
        chat.messages[msg.message_id] = msg
        return msg

    def _new_ephemeral(self, chat: Chat, *, member_id: int, from_bot: bool,
                       sender_id: int | None, receiver_id: int, kind: str = "text",
                       method: str | None = None) -> Message:
        """An ephemeral message between the bot and ``member_id``: message_id 0 and the next
        ephemeral_message_id of that member in that chat (never reused here; Telegram may
        reuse one after its message is deleted or expires)."""
        self._seq += 1
        key = (chat.id, member_id)
        self._ephemeral_ids[key] = self._ephemeral_ids.get(key, 0) + 1
        msg = Message(chat_id=chat.id, message_id=0, date=int(self.clock()), seq=self._seq,
                      from_bot=from_bot, sender_id=sender_id, kind=kind, method=method,
                      ephemeral_message_id=self._ephemeral_ids[key], receiver_id=receiver_id,
                      created=self.clock())
        chat.ephemeral.append(msg)
        return msg

    @staticmethod
    def _member_of(msg: Message) -> int | None:
        """The group member an ephemeral message is between the bot and."""
        return msg.receiver_id if msg.from_bot else msg.sender_id

    def _live(self, msg: Message) -> bool:
        """An ephemeral message neither deleted nor vanished."""
        if msg.deleted or msg.expired:
            return False
        return (self.ephemeral_lifetime is None
                or self.clock() - msg.created < self.ephemeral_lifetime)

    def _find_ephemeral(self, chat: Chat, member_id: int,
                        ephemeral_message_id: int) -> Message | None:
        for msg in reversed(chat.ephemeral):
            if (msg.ephemeral_message_id == ephemeral_message_id
                    and self._member_of(msg) == member_id and self._live(msg)):
                return msg
        return None

    def _ephemeral_params(self, chat: Chat, p: dict) -> dict | None:
        """A send's ``ephemeral_message_parameters``, checked against Telegram's rules (see
        the package docstring); None for a public send."""
        if "receiver_user_id" in p or "callback_query_id" in p:
            # Bot API 10.2's flat shape: 10.3 replaced it, and a server that ignores the
            # unknown parameters would post to the whole group.
            raise ApiError(400, E.EPHEMERAL_FLAT_PARAMS)
        params = p.get("ephemeral_message_parameters")
        if params is None:
            return None
        if isinstance(params, str):
            try:
                params = json.loads(params)
            except ValueError:
                raise ApiError(400, E.EPHEMERAL_PARAMS_INVALID) from None
        if not isinstance(params, dict) or params.get("receiver_user_id") is None:
            raise ApiError(400, E.EPHEMERAL_PARAMS_INVALID)
        receiver = _int(params, "receiver_user_id") or 0
        if chat.type == "private":
            raise ApiError(400, E.EPHEMERAL_PRIVATE)
        if receiver not in self.users or self._status_of(chat, receiver) in ("left", "kicked"):
            raise ApiError(400, E.EPHEMERAL_RECEIVER_INVALID)
        admin = chat.bot_status == "administrator"
        now = self.clock()
        query_id = _str(params, "callback_query_id")
        query = None
        if query_id is not None:
            query = self.callbacks.get(query_id)
            if query is None or query.user_id != receiver or query.chat_id != chat.id:
                raise ApiError(400, E.EPHEMERAL_QUERY_INVALID)
            if query.answered and not self.ephemeral_after_answer and not admin:
                raise ApiError(400, E.EPHEMERAL_QUERY_INVALID)
        replace = _bool(params, "replace_callback_query_message")
        if replace:
            if query is None:
                raise ApiError(400, E.EPHEMERAL_QUERY_INVALID)
            if query.ephemeral_message_id is not None:
                raise ApiError(400, E.EPHEMERAL_REPLACE_EPHEMERAL)
        reply = p.get("reply_parameters")
        incoming = None
        if isinstance(reply, dict) and reply.get("ephemeral_message_id") is not None:
            incoming = self._find_ephemeral(chat, receiver,
                                            _int(reply, "ephemeral_message_id") or 0)
            if incoming is None or incoming.from_bot:
                raise ApiError(400, E.EPHEMERAL_REPLY_NOT_FOUND)
            # "An ephemeral message may only be replied to within 15 seconds of being sent."
            if now - incoming.created > self.ephemeral_window:
                raise ApiError(400, E.EPHEMERAL_ACTION_EXPIRED)
        if not admin:
            if query is None and incoming is None:
                raise ApiError(400, E.EPHEMERAL_NO_ACTION)
            if query is not None and now - query.created > self.ephemeral_window:
                raise ApiError(400, E.EPHEMERAL_ACTION_EXPIRED)
        return {"receiver": receiver, "query": query, "replace": replace, "reply": incoming}

    def _ephemeral_editable(self, p: dict, *, deleting: bool = False) -> Message:
        """The bot's ephemeral message named by (chat_id, receiver_user_id,
        ephemeral_message_id), still on its receiver's screen."""
        chat = self._writable(p)
        if chat.type == "private":
            raise ApiError(400, E.EPHEMERAL_PRIVATE)
        receiver = _int(p, "receiver_user_id")
        number = _int(p, "ephemeral_message_id")
        if receiver is None or number is None:
            raise bad("message identifier is not specified")
        msg = self._find_ephemeral(chat, receiver, number)
        if msg is None or not msg.from_bot:
            raise ApiError(400, E.MESSAGE_TO_DELETE_NOT_FOUND if deleting
                           else E.MESSAGE_TO_EDIT_NOT_FOUND)
        return msg

    def _file_api(self, record: FileRecord, kind: str) -> dict:
        data: dict[str, Any] = {"file_id": record.file_id,
                                "file_unique_id": record.file_unique_id,
                                "file_size": record.size}
        if kind in ("photo", "animation"):
            data["width"], data["height"] = record.width, record.height
        if kind == "animation":
            data["duration"] = 0
        if kind in ("document", "animation"):
            if record.filename:
                data["file_name"] = record.filename
            if record.mime_type:
                data["mime_type"] = record.mime_type
        return data

    def _message_api(self, msg: Message, *, nested: bool = True) -> dict:
        """The Bot API ``Message`` object for a stored message."""
        chat = self.chats.get(msg.chat_id)
        data: dict[str, Any] = {"message_id": msg.message_id}
        if msg.from_bot:
            data["from"] = self._bot_user()
        elif msg.sender_id in self.users:
            data["from"] = self.users[msg.sender_id].api()
        data["chat"] = chat.api(self.users) if chat else {"id": msg.chat_id, "type": "private"}
        data["date"] = msg.date
        if chat is not None and chat.is_forum and msg.message_thread_id:
            data["message_thread_id"] = msg.message_thread_id
            data["is_topic_message"] = True
        if nested and msg.reply_to and chat is not None and msg.reply_to in chat.messages:
            data["reply_to_message"] = self._message_api(chat.messages[msg.reply_to],
                                                         nested=False)
        if msg.edit_date is not None:
            data["edit_date"] = msg.edit_date
        if msg.protect_content:
            data["has_protected_content"] = True
        if msg.kind == "text":
            data["text"] = msg.text or ""
            if msg.entities:
                data["entities"] = copy.deepcopy(msg.entities)
        elif msg.kind in ("photo", "document", "animation") and msg.file is not None:
            if msg.kind == "photo":
                sizes = [msg.file.thumb] if msg.file.thumb else []
                data["photo"] = [self._file_api(f, "photo") for f in (*sizes, msg.file)]
            elif msg.kind == "document":
                data["document"] = self._file_api(msg.file, "document")
            else:
                data["animation"] = self._file_api(msg.file, "animation")
                data["document"] = self._file_api(msg.file, "document")
            if msg.caption:
                data["caption"] = msg.caption
                if msg.caption_entities:
                    data["caption_entities"] = copy.deepcopy(msg.caption_entities)
        if msg.service:
            data.update(copy.deepcopy(msg.service))
        if msg.reply_markup and "inline_keyboard" in msg.reply_markup:
            data["reply_markup"] = copy.deepcopy(msg.reply_markup)
        if msg.ephemeral_message_id is not None:
            data["ephemeral_message_id"] = msg.ephemeral_message_id
            data["receiver_user"] = (self._bot_user() if msg.receiver_id == self.bot_id
                                     else self.users[msg.receiver_id or 0].api())
        return data

    def _resolve_chat(self, value: Any) -> Chat:
        if isinstance(value, str) and value.startswith("@"):
            for chat in self.chats.values():
                if chat.username and chat.username.lower() == value[1:].lower():
                    return chat
            raise ApiError(400, E.CHAT_NOT_FOUND)
        if value is None or value == "":
            raise bad("chat_id is empty")
        try:
            chat_id = int(value)
        except (TypeError, ValueError):
            raise ApiError(400, E.CHAT_NOT_FOUND) from None
        chat = self.chats.get(chat_id)
        if chat is None:
            raise ApiError(400, E.CHAT_NOT_FOUND)
        return chat

    def _writable(self, params: dict) -> Chat:
        """The chat of ``chat_id`` if the bot may write there (Telegram's checks)."""
        chat = self._resolve_chat(params.get("chat_id"))
        if chat.type == "private":
            user = self.users[chat.user_id or 0]
            if user.blocked:
                raise ApiError(403, E.BLOCKED)
            if not user.started:
                raise ApiError(403, E.CANT_INITIATE)
            return chat
        if chat.migrated_to is not None:
            raise ApiError(400, E.GROUP_MIGRATED, {"migrate_to_chat_id": chat.migrated_to})
        if chat.bot_status == "kicked":
            raise ApiError(403, E.KICKED_SUPERGROUP if chat.type == "supergroup"
                           else E.KICKED_GROUP)
        if chat.bot_status == "left":
            raise ApiError(403, E.NOT_MEMBER_SUPERGROUP if chat.type == "supergroup"
                           else E.NOT_MEMBER_GROUP)
        return chat

    def _readable(self, params: dict) -> Chat:
        chat = self._resolve_chat(params.get("chat_id"))
        if chat.type == "supergroup" and chat.bot_status == "kicked":
            raise ApiError(403, E.KICKED_SUPERGROUP)
        if chat.type == "supergroup" and chat.bot_status == "left" and not chat.username:
            raise ApiError(403, E.NOT_MEMBER_SUPERGROUP)
        return chat

    def _format(self, raw: str | None, parse_mode: str | None, entities: Any, *,
                caption: bool) -> tuple[str, list[dict]]:
        text = raw or ""
        mode = (parse_mode or "").strip().lower()
        if mode == "html":
            try:
                text, parsed = parse_html(text)
            except EntityError as exc:
                raise ApiError(400, E.CANT_PARSE_ENTITIES + str(exc)) from None
        elif mode in ("markdownv2", "markdown"):
            try:
                text, parsed = (parse_markdown_v2 if mode == "markdownv2" else parse_markdown)(text)
            except EntityError as exc:
                raise ApiError(400, E.CANT_PARSE_ENTITIES + str(exc)) from None
        elif mode in ("", "none"):
            parsed = [dict(e) for e in entities] if isinstance(entities, list) else []
        else:
            raise bad("unsupported parse_mode")
        text, parsed = trim(text, parsed)
        if not caption and not text:
            raise ApiError(400, E.MESSAGE_TEXT_EMPTY)
        if len(text) > (1024 if caption else 4096):
            raise ApiError(400, E.CAPTION_TOO_LONG if caption else E.MESSAGE_TOO_LONG)
        return text, parsed

    def _markup(self, params: dict, chat: Chat | None = None) -> dict | None:
        """The message's inline keyboard, checked as Telegram checks it. ``chat``: where it
        goes (``web_app`` buttons open a Mini App only from a private chat: anywhere else
        Telegram answers BUTTON_TYPE_INVALID; their URL must be https)."""
        markup = params.get("reply_markup")
        if markup is None:
            return None
        if not isinstance(markup, dict):
            raise bad("Object expected as reply markup")
        if "inline_keyboard" not in markup:
            return copy.deepcopy(markup)  # reply keyboards etc.: kept, never shown in Message
        rows = markup["inline_keyboard"]
        if not isinstance(rows, list) or not all(isinstance(r, list) for r in rows):
            raise bad('field "inline_keyboard" of the InlineKeyboardMarkup should be an Array '
                      "of Arrays")
        for row in rows:
            for button in row:
                if not isinstance(button, dict) or not isinstance(button.get("text"), str):
                    raise bad("can't parse inline keyboard button: Field \"text\" must be of "
                              "type String")
                if not any(key in button for key in BUTTON_ACTIONS):
                    raise ApiError(400, E.TEXT_BUTTONS_UNALLOWED)
                if "callback_data" in button:
                    size = len(str(button["callback_data"]).encode("utf-8"))
                    if not 1 <= size <= 64:
                        raise ApiError(400, E.BUTTON_DATA_INVALID)
                if "url" in button and not re.match(r"(https?|tg)://[^\s]+$",
                                                    str(button["url"])):
                    raise ApiError(400, E.BUTTON_URL_INVALID)
                if "web_app" in button:
                    app = button["web_app"]
                    if chat is None or chat.type != "private":
                        raise ApiError(400, E.BUTTON_TYPE_INVALID)
                    url = app.get("url") if isinstance(app, dict) else None
                    if not isinstance(url, str) or not url.startswith("https://"):
                        raise ApiError(400, E.WEB_APP_URL_INVALID.format(url=url))
        if any(len(row) > 8 for row in rows) or sum(len(row) for row in rows) > 100:
            raise ApiError(400, E.REPLY_MARKUP_TOO_LONG)
        rows = [row for row in rows if row]
        return {"inline_keyboard": copy.deepcopy(rows)} if rows else None

    def _reply_target(self, chat: Chat, params: dict) -> int | None:
        reply = params.get("reply_parameters")
        allow = _bool(params, "allow_sending_without_reply")
        target = _int(params, "reply_to_message_id")
        if isinstance(reply, dict):
            if reply.get("ephemeral_message_id") is not None:
                # "A reply to an ephemeral message must itself be an ephemeral message."
                raise ApiError(400, E.EPHEMERAL_REPLY_NOT_EPHEMERAL)
            target = _int(reply, "message_id")
            allow = allow or _bool(reply, "allow_sending_without_reply")
            other = reply.get("chat_id")
            if other is not None and self._resolve_chat(other).id != chat.id:
                raise bad("quoting messages from other chats is not emulated")
        if target is None:
            return None
        found = chat.messages.get(target)
        if found is None or found.deleted:
            if allow:
                return None
            raise ApiError(400, E.REPLY_NOT_FOUND)
        return target

    def _check_flood(self, chat: Chat, *, ephemeral: bool = False) -> None:
        now = self.clock()
        if chat.paused_until > now:
            raise too_many(max(1, math.ceil(chat.paused_until - now)))
        group = not ephemeral or self.ephemeral_in_group_limit
        if chat.is_group and self.group_limit and group:
            times = chat.send_times
            while times and times[0] <= now - self.group_window:
                times.popleft()
            if len(times) >= self.group_limit:
                raise too_many(max(1, math.ceil(times[0] + self.group_window - now)))
        if self.global_limit:
            times = self._global_times
            while times and times[0] <= now - 1.0:
                times.popleft()
            if len(times) >= self.global_limit:
                raise too_many(1)

    def _count_send(self, chat: Chat) -> None:
        self._count_write(chat)
        chat.last_from_bot = True

    def _count_write(self, chat: Chat, *, ephemeral: bool = False) -> None:
        """A new message or an edit: both count against the chat's and the bot's limits
        (an ephemeral one against the chat's only with ``ephemeral_in_group_limit``)."""
        now = self.clock()
        if not ephemeral or self.ephemeral_in_group_limit:
            chat.send_times.append(now)
        self._global_times.append(now)

    def _upload(self, kind: str, name: str | None, data: bytes, mime: str | None) -> FileRecord:
        if not data:
            raise ApiError(400, E.FILE_EMPTY)
        width = height = 0
        if kind in ("photo", "animation"):
            size = image_size(data)
            if size is None:
                if kind == "photo":
                    raise ApiError(400, E.IMAGE_PROCESS_FAILED)
            else:
                width, height = size
            if kind == "photo" and (width + height > 10_000 or min(width, height) == 0
                                    or max(width, height) / min(width, height) > 20):
                raise bad("PHOTO_INVALID_DIMENSIONS")
        content = hashlib.sha1(data).digest()  # once: the photo and its thumbnail share it
        record = self._new_file(kind, data, name, mime or guess_mime(name, data), width, height,
                                content)
        if kind == "photo" and max(width, height) > 90:
            tw, th = scaled(width, height, 90)
            record.thumb = self._new_file("photo", data, name, record.mime_type, tw, th,
                                          content)
        return record

    def _new_file(self, kind: str, data: bytes, name: str | None, mime: str | None,
                  width: int, height: int, content: bytes | None = None) -> FileRecord:
        """A stored file; its ids derive from ``content`` (the data's SHA-1, hashed here when
        not given) and the size, as Telegram's are the same for the same picture."""
        self._file_counter += 1
        content = hashlib.sha1(data).digest() if content is None else content
        digest = hashlib.sha1(content + f"{width}x{height}".encode()).hexdigest()
        code = {"photo": "AgAC", "document": "BQAC", "animation": "CgAC"}.get(kind, "BAAC")
        record = FileRecord(file_id=f"{code}AgIAAx{self._file_counter:06d}{digest[:20]}",
                            file_unique_id=f"AQAD{digest[:12]}", kind=kind, data=data,
                            filename=name, mime_type=mime, width=width, height=height)
        self.files[record.file_id] = record
        return record

    def _input_file(self, kind: str, value: Any, files: dict, default_name: str) -> FileRecord:
        """An uploaded part, an attach:// reference, or the file_id of a known file."""
        upload = None
        if isinstance(value, str) and value.startswith("attach://"):
            upload = files.get(value[len("attach://"):])
            if upload is None:
                raise ApiError(400, E.WRONG_FILE_ID)
        elif value is None:
            upload = files.get(default_name)
            if upload is None:
                raise bad(f"there is no {kind} in the request")
        if upload is not None:
            name, data, mime = upload
            return self._upload(kind, name, data, mime)
        ref = str(value)
        if ref.startswith(("http://", "https://")):
            raise ApiError(400, E.URL_CONTENT)  # the emulator cannot download URLs
        record = self.files.get(ref)
        if record is None:
            raise ApiError(400, E.WRONG_FILE_ID)
        kinds = {record.kind, kind}
        if record.kind != kind and kinds != {"document", "animation"}:
            raise bad(f"can't use file of type {record.kind.capitalize()} as "
                      f"{kind.capitalize()}")
        return record

    def _editable(self, params: dict) -> Message:
        inline_id = _str(params, "inline_message_id")
        if inline_id:
            found = self.inline_messages.get(inline_id)
            if found is None:
                raise bad("MESSAGE_ID_INVALID")
            return found
        chat = self._writable(params)
        message_id = _int(params, "message_id")
        if message_id is None:
            raise bad("message identifier is not specified")
        msg = chat.messages.get(message_id)
        if msg is None or msg.deleted:
            raise ApiError(400, E.MESSAGE_TO_EDIT_NOT_FOUND)
        if not msg.from_bot or msg.kind == "service":
            raise ApiError(400, E.MESSAGE_CANT_BE_EDITED)
        return msg

    def _apply_edit(self, msg: Message, changes: dict, *, markup_only: bool = False) -> Any:
        before = msg.snapshot()
        keys = ("text", "entities", "caption", "caption_entities", "file_id", "kind")
        after = {**{k: before[k] for k in keys}, **{k: v for k, v in changes.items()
                                                       if k in keys}}
        same_content = all(json.dumps(before[k], sort_keys=True) == json.dumps(after[k],
                                                                               sort_keys=True)
                           for k in keys)
        if same_content and _markup_equal(before["reply_markup"], changes.get("reply_markup")):
            raise ApiError(400, E.MESSAGE_NOT_MODIFIED)
        chat = self.chats.get(msg.chat_id) if msg.inline_message_id is None else None
        if chat is not None:
            # Edits of text, captions, media and keyboards share a group's limit with new
            # messages (a Telegram developer says so in tdlib/td issues 2592 and 3034).
            self._check_flood(chat, ephemeral=msg.ephemeral)
        msg.edits.append(before)
        for key, value in changes.items():
            if key != "file_id":
                setattr(msg, key, value)
        if not markup_only:
            msg.edit_date = int(self.clock())
        if chat is not None:
            self._count_write(chat, ephemeral=msg.ephemeral)
        if msg.inline_message_id is not None or msg.ephemeral:
            return True
        return self._message_api(msg)

    def _scope_key(self, scope: Any) -> str:
        if scope is None or scope == "default":
            scope = {"type": "default"}
        elif isinstance(scope, str):
            scope = {"type": scope}
        elif hasattr(scope, "to_dict"):
            scope = scope.to_dict()
        if not isinstance(scope, dict) or "type" not in scope:
            raise bad("can't parse BotCommandScope JSON object")
        scope = dict(scope)
        if "chat_id" in scope:
            with contextlib.suppress(TypeError, ValueError):
                scope["chat_id"] = int(scope["chat_id"])
        if "user_id" in scope:
            scope["user_id"] = int(scope["user_id"])
        return json.dumps(scope, sort_keys=True)

    # ================================================================================
    # Bot API methods (``_m_<lowercase name>``; the params are already JSON-decoded)
    # ================================================================================
    def _m_getme(self, p: dict, files: dict) -> dict:
        return {**self._bot_user(), "can_join_groups": True,
                "can_read_all_group_messages": not self.privacy,
                "supports_inline_queries": False, "can_connect_to_business": False,
                "has_main_web_app": False}

    def _m_deletewebhook(self, p: dict, files: dict) -> bool:
        self.webhook_url = ""
        self.webhook_secret = ""
        self._deliverer.stop()
        if _bool(p, "drop_pending_updates"):
            self._updates.clear()
        return True

    def _m_setwebhook(self, p: dict, files: dict) -> bool:
        url = _str(p, "url") or ""
        if not url:  # an empty URL removes the webhook
            return self._m_deletewebhook(p, files)
        # Telegram takes only https (ports 443, 80, 88, 8443); a Bot API server of one's
        # own, as this fake, may post to http too.
        if not re.match(r"https?://[^/?#]+", url):
            raise bad("bad webhook: An HTTPS URL must be provided for webhook")
        secret = _str(p, "secret_token") or ""
        if secret and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", secret):
            raise bad("secret token contains unallowed characters")
        connections = _int(p, "max_connections", 40) or 40
        if not 1 <= connections <= 100:
            raise bad("bad webhook: max_connections must be between 1 and 100")
        allowed = p.get("allowed_updates")
        if allowed is not None:
            self._allowed = frozenset(allowed) if allowed else None
        if _bool(p, "drop_pending_updates"):
            self._updates.clear()
        self.webhook_url, self.webhook_secret = url, secret
        self.webhook_max_connections = connections
        self._deliverer.start()
        return True

    def _m_getwebhookinfo(self, p: dict, files: dict) -> dict:
        info: dict[str, Any] = {"url": self.webhook_url, "has_custom_certificate": False,
                                "pending_update_count": len(self._updates)}
        if self.webhook_url:
            info["max_connections"] = self.webhook_max_connections
            if self._allowed is not None:
                info["allowed_updates"] = sorted(self._allowed)
            if self.webhook_last_error is not None:
                info["last_error_date"], info["last_error_message"] = self.webhook_last_error
        return info

    def _m_close(self, p: dict, files: dict) -> bool:
        return True

    def _m_logout(self, p: dict, files: dict) -> bool:
        return True

    def _m_setmycommands(self, p: dict, files: dict) -> bool:
        commands = p.get("commands")
        if not isinstance(commands, list):
            raise bad("can't parse commands JSON object")
        clean = []
        for item in commands:
            if not isinstance(item, dict):
                raise bad("can't parse BotCommand")
            name = str(item.get("command", "")).lstrip("/").lower()
            description = str(item.get("description", ""))
            if not _COMMAND_NAME.fullmatch(name):
                raise ApiError(400, E.BOT_COMMAND_INVALID)
            if not 1 <= len(description) <= 256:
                raise bad("command description is empty" if not description
                          else "command description is too long")
            entry: dict[str, Any] = {"command": name, "description": description}
            if _bool(item, "is_ephemeral"):
                entry["is_ephemeral"] = True  # Bot API 10.2: only its sender and the bot see it
            clean.append(entry)
        if len(clean) > 100:
            raise bad("too many commands specified")
        key = (self._scope_key(p.get("scope")), _str(p, "language_code") or "")
        if clean:
            self._commands[key] = clean
        else:
            self._commands.pop(key, None)
        return True

    def _m_getmycommands(self, p: dict, files: dict) -> list:
        key = (self._scope_key(p.get("scope")), _str(p, "language_code") or "")
        return copy.deepcopy(self._commands.get(key, []))

    def _set_description(self, p: dict, kind: str, limit: int) -> bool:
        text = _str(p, kind) or ""
        if len(text) > limit:
            raise bad(f"{kind.replace('_', ' ')} is too long")
        language = _str(p, "language_code") or ""
        if language and not re.fullmatch(r"[a-z]{2}", language):
            raise bad("invalid language code specified")
        if text:
            self.descriptions[(kind, language)] = text
        else:
            self.descriptions.pop((kind, language), None)
        return True

    def _get_description(self, p: dict, kind: str) -> dict:
        language = _str(p, "language_code") or ""
        text = self.descriptions.get((kind, language), self.descriptions.get((kind, ""), ""))
        return {kind: text}

    def _m_setmydescription(self, p: dict, files: dict) -> bool:
        return self._set_description(p, "description", 512)

    def _m_setmyshortdescription(self, p: dict, files: dict) -> bool:
        return self._set_description(p, "short_description", 120)

    def _m_getmydescription(self, p: dict, files: dict) -> dict:
        return self._get_description(p, "description")

    def _m_getmyshortdescription(self, p: dict, files: dict) -> dict:
        return self._get_description(p, "short_description")

    def _m_deletemycommands(self, p: dict, files: dict) -> bool:
        self._commands.pop((self._scope_key(p.get("scope")), _str(p, "language_code") or ""),
                           None)
        return True

    def _m_setchatmenubutton(self, p: dict, files: dict) -> bool:
        chat_id = _int(p, "chat_id")
        if chat_id is not None:
            self._resolve_chat(chat_id)
        if p.get("menu_button"):
            self.menu_buttons[chat_id] = p["menu_button"]
        else:
            self.menu_buttons.pop(chat_id, None)  # back to the default
        return True

    def _m_getchatmenubutton(self, p: dict, files: dict) -> dict:
        chat_id = _int(p, "chat_id")
        return copy.deepcopy(self.menu_buttons.get(chat_id)
                             or self.menu_buttons.get(None) or {"type": "commands"})

    def _send(self, p: dict, method: str, kind: str, files: dict) -> dict:
        chat = self._writable(p)
        ephemeral = self._ephemeral_params(chat, p)
        markup = self._markup(p, chat)
        record = None
        if kind == "text":
            raw = _str(p, "text")
            text, entities = self._format(raw, _str(p, "parse_mode"), p.get("entities"),
                                          caption=False)
        else:
            if kind in chat.forbidden_media:
                raise ApiError(400, E.NO_RIGHTS[kind])
            raw = _str(p, "caption")
            text, entities = self._format(raw, _str(p, "parse_mode"),
                                          p.get("caption_entities"), caption=True)
            record = self._input_file(kind, p.get(kind), files, kind)
        if ephemeral is not None and ephemeral["reply"] is not None:
            reply_to = None  # to the incoming ephemeral command, checked above
        else:
            reply_to = self._reply_target(chat, p)
        self._check_flood(chat, ephemeral=ephemeral is not None)
        if ephemeral is None:
            msg = self._new_message(chat, from_bot=True, sender_id=None, kind=kind,
                                    method=method)
        else:
            msg = self._new_ephemeral(chat, member_id=ephemeral["receiver"], from_bot=True,
                                      sender_id=None, receiver_id=ephemeral["receiver"],
                                      kind=kind, method=method)
            if ephemeral["replace"]:
                msg.replaced_message_id = ephemeral["query"].message_id
            if self._ephemeral_drops:
                self._ephemeral_drops -= 1
                msg.delivered = False
        if kind == "text":
            msg.text, msg.raw_text, msg.entities = text, raw, entities
        else:
            msg.caption, msg.raw_caption, msg.caption_entities = text or None, raw, entities
            msg.file = record
        msg.parse_mode = _str(p, "parse_mode")
        msg.reply_markup = markup
        msg.disable_notification = _bool(p, "disable_notification")
        msg.protect_content = _bool(p, "protect_content")
        msg.message_thread_id = _int(p, "message_thread_id")
        msg.reply_to = reply_to
        if ephemeral is None:
            self._count_send(chat)
        else:  # others see nothing new: the privacy mode's "last message" stays as it was
            self._count_write(chat, ephemeral=True)
        return self._message_api(msg)

    def _m_sendmessage(self, p: dict, files: dict) -> dict:
        return self._send(p, "sendMessage", "text", files)

    def _m_sendphoto(self, p: dict, files: dict) -> dict:
        return self._send(p, "sendPhoto", "photo", files)

    def _m_senddocument(self, p: dict, files: dict) -> dict:
        return self._send(p, "sendDocument", "document", files)

    def _m_sendanimation(self, p: dict, files: dict) -> dict:
        return self._send(p, "sendAnimation", "animation", files)

    def _m_sendchataction(self, p: dict, files: dict) -> bool:
        self._writable(p)
        if not _str(p, "action"):
            raise bad("action is empty")
        return True

    def _m_editmessagetext(self, p: dict, files: dict) -> Any:
        return self._edit_text(self._editable(p), p, files)

    def _m_editephemeralmessagetext(self, p: dict, files: dict) -> bool:
        self._edit_text(self._ephemeral_editable(p), p, files)
        return True

    def _edit_text(self, msg: Message, p: dict, files: dict) -> Any:
        if msg.kind != "text":
            raise ApiError(400, E.NO_TEXT_TO_EDIT)
        raw = _str(p, "text")
        text, entities = self._format(raw, _str(p, "parse_mode"), p.get("entities"),
                                      caption=False)
        markup = self._markup(p, self.chats.get(msg.chat_id))
        return self._apply_edit(msg, {"text": text, "entities": entities, "raw_text": raw,
                                      "parse_mode": _str(p, "parse_mode"),
                                      "reply_markup": markup})

    def _m_editmessagecaption(self, p: dict, files: dict) -> Any:
        return self._edit_caption(self._editable(p), p, files)

    def _m_editephemeralmessagecaption(self, p: dict, files: dict) -> bool:
        self._edit_caption(self._ephemeral_editable(p), p, files)
        return True

    def _edit_caption(self, msg: Message, p: dict, files: dict) -> Any:
        if msg.kind not in MEDIA_KINDS:
            raise ApiError(400, E.NO_CAPTION_TO_EDIT)
        raw = _str(p, "caption")
        text, entities = self._format(raw, _str(p, "parse_mode"), p.get("caption_entities"),
                                      caption=True)
        markup = self._markup(p, self.chats.get(msg.chat_id))
        return self._apply_edit(msg, {"caption": text or None, "caption_entities": entities,
                                      "raw_caption": raw, "parse_mode": _str(p, "parse_mode"),
                                      "reply_markup": markup})

    def _m_editmessagemedia(self, p: dict, files: dict) -> Any:
        return self._edit_media(self._editable(p), p, files)

    def _m_editephemeralmessagemedia(self, p: dict, files: dict) -> bool:
        self._edit_media(self._ephemeral_editable(p), p, files)
        return True

    def _edit_media(self, msg: Message, p: dict, files: dict) -> Any:
        media = p.get("media")
        if not isinstance(media, dict) or media.get("type") not in MEDIA_KINDS:
            raise bad("can't parse InputMedia JSON object")
        if msg.kind not in MEDIA_KINDS:
            raise ApiError(400, E.NO_MEDIA_TO_EDIT)
        kind = media["type"]
        if kind not in ("photo", "document", "animation"):
            raise bad(f"{kind} media is not emulated")
        chat = self.chats.get(msg.chat_id)
        if chat is not None and kind in chat.forbidden_media:
            raise ApiError(400, E.NO_RIGHTS[kind])
        raw = _str(media, "caption")
        text, entities = self._format(raw, _str(media, "parse_mode"),
                                      media.get("caption_entities"), caption=True)
        markup = self._markup(p, chat)
        record = self._input_file(kind, media.get("media"), files, "media")
        return self._apply_edit(msg, {"kind": kind, "file_id": record.file_id, "file": record,
                                      "caption": text or None, "caption_entities": entities,
                                      "raw_caption": raw, "parse_mode": _str(media, "parse_mode"),
                                      "reply_markup": markup})

    def _m_editmessagereplymarkup(self, p: dict, files: dict) -> Any:
        return self._edit_markup(self._editable(p), p, files)

    def _m_editephemeralmessagereplymarkup(self, p: dict, files: dict) -> bool:
        self._edit_markup(self._ephemeral_editable(p), p, files)
        return True

    def _edit_markup(self, msg: Message, p: dict, files: dict) -> Any:
        markup = self._markup(p, self.chats.get(msg.chat_id))
        return self._apply_edit(msg, {"reply_markup": markup}, markup_only=True)

    def _m_deletemessage(self, p: dict, files: dict) -> bool:
        chat = self._resolve_chat(p.get("chat_id"))
        if chat.migrated_to is not None:
            raise ApiError(400, E.GROUP_MIGRATED, {"migrate_to_chat_id": chat.migrated_to})
        msg = chat.messages.get(_int(p, "message_id") or 0)
        if msg is None or msg.deleted:
            raise ApiError(400, E.MESSAGE_TO_DELETE_NOT_FOUND)
        if chat.is_group and not msg.from_bot and chat.bot_status != "administrator":
            raise ApiError(400, E.MESSAGE_CANT_BE_DELETED)
        if self.clock() - msg.date > 48 * 3600:  # only messages younger than 48 hours
            raise ApiError(400, E.MESSAGE_CANT_BE_DELETED)
        msg.deleted = True
        return True

    def _m_deleteephemeralmessage(self, p: dict, files: dict) -> bool:
        self._ephemeral_editable(p, deleting=True).deleted = True
        return True

    def _m_deletemessages(self, p: dict, files: dict) -> bool:
        chat = self._resolve_chat(p.get("chat_id"))
        ids = p.get("message_ids")
        if not isinstance(ids, list) or not ids:
            raise bad("message_ids is empty")
        for message_id in ids:
            msg = chat.messages.get(int(message_id))
            if msg is not None and (msg.from_bot or not chat.is_group
                                    or chat.bot_status == "administrator"):
                msg.deleted = True
        return True

    def _m_answercallbackquery(self, p: dict, files: dict) -> bool:
        query = self.callbacks.get(_str(p, "callback_query_id") or "")
        if query is not None:
            query.answer_attempts += 1
        if (query is None or query.answered
                or self.clock() - query.created > self.callback_timeout):
            raise ApiError(400, E.QUERY_TOO_OLD)
        text = _str(p, "text")
        if text is not None and len(text) > 200:
            raise ApiError(400, E.ANSWER_TOO_LONG)
        query.answered = True
        query.text = text
        query.show_alert = _bool(p, "show_alert")
        query.url = _str(p, "url")
        query.cache_time = _int(p, "cache_time")
        return True

    def _m_getchat(self, p: dict, files: dict) -> dict:
        chat = self._readable(p)
        data = chat.api(self.users)
        data.update({"accent_color_id": 0, "max_reaction_count": 11,
                     "accepted_gift_types": {"unlimited_gifts": False, "limited_gifts": False,
                                             "unique_gifts": False,
                                             "premium_subscription": False,
                                             "gifts_from_channels": False}})
        return data

    def _status_of(self, chat: Chat, user_id: int) -> str:
        if user_id == self.bot_id:
            return chat.bot_status
        if chat.type == "private":
            return "member" if user_id in (chat.user_id, self.bot_id) else "left"
        if user_id == chat.creator_id:
            return "creator"
        if user_id in chat.admins:
            return "administrator"
        return "member" if user_id in chat.members else "left"

    def _m_getchatmember(self, p: dict, files: dict) -> dict:
        chat = self._readable(p)
        user_id = _int(p, "user_id")
        if user_id == self.bot_id:
            return self._member_api(self._bot_user(), chat.bot_status)
        if user_id not in self.users:
            raise ApiError(400, E.USER_NOT_FOUND)
        return self._member_api(self.users[user_id].api(), self._status_of(chat, user_id))

    def _m_getchatadministrators(self, p: dict, files: dict) -> list:
        chat = self._readable(p)
        if chat.type == "private":
            raise bad("there are no administrators in the private chat")
        out = []
        for uid in (chat.creator_id, *sorted(chat.admins)):
            if uid is not None and uid in self.users:
                out.append(self._member_api(self.users[uid].api(), self._status_of(chat, uid)))
        if chat.bot_status == "administrator":
            out.append(self._member_api(self._bot_user(), "administrator"))
        return out

    def _m_getchatmembercount(self, p: dict, files: dict) -> int:
        chat = self._readable(p)
        if chat.type == "private":
            return 2
        return len(chat.members | chat.admins) + (chat.bot_status in ("member", "administrator"))

    def _m_getfile(self, p: dict, files: dict) -> dict:
        record = self.files.get(_str(p, "file_id") or "")
        if record is None:
            raise ApiError(400, E.INVALID_FILE_ID)
        if record.file_path is None:
            folder = {"photo": "photos", "animation": "animations"}.get(record.kind,
                                                                        "documents")
            number = len(self._file_paths) + 1
            suffix = extension(record.filename, record.mime_type)
            record.file_path = f"{folder}/file_{number}{suffix}"
            self._file_paths[record.file_path] = record
        return {"file_id": record.file_id, "file_unique_id": record.file_unique_id,
                "file_size": record.size, "file_path": record.file_path}
