"""Bot API error answers, with the descriptions the real server sends.

The strings come from telegram-bot-api (``Client.cpp``) and TDLib, as reported by bots in the
wild; ``Bad Request:`` / ``Forbidden:`` prefixes included, exactly as they reach PTB.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A failed Bot API call: HTTP status, description and optional ``parameters``."""

    def __init__(self, code: int, description: str, parameters: dict | None = None):
        super().__init__(description)
        self.code = code
        self.description = description
        self.parameters = parameters

    def payload(self) -> dict[str, Any]:
        body: dict[str, Any] = {"ok": False, "error_code": self.code,
                                "description": self.description}
        if self.parameters:
            body["parameters"] = self.parameters
        return body


def bad(description: str, parameters: dict | None = None) -> ApiError:
    return ApiError(400, f"Bad Request: {description}", parameters)


def forbidden(description: str) -> ApiError:
    return ApiError(403, f"Forbidden: {description}")


def too_many(retry_after: int) -> ApiError:
    return ApiError(429, f"Too Many Requests: retry after {retry_after}",
                    {"retry_after": retry_after})


UNAUTHORIZED = "Unauthorized"
NOT_FOUND = "Not Found"
CONFLICT_GET_UPDATES = (
    "Conflict: terminated by other getUpdates request; make sure that only one bot instance "
    "is running"
)

MESSAGE_NOT_MODIFIED = (
    "Bad Request: message is not modified: specified new message content and reply markup are "
    "exactly the same as a current content and reply markup of the message"
)
MESSAGE_TEXT_EMPTY = "Bad Request: message text is empty"
MESSAGE_TOO_LONG = "Bad Request: message is too long"
CAPTION_TOO_LONG = "Bad Request: message caption is too long"
CANT_PARSE_ENTITIES = "Bad Request: can't parse entities: "  # + TDLib's reason
BUTTON_DATA_INVALID = "Bad Request: BUTTON_DATA_INVALID"
BUTTON_URL_INVALID = "Bad Request: BUTTON_URL_INVALID"
#: A ``web_app`` button anywhere but in a private chat (groups get a t.me Mini App link).
BUTTON_TYPE_INVALID = "Bad Request: BUTTON_TYPE_INVALID"
WEB_APP_URL_INVALID = ("Bad Request: inline keyboard button Web App URL '{url}' is invalid: "
                       "Only HTTPS links are allowed")
REPLY_MARKUP_TOO_LONG = "Bad Request: reply markup is too long"
TEXT_BUTTONS_UNALLOWED = (
    "Bad Request: can't parse inline keyboard button: Text buttons are unallowed in the inline "
    "keyboard"
)
REPLY_MARKUP_JSON = "Bad Request: can't parse reply keyboard markup JSON object"
CHAT_NOT_FOUND = "Bad Request: chat not found"
USER_NOT_FOUND = "Bad Request: user not found"
MESSAGE_TO_EDIT_NOT_FOUND = "Bad Request: message to edit not found"
MESSAGE_CANT_BE_EDITED = "Bad Request: message can't be edited"
NO_TEXT_TO_EDIT = "Bad Request: there is no text in the message to edit"
NO_CAPTION_TO_EDIT = "Bad Request: there is no caption in the message to edit"
NO_MEDIA_TO_EDIT = "Bad Request: there is no media in the message to edit"
MESSAGE_TO_DELETE_NOT_FOUND = "Bad Request: message to delete not found"
MESSAGE_CANT_BE_DELETED = "Bad Request: message can't be deleted"
REPLY_NOT_FOUND = "Bad Request: message to be replied not found"
WRONG_FILE_ID = "Bad Request: wrong file identifier/HTTP URL specified"
INVALID_FILE_ID = "Bad Request: invalid file_id"
FILE_EMPTY = "Bad Request: file must be non-empty"
IMAGE_PROCESS_FAILED = "Bad Request: IMAGE_PROCESS_FAILED"
URL_CONTENT = "Bad Request: failed to get HTTP URL content"
QUERY_TOO_OLD = (
    "Bad Request: query is too old and response timeout expired or query ID is invalid"
)
ANSWER_TOO_LONG = "Bad Request: MESSAGE_TOO_LONG"
GROUP_MIGRATED = "Bad Request: group chat was upgraded to a supergroup chat"
NO_RIGHTS = {
    "photo": "Bad Request: not enough rights to send photos to the chat",
    "document": "Bad Request: not enough rights to send documents to the chat",
    "animation": "Bad Request: not enough rights to send animations to the chat",
    "text": "Bad Request: not enough rights to send text messages to the chat",
}
BOT_COMMAND_INVALID = "Bad Request: BOT_COMMAND_INVALID"
CANT_INITIATE = "Forbidden: bot can't initiate conversation with a user"
BLOCKED = "Forbidden: bot was blocked by the user"
KICKED_GROUP = "Forbidden: bot was kicked from the group chat"
KICKED_SUPERGROUP = "Forbidden: bot was kicked from the supergroup chat"
NOT_MEMBER_GROUP = "Forbidden: bot is not a member of the group chat"
NOT_MEMBER_SUPERGROUP = "Forbidden: bot is not a member of the supergroup chat"

# --- Ephemeral messages (Bot API 10.2/10.3). Only BOT_NOT_ADMIN (a private chat) has been
# reported from api.telegram.org; the other texts are the emulator's own words, as Telegram
# documents the rule but not its error (docs: tests/fakebot/__init__.py, "Ephemeral").
EPHEMERAL_PRIVATE = "Bad Request: BOT_NOT_ADMIN"
EPHEMERAL_FLAT_PARAMS = (
    "Bad Request: receiver_user_id and callback_query_id were replaced by "
    "ephemeral_message_parameters in Bot API 10.3"
)
EPHEMERAL_PARAMS_INVALID = "Bad Request: can't parse ephemeral_message_parameters JSON object"
EPHEMERAL_RECEIVER_INVALID = "Bad Request: ephemeral message receiver is not a member of the chat"
EPHEMERAL_NO_ACTION = (
    "Bad Request: an ephemeral message needs a callback_query_id or "
    "reply_parameters.ephemeral_message_id unless the bot is an administrator"
)
EPHEMERAL_ACTION_EXPIRED = (
    "Bad Request: the action that allows this ephemeral message is older than 15 seconds"
)
EPHEMERAL_QUERY_INVALID = "Bad Request: callback query can't trigger this ephemeral message"
EPHEMERAL_REPLACE_EPHEMERAL = (
    "Bad Request: replace_callback_query_message must be False for callback queries from "
    "ephemeral messages"
)
EPHEMERAL_REPLY_NOT_EPHEMERAL = "Bad Request: a reply to an ephemeral message must be ephemeral"
EPHEMERAL_REPLY_NOT_FOUND = "Bad Request: ephemeral message to be replied not found"
