"""The Mini App (issue 29): its page and its API, Starlette routes on the bot's web server.

- ``GET /app`` (``?m=<token>``, or the ``startapp`` parameter Telegram hands the page): the
  page; ``GET /app/static/<file>``: its script and style, from this package (no CDN).
- ``GET  /api/app/v1/texts``: the page's words in the reader's language (chat/miniapp/texts.py).
- ``GET  /api/app/v1/match/<token>``: the match as the caller may see it
  (:func:`chat.miniapp.state.state_json`); ``?after=<seq>`` waits (at most :data:`WAIT` s)
  until the match is past that ``seq``: the page's long poll, so it follows other people's
  moves at once.
- ``POST /api/app/v1/match/<token>/move``: ``{"seq": N, "actions": ["QC@0,1", "end"]}``:
  the steps of a move in the engine's words (:func:`krendzu.parse_action`: a card at a cell,
  ``pass``, ``end``, ``ann:2`` for an exchange count, ``drop:QC`` for a card given away),
  ``seq`` the ``seq`` of the state they answer. Answered with the new state.
- ``POST /api/app/v1/match/<token>/hint``: ``{"seq": N}``: the bot's ``/hint`` for the
  player to move: the suggestion in words and as steps (the page lifts its card and cell),
  and, as ``/hint`` does, the private message with its picture and ▶ Play it key.
- ``POST /api/app/v1/match/<token>/resign``: the bot's ``/resign`` (the page asks first).
  Answered with the new state.

Every API call carries Telegram's signed ``initData`` (header ``X-Telegram-Init-Data``),
checked by :mod:`chat.miniapp.initdata` against the bot token and ``KRENDZU_MINIAPP_MAX_AGE``:
401 otherwise. The caller is the user Telegram signed; the token (chat/flow/views/webapp.py)
only names the match. A seated player gets ``observation(seat)``: their own hand and nothing
of another; anyone else (a spectator, a player of another match) gets the public
``observation(None)``, unless the match is a pool match one of its players closed to
spectators (chat/flow/watch.py): then ``watch_off`` (403) and nothing of it. Errors are
``{"code": ..., "message": ...}``, the message from the bot's catalog in the caller's
language (their ``/lang``, else Telegram's ``language_code``).

A move goes through :meth:`chat.flow.Flow.play` once, as a panel press does (its door,
``Door.MINIAPP``, is stored with it: the player's private panel is edited into the record
of the move, and stays in step): the
same lock, checks, stored sequence numbers and group post as buttons and commands; the
answer is the flow's verdict in the page's codes (:func:`_refused`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from chat.flow import Actor, Door
from chat.flow.views.texts import steps_text
from chat.flow.views.webapp import AppLinks
from chat.i18n import Tr
from chat.miniapp.initdata import BadInitData, WebAppUser, unsigned_language, verify
from chat.miniapp.state import parse_actions, state_json
from chat.miniapp.texts import page_texts
from chat.outcomes import Refusal, Refused
from chat.results import resigned_seats
from chat.throttle import Buckets
from storage import MatchStatus, NotFound, StoredMatch

if TYPE_CHECKING:
    from chat.services import Services

log = logging.getLogger(__name__)

PREFIX = "/api/app/v1"
INIT_HEADER = "X-Telegram-Init-Data"
#: Longest a ``?after=`` request waits for a change before answering the same state.
WAIT = 15.0
#: How often a waiting request reads the match again (a move made by another process).
RECHECK = 1.0
#: API requests per minute per person (a long poll is one; a quick player makes a few a turn).
REQUESTS_PER_MINUTE = 240.0
#: The page's files (chat/miniapp/static/), the only ones served.
STATIC = {"app.js": "text/javascript", "app.css": "text/css"}
#: The page may load nothing from elsewhere: its script and style are its own.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; frame-ancestors https://web.telegram.org https://*.telegram.org "
       "'self'; base-uri 'none'; form-action 'none'")

#: Suggestions kept for a repeated Hint of the same move (thought out and sent once).
HINTS_KEPT = 256

STATUS = {"unauthorized": 401, "unknown_match": 404, "not_seated": 403, "watch_off": 403,
          "not_your_turn": 409, "stale": 409, "game_over": 409, "illegal_move": 422,
          "malformed": 400, "rate_limited": 429}


def error(code: str, message: str) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=STATUS[code],
                        headers={"Cache-Control": "no-store"})


def _static(name: str) -> str:
    return resources.files("chat.miniapp").joinpath("static", name).read_text("utf-8")


@dataclass(frozen=True)
class _Caller:
    """Who calls about which match: what every match endpoint starts from."""

    user: WebAppUser
    tr: Tr
    stored: StoredMatch
    seat: int | None


class MiniApp:
    """The page's routes over the running bot's services."""

    def __init__(self, services: Callable[[], Services], links: Callable[[], AppLinks | None],
                 bot_token: str, *, max_age: float = 86400.0,
                 clock: Callable[[], float] = time.time,
                 per_minute: float = REQUESTS_PER_MINUTE) -> None:
        self._services = services
        self._links = links
        self.bot_token = bot_token
        self.max_age = max_age
        self.clock = clock
        self.buckets = Buckets(per_minute)
        #: (match, seq, user) → the suggestion given (its words' language, text, steps).
        self.hints: dict[tuple[int, int, int], tuple[str, str, list[str]]] = {}

    @property
    def svc(self) -> Services:
        return self._services()

    def routes(self) -> list[BaseRoute]:
        return [
            Route("/app", self.page, methods=["GET"]),
            Route("/app/static/{name}", self.static, methods=["GET"]),
            Mount(PREFIX, routes=[
                Route("/texts", self.texts, methods=["GET"]),
                Route("/match/{token}", self.state, methods=["GET"]),
                Route("/match/{token}/move", self.move, methods=["POST"]),
                Route("/match/{token}/hint", self.hint, methods=["POST"]),
                Route("/match/{token}/resign", self.resign, methods=["POST"]),
            ]),
        ]

    # The page -----------------------------------------------------------------------------

    async def page(self, request: Request) -> Response:
        return Response(_static("index.html"), media_type="text/html; charset=utf-8",
                        headers={"Content-Security-Policy": CSP, "Cache-Control": "no-cache",
                                 "X-Content-Type-Options": "nosniff",
                                 "Referrer-Policy": "no-referrer"})

    async def static(self, request: Request) -> Response:
        name = request.path_params.get("name", "")
        if name not in STATIC:
            return Response("not found", status_code=404)
        return Response(_static(name), media_type=f"{STATIC[name]}; charset=utf-8",
                        headers={"Cache-Control": "no-cache",
                                 "X-Content-Type-Options": "nosniff"})

    # Who is asking ------------------------------------------------------------------------

    async def _tr(self, user: WebAppUser | None, hint: str | None = None) -> Tr:
        """The caller's language: their ``/lang`` if the bot knows them, else Telegram's."""
        flow = self.svc.flow
        row = await flow.people.user_row(user.user_id) if user is not None else None
        return flow.catalogs.pick(row.language if row else None,
                                  user.language_code if user is not None else hint)

    async def _user(self, request: Request) -> WebAppUser | Response:
        self.svc.flow.begin_request()  # a unit of work: rows read afresh
        raw = request.headers.get(INIT_HEADER)
        try:
            user = verify(raw, self.bot_token, now=self.clock(), max_age=self.max_age)
        except BadInitData as exc:
            log.info("mini app: initData refused (%s)", exc.reason)
            tr = self.svc.flow.catalogs.pick(None, unsigned_language(raw))
            return error("unauthorized", tr._(
                "This page must be opened from Telegram (the ▶ Play button), and not too long "
                "ago: close it and open it again."))
        if not self.buckets.has_room(user.user_id):
            tr = await self._tr(user)
            return error("rate_limited", tr._("Too many requests: wait a moment."))
        await self.buckets.take(user.user_id)
        return user

    async def _match(self, request: Request) -> _Caller | Response:
        """The caller (checked ``initData``), their language, and the match the link's token
        names with their seat in it (``None``: not seated), or the error to answer."""
        user = await self._user(request)
        if isinstance(user, Response):
            return user
        tr = await self._tr(user)
        links = self._links()
        match_id = links.match_of(request.path_params.get("token")) if links else None
        stored = None
        if match_id is not None:
            try:
                stored = await self.svc.flow.load(match_id)
            except NotFound:
                stored = None
        if stored is None:
            return error("unknown_match", tr._(
                "This link names no match: it may be mistyped, or the match was removed."))
        if (closed := await self._closed(stored, user, tr)) is not None:
            return closed
        return _Caller(user, tr, stored, stored.row.seat_of(user.user_id))

    async def _closed(self, stored: StoredMatch, user: WebAppUser, tr: Tr) -> Response | None:
        """The refusal a pool match its players closed to spectators gets from anyone not
        seated (chat/flow/watch.py): no board, no score, not even the players' names."""
        if await self.svc.flow.watch.open_to(stored.row, user.user_id):
            return None
        return error("watch_off", tr._(
            "The players of this match turned its watch link off: only they can open it."))

    async def _state(self, stored: StoredMatch, seat: int | None, tr: Tr,
                     token: str) -> dict[str, Any]:
        flow = self.svc.flow
        names = await flow.seat_names(stored.row, tr)
        left = await flow.deadlines.seconds_left(stored)
        return state_json(stored, seat, names, tr, token=token, seconds_left=left,
                          resigned=await self._resigned(stored, seat))

    async def _resigned(self, stored: StoredMatch, seat: int | None) -> bool:
        """Whether ``seat`` resigned while the computer plays on (only a trio in a group
        goes on after a resignation: chat/flow/endings.py)."""
        return (seat is not None and stored.row.table.players == 3
                and stored.row.status is MatchStatus.ACTIVE
                and seat in await resigned_seats(self.svc.store, stored.match_id))

    # Endpoints ----------------------------------------------------------------------------

    async def texts(self, request: Request) -> Response:
        user = await self._user(request)
        if isinstance(user, Response):
            return user
        tr = await self._tr(user)
        return JSONResponse({"language": tr.language, "texts": page_texts(tr)},
                            headers={"Cache-Control": "no-store"})

    async def state(self, request: Request) -> Response:
        found = await self._match(request)
        if isinstance(found, Response):
            return found
        user, tr, stored, seat = found.user, found.tr, found.stored, found.seat
        after = request.query_params.get("after", "")
        if after.isdigit() and len(after) < 10:
            stored = await self._wait(stored, int(after), request, user)
            seat = stored.row.seat_of(user.user_id)
            if (closed := await self._closed(stored, user, tr)) is not None:
                return closed  # turned off while the spectator waited
        return JSONResponse(await self._state(stored, seat, tr, request.path_params["token"]),
                            headers={"Cache-Control": "no-store"})

    async def _wait(self, stored: StoredMatch, after: int, request: Request,
                    user: WebAppUser) -> StoredMatch:
        """``stored`` once it is past ``after`` (or over), or after :data:`WAIT` seconds, or
        as soon as the page is gone (closed, or reloaded), or closed to this spectator."""
        flow = self.svc.flow
        deadline = time.monotonic() + WAIT
        while (stored.next_seq <= after and stored.row.status is MatchStatus.ACTIVE
               and time.monotonic() < deadline and not await request.is_disconnected()
               and await flow.watch.open_to(stored.row, user.user_id)):
            await flow.broadcast.signals.wait(stored.match_id,
                                              min(RECHECK, deadline - time.monotonic()))
            flow.begin_request()
            stored = await flow.load(stored.match_id)
        return stored

    async def move(self, request: Request) -> Response:
        found = await self._match(request)
        if isinstance(found, Response):
            return found
        user, tr, stored = found.user, found.tr, found.stored
        body = await _json_body(request)
        seq = body.get("seq") if isinstance(body, dict) else None
        steps = parse_actions(body.get("actions")) if isinstance(body, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool) or steps is None:
            return error("malformed", tr._(
                "This move could not be read: reload the page and try again."))
        flow = self.svc.flow
        actor = Actor(user.user_id, user.name, user.language_code)
        outcome = await flow.play(stored.match_id, actor, steps, expected_seq=seq,
                                  door=Door.MINIAPP)
        if isinstance(outcome.verdict, Refused):
            return _refused(tr, outcome.verdict)
        self.svc.delivery.run(outcome.notices)
        flow.begin_request()
        stored = await flow.load(stored.match_id)
        state = await self._state(stored, stored.row.seat_of(user.user_id), tr,
                                  request.path_params["token"])
        return JSONResponse({"ok": True, "reply": outcome.reply, "state": state},
                            headers={"Cache-Control": "no-store"})

    async def hint(self, request: Request) -> Response:
        """The bot's ``/hint`` from the page: the same suggestion (the normal level's) and
        the same private message, on the player's own turn only. A second Hint of the same
        move answers the same suggestion without sending it again."""
        found = await self._match(request)
        if isinstance(found, Response):
            return found
        user, tr, stored, seat = found.user, found.tr, found.stored, found.seat
        body = await _json_body(request)
        seq = body.get("seq") if isinstance(body, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool):
            return error("malformed", tr._(
                "This move could not be read: reload the page and try again."))
        if (stop := _position_refusal(tr, stored, seat, seq)) is not None:
            return stop
        if stored.game.current_player != seat or await self._resigned(stored, seat):
            return error("not_your_turn", tr._("A hint is given on your own turn."))
        key = (stored.match_id, seq, user.user_id)
        given = self.hints.get(key)
        if given is None or given[0] != tr.language:
            flow = self.svc.flow
            view, frame = flow.hint_request(stored, seat)
            actions = await flow.suggest(view)
            if given is None:  # told privately once, as /hint tells it
                self.svc.delivery.run([await flow.hint_notice(
                    stored, seat, user.user_id, request=(view, frame), actions=actions)])
            text = (tr._("💡 Suggestion: {move}", move=steps_text(tr, actions, frame))
                    if actions else tr._("No suggestion."))
            given = (tr.language, text, [str(a) for a in actions])
            while len(self.hints) >= HINTS_KEPT:
                self.hints.pop(next(iter(self.hints)))
            self.hints[key] = given
        return JSONResponse({"ok": True, "seq": seq, "text": given[1], "actions": given[2]},
                            headers={"Cache-Control": "no-store"})

    async def resign(self, request: Request) -> Response:
        """The bot's ``/resign`` from the page (which asks first), told as ``/resign`` is:
        the final board and the summary; in a group's trio the computer plays on."""
        found = await self._match(request)
        if isinstance(found, Response):
            return found
        user, tr, stored, seat = found.user, found.tr, found.stored, found.seat
        if seat is None:
            return error("not_seated", tr._("You are not playing in this match."))
        if stored.row.status is not MatchStatus.ACTIVE or await self._resigned(stored, seat):
            return error("game_over", tr._("This match is over."))
        flow = self.svc.flow
        outcome = await flow.resign(stored, Actor(user.user_id, user.name,
                                                  user.language_code))
        if not outcome.notices:  # refused under the lock: it ended meanwhile
            return error("game_over", outcome.reply or tr._("This match is over."))
        self.svc.delivery.run(outcome.notices)
        flow.begin_request()
        stored = await flow.load(stored.match_id)
        state = await self._state(stored, stored.row.seat_of(user.user_id), tr,
                                  request.path_params["token"])
        return JSONResponse({"ok": True, "state": state},
                            headers={"Cache-Control": "no-store"})


def _refused(tr: Tr, verdict: Refused) -> JSONResponse:
    """A refused move's verdict in the page's codes (:data:`STATUS`), with the flow's words
    where the page says the same; a position that moved on gets the page's own."""
    reason, text = verdict.reason, verdict.text or ""
    if reason is Refusal.GONE:
        return error("unknown_match", tr._(
            "This link names no match: it may be mistyped, or the match was removed."))
    if reason is Refusal.NOT_SEATED:
        return error("not_seated", text)
    if reason is Refusal.OVER:
        return error("game_over", text)
    if reason is Refusal.NOT_YOUR_TURN:
        return error("not_your_turn", text)
    if reason is Refusal.ILLEGAL:
        return error("illegal_move", text)
    # Another position (an older seq), or another move stored first under the lock.
    return error("stale", tr._(
        "The position changed meanwhile: the board now shows the newest one."))


def _position_refusal(tr: Tr, stored: StoredMatch, seat: int | None,
                      seq: int) -> JSONResponse | None:
    """Why a request about the position the page shows (a move, a hint) is refused before
    the turn is looked at: not seated, the match over, or the position gone (``seq``)."""
    if seat is None:
        return error("not_seated", tr._("You are not playing in this match."))
    if stored.row.status is not MatchStatus.ACTIVE:
        return error("game_over", tr._("This match is over."))
    if seq != stored.next_seq:
        return error("stale", tr._(
            "The position changed meanwhile: the board now shows the newest one."))
    return None


async def _json_body(request: Request) -> object:
    """The request's JSON body, or ``None`` if it has none that reads."""
    try:
        return json.loads(await request.body())
    except (ValueError, UnicodeDecodeError):
        return None
