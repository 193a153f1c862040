"""``python -m chat.healthcheck``: exit 0 when this container's bot process is ready.

The image's ``HEALTHCHECK`` (deploy/Dockerfile) runs it: it asks ``/readyz`` on the
process's own web listener (``KRENDZU_WEB_LISTEN``; a wildcard host is asked on the loopback)
and exits 0 on 200, 1 otherwise, printing the reason. The slim image has no curl, and this
reads the listener from the same variable the bot does.
"""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request

from chat.config import ConfigError, split_listen

#: Seconds to wait for the answer (the HEALTHCHECK's own timeout is longer).
TIMEOUT = 3.0


def readyz_url(listen: str) -> str:
    host, port = split_listen(listen)
    if host in ("", "0.0.0.0", "::", "[::]"):
        host = "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}/readyz"


def main() -> int:
    try:
        url = readyz_url(os.environ.get("KRENDZU_WEB_LISTEN", "127.0.0.1:8080"))
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 1
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as answer:
            print(answer.read(100).decode(errors="replace"))
            return 0
    except urllib.error.HTTPError as exc:
        print(f"{exc.code} {exc.read(100).decode(errors='replace')}", file=sys.stderr)
    except OSError as exc:
        print(f"no answer from {url}: {exc}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
