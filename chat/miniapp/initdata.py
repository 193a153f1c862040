"""Telegram Mini App ``initData``: checked before anything else a Mini App request asks.

Telegram opens the Mini App with ``initData``, a query string it signs with the bot's token
(https://core.telegram.org/bots/webapps#validating-data-received-via-the-mini-app):

    secret = HMAC_SHA256(key="WebAppData", msg=<bot token>)
    hash   = hex(HMAC_SHA256(key=secret, msg=<every other field as key=value, sorted by key,
                                           joined by "\\n">))

Only Telegram (and the bot) know the token, so a valid ``hash`` proves the ``user`` in it is
who opened the page; ``auth_date`` limits how long a copied ``initData`` can be replayed. The
page sends it with every API call (header ``X-Telegram-Init-Data``); the server never trusts
anything else the browser says about who it is.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qs, parse_qsl, urlencode

#: Longest ``initData`` accepted (Telegram's are well under 1 KB).
MAX_LENGTH = 4096


class BadInitData(ValueError):
    """``initData`` missing, malformed, forged or too old (``reason`` says which, for logs
    and tests; the person is told only that the page must be opened from Telegram again)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class WebAppUser:
    """The person who opened the Mini App, as Telegram signed it."""

    user_id: int
    name: str
    language_code: str | None
    auth_date: int
    start_param: str | None = None


def _secret(bot_token: str) -> bytes:
    return hmac.new(b"WebAppData", bot_token.encode(), hashlib.sha256).digest()


def _check_string(fields: Mapping[str, str]) -> bytes:
    return "\n".join(f"{k}={fields[k]}" for k in sorted(fields) if k != "hash").encode()


def sign(bot_token: str, fields: Mapping[str, str]) -> str:
    """``initData`` as Telegram would make it for ``fields`` (tests and local trials)."""
    digest = hmac.new(_secret(bot_token), _check_string(fields), hashlib.sha256).hexdigest()
    return urlencode({**fields, "hash": digest})


def verify(init_data: str | None, bot_token: str, *, now: float,
           max_age: float) -> WebAppUser:
    """The signed user of ``init_data``, or :class:`BadInitData`."""
    if not init_data:
        raise BadInitData("missing")
    if len(init_data) > MAX_LENGTH:
        raise BadInitData("too long")
    try:
        pairs = parse_qsl(init_data, keep_blank_values=True, strict_parsing=True)
    except ValueError as exc:
        raise BadInitData("malformed") from exc
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise BadInitData("a field given twice")
    given = fields.get("hash", "")
    expected = hmac.new(_secret(bot_token), _check_string(fields), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise BadInitData("bad hash")
    try:
        auth_date = int(fields.get("auth_date", ""))
    except ValueError as exc:
        raise BadInitData("no auth_date") from exc
    if now - auth_date > max_age:
        raise BadInitData("expired")
    if auth_date - now > 300:  # from the future: a clock far off, or made up
        raise BadInitData("auth_date in the future")
    try:
        user = json.loads(fields.get("user", ""))
        user_id = user["id"]
    except (ValueError, TypeError, KeyError) as exc:
        raise BadInitData("no user") from exc
    if not isinstance(user_id, int) or isinstance(user_id, bool) or user_id <= 0:
        raise BadInitData("no user")
    name = " ".join(str(user.get(k) or "") for k in ("first_name", "last_name")).strip()
    language = user.get("language_code")
    return WebAppUser(user_id, name or str(user.get("username") or user_id),
                      language if isinstance(language, str) else None, auth_date,
                      fields.get("start_param") or None)


def unsigned_language(raw: str | None) -> str | None:
    """The ``language_code`` an unverified ``initData`` claims: only to word its refusal."""
    try:
        user = json.loads(parse_qs(raw or "").get("user", [""])[0])
        code = user.get("language_code") if isinstance(user, dict) else None
    except ValueError:
        return None
    return code if isinstance(code, str) and len(code) < 16 else None
