"""Configuration from the environment and an optional ``.env`` file (environment wins)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

HOW_TO_GET_A_TOKEN = """\
No Telegram bot token found.

1. In Telegram, open @BotFather and send /newbot; follow the questions.
2. Copy the token it gives you (it looks like 123456789:AA...).
3. Put it in a file named .env next to bot.py:
       TELEGRAM_BOT_TOKEN=123456789:AA...
   (start from .env.example), or export TELEGRAM_BOT_TOKEN in your shell.
4. Run `make run` again.
"""


#: ``KRENDZU_STOP_SECONDS``'s default: well within the 90 s a service manager waits before it
#: kills (systemd's ``TimeoutStopSec``) and docker's ``stop_grace_period`` in deploy/.
STOP_SECONDS = 15.0


@dataclass(frozen=True, slots=True)
class Config:
    token: str | None
    #: What the store opens: the PostgreSQL URL of KRENDZU_DATABASE_URL when it is set,
    #: else the SQLite file of KRENDZU_DB (storage.open_store tells them apart).
    database: str
    log_level: str
    api_base_url: str | None = None
    #: ``LOG_FORMAT``: ``text`` (readable lines) or ``json`` (one object a line, chat/logs.py).
    log_format: str = "text"
    #: Seconds a computer player waits before moving, so people can follow.
    ai_delay: float = 1.5
    #: Worker processes for computer players (0: a thread pool, for tests).
    ai_workers: int = 2
    #: Worker processes drawing pictures (0: a thread pool, for tests).
    draw_workers: int = 2
    #: Thinking time of the hard level per decision.
    hard_budget_ms: float = 1000.0
    #: New messages per group in any 60 s (Telegram allows about 20).
    group_limit: int = 19
    #: API calls per second over all chats (Telegram allows about 30).
    overall_rate: float = 30.0
    #: How often turn deadlines are checked, in seconds.
    timer_tick: float = 1.0
    #: After a restart every running turn gets at least this many seconds.
    timer_grace: float = 60.0
    #: A match set-up nobody touched for this many minutes is closed.
    lobby_minutes: float = 30.0
    #: Active matches one person may be seated in at once (each keeps computers busy).
    max_matches_per_user: int = 3
    #: Active matches of one chat at once, its forum topics counted together.
    max_matches_per_chat: int = 5
    #: "Play now" (issue 40): seconds in the pool before a computer of similar strength is
    #: offered, and the ``/new`` words of every pool match (the group's defaults without).
    pool_computer_seconds: float = 30.0
    pool_match: str = ""
    #: Updates (commands, buttons, messages) one person may send a minute.
    user_per_minute: float = 120.0
    #: Information replies (/rules, /help, /stats, /top, ...) per person and per chat a minute.
    info_per_user: float = 6.0
    info_per_chat: float = 12.0
    #: An information answer given in a group is recent this long: asked again meanwhile,
    #: it is pointed to, not sent again (chat/answers.py; 0: every request answered anew).
    info_repeat_minutes: float = 5.0
    #: ``KRENDZU_PANELS``: where a group's players open their panels unless the group chose
    #: (``/settings panels=``): ``group`` (ephemeral messages, issue 42) or ``private``.
    panels_in_group: bool = True
    #: Webhook mode (chat/web.py) when set: the public HTTPS URL Telegram posts updates to.
    webhook_url: str | None = None
    #: What Telegram sends in ``X-Telegram-Bot-Api-Secret-Token`` (required with the URL).
    webhook_secret: str | None = None
    #: Where the bot's web server listens, ``host:port`` (behind a proxy or a balancer).
    web_listen: str = "127.0.0.1:8080"
    #: The public base URL of that web server (``KRENDZU_PUBLIC_URL``): when set, the bot
    #: serves the engine protocol for outside engines under ``/api/engine/v1`` (also when
    #: polling) and ``/engine`` registers them.
    public_url: str | None = None
    #: The Mini App's short name as set with @BotFather's ``/newapp`` (``KRENDZU_MINIAPP_NAME``):
    #: with it, a group's board post links to the Mini App (``t.me/<bot>/<name>?startapp=…``).
    #: The Mini App's page and API are served whenever ``public_url`` is set.
    miniapp_name: str | None = None
    #: How old (seconds) the Mini App's signed ``initData`` may be (``KRENDZU_MINIAPP_MAX_AGE``).
    miniapp_max_age: float = 86400.0
    #: The scaled mode's durable jobs (``KRENDZU_JOBS=procrastinate``, PostgreSQL only):
    #: moves are announced, turns timed and computers moved by ``python -m chat.jobs worker``
    #: processes instead of this one (chat/jobs/).
    jobs: bool = False
    #: PostgreSQL's prepared statements (``KRENDZU_PG_PREPARE``, on unless ``off``): a
    #: statement run a few times is parsed and planned once per connection. Off behind a
    #: transaction-mode pgbouncer older than 1.21 (newer ones need max_prepared_statements).
    pg_prepare: bool = True
    #: ``KRENDZU_METRICS=on``: ``GET /metrics`` (Prometheus) on the web listener, which a
    #: polling bot then opens even without a public URL (chat/metrics.py).
    metrics: bool = False
    #: The owners' Telegram user ids (``KRENDZU_ADMIN_IDS``): /admin in the private chat.
    admin_ids: frozenset[int] = frozenset()
    #: ``KRENDZU_STOP_SECONDS``: how long a stop (SIGTERM or SIGINT) takes at most, in every
    #: program that drains: the polling bot, a webhook worker, a job worker. Its thirds are
    #: :attr:`stop_share`; a service manager's kill timeout should exceed it.
    stop_seconds: float = STOP_SECONDS

    @property
    def stop_share(self) -> float:
        """Each waiting phase of a stop gets a third of :attr:`stop_seconds`: the requests
        (a webhook worker) or jobs (a job worker) in progress, then the queued messages, then
        the web server's end; the last third is left for the drawing and computer workers'
        task at hand and the closing. What a phase leaves unfinished is not lost: Telegram
        delivers an unanswered update again, procrastinate retries an aborted job, and what
        was stored but not told is told after the restart."""
        return self.stop_seconds / 3

    @property
    def engine_api_url(self) -> str | None:
        """Where engines connect, or ``None`` when the engine protocol is not served."""
        return f"{self.public_url.rstrip('/')}/api/engine/v1" if self.public_url else None


def read_env_file(path: Path) -> dict[str, str]:
    """Parse KEY=VALUE lines; ignore blanks, comments and malformed lines; strip quotes."""
    values: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return values
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key = key.strip().removeprefix("export ").strip()
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if key:
            values[key] = value
    return values


def load_config(env_file: Path | None = Path(".env")) -> Config:
    file_values = read_env_file(env_file) if env_file is not None else {}

    def get(key: str, default: str | None = None) -> str | None:
        value = os.environ.get(key)
        if value is None or value == "":
            value = file_values.get(key) or default
        return value

    def number(key: str, default: float, low: float, high: float) -> float:
        raw = get(key)
        try:
            value = float(raw) if raw else default
        except ValueError:
            value = default
        return min(max(value, low), high)

    token = get("TELEGRAM_BOT_TOKEN")
    listen = get("KRENDZU_WEB_LISTEN", "127.0.0.1:8080") or "127.0.0.1:8080"
    webhook_url, webhook_secret = webhook_settings(
        get("KRENDZU_WEBHOOK_URL"), get("KRENDZU_WEBHOOK_SECRET"), listen,
        get("TELEGRAM_API_BASE_URL", "https://api.telegram.org"))
    return Config(
        token=token.strip() if token else None,
        database=(get("KRENDZU_DATABASE_URL")
                  or get("KRENDZU_DB", "krendzu.sqlite3") or "krendzu.sqlite3"),
        log_level=(get("LOG_LEVEL", "INFO") or "INFO").upper(),
        log_format=log_format(get("LOG_FORMAT")),
        api_base_url=get("TELEGRAM_API_BASE_URL", "https://api.telegram.org"),
        ai_delay=number("KRENDZU_AI_DELAY", 1.5, 0.0, 10.0),
        ai_workers=int(number("KRENDZU_AI_WORKERS", 2, 0, 8)),
        draw_workers=int(number("KRENDZU_DRAW_WORKERS", 2, 0, 8)),
        hard_budget_ms=number("KRENDZU_HARD_MS", 1000.0, 50.0, 5000.0),
        group_limit=int(number("KRENDZU_GROUP_LIMIT", 19, 1, 20)),
        overall_rate=number("KRENDZU_OVERALL_RATE", 30.0, 1.0, 1000.0),
        timer_grace=number("KRENDZU_TIMER_GRACE", 60.0, 0.0, 3600.0),
        lobby_minutes=number("KRENDZU_LOBBY_MINUTES", 30.0, 1.0, 10080.0),
        max_matches_per_user=int(number("KRENDZU_MAX_MATCHES_PER_USER", 3, 1, 1000)),
        max_matches_per_chat=int(number("KRENDZU_MAX_MATCHES_PER_CHAT", 5, 1, 1000)),
        pool_computer_seconds=number("KRENDZU_POOL_COMPUTER_SECONDS", 30.0, 1.0, 3600.0),
        pool_match=(get("KRENDZU_POOL_MATCH") or "").strip()[:200],
        user_per_minute=number("KRENDZU_USER_PER_MINUTE", 120.0, 1.0, 10000.0),
        info_per_user=number("KRENDZU_INFO_PER_USER", 6.0, 1.0, 10000.0),
        info_per_chat=number("KRENDZU_INFO_PER_CHAT", 12.0, 1.0, 10000.0),
        info_repeat_minutes=number("KRENDZU_INFO_REPEAT_MINUTES", 5.0, 0.0, 1440.0),
        panels_in_group=panels_where(get("KRENDZU_PANELS")),
        webhook_url=webhook_url,
        webhook_secret=webhook_secret,
        web_listen=listen,
        public_url=(get("KRENDZU_PUBLIC_URL") or "").strip() or None,
        miniapp_name=miniapp_name(get("KRENDZU_MINIAPP_NAME")),
        miniapp_max_age=number("KRENDZU_MINIAPP_MAX_AGE", 86400.0, 60.0, 30 * 86400.0),
        jobs=jobs_setting(get("KRENDZU_JOBS"), get("KRENDZU_DATABASE_URL")),
        pg_prepare=switch("KRENDZU_PG_PREPARE", get("KRENDZU_PG_PREPARE"), default=True),
        metrics=switch("KRENDZU_METRICS", get("KRENDZU_METRICS"), default=False),
        admin_ids=user_ids("KRENDZU_ADMIN_IDS", get("KRENDZU_ADMIN_IDS")),
        stop_seconds=number("KRENDZU_STOP_SECONDS", 15.0, 2.0, 600.0),  # STOP_SECONDS
    )


#: @BotFather's rule for a Mini App's short name: 3 to 30 of these.
APP_NAME = re.compile(r"[A-Za-z0-9_]{3,30}")


def miniapp_name(value: str | None) -> str | None:
    """``KRENDZU_MINIAPP_NAME``: the short name given to @BotFather's ``/newapp`` (checked,
    since a wrong one would put a dead link under every board post)."""
    name = (value or "").strip()
    if not name:
        return None
    if not APP_NAME.fullmatch(name):
        raise ConfigError("KRENDZU_MINIAPP_NAME must be the Mini App's short name from "
                          f"@BotFather (3-30 of A-Z, a-z, 0-9, _), not {value!r}")
    return name


def log_format(value: str | None) -> str:
    """``LOG_FORMAT``: ``text`` (the default) or ``json``."""
    chosen = (value or "").strip().lower() or "text"
    if chosen not in ("text", "json"):
        raise ConfigError(f"LOG_FORMAT must be text or json, not {value!r}")
    return chosen


def user_ids(name: str, value: str | None) -> frozenset[int]:
    """Telegram user ids separated by commas or spaces (the owners'): each a positive number."""
    words = (value or "").replace(",", " ").split()
    if not all(word.isascii() and word.isdigit() and 0 < int(word) < 2**52 for word in words):
        raise ConfigError(f"{name} must be Telegram user ids separated by commas, not {value!r}")
    return frozenset(int(word) for word in words)


def panels_where(value: str | None) -> bool:
    """``KRENDZU_PANELS``: ``group`` (the default) or ``private``."""
    chosen = (value or "").strip().lower() or "group"
    if chosen not in ("group", "private"):
        raise ConfigError(f"KRENDZU_PANELS must be group or private, not {value!r}")
    return chosen == "group"


def switch(name: str, value: str | None, *, default: bool) -> bool:
    """An on/off setting: empty means ``default``; on, off, 1, 0, yes, no, true, false."""
    chosen = (value or "").strip().lower()
    if not chosen:
        return default
    if chosen in ("on", "1", "yes", "true"):
        return True
    if chosen in ("off", "0", "no", "false"):
        return False
    raise ConfigError(f"{name} must be on or off, not {value!r}")


def jobs_setting(value: str | None, database_url: str | None) -> bool:
    """``KRENDZU_JOBS``: empty (or ``off``) keeps every job in this process; ``procrastinate``
    needs the PostgreSQL of ``KRENDZU_DATABASE_URL``, where the jobs live."""
    chosen = (value or "").strip().lower()
    if chosen in ("", "off", "0", "no", "false"):
        return False
    if chosen != "procrastinate":
        raise ConfigError(f"KRENDZU_JOBS must be procrastinate or empty, not {value!r}")
    if not (database_url or "").startswith(("postgresql://", "postgres://")):
        raise ConfigError("KRENDZU_JOBS=procrastinate needs KRENDZU_DATABASE_URL "
                          "(postgresql://…): the jobs live in that database")
    return True


class ConfigError(ValueError):
    """A setting that cannot work (the message says which and why): the bot does not start
    rather than run half-configured."""


#: Telegram's rule for a webhook's secret token is 1 to 256 of these; at least 16 here, so
#: that it cannot be guessed.
SECRET = re.compile(r"[A-Za-z0-9_-]{16,256}")


def webhook_settings(url: str | None, secret: str | None, listen: str,
                     api_base_url: str | None) -> tuple[str | None, str | None]:
    """The webhook mode's settings, checked: without a URL the bot polls and the others do
    not matter. Telegram itself posts only to ``https://`` URLs; a Bot API server of one's own
    (``TELEGRAM_API_BASE_URL`` elsewhere, as the tests' fake) may post to ``http://``."""
    url = (url or "").strip() or None
    if url is None:
        return None, None
    parts = urlsplit(url)
    telegram = (api_base_url or "https://api.telegram.org").rstrip("/") in (
        "https://api.telegram.org", "http://api.telegram.org")
    plain_allowed = parts.scheme == "http" and not telegram
    if not parts.hostname or not (parts.scheme == "https" or plain_allowed):
        raise ConfigError(f"KRENDZU_WEBHOOK_URL must be a public https:// URL, not {url!r}")
    secret = (secret or "").strip()
    if not SECRET.fullmatch(secret):
        raise ConfigError("KRENDZU_WEBHOOK_SECRET is required with KRENDZU_WEBHOOK_URL: "
                          "16 to 256 characters of A-Z, a-z, 0-9, _ and - (for example "
                          "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`)")
    split_listen(listen)
    return url, secret


def split_listen(listen: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:8080`` for IPv6) as a host and a port; ConfigError if not."""
    host, sep, port = listen.strip().rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"KRENDZU_WEB_LISTEN must be host:port, not {listen!r}")
    return host, int(port)
