"""The Telegram Mini App (issue 29): a board to tap in a page Telegram opens over the chat.

``api.py`` serves the page (``static/``) and its API on the bot's web server, ``initdata.py``
checks Telegram's signature, ``texts.py`` holds the page's words (translated from the bot's
catalog). The links that open it are made in ``chat/flow/views/webapp.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from chat.miniapp.api import MiniApp

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from chat.config import Config
    from chat.services import Services

__all__ = ["MiniApp", "miniapp_routes"]


def miniapp_routes(config: Config, services: Callable[[], Services]) -> list[BaseRoute]:
    """The Mini App's page and API when the web server is public (``KRENDZU_PUBLIC_URL``);
    none otherwise. Mounted by chat/web.py (webhook mode) and, while polling, by
    chat/engines_api.py's server."""
    if not (config.public_url and config.token):
        return []
    return MiniApp(services, lambda: services().flow.broadcast.app, config.token,
                   max_age=config.miniapp_max_age).routes()
