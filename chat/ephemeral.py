"""Telegram's ephemeral messages (Bot API 10.2 and 10.3) through python-telegram-bot 22.8.

python-telegram-bot 22.8 stops at Bot API 10.0. Everything the bot does with ephemeral
messages goes through this one module and the library's documented escape hatches: the
new send parameters in ``api_kwargs``, the new methods through :meth:`telegram.Bot.do_api_request`,
and the new fields of incoming messages read from ``api_kwargs``. The day the library
supports 10.3, this module is replaced by its own calls and deleted.

Facts and choices: ``docs/ephemeral.md``. In short:

- a send takes ``ephemeral_message_parameters`` (10.3's object; 10.2's flat
  ``receiver_user_id``/``callback_query_id`` were *replaced*, and a server that ignored them
  would show the message to the whole group, so they are never sent);
- a bot that is not an administrator may send one only within 15 seconds of the receiver's
  press (``callback_query_id``) or ephemeral command (``reply_parameters.ephemeral_message_id``);
- an ephemeral message has ``message_id`` 0: it is named by the triple (chat, receiver,
  ``ephemeral_message_id``), edited with ``editEphemeralMessage…`` and deleted with
  ``deleteEphemeralMessage``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from telegram import Bot, CallbackQuery, InputMediaPhoto, Message
from telegram.error import BadRequest

from chat.markup import CAPTION_LIMIT, TEXT_LIMIT, fit, markup
from chat.model import Keyboard


@dataclass(frozen=True, slots=True)
class EphemeralId:
    """An ephemeral message as Telegram names it: ``message_id`` is 0 for all of them."""

    chat_id: int
    receiver_id: int  # the member who sees it (the sender, for an incoming command)
    ephemeral_message_id: int


def incoming(message: Message | None) -> EphemeralId | None:
    """An incoming ephemeral command: ``message_id`` 0, an ``ephemeral_message_id`` and
    ``receiver_user`` = the bot; named by its sender, to whom the reply goes."""
    if message is None or message.message_id != 0 or message.from_user is None:
        return None
    number = message.api_kwargs.get("ephemeral_message_id")
    receiver = message.api_kwargs.get("receiver_user")
    if not isinstance(number, int) or (isinstance(receiver, dict)
                                       and not receiver.get("is_bot", False)):
        return None  # an incoming ephemeral command's receiver is the bot
    return EphemeralId(message.chat.id, message.from_user.id, number)


def pressed(query: CallbackQuery) -> EphemeralId | None:
    """The ephemeral message a press came from (its ``receiver_user`` is the presser), or
    ``None`` for a press on an ordinary message."""
    message = query.message
    if message is None or message.message_id != 0:
        return None
    number = message.api_kwargs.get("ephemeral_message_id")
    receiver = message.api_kwargs.get("receiver_user")
    if not isinstance(number, int) or (isinstance(receiver, dict)
                                       and receiver.get("id") != query.from_user.id):
        return None  # not an ephemeral message, or not the presser's own
    return EphemeralId(message.chat.id, query.from_user.id, number)


def sent_id(message: Message | None) -> int | None:
    """The ``ephemeral_message_id`` of a message the bot sent ephemerally."""
    if message is None:
        return None
    number = message.api_kwargs.get("ephemeral_message_id")
    return number if isinstance(number, int) else None


def send_kwargs(receiver_id: int, *, callback_query_id: str | None = None,
                reply_to: int | None = None) -> dict[str, Any]:
    """The ``api_kwargs`` that make a send ephemeral for ``receiver_id`` (10.3's shape): as
    the answer to their press, to their ephemeral command, or pushed (an administrator bot).
    Never ``replace_callback_query_message``: a press on an ephemeral message must be
    answered by editing it, and a board post must stay where the group sees it."""
    parameters: dict[str, Any] = {"receiver_user_id": receiver_id}
    if callback_query_id is not None:
        parameters["callback_query_id"] = callback_query_id
    kwargs: dict[str, Any] = {"ephemeral_message_parameters": parameters}
    if reply_to is not None:
        kwargs["reply_parameters"] = {"ephemeral_message_id": reply_to}
    return kwargs


def _triple(where: EphemeralId) -> dict[str, Any]:
    return {"chat_id": where.chat_id, "receiver_user_id": where.receiver_id,
            "ephemeral_message_id": where.ephemeral_message_id}


async def edit_text(bot: Bot, where: EphemeralId, text: str,
                    keyboard: Keyboard | None) -> None:
    await bot.do_api_request("editEphemeralMessageText", api_kwargs={
        **_triple(where), "text": fit(text, TEXT_LIMIT), "reply_markup": markup(keyboard)})


async def edit_caption(bot: Bot, where: EphemeralId, caption: str,
                       keyboard: Keyboard | None) -> None:
    await bot.do_api_request("editEphemeralMessageCaption", api_kwargs={
        **_triple(where), "caption": fit(caption, CAPTION_LIMIT),
        "reply_markup": markup(keyboard)})


async def edit_photo(bot: Bot, where: EphemeralId, photo: bytes, caption: str,
                     keyboard: Keyboard | None) -> None:
    """A new picture and caption in one call (10.3 lets ``editEphemeralMessageMedia``
    upload a new file)."""
    await bot.do_api_request("editEphemeralMessageMedia", api_kwargs={
        **_triple(where), "media": InputMediaPhoto(photo, caption=fit(caption, CAPTION_LIMIT)),
        "reply_markup": markup(keyboard)})


async def edit_keyboard(bot: Bot, where: EphemeralId, keyboard: Keyboard | None) -> None:
    await bot.do_api_request("editEphemeralMessageReplyMarkup", api_kwargs={
        **_triple(where), "reply_markup": markup(keyboard)})


async def delete(bot: Bot, where: EphemeralId) -> None:
    await bot.do_api_request("deleteEphemeralMessage", api_kwargs=_triple(where))


def is_gone(error: BadRequest) -> bool:
    """Telegram no longer shows the message (it expired, was deleted, or the app
    restarted): a newer panel must be sent instead of an edit."""
    text = str(error).lower()
    return "not found" in text or "message_id_invalid" in text


def not_allowed(error: BadRequest) -> bool:
    """Telegram refused an ephemeral send for want of a right: no press or command within
    15 seconds and no administrator rights, or an ephemeral send where none may go."""
    text = str(error).lower()
    return any(word in text for word in ("ephemeral", "bot_not_admin", "administrator",
                                         "callback query", "15 seconds"))
