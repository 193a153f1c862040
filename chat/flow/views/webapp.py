"""Links that open the Mini App (issue 29) for one match: pure, no ``telegram``.

A match is named by a token that cannot be guessed: ``<match id>-<22 characters>``, the
characters being the first 128 bits of ``HMAC-SHA256(secret, "match:<id>")`` in base64url.
The secret is derived from the bot token (:func:`secret_from_token`), so:

- nothing is stored: every process (polling, any number of webhook workers) makes and checks
  the same token without a table, on SQLite and PostgreSQL alike, and a link posted before a
  restart still works after it;
- a token is as hard to guess as 128 random bits while the bot token stays secret, and a new
  bot token (after a leak) invalidates every old link at once;
- the match id in front only saves a look-up; it is no secret (``/history`` shows it), the
  MAC is what proves the link came from the bot.

A token admits to a match's *public* board; what a person may see beyond it is decided by who
they are (Telegram's signed ``initData``), never by the token (chat/miniapp/).

In a group the board post gets a direct Mini App link (``t.me/<bot>/<app>?startapp=<token>``:
``web_app`` buttons are allowed only in private chats); a private panel gets a ``web_app``
button whose URL is ``<public url>/app?m=<token>``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass
from urllib.parse import quote

_TOKEN = re.compile(r"([0-9]{1,18})-([A-Za-z0-9_-]{22})")


def secret_from_token(bot_token: str) -> bytes:
    """The links' secret: a key derived from the bot token for this one use."""
    return hmac.new(b"KrendzuMiniApp", bot_token.encode(), hashlib.sha256).digest()


@dataclass(frozen=True, slots=True)
class AppLinks:
    """Where the Mini App is (``public_url``: the bot's web server; ``name``: the short name
    set with @BotFather's ``/newapp``, ``None`` if not registered) and the token secret."""

    secret: bytes
    public_url: str
    bot_username: str = ""
    name: str | None = None

    def _mac(self, match_id: int) -> str:
        digest = hmac.new(self.secret, f"match:{match_id}".encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest[:16]).decode().rstrip("=")

    def token(self, match_id: int) -> str:
        return f"{match_id}-{self._mac(match_id)}"

    def match_of(self, token: object) -> int | None:
        """The match a token names, or ``None`` for anything the bot did not make."""
        if not isinstance(token, str) or len(token) > 64:
            return None
        found = _TOKEN.fullmatch(token)
        if found is None:
            return None
        match_id = int(found.group(1))
        # The whole token, as the bot wrote it: "02-<mac>" names match 2 by its MAC, but it
        # is not a token the bot made (one match, one link).
        if not hmac.compare_digest(token, self.token(match_id)):
            return None
        return match_id

    def page_url(self, match_id: int) -> str:
        """The page itself: the private panel's ``web_app`` button opens it."""
        return f"{self.public_url.rstrip('/')}/app?m={quote(self.token(match_id))}"

    def group_url(self, match_id: int) -> str | None:
        """The direct Mini App link for a group's board post (``None`` without a name): also
        the watch link a pool match's players share, as anyone may open it from any chat
        (a spectator sees the public board, a player their own hand: ``initData`` says)."""
        if not (self.name and self.bot_username):
            return None
        return f"https://t.me/{self.bot_username}/{self.name}?startapp={self.token(match_id)}"

    def share_url(self, match_id: int, text: str) -> str | None:
        """Telegram's share dialog with the watch link and ``text`` (``None`` without a
        name): a pool match's player picks the chat to send it to."""
        link = self.group_url(match_id)
        if link is None:
            return None
        return f"https://t.me/share/url?url={quote(link, safe='')}&text={quote(text, safe='')}"
