"""A fake Telegram Bot API for tests: the real python-telegram-bot stack against a local emulator.

Telegram is not reachable from the tests, so :class:`FakeTelegram` plays the server: it keeps
users, chats, messages and files, answers the Bot API methods with the real JSON shapes, and
rejects what Telegram rejects with Telegram's own error descriptions (see ``errors.py``).

Connecting
==========
In-process (fast; no sockets)::

    fake = FakeTelegram()                      # token "123456:TEST-token", @krendzu_test_bot
    app = (Application.builder().token(fake.token)
           .request(fake.request()).get_updates_request(fake.request()).build())
    app.add_handler(CommandHandler("play", play))
    async with app:                            # initialize (getMe) ... shutdown
        await app.start()
        await app.updater.start_polling(poll_interval=0)   # long-polls the emulator
        ...
        await app.updater.stop(); await app.stop()

``fake.request()`` is a ``telegram.request.BaseRequest``; any base_url works (the method is the
last path component, the token must match, else 401 Unauthorized; ``/file/bot<token>/<path>``
downloads a file). getUpdates long-polls without blocking the event loop.

Over real HTTP (e.g. ``python bot.py`` in a subprocess with ``TELEGRAM_API_BASE_URL=base``)::

    base = fake.serve_http()                   # "http://127.0.0.1:<free port>"
    bot = Bot(fake.token, base_url=f"{base}/bot", base_file_url=f"{base}/file/bot")
    ...
    fake.stop()

The server (stdlib ``ThreadingHTTPServer`` in a daemon thread) takes GET/POST with query
strings, form, JSON and multipart bodies. The state is guarded by a lock, so the test may act
and inspect from its own thread/loop while the server threads answer the bot.

Webhooks
========
After ``setWebhook`` (url, ``secret_token``, ``allowed_updates``, ``max_connections``) the
fake POSTs every update to the URL instead of answering getUpdates (which then fails with 409
Conflict, as on Telegram), from threads of its own (``tests/fakebot/webhook.py``):

- with ``X-Telegram-Bot-Api-Secret-Token`` when a secret was set;
- one update at a time per queue: a chat's messages and member changes, a user's button
  presses; the next of a queue goes only after a 2xx answer to the previous, so a failing
  update holds its chat back, as on Telegram; queues in parallel (``max_connections``);
- a non-2xx answer, a closed connection or no answer within ``fake.webhook_timeout`` (60 s)
  is tried again after ``webhook_retry_first`` · 2^(n-1) clock seconds (1, 2, 4 …; at most
  ``webhook_retry_cap``, 60; or the answer's ``Retry-After``): fast under a fast clock, never
  with a frozen FakeClock that is not advanced;
- ``fake.drop_webhook(count=1, answered=True)``: the next deliveries break: the answer is lost
  after the bot processed the update, or (``answered=False``) the connection closes right
  after the request went out; either way the update comes again;
- ``fake.webhook_attempts(update_id=None)`` -> every try (:class:`WebhookAttempt`:
  ``update_id``, ``attempt``, ``queue``, ``time``, ``wall``, ``status`` (None: no answer),
  ``error``, ``answered_at``); ``fake.webhook_delivered(update_id)``: answered 2xx;
  ``getWebhookInfo`` shows pending updates and the last error.

``deleteWebhook`` (PTB's polling calls it first) stops the deliveries; the updates not yet
answered 2xx are there for getUpdates. ``wait_until_idle`` with a webhook set waits until
every update was answered 2xx.

The world
=========
``FakeTelegram(token=..., bot_username=..., bot_id=None, clock=None, *, privacy=True,
group_limit=20, group_window=60, global_limit=30, callback_timeout=900, ephemeral_window=15,
ephemeral_in_group_limit=True, ephemeral_after_answer=False, ephemeral_lifetime=None)``
(the ephemeral ones: "Ephemeral messages" below) -- ``clock`` is a
callable returning seconds (default ``time.time``); it dates messages (whole seconds) and drives
the flood limits, the callback timeout and the 48-hour delete limit. ``FakeClock(start, step=0)``
is one that moves only on ``clock.advance(seconds)`` (or by ``step`` per reading). With a frozen
clock the limits bite as they would if no time passed: more than 20 sends to one group or 30
overall answer 429 until the clock moves (or pass ``group_limit=0`` / ``global_limit=None``).
``bot_id`` defaults to the token's number.

- ``fake.user(user_id, first_name, last_name=None, username=None, language_code="en")``
  -> :class:`FakeUser`; its private chat has the user's id (``fake.private_chat(user)``).
- ``fake.group(chat_id, title, forum=False, *, username=None, bot=True, bot_admin=False,
  creator=None, members=())`` -> :class:`Chat`. Ids above -10**12 are basic groups, -100...
  ids supergroups; forums must be supergroups. With ``bot=False`` add it later:
- ``fake.add_bot(group, by=user, admin=False)``: my_chat_member + new_chat_members updates.
- ``fake.remove_bot(group, by=None)``: my_chat_member (kicked); sends then fail with 403.
- ``fake.migrate(group)`` -> the new supergroup (id ``-(10**12 + |old|)``) with the two
  migrate service messages; writes to the old id fail with 400 + migrate_to_chat_id.
- ``fake.forbid_media(group, kinds=("photo", "document", "animation"))`` / ``allow_media``.
- ``fake.set_admin(group, user, admin=True)``, ``fake.set_bot_admin(group, admin=True)``.
- ``fake.inline_message(text, reply_markup=None)`` -> an inline message to edit by
  ``inline_message_id`` (edits return True) or to press buttons on.
- ``fake.privacy = False`` delivers every group message to the bot.
- ``fake.outage = True``: the in-process transport fails every call but getUpdates with a
  ``NetworkError`` until it is set back to False (a network outage on the bot's side).

Simulated users' actions (each queues updates with increasing update_id; messages get
per-chat increasing message_id and an integer date):

- ``user.send(chat, text, *, thread_id=None, reply_to=None)`` -> the :class:`Message`, or None
  when the bot does not receive it. ``chat=None`` is the private chat. Commands carry a
  ``bot_command`` entity (``/play@krendzu_test_bot QC M13`` -> length of the command part).
- ``user.start_bot(payload=None)``: ``/start [payload]`` in the private chat; the bot may
  then write to the user (before that: 403 "bot can't initiate conversation with a user").
  After ``block_bot`` it unblocks (my_chat_member kicked -> member).
- ``user.press(message, text=None, data=None)`` -> :class:`CallbackQuery` record: presses
  the inline button found by text or callback_data (AssertionError if there is none).
  ``user.press(message, data=..., forged=True)`` sends any callback data for a real
  message, as a modified client can (Telegram does not check it against the keyboard).
- ``user.block_bot()``: my_chat_member update; sends fail with 403 "bot was blocked by the
  user".
- ``user.join(group)`` / ``user.leave(group)``: new_chat_members / left_chat_member service
  messages (delivered whatever the privacy mode).

Privacy mode (on by default), kept simple: in a group the bot receives ``/cmd@its_username``
always, a bare ``/cmd`` only when the last message in the chat was the bot's, replies to its
messages, and service messages; other text never. An admin bot, or ``fake.privacy = False``,
receives everything. Private chats: everything.

Ephemeral messages (Bot API 10.2/10.3)
======================================
As core.telegram.org/bots/api#ephemeral-messages-and-commands and the 10.3 changelog describe
them (facts and sources: issue 42, ``../shared/notes/ephemeral.md``; pinned by
``tests/test_fakebot_ephemeral.py``). python-telegram-bot 22.8 knows none of it: pass the
parameters with ``api_kwargs``, call the new methods with ``Bot.do_api_request``, and read
``ephemeral_message_id`` / ``receiver_user`` from ``Message.api_kwargs``.

- sendMessage, sendPhoto, sendDocument and sendAnimation (the send methods the emulator has)
  take ``ephemeral_message_parameters`` {``receiver_user_id``, ``callback_query_id``,
  ``replace_callback_query_message``}. 10.2's flat ``receiver_user_id`` / ``callback_query_id``
  are refused with 400 (Telegram would ignore unknown parameters and post to the whole group:
  a request in the old shape is a bug to catch). Private chats: 400 ``BOT_NOT_ADMIN``. The
  receiver must be a non-bot member of the group.
- A bot that is not an administrator sends only within ``fake.ephemeral_window`` (15) clock
  seconds of the receiver's eligible action: the ``callback_query_id`` of their own press in
  that chat, or ``reply_parameters.ephemeral_message_id`` of their incoming ephemeral command
  (a reply to an ephemeral message must itself be ephemeral, within 15 s). An administrator
  bot (``fake.set_bot_admin(group)`` / ``group(..., bot_admin=True)``) sends to any member at
  any time.
- The message has ``message_id`` 0, an ``ephemeral_message_id`` counted per chat and receiver
  (1, 2, ...) and ``receiver_user``. It is kept apart from the chat's messages: ``sent``,
  ``last``, ``messages``, ``wait_for_message`` show only what every member sees.
- editEphemeralMessageText / Caption / Media / ReplyMarkup and deleteEphemeralMessage take
  (``chat_id``, ``receiver_user_id``, ``ephemeral_message_id``) and answer True; an edit
  without ``reply_markup`` removes the keyboard, "message is not modified" as for others. The
  regular edit/delete methods never reach an ephemeral message (message_id 0).
- ``user.press(ephemeral_message, ...)``: only its receiver can; the callback query's message
  carries message_id 0, the ephemeral id and receiver_user; an ephemeral send with
  ``replace_callback_query_message`` for such a press is refused (it must be edited).
- ``user.send_ephemeral(group, "/hand")``: a command the bot registered with
  ``BotCommand.is_ephemeral`` (setMyCommands keeps the field; the most specific scope and
  language that has a list decides; AssertionError if not ephemeral there, as a client would
  send it publicly) arrives as a ``message`` with message_id 0, an ephemeral_message_id and
  ``receiver_user`` = the bot, whatever the privacy mode. A public reply to it
  (``reply_parameters.ephemeral_message_id`` without ephemeral parameters) is refused.
- ``fake.ephemeral(chat, user, gone=False)``: the bot's ephemeral messages the user sees now;
  ``fake.visible(chat, user)``: everything the user sees (public and their own ephemeral), for
  leak checks per receiver; ``fake.ephemeral_log(chat)``: every ephemeral message both ways;
  ``await fake.wait_for_ephemeral(chat, user, contains=None, since=None)``.
- ``fake.drop_ephemeral(count=1)``: the next sends are accepted but never shown ("it is not
  guaranteed that the ephemeral message will be received"); ``fake.expire_ephemeral(chat,
  user, ephemeral_message_id=None)`` or ``FakeTelegram(ephemeral_lifetime=seconds)``: they
  vanish ("may disappear automatically"); edits and deletes then fail as "message to edit
  not found" / "message to delete not found", and a press is impossible.

Where the official text is silent the emulator chooses, and says so:

- ``ephemeral_in_group_limit=True``: ephemeral sends and edits count in the group's
  ``group_limit`` (20 a minute) like public ones, the safe reading until Telegram documents
  otherwise (set False to leave them out; the global 30/s always counts them).
  ``max_sends_in_window(chat, ephemeral=False)`` counts public writes only.
- ``ephemeral_after_answer=False``: a callback query already answered no longer allows an
  ephemeral send for a bot that is not an administrator (one practitioner reports that
  answering closes the query): send the ephemeral answer first, then answer the query.
- One press may open several ephemeral messages within its window; edits and deletes have
  no time limit; ids are never reused (Telegram may reuse one after its message is deleted or
  expires, so a bot must not rely on them staying unique).
- Error texts other than ``BOT_NOT_ADMIN`` are the emulator's own words
  (``errors.EPHEMERAL_*``): Telegram documents the rules, not the errors.

Inspecting
==========
- ``fake.sent(chat, deleted=True)`` -> the bot's :class:`Message` list (oldest first);
  ``fake.last(chat)`` -> newest not deleted; ``fake.messages(chat)`` -> users' too;
  ``fake.message(chat, message_id)``. ``chat`` may be a Chat, a user or an id.
- :class:`Message`: ``text``/``caption`` (as shown, after parse_mode), ``raw_text``/
  ``raw_caption`` (as sent), ``content``, ``parse_mode``, ``entities``, ``caption_entities``,
  ``kind`` ("text", "photo", "document", "animation", "service"), ``photo``/``document``/
  ``animation`` (:class:`FileRecord`: ``data``, ``filename``, ``mime_type``, ``file_id``,
  ``width``, ``height``), ``data``, ``reply_markup`` (plain dict), ``buttons()``,
  ``button_texts()``, ``button(text=..., data=...)``, ``disable_notification``,
  ``protect_content``, ``message_thread_id``, ``reply_to``, ``edits`` (earlier versions),
  ``edit_date``, ``deleted``, ``method``, ``date``.
- ``fake.answer(query)`` / ``fake.callbacks[id]`` -> :class:`CallbackQuery` (``answered``,
  ``text``, ``show_alert``, ``url``).
- ``fake.descriptions[("description" | "short_description", language_code or "")]``: the
  texts set by setMyDescription / setMyShortDescription (at most 512 / 120 characters).
- ``fake.commands(scope=None, language_code=None)`` -> the setMyCommands list for a scope
  ("default", "all_private_chats", a scope dict) and language, or None; ``all_commands()``.
- ``fake.calls`` / ``fake.calls_to(method=None, chat=None, ok=None)`` -> :class:`Call`
  (method, chat_id, time (clock), wall, status, description, params);
  ``fake.max_sends_in_window(chat, 60)`` -> the most new messages in any 60 s window.
- ``fake.update_log``, ``fake.pending_updates()``, ``fake.files``, ``fake.errors``
  (emulator bugs, answered with HTTP 500), ``fake.describe()`` (recent calls and messages).

Waiting (async; ``*_sync`` twins for synchronous tests):

- ``await fake.wait_for(predicate, timeout=5)`` -> the predicate's first truthy value;
  AssertionError with recent calls and messages on timeout.
- ``await fake.wait_for_message(chat, contains=None, *, since=None, where=None, timeout=5)``
  -> the first bot message newer than ``since`` (``fake.mark()``; default: the latest
  simulated user action).
- ``await fake.wait_until_idle(quiet=0.2, timeout=10)``: every queued update fetched and no
  API call for ``quiet`` seconds of wall time.

Rejections
==========
Sends/edits are checked like Telegram does: chat exists ("chat not found"), user started the
bot / did not block it (403), bot still in the group (403 kicked / not a member), group not
migrated (400 + migrate_to_chat_id), media rights, text 1..4096 and captions ..1024 characters
after entity parsing and trimming, HTML parse errors (TDLib's texts), inline keyboards
(callback_data 1..64 bytes, at most 8 per row and 100 buttons, every button needs an action,
a ``url`` must be a link, a ``web_app`` button only in a private chat and only with an
``https://`` URL: a group gets BUTTON_TYPE_INVALID, as from Telegram),
reply targets, file ids, "message is not modified", message to edit/delete not found or not
the bot's, callback answers (once, within ``callback_timeout``, text <= 200), command names,
and flood control: more than ``group_limit`` (20) new messages and edits (text, caption,
media, keyboard: Telegram counts them together) to one group within ``group_window`` (60) clock
seconds, or ``global_limit`` (30) per second overall -> 429 "Too Many Requests: retry after N"
with parameters.retry_after. ``fake.flood(chat, seconds)`` forces 429s for one chat (as after
a burst Telegram saw elsewhere); ``fake.rate_limited(chat=None)`` lists the 429 answers;
``fake.max_sends_in_window(chat, 60, edits=True)`` counts edits too.
Unknown methods: 404 "Not Found". Wrong token: 401 "Unauthorized".

parse_mode HTML, MarkdownV2 and Markdown are parsed after TDLib (entities in UTF-16 units;
errors such as "Character '.' is reserved and must be escaped with the preceding '\\'").

Limitations: photos keep their uploaded bytes (Telegram would re-encode them to JPEG) and the
small PhotoSize shares them; URLs as files are refused ("failed to get HTTP URL content"); no
https webhooks (http only), inline queries, polls, stickers, videos or albums; entities are not
auto-detected in the bot's own texts (no url/mention entities added); forum topic ids are not
validated; private chats have no per-chat rate limit.
"""

from tests.fakebot import errors
from tests.fakebot.emulator import FakeTelegram
from tests.fakebot.errors import ApiError
from tests.fakebot.model import (
    Call,
    CallbackQuery,
    Chat,
    FakeClock,
    FakeUser,
    FileRecord,
    Message,
)
from tests.fakebot.transport import FakeRequest
from tests.fakebot.webhook import WebhookAttempt

__all__ = [
    "ApiError",
    "Call",
    "CallbackQuery",
    "Chat",
    "FakeClock",
    "FakeRequest",
    "FakeTelegram",
    "FakeUser",
    "FileRecord",
    "Message",
    "WebhookAttempt",
    "errors",
]
