"""The HTTP client of every Bot API call: aiohttp under python-telegram-bot.

python-telegram-bot calls the Bot API through its :class:`telegram.request.BaseRequest`
extension point, whose default implementation runs on httpx (over httpcore, h11 and anyio).
In the scaled mode's job workers those layers were about a quarter of a move's CPU: five
calls a move at about 2 ms of CPU each in the caller. aiohttp does the same call for about
40 % less (its HTTP parser is C), so :class:`AiohttpRequest` carries every call instead; the
python-telegram-bot team's ``ptbcontrib.aiohttp_request`` is the model (not on PyPI: this is
the small part of it the bot needs). Nothing above this module changes: python-telegram-bot
still builds the parameters, reads the answer and raises its own errors (``RetryAfter``,
``BadRequest``, ``Forbidden`` ...) from the status and body returned here.

Timeouts keep python-telegram-bot's meaning and defaults (those of ``HTTPXRequest``):
``connect_timeout`` to open a connection, ``pool_timeout`` to get one from the pool,
``read_timeout`` between two reads of the answer, and ``write_timeout`` (longer for uploads,
``media_write_timeout``) to send the request. aiohttp has no write timeout of its own, so the
whole call is bounded by the sum of the four, which is never shorter than what they allow
together. An unbounded part (``None``) leaves the call unbounded as well, as
python-telegram-bot asks for its long polls.
"""

from __future__ import annotations

import ssl
from typing import Any

import aiohttp
import certifi
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

#: python-telegram-bot's defaults for ``HTTPXRequest`` (seconds).
CONNECT_TIMEOUT = 5.0
READ_TIMEOUT = 5.0
WRITE_TIMEOUT = 5.0
MEDIA_WRITE_TIMEOUT = 20.0
POOL_TIMEOUT = 1.0


class AiohttpRequest(BaseRequest):
    """Bot API calls over one :class:`aiohttp.ClientSession` with at most
    ``connection_pool_size`` connections (python-telegram-bot's builder gives the bot's calls
    256 and ``getUpdates`` 1, as here)."""

    __slots__ = (
        "_connect",
        "_connection_pool_size",
        "_media_write",
        "_pool",
        "_read",
        "_session",
        "_write",
    )

    def __init__(self, connection_pool_size: int = 1, *,
                 connect_timeout: float | None = CONNECT_TIMEOUT,
                 read_timeout: float | None = READ_TIMEOUT,
                 write_timeout: float | None = WRITE_TIMEOUT,
                 media_write_timeout: float | None = MEDIA_WRITE_TIMEOUT,
                 pool_timeout: float | None = POOL_TIMEOUT) -> None:
        self._connection_pool_size = connection_pool_size
        self._connect = connect_timeout
        self._read = read_timeout
        self._write = write_timeout
        self._media_write = media_write_timeout
        self._pool = pool_timeout
        #: Opened by :meth:`initialize`, in the event loop that makes the calls.
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        """The default read timeout: python-telegram-bot adds it to a long poll's own."""
        return self._read

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            # Telegram's certificate checked against certifi's authorities, as httpx did:
            # the same answer whatever the machine's own store holds.
            tls = ssl.create_default_context(cafile=certifi.where())
            connector = aiohttp.TCPConnector(limit=self._connection_pool_size, ssl=tls)
            # trust_env: HTTPS_PROXY, HTTP_PROXY and NO_PROXY are honoured, as httpx did
            # (where Telegram is reached through a proxy, nothing needs to change). The
            # User-Agent is the session's, set once rather than given with every call.
            self._session = aiohttp.ClientSession(
                connector=connector, trust_env=True, headers={"User-Agent": self.USER_AGENT})

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        session = self._session
        if session is None or session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        files = request_data is not None and request_data.contains_files
        connect = _given(connect_timeout, self._connect)
        pool = _given(pool_timeout, self._pool)
        read = _given(read_timeout, self._read)
        write = _given(write_timeout, self._media_write if files else self._write)
        parts = (connect, pool, read, write)
        timeout = aiohttp.ClientTimeout(
            total=None if None in parts else sum(p for p in parts if p is not None),
            connect=None if connect is None or pool is None else connect + pool,
            sock_connect=connect, sock_read=read)
        try:
            async with session.request(method, url, data=_body(request_data),
                                       timeout=timeout) as response:
                return response.status, await response.read()
        except TimeoutError as err:
            raise TimedOut from err
        except aiohttp.ClientError as err:
            # The class name says what failed when the message is empty; the URL (with the
            # token) is masked by chat/logs.py wherever it might be written.
            raise NetworkError(f"aiohttp.{type(err).__name__}: {err}") from err


def _given(value: ODVInput[float], default: float | None) -> float | None:
    """A timeout the call gives, else this client's default for it."""
    return default if isinstance(value, DefaultValue) else value


def _body(request_data: RequestData | None) -> Any:
    """The request's body as ``HTTPXRequest`` sends it: the parameters form-encoded, or with
    files a multipart form of the parameters and the files (each with its name and type)."""
    if request_data is None:
        return None
    fields = request_data.json_parameters
    if not request_data.contains_files:
        return fields or None
    form = aiohttp.FormData()
    for name, value in fields.items():
        form.add_field(name, value)
    for name, (filename, content, mimetype) in request_data.multipart_data.items():
        form.add_field(name, content, filename=filename, content_type=mimetype)
    return form
