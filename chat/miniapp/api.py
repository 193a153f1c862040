"""The Mini App (issue 29): its page and its API, Starlette routes on the bot's web server.

- ``GET /app`` (``?m=<token>``, or the ``startapp`` parameter Telegram hands the page): the
  page; ``GET /app/static/<file>``: its script and style, from this package (no CDN).
- ``GET  /api/app/v1/texts``: the page's words in the reader's language (chat/miniapp/texts.py).
- ``GET  /api/app/v1/match/<token>``: the match as the caller may see it
  (:func:`state_json`); ``?after=<seq>`` waits (at most :data:`WAIT` s) until the match is
  past that ``seq``: the page's long poll, so it follows other people's moves at once.
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
``observation(None)``. Errors are ``{"code": ..., "message": ...}``, the message from the
bot's catalog in the caller's language (their ``/lang``, else Telegram's ``language_code``).

A move goes through :meth:`chat.flow.Flow.play` as a panel press does (``from_panel``: the
player's private panel is edited into the record of the move, and stays in step): the same
lock, checks, stored sequence numbers and group post as buttons and commands.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from chat.describe import (
    next_text,
    role_text,
    score_text,
    together,
    tour_frame,
    tour_over_line,
    tour_text,
)
from chat.flow import Actor
from chat.flow.matches import check
from chat.flow.views.texts import steps_text
from chat.flow.views.webapp import AppLinks
from chat.i18n import Tr
from chat.miniapp.initdata import BadInitData, WebAppUser, verify
from chat.miniapp.texts import page_texts
from chat.results import resigned_seats
from chat.throttle import Buckets
from krendzu import Action, IllegalMove, Match, Place, Redeal, parse_action
from krendzu.coords import ORIGIN_COLUMN, ORIGIN_ROW, LabelFrame, frame_for
from krendzu.tour import ANNOUNCE, DISCARD, PLAY, TourView
from krendzu.viewjson import view_to_json
from render.board import board_layout
from storage import MatchStatus, NotFound, StoredMatch

if TYPE_CHECKING:
    from chat.handlers import Services

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

STATUS = {"unauthorized": 401, "unknown_match": 404, "not_seated": 403, "not_your_turn": 409,
          "stale": 409, "game_over": 409, "illegal_move": 422, "malformed": 400,
          "rate_limited": 429}


def error(code: str, message: str) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=STATUS[code],
                        headers={"Cache-Control": "no-store"})


def _static(name: str) -> str:
    return resources.files("chat.miniapp").joinpath("static", name).read_text("utf-8")


def prompt(tr: Tr, stored: StoredMatch, seat: int | None, names: tuple[str, ...]) -> str:
    """What the caller is asked to do now, in the bot's own words (as the private panel)."""
    game = stored.game
    view = game.observation(seat)
    tour = view.tour
    if stored.row.status is not MatchStatus.ACTIVE or view.match_over:
        return next_text(tr, game.observation(None), names)
    if seat is None:
        return (tr._("You are watching: the players' hands stay hidden.") + " "
                + next_text(tr, view, names))
    if tour.current_player != seat:
        return next_text(tr, view, names)
    if tour.phase == ANNOUNCE:
        return tr._("Exchange: how many cards will you swap for new ones?")
    if tour.phase == DISCARD:
        left = dict(tour.announcements)[seat] - tour.discards_done[seat]
        return tr.n_("Choose {n} more card to exchange.", "Choose {n} more cards to exchange.",
                     left)
    if tour.step_in_turn:
        return tr._("Place a second card, or end your turn.")
    if any(not isinstance(a, Place) for a in tour.legal):
        return tr._("Your move: choose a card (or pass).")
    return tr._("Your move: choose a card.")


def _cells(frame: LabelFrame, cards: tuple[tuple[Any, int, int], ...]) -> str:
    return " + ".join(f"{c.pretty()} {frame.label(x, y)}" for c, x, y in cards)


def scored_lines(tr: Tr, tour: TourView, move: int, names: tuple[str, ...]) -> list[str]:
    """Each line the tour's turn ``move`` scored, in words: who scores (the attacking
    side, also for a defender's own goal), +1, and which line (its cards and the labels of
    its two ends, as the board shows them)."""
    frame = frame_for(tour.placements)
    board = {(x, y): card for card, x, y in tour.placements}
    side = together(tr, [names[s] for s in tour.roles.attackers])
    lines = []
    for combo in tour.combos:
        if combo.move != move:
            continue
        cards = " ".join(board[cell].pretty() for cell in combo.cells)
        ends = f"{frame.label(*combo.cells[0])}–{frame.label(*combo.cells[-1])}"
        if combo.own_goal:
            lines.append(tr._("+1 for {side}: the line {cards} ({cells}), an own goal by "
                              "{name}.", side=side, cards=cards, cells=ends,
                              name=names[combo.player]))
        else:
            lines.append(tr._("+1 for {side}: the line {cards} ({cells}).", side=side,
                              cards=cards, cells=ends))
    return lines


def recent_lines(tr: Tr, game: Match, names: tuple[str, ...]) -> list[dict[str, Any]]:
    """What happened lately, in words (the board alone shows a scored line only as a
    stroke over the cards): the last round of the tour being played, one turn a player,
    each with the lines it scored, and a defender's first card of the turn in progress;
    while a new tour has no card yet, how the last one ended. Public: it names only cards
    on the board."""
    tour = game.tour.observation(None)
    out: list[dict[str, Any]] = []
    if not tour.turns and not tour.pending:
        if game.tour_index > 0:
            out.append({"text": tour_over_line(tr, game, game.tour_index - 1, names),
                        "scored": False})
        return out
    frame = frame_for(tour.placements)
    for index in range(max(0, len(tour.turns) - len(names)), len(tour.turns)):
        turn = tour.turns[index]
        text = (f"{names[turn.player]}: {_cells(frame, turn.cards)}" if turn.cards
                else tr._("{name}: pass", name=names[turn.player]))
        out.append({"text": text, "scored": False})
        out += [{"text": line, "scored": True}
                for line in scored_lines(tr, tour, index, names)]
    if tour.pending:
        out.append({"text": tr._("{name}: {cells} (may place a second card)",
                                 name=names[tour.current_player],
                                 cells=_cells(frame, tour.pending)), "scored": False})
        out += [{"text": line, "scored": True}
                for line in scored_lines(tr, tour, len(tour.turns), names)]
    if game.tour.is_over:  # the match's last tour, played to its end
        out.append({"text": tour_over_line(tr, game, game.tour_index, names),
                    "scored": False})
    return out


def state_json(stored: StoredMatch, seat: int | None, names: tuple[str, ...], tr: Tr, *,
               token: str, seconds_left: float | None,
               resigned: bool = False) -> dict[str, Any]:
    """The match as ``seat`` may see it (``None``: the public board), for the page.

    Built from ``game.observation(seat)`` only (``view``: :func:`krendzu.viewjson.view_to_json`,
    the engine protocol's form), plus what the page draws with the same model as the
    pictures (render/board.py's area and krendzu/coords.py's labels: M13 is the opening) and
    the lines the bot's messages say, in ``tr``'s language. ``resigned``: the caller resigned
    and the computer plays their seat (a trio in a group): no Hint or Resign any more."""
    game = stored.game
    view = game.observation(seat)
    tour = view.tour
    public = game.observation(None)
    # The labels are /play's (the tour's frame: every card and every cell a card may go to
    # has one); the area is the picture's, less any margin column or row that frame has no
    # label for (the picture would relabel the board to show it).
    frame = tour_frame(game)
    x0, y0, x1, y1 = board_layout(public, header=False, frame=frame).area
    x0 = max(x0, -(ORIGIN_COLUMN + frame.col_shift))
    y0 = max(y0, 1 - ORIGIN_ROW - frame.row_shift)
    over = stored.row.status is not MatchStatus.ACTIVE or view.match_over
    cells = {(x, y) for _, x, y in tour.placements}
    cells |= {(a.x, a.y) for a in tour.legal if isinstance(a, Place)}
    labels = {f"{x},{y}": frame.label(x, y) for x, y in cells}
    last = [[x, y] for _, x, y in (tour.turns[-1].cards if tour.turns else ())]
    mine = seat is not None and not over and tour.current_player == seat
    # A defender's first card of a turn that may take a second one (the panel's rule):
    # the page offers "play and end the turn" or "play, then a second card".
    pair = (mine and tour.phase == PLAY and tour.step_in_turn == 0 and bool(tour.placements)
            and len(tour.hand) >= 2 and seat not in tour.roles.attackers)
    return {
        "match": token,
        "status": stored.row.status.value,
        "over": over,
        "seat": seat,
        "players": list(names),
        # Each seat as the page lists it: name, role and cards in hand (counts are public).
        "seats": [{"name": name,
                   "role": tr._("attacks") if i in tour.roles.attackers else tr._("defends"),
                   "cards": tr.n_("{n} card", "{n} cards", tour.hand_sizes[i])}
                  for i, name in enumerate(names)],
        "language": tr.language,
        "seq": stored.next_seq,
        "moves": len(game.history),
        "secondsLeft": None if over or seconds_left is None else round(seconds_left),
        "myTurn": mine,
        "pair": pair,
        # The bot's /hint (on the player's own turn) and /resign (a player still seated).
        "canHint": mine and not resigned,
        "canResign": seat is not None and not over and not resigned,
        "columns": [[x, frame.column_label(x)] for x in range(x0, x1 + 1)],
        "rows": [[y, frame.row_label(y)] for y in range(y0, y1 + 1)],
        "labels": labels,
        "last": last,
        "lines": {
            "score": score_text(tr, public, names),
            "tour": tour_text(tr, public) + (" · " + role_text(tr, view, seat)
                                             if seat is not None and not over else ""),
            "prompt": prompt(tr, stored, seat, names),
        },
        "recent": recent_lines(tr, game, names),
        "view": view_to_json(view),
    }


def parse_actions(raw: object) -> list[Action] | None:
    """The steps a request names (at most a turn's worth), or ``None`` if they are not
    steps a person may make."""
    if not isinstance(raw, list) or not 1 <= len(raw) <= 8:
        return None
    steps: list[Action] = []
    for item in raw:
        if not isinstance(item, str) or len(item) > 40:
            return None
        try:
            step = parse_action(item)
        except (IllegalMove, ValueError):
            return None
        if isinstance(step, Redeal):  # the dealer's, never a player's
            return None
        steps.append(step)
    return steps


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
            tr = self.svc.flow.catalogs.pick(None, _unsigned_language(raw))
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
        return _Caller(user, tr, stored, stored.row.seat_of(user.user_id))

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
            stored = await self._wait(stored, int(after), request)
            seat = stored.row.seat_of(user.user_id)
        return JSONResponse(await self._state(stored, seat, tr, request.path_params["token"]),
                            headers={"Cache-Control": "no-store"})

    async def _wait(self, stored: StoredMatch, after: int, request: Request) -> StoredMatch:
        """``stored`` once it is past ``after`` (or over), or after :data:`WAIT` seconds, or
        as soon as the page is gone (closed, or reloaded)."""
        flow = self.svc.flow
        deadline = time.monotonic() + WAIT
        while (stored.next_seq <= after and stored.row.status is MatchStatus.ACTIVE
               and time.monotonic() < deadline and not await request.is_disconnected()):
            await flow.broadcast.signals.wait(stored.match_id,
                                              min(RECHECK, deadline - time.monotonic()))
            flow.begin_request()
            stored = await flow.load(stored.match_id)
        return stored

    async def move(self, request: Request) -> Response:
        found = await self._match(request)
        if isinstance(found, Response):
            return found
        user, tr, stored, seat = found.user, found.tr, found.stored, found.seat
        body = await _json_body(request)
        seq = body.get("seq") if isinstance(body, dict) else None
        steps = parse_actions(body.get("actions")) if isinstance(body, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool) or steps is None:
            return error("malformed", tr._(
                "This move could not be read: reload the page and try again."))
        flow = self.svc.flow
        if seat is None:
            return error("not_seated", tr._("You are not playing in this match."))
        if stored.row.status is not MatchStatus.ACTIVE:
            return error("game_over", tr._("This match is over."))
        if seq != stored.next_seq:
            return error("stale", tr._(
                "The position changed meanwhile: the board now shows the newest one."))
        if stored.game.current_player != seat:
            names = await flow.seat_names(stored.row, tr)
            return error("not_your_turn", tr._("It is not your turn. {next}", next=next_text(
                tr, stored.game.observation(None), names)))
        _, refused = check(tr, stored.game, steps)
        if refused:
            return error("illegal_move", refused)
        actor = Actor(user.user_id, user.name, user.language_code)
        outcome = await flow.play(stored.match_id, actor, steps, expected_seq=seq,
                                  from_panel=True)
        if not outcome.told:  # refused under the lock: another move came first
            return error("stale", tr._(
                "The position changed meanwhile: the board now shows the newest one."))
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
        if seat is None:
            return error("not_seated", tr._("You are not playing in this match."))
        if stored.row.status is not MatchStatus.ACTIVE:
            return error("game_over", tr._("This match is over."))
        if seq != stored.next_seq:
            return error("stale", tr._(
                "The position changed meanwhile: the board now shows the newest one."))
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


async def _json_body(request: Request) -> object:
    """The request's JSON body, or ``None`` if it has none that reads."""
    try:
        return json.loads(await request.body())
    except (ValueError, UnicodeDecodeError):
        return None


def _unsigned_language(raw: str | None) -> str | None:
    """The ``language_code`` an unverified ``initData`` claims: only to word the refusal."""
    try:
        user = json.loads(parse_qs(raw or "").get("user", [""])[0])
        code = user.get("language_code") if isinstance(user, dict) else None
    except ValueError:
        return None
    return code if isinstance(code, str) and len(code) < 16 else None
