"""Entry point: read the configuration, build the Telegram application, run it."""

from __future__ import annotations

import logging
import sys

from chat.config import HOW_TO_GET_A_TOKEN, load_config


def main() -> int:
    config = load_config()
    if not config.token:
        print(HOW_TO_GET_A_TOKEN, file=sys.stderr)
        return 1
    logging.basicConfig(
        level=getattr(logging, config.log_level, logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # httpx logs every request URL, and the URL contains the token.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    # The job queue's scheduler logs two lines per tick of the one-second turn timer.
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    from chat.app import build_application

    app = build_application(config)
    app.run_polling()
    return 0


if __name__ == "__main__":
    sys.exit(main())
