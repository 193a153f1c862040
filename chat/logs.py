"""Logging set-up that keeps secrets out of the log, whatever ``LOG_LEVEL`` says.

Two things would otherwise reach a log file:

- the bot token: every Bot API URL is ``{base}/bot<token>/<method>`` (httpx logs each request
  at INFO), and python-telegram-bot puts it in the text of ``InvalidToken`` ("The token `…`
  was rejected by the server"), which a traceback then prints;
- hands and discards: at DEBUG python-telegram-bot logs every Bot API call with its
  parameters (a private panel's text and buttons name the player's cards), every incoming
  update (a press on a card button, a typed ``/discard``), and aiosqlite every SQL call with
  its parameters (deal seeds, discarded cards).

So :func:`configure` keeps the loggers that write request or update contents at INFO or
above even when the rest of the bot logs at DEBUG (:data:`QUIET`), and installs a
:class:`Redactor` on the root handlers that replaces the token in every message, traceback
and stack (whichever logger wrote it). Unhandled exceptions go through logging too, so the
interpreter's own traceback printer cannot show the token either.

``LOG_FORMAT=json`` writes one JSON object a line instead (python-json-logger): ``time``,
``level``, ``logger``, ``message``, and while an update is handled its ``update_id`` and
``chat_kind`` (private, group, supergroup, channel), which :class:`chat.updates.
ChatOrderedProcessor` sets in :data:`HANDLING` for everything its update's tasks log. No
chat id, user id or text goes into those fields: a log shipped to a search index stays as
free of hands as the text one. Tracebacks go in ``exc_info``, masked like the text log's.
"""

from __future__ import annotations

import contextvars
import logging
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from types import TracebackType

from pythonjsonlogger.json import JsonFormatter

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: ``LOG_FORMAT``'s values.
FORMATS = ("text", "json")
#: The JSON log's fields, renamed from the record's attributes.
JSON_FIELDS = {"asctime": "time", "levelname": "level", "name": "logger"}
#: The update being handled (its id and its chat's kind), for the JSON log's fields.
HANDLING: contextvars.ContextVar[tuple[int, str | None] | None] = contextvars.ContextVar(
    "krendzu_handling", default=None)
#: What replaces a secret in the log.
MASK = "<token>"

#: Loggers that write what must not be logged (or only floods), and the lowest level they
#: may log at even when ``LOG_LEVEL=DEBUG``:
QUIET: dict[str, int] = {
    # Every request URL (with the token) at INFO, connection details at DEBUG.
    "httpx": logging.WARNING,
    "httpcore": logging.WARNING,
    # The Bot API's HTTP client (chat/telegram_http.py): connections and requests, quiet
    # below warnings whatever it may say of them in a later release.
    "aiohttp": logging.WARNING,
    # "Calling Bot API endpoint `sendMessage` with parameters {...}" and the returned
    # message: the texts and buttons of private panels, i.e. the hands.
    "telegram.Bot": logging.INFO,
    "telegram.ext.ExtBot": logging.INFO,
    "telegram.request": logging.INFO,
    # "Processing update Update(...)": a pressed card button, a typed /discard.
    "telegram.ext.Application": logging.INFO,
    # "Webhook received data: ..." (unused with polling, quiet in case it is switched on).
    "telegram.ext.Updater": logging.INFO,
    # "executing functools.partial(<execute>, 'INSERT ...', (seed, ...))".
    "aiosqlite": logging.INFO,
    # Two lines per tick of the one-second turn timer; PNG chunk names per picture.
    "apscheduler": logging.WARNING,
    "PIL": logging.INFO,
}


def secrets_of(token: str | None) -> list[str]:
    """The strings to mask for a token: itself, its URL-encoded form and its secret half
    (the part after the colon is what authenticates; the bot's id before it is public)."""
    if not token:
        return []
    found = [token, token.replace(":", "%3A"), token.replace(":", "%3a")]
    secret = token.partition(":")[2]
    if len(secret) >= 8:
        found.append(secret)
    # Longest first, so the whole token is masked as one piece before its halves.
    return sorted(set(found), key=len, reverse=True)


class Redactor(logging.Filter):
    """A handler filter that masks secrets in the message, the traceback and the stack of
    every record (it never drops a record). Handler filters see records from every logger,
    propagated ones included, unlike a filter on one logger."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: keep the text, drop the arguments
            record.msg, record.args = self.redact(str(record.msg)), None
        else:
            clean = self.redact(message)
            if clean != message:
                record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            # Format the traceback here (handlers would do it later, unmasked) and keep the
            # text: formatters use exc_text when it is set.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
            # Formatters that format the exception themselves (the JSON one does) would
            # print it unmasked: they get the masked text alone.
            record.exc_info = None
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


class UpdateFields(logging.Filter):
    """Adds the handled update's id and chat kind (:data:`HANDLING`) to every record, for
    the JSON log (``None`` outside an update)."""

    def filter(self, record: logging.LogRecord) -> bool:
        handling = HANDLING.get()
        record.update_id, record.chat_kind = handling if handling else (None, None)
        return True


def json_formatter() -> logging.Formatter:
    """One JSON object a line: time, level, logger, message, update id, chat kind."""
    return JsonFormatter("{asctime}{levelname}{name}{message}{update_id}{chat_kind}",
                         style="{", rename_fields=JSON_FIELDS, timestamp=False)


class RecentErrors(logging.Handler):
    """Counts the errors this process logged in the last hour, for the owners' /admin
    figures (only the count: the log has the rest)."""

    def __init__(self, seconds: float = 3600.0) -> None:
        super().__init__(logging.ERROR)
        self.seconds = seconds
        self._times: deque[float] = deque()

    def emit(self, record: logging.LogRecord) -> None:
        self._times.append(record.created)
        self._forget(record.created)

    def _forget(self, now: float) -> None:
        while self._times and self._times[0] < now - self.seconds:
            self._times.popleft()

    def count(self) -> int:
        self._forget(time.time())
        return len(self._times)


class AbortedForRetry(logging.Filter):
    """procrastinate logs a job that a stop aborted, to be retried ("ended with status:
    Aborted, to retry"), with the ``CancelledError``'s traceback: the line stays, the
    traceback goes. A stop is no failure; a real failure keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "action", None) == "job_aborted_retry":
            record.exc_info, record.exc_text = None, None
        return True


def quiet_levels(level: int) -> dict[str, int]:
    """The level each of :data:`QUIET` gets when the bot logs at ``level``: never below its
    floor, never below the bot's own level (a logger's level, not the root's, decides)."""
    return {name: max(floor, level) for name, floor in QUIET.items()}


def configure(level_name: str, token: str | None, *others: str | None,
              log_format: str = "text") -> Redactor:
    """Set up logging for ``bot.py``: the level, the quiet loggers, the redactor on every
    root handler (masking the token and ``others``, e.g. the webhook's secret), the format
    (``text`` or ``json``: :func:`json_formatter`), and unhandled exceptions logged (masked)
    instead of printed."""
    level = logging.getLevelName(level_name.upper())
    if not isinstance(level, int):
        level = logging.INFO
    logging.basicConfig(level=level, format=FORMAT)
    root = logging.getLogger()
    for handler in root.handlers:
        if log_format == "json":
            handler.setFormatter(json_formatter())
            if not any(isinstance(f, UpdateFields) for f in handler.filters):
                handler.addFilter(UpdateFields())
    root.setLevel(level)
    for name, floor in quiet_levels(level).items():
        logging.getLogger(name).setLevel(floor)
    jobs = logging.getLogger("procrastinate.worker")
    if not any(isinstance(f, AbortedForRetry) for f in jobs.filters):
        jobs.addFilter(AbortedForRetry())
    redactor = Redactor([*secrets_of(token), *(o for o in others if o)])
    for handler in root.handlers:
        if not any(isinstance(f, Redactor) for f in handler.filters):
            handler.addFilter(redactor)
    sys.excepthook = _log_unhandled
    threading.excepthook = _log_unhandled_in_thread
    return redactor


def _log_unhandled(kind: type[BaseException], value: BaseException,
                   traceback: TracebackType | None) -> None:
    if issubclass(kind, KeyboardInterrupt):
        sys.__excepthook__(kind, value, traceback)
        return
    logging.getLogger("bot").critical("unhandled %s", kind.__name__,
                                      exc_info=(kind, value, traceback))


def _log_unhandled_in_thread(args: threading.ExceptHookArgs) -> None:
    if args.exc_value is None:
        return
    logging.getLogger("bot").critical("unhandled %s in thread %s", args.exc_type.__name__,
                                      args.thread.name if args.thread else "?",
                                      exc_info=(args.exc_type, args.exc_value,
                                                args.exc_traceback))
