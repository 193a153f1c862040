"""The two ways in: a PTB ``BaseRequest`` that calls the emulator directly, and a real HTTP
server (stdlib ``ThreadingHTTPServer`` in a background thread)."""

from __future__ import annotations

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

from telegram.error import NetworkError
from telegram.request import BaseRequest, RequestData

from tests.fakebot import errors as E

if TYPE_CHECKING:
    from tests.fakebot.emulator import FakeTelegram

Files = dict[str, tuple[str | None, bytes, str | None]]


def split_path(path: str) -> tuple[str, str, str] | None:
    """("api", token, method) for ``.../bot<token>/<method>``, ("file", token, file_path) for
    ``.../file/bot<token>/<path>``, None otherwise."""
    parts = unquote(path).split("/")
    for i, part in enumerate(parts[:-1]):
        if part == "file" and parts[i + 1].startswith("bot") and len(parts) > i + 2:
            return "file", parts[i + 1][3:], "/".join(parts[i + 2:])
    if len(parts) >= 2 and parts[-2].startswith("bot") and parts[-1]:
        return "api", parts[-2][3:], parts[-1]
    return None


def _error(code: int, description: str) -> tuple[int, bytes]:
    return code, json.dumps({"ok": False, "error_code": code,
                             "description": description}).encode()


def _file_response(fake: FakeTelegram, token: str, file_path: str) -> tuple[int, bytes]:
    if token != fake.token:
        return _error(401, E.UNAUTHORIZED)
    data = fake.download(file_path)
    if data is None:
        return _error(404, E.NOT_FOUND)
    return 200, data


class FakeRequest(BaseRequest):
    """PTB's transport replaced by direct calls into a :class:`FakeTelegram`."""

    def __init__(self, fake: FakeTelegram):
        self.fake = fake

    @property
    def read_timeout(self) -> float | None:
        return 5.0

    async def initialize(self) -> None:
        return None

    async def shutdown(self) -> None:
        return None

    async def do_request(self, url: str, method: str, request_data: RequestData | None = None,
                         read_timeout: Any = None, write_timeout: Any = None,
                         connect_timeout: Any = None,
                         pool_timeout: Any = None) -> tuple[int, bytes]:
        parts = urlsplit(url)
        route = split_path(parts.path)
        if route is None:
            return _error(404, E.NOT_FOUND)
        kind, token, name = route
        if self.fake.outage and name.lower() != "getupdates":
            # The connection fails before Telegram sees the request (updates still arrive,
            # as when only the bot's outgoing path is broken).
            raise NetworkError(f"fake outage: {name} not sent")
        if kind == "file":
            return _file_response(self.fake, token, name)
        if token != self.fake.token:
            return _error(401, E.UNAUTHORIZED)
        params: dict[str, Any] = dict(parse_qsl(parts.query, keep_blank_values=True))
        files: Files = {}
        if request_data is not None:
            params.update(request_data.json_parameters)
            for part, (filename, content, mime) in request_data.multipart_data.items():
                data = content.read() if hasattr(content, "read") else content
                files[part] = (filename, bytes(data), mime)
        status, body = await self.fake.handle_async(name, params, files)
        return status, json.dumps(body).encode()


# --- multipart/form-data ----------------------------------------------------------------
_PARAM = re.compile(r'(\w+\*?)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))')


def _header_params(value: str) -> dict[str, str]:
    found = {}
    for key, quoted, bare in _PARAM.findall(value):
        text = quoted.replace('\\"', '"') if quoted or not bare else bare
        if key.endswith("*") and "''" in text:  # RFC 5987: utf-8''%D0%90.png
            text = unquote(text.split("''", 1)[1])
            key = key[:-1]
        found[key.lower()] = text
    return found


def parse_multipart(content_type: str, body: bytes) -> tuple[dict[str, str], Files]:
    """Form fields and uploaded files of a multipart/form-data body."""
    boundary = _header_params(content_type).get("boundary")
    if not boundary:
        raise ValueError("multipart body without a boundary")
    fields: dict[str, str] = {}
    files: Files = {}
    delimiter = b"--" + boundary.encode()
    for chunk in body.split(delimiter)[1:]:
        if chunk.startswith(b"--"):
            break
        chunk = chunk.removeprefix(b"\r\n")
        head, _, data = chunk.partition(b"\r\n\r\n")
        data = data.removesuffix(b"\r\n")
        headers = {}
        for line in head.decode("utf-8", "replace").split("\r\n"):
            if ":" in line:
                key, value = line.split(":", 1)
                headers[key.strip().lower()] = value.strip()
        disposition = _header_params(headers.get("content-disposition", ""))
        name = disposition.get("name")
        if name is None:
            continue
        if "filename" in disposition:
            # HTML5 form encoding (httpx, browsers) escapes only these three characters
            filename = (disposition["filename"].replace("%22", '"').replace("%0D", "\r")
                        .replace("%0A", "\n"))
            files[name] = (filename, data, headers.get("content-type"))
        else:
            fields[name] = data.decode("utf-8")
    return fields, files


# --- the HTTP server --------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 120  # idle keep-alive connections end eventually
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return None

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        fake = self.server.fake
        body = self._read_body()
        parts = urlsplit(self.path)
        route = split_path(parts.path)
        content_type = "application/json"
        if route is None:
            status, payload = _error(404, E.NOT_FOUND)
        elif route[0] == "file":
            status, payload = _file_response(fake, route[1], route[2])
            if status == 200:
                content_type = "application/octet-stream"
        elif route[1] != fake.token:
            status, payload = _error(401, E.UNAUTHORIZED)
        else:
            try:
                params, files = self._params(parts.query, body)
            except ValueError as exc:
                status, payload = _error(400, f"Bad Request: {exc}")
            else:
                status, result = fake.handle(route[2], params, files)
                payload = json.dumps(result).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except OSError:  # the client went away (e.g. a cancelled long poll)
            self.close_connection = True

    def _params(self, query: str, body: bytes) -> tuple[dict[str, Any], Files]:
        params: dict[str, Any] = dict(parse_qsl(query, keep_blank_values=True))
        files: Files = {}
        content_type = self.headers.get("Content-Type", "")
        kind = content_type.split(";", 1)[0].strip().lower()
        if kind == "application/json" and body:
            data = json.loads(body)
            if not isinstance(data, dict):
                raise ValueError("JSON object expected")
            params.update(data)
        elif kind == "application/x-www-form-urlencoded":
            params.update(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        elif kind == "multipart/form-data":
            fields, files = parse_multipart(content_type, body)
            params.update(fields)
        return params, files


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    #: The listen backlog: the stdlib's 5 refuses connections when a few bot processes send
    #: at once (Telegram takes thousands).
    request_queue_size = 512

    def __init__(self, address: tuple[str, int], fake: FakeTelegram):
        self.fake = fake
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-request (a bot process killed) is no emulator error:
        quiet, as Telegram would be; anything else is printed as the stdlib does."""
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def start_server(fake: FakeTelegram, host: str, port: int) -> tuple[_Server, threading.Thread]:
    server = _Server((host, port), fake)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              name="fakebot-http", daemon=True)
    thread.start()
    return server, thread
