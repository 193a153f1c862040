"""The Telegram Mini App (issue 29): a board to tap in a page Telegram opens over the chat.

``api.py`` serves the page (``static/``) and its API on the bot's web server, ``initdata.py``
checks Telegram's signature, ``texts.py`` holds the page's words (translated from the bot's
catalog). The links that open it are made in ``chat/flow/views/webapp.py``, from the
configuration by :func:`app_links`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from chat.flow.views.webapp import AppLinks, secret_from_token
from chat.miniapp.api import MiniApp

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from chat.config import Config
    from chat.services import Services

log = logging.getLogger(__name__)

__all__ = ["MiniApp", "app_links", "miniapp_routes"]


def miniapp_routes(config: Config, services: Callable[[], Services]) -> list[BaseRoute]:
    """The Mini App's page and API when the web server is public (``KRENDZU_PUBLIC_URL``);
    none otherwise. Mounted by chat/web.py (webhook mode) and, while polling, by
    chat/engines_api.py's server."""
    if not (config.public_url and config.token):
        return []
    return MiniApp(services, lambda: services().flow.broadcast.app, config.token,
                   max_age=config.miniapp_max_age).routes()


def app_links(config: Config, bot_username: str) -> AppLinks | None:
    """The Mini App's links (issue 29) when the web server is public (over https, as Telegram
    requires), else ``None``: then no panel or board post carries a Mini App button and the
    bot behaves as without it."""
    if not (config.public_url and config.token):
        return None
    if not config.public_url.startswith("https://"):
        # Telegram opens Mini Apps from https:// only (and refuses a message whose web_app
        # button has another URL): an http:// server still serves the engine protocol.
        log.warning("KRENDZU_PUBLIC_URL is not https://, so no message offers the Mini App")
        return None
    return AppLinks(secret_from_token(config.token), config.public_url, bot_username,
                    config.miniapp_name)
