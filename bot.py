"""Entry point: read the configuration, build the Telegram application (the composition root,
chat/compose.py), run it: polling, or webhook mode's web server (chat/web.py)."""

from __future__ import annotations

import asyncio
import logging
import sys

from telegram.error import InvalidToken

from chat.compose import build_application
from chat.config import HOW_TO_GET_A_TOKEN, ConfigError, load_config
from chat.eventloop import new_event_loop
from chat.logs import configure as configure_logging
from chat.web import serve

#: Exit status without a token: EX_CONFIG of sysexits.h. Still a failure for a script or a
#: service manager, but one `make run` can tell from a crash: it prints the guide and stops
#: there without make's "Error" line (see the Makefile).
NO_TOKEN = 78


def main() -> int:
    try:
        config = load_config()
    except ConfigError as exc:  # e.g. a webhook URL without its secret
        print(exc, file=sys.stderr)
        return 1
    if not config.token:
        print(HOW_TO_GET_A_TOKEN, file=sys.stderr)
        return NO_TOKEN
    # The token is masked in every log line and traceback; request and update contents
    # (hands) are not logged even at DEBUG (see chat/logs.py).
    configure_logging(config.log_level, config.token, config.webhook_secret,
                      log_format=config.log_format)
    if config.webhook_url:  # Telegram posts the updates to the bot's web server (chat/web.py)
        return serve(config)
    app = build_application(config)
    asyncio.set_event_loop(new_event_loop())  # run_polling runs on the current loop
    try:
        app.run_polling()
    except InvalidToken:
        # PTB's message quotes the token; say what to do instead.
        logging.getLogger("bot").error(
            "Telegram rejected the bot token (TELEGRAM_BOT_TOKEN): check it with @BotFather "
            "(/mybots → API Token).")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
