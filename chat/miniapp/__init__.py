"""The Telegram Mini App (issue 29): a board to tap in a page Telegram opens over the chat.

``api.py`` serves the page (``static/``) and its API on the bot's web server, ``initdata.py``
checks Telegram's signature, ``texts.py`` holds the page's words (translated from the bot's
catalog). The links that open it are made in ``chat/flow/views/webapp.py``.
"""

from chat.miniapp.api import MiniApp

__all__ = ["MiniApp"]
