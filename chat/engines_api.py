"""The engine protocol (issue 31), version 1: HTTP routes through which outside programs
play at Krendzu tables. Described for engine authors in ``docs/engines.md``.

Every request carries ``Authorization: Bearer <token>`` (the token ``/engine new`` showed);
answers are JSON, streams newline-delimited JSON with a blank keep-alive line at least every
:data:`KEEPALIVE` seconds:

- ``GET  /api/engine/v1/stream``: ``gameStart`` when the engine's match starts (and, on
  connecting, for each match it is playing), ``gameFinish`` when one ends (and, on
  connecting, for each that ended within :data:`FINISHED_WINDOW`: it may have ended while
  the engine was away).
- ``GET  /api/engine/v1/game/{id}/stream``: ``gameFull`` first, then ``gameState`` after every
  change: exactly what the engine's seat may see (:func:`observation_json`).
- ``POST /api/engine/v1/game/{id}/move``: ``{"move": "QC M12", "seq": N}``; the same words as
  ``/play`` (``pass``, ``end``, ``exchange 2``, ``discard QC 7H`` too). ``seq`` is the
  ``seq`` of the state the move answers: a move for another position is refused (``stale``),
  never applied to a newer one.
- ``POST /api/engine/v1/game/{id}/resign``.

Errors are ``{"code": ..., "message": ...}`` with a stable code (:data:`CODES`) and the
message a person would read. A token sees only its own engine's games: any other id is
``unknown_game`` (404), as is one that does not exist. Every request counts against the
token's bucket (``aiolimiter``, as :mod:`chat.throttle`): beyond it, ``rate_limited`` (429).

A move goes through :meth:`chat.flow.Flow.play` once, with the engine as the actor, exactly
as a person's ``/play``: the same checks (its words are read under the lock, after the turn's
checks), the same lock, group posts and panels in step; the answer is the flow's verdict in
the protocol's codes (:meth:`EngineApi._refused`). Streams
learn of changes through :mod:`chat.flow.signals`: set in this process by every stored
change, and by other processes' changes through the store (PostgreSQL's ``NOTIFY``,
:meth:`storage.Store.listen`); each stream also re-reads its match every second, which is
all SQLite's mode has across processes.

A stream checks its token before every line: ``/engine token`` and ``/engine delete`` wake
every stream (:meth:`chat.flow.signals.Signals.wake_all`, in other processes by ``NOTIFY
krendzu_engine``), and those of the old token close at once, sending nothing more.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from functools import partial
from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import BaseRoute, Mount, Route

from chat.engine_state import observation_json, parse_move
from chat.flow import Actor, Door, Flow
from chat.model import ascii_number
from chat.notices import Notice
from chat.outcomes import Accepted, Refusal, Refused
from chat.throttle import Buckets
from storage import EngineRow, MatchRow, MatchStatus, NotFound, Store, StoredMatch

log = logging.getLogger(__name__)

VERSION = 1
PREFIX = f"/api/engine/v{VERSION}"
#: A blank line at least this often on every stream (the protocol promises ≤ 10 s).
KEEPALIVE = 5.0
#: How long a stream waits for a signal before it reads the match again anyway.
RECHECK = 1.0
#: On connecting, the event stream tells a ``gameFinish`` for each of the engine's matches
#: that ended this many seconds ago or less (one that ended while it was away), at most
#: :data:`RECENT_FINISHES` of them.
FINISHED_WINDOW = 3600.0
RECENT_FINISHES = 20
#: Requests per minute per token (bursts up to that many).
REQUESTS_PER_MINUTE = 600.0
#: Illegal moves an engine may send in one turn: at this many the stand-in moves for it at
#: once (as at a timeout) instead of letting the table wait for the timer.
ILLEGAL_LIMIT = 3
#: The stable error codes and their HTTP status.
CODES: dict[str, int] = {
    "bad_token": 401, "unknown_game": 404, "not_your_turn": 409, "stale": 409,
    "illegal_move": 422, "malformed": 400, "game_over": 409, "rate_limited": 429,
}


def error(code: str, message: str) -> JSONResponse:
    return JSONResponse({"code": code, "message": message}, status_code=CODES[code])


def bearer(request: Request) -> str:
    """The request's ``Authorization: Bearer`` token (empty when there is none)."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def finish_line(row: MatchRow, engine: EngineRow) -> dict[str, Any]:
    """The event stream's ``gameFinish`` of an ended match."""
    return {"type": "gameFinish", "game": {
        "id": row.match_id, "status": row.status.value, "seat": row.seat_of(engine.user_id),
        "totals": list(row.totals) if row.totals else None, "concededBy": row.conceded_by}}


class Announcer(Protocol):
    """Delivery as the API uses it: the notices of a move go out (to the chat, computers)."""

    def run(self, notices: list[Notice]) -> Any: ...


class ApiHost(Protocol):
    """What the API needs of a running bot: its flow, store and delivery (the bot's
    :class:`chat.handlers.Services`; the arena's own, :mod:`chat.arena`)."""

    @property
    def store(self) -> Store: ...

    @property
    def flow(self) -> Flow: ...

    @property
    def delivery(self) -> Announcer: ...


class EngineApi:
    """The routes' endpoints over the running bot's services."""

    def __init__(self, services: Callable[[], ApiHost], *,
                 per_minute: float = REQUESTS_PER_MINUTE) -> None:
        self._services = services
        self.buckets = Buckets(per_minute)
        #: Illegal moves so far by (match, seq) of the engine's turn. In this process only:
        #: with several workers an engine gets at most ILLEGAL_LIMIT per worker it reaches,
        #: and the turn timer still bounds the wait.
        self.illegal: dict[tuple[int, int], int] = {}
        #: Whether the store tells of other processes' changes (PostgreSQL's NOTIFY):
        #: ``None`` until the first stream asks.
        self.listening: bool | None = None
        self._listen_lock = asyncio.Lock()

    @property
    def svc(self) -> ApiHost:
        return self._services()

    def routes(self) -> list[BaseRoute]:
        return [Mount(PREFIX, routes=[
            Route("/stream", self.event_stream, methods=["GET"]),
            Route("/game/{game}/stream", self.game_stream, methods=["GET"]),
            Route("/game/{game}/move", self.move, methods=["POST"]),
            Route("/game/{game}/resign", self.resign, methods=["POST"]),
        ])]

    # Who is asking ------------------------------------------------------------------------

    async def _engine(self, request: Request) -> EngineRow | Response:
        engine = await self.svc.flow.engines.authenticate(bearer(request))
        if engine is None:
            return error("bad_token", "Unknown token: /engine token NAME makes a new one.")
        if not self.buckets.has_room(engine.engine_id):
            return error("rate_limited", "Too many requests: slow down.")
        await self.buckets.take(engine.engine_id)
        return engine

    async def _still_valid(self, token: str, engine: EngineRow) -> bool:
        """Whether the token a stream was opened with still names its engine: a stream
        checks before every line it sends, so ``/engine token`` and ``/engine delete``
        close it at once (they wake every stream, here and by NOTIFY in other processes),
        and within a re-read (:data:`RECHECK`) where the store cannot tell."""
        now = await self.svc.flow.engines.authenticate(token)
        return now is not None and now.engine_id == engine.engine_id

    async def _game(self, request: Request
                    ) -> tuple[EngineRow, StoredMatch, int] | Response:
        """The engine of the request's token, the game of its path and the engine's seat
        there (or the error answer: a game of others is as unknown as a missing one)."""
        engine = await self._engine(request)
        if isinstance(engine, Response):
            return engine
        raw = request.path_params.get("game", "")
        if not (isinstance(raw, str) and ascii_number(raw) and len(raw) <= 18):
            return error("unknown_game", "No such game.")
        try:
            stored = await self.svc.flow.load(int(raw))
        except NotFound:
            return error("unknown_game", "No such game.")
        seat = stored.row.seat_of(engine.user_id)
        if seat is None:  # another engine's or people's game: as if it did not exist
            return error("unknown_game", "No such game.")
        return engine, stored, seat

    def _actor(self, engine: EngineRow) -> Actor:
        return Actor(engine.user_id, engine.display_name, "en")

    async def _state(self, stored: StoredMatch, seat: int) -> dict[str, Any]:
        flow = self.svc.flow
        tr = flow.catalogs.get("en")
        names = await flow.seat_names(stored.row, tr)
        # The deadline of the seat to move (whoever it is); an ended match has none, though
        # its last turn's timer row may not be gone yet.
        left = (await flow.deadlines.seconds_left(stored)
                if stored.row.status is MatchStatus.ACTIVE and not stored.game.is_over
                else None)
        deadline = None if left is None else round(flow.deadlines.clock() + left, 1)
        return observation_json(stored, seat, names, deadline)

    # Streams ------------------------------------------------------------------------------

    async def listen(self) -> None:
        """Once: have the store wake this process's streams when another process stores a
        change (``LISTEN``/``NOTIFY`` on PostgreSQL). Without it (SQLite) a stream still
        re-reads its match every :data:`RECHECK` seconds."""
        if self.listening is not None:
            return
        async with self._listen_lock:
            if self.listening is None:
                signals = self.svc.flow.broadcast.signals
                self.listening = await self.svc.store.listen(signals.changed,
                                                             signals.wake_all)

    async def event_stream(self, request: Request) -> Response:
        engine = await self._engine(request)
        if isinstance(engine, Response):
            return engine
        await self.listen()
        return StreamingResponse(self._events(bearer(request), engine),
                                 media_type="application/x-ndjson")

    async def _recently_finished(self, engine: EngineRow) -> list[MatchRow]:
        """The engine's matches that ended within :data:`FINISHED_WINDOW`, oldest first:
        told on connecting, so an engine that was away when one ended still learns it."""
        since = self.svc.flow.deadlines.clock() - FINISHED_WINDOW
        rows = await self.svc.store.matches_of_user(engine.user_id, status=None,
                                                    limit=RECENT_FINISHES)
        return sorted((r for r in rows if r.status is not MatchStatus.ACTIVE
                       and r.finished_at is not None and r.finished_at.timestamp() >= since),
                      key=lambda r: r.match_id)

    async def _events(self, token: str, engine: EngineRow) -> AsyncIterator[str]:
        store = self.svc.store
        known: set[int] = set()
        ended = await self._recently_finished(engine)
        quiet = 0.0
        signals = self.svc.flow.broadcast.signals
        while True:
            revocations = signals.revocations
            if not await self._still_valid(token, engine):
                return  # revoked: the stream closes; reconnecting gets bad_token
            active = {r.match_id for r in await store.matches_of_user(engine.user_id)}
            for match_id in sorted(known - active):
                ended.append(await store.get_match(match_id))
            lines = [finish_line(row, engine) for row in ended]
            lines += [{"type": "gameStart", "game": {"id": m}} for m in sorted(active - known)]
            known, ended = active, []
            if lines:
                quiet = 0.0
                yield "".join(json.dumps(line) + "\n" for line in lines)
            elif quiet >= KEEPALIVE:
                quiet = 0.0
                yield "\n"
            quiet += RECHECK
            if signals.revocations == revocations:
                await signals.wait(None, RECHECK)

    async def game_stream(self, request: Request) -> Response:
        found = await self._game(request)
        if isinstance(found, Response):
            return found
        engine, stored, seat = found
        await self.listen()
        await self._come_back(stored, seat, engine)
        return StreamingResponse(self._states(stored.match_id, seat, bearer(request), engine),
                                 media_type="application/x-ndjson")

    async def _come_back(self, stored: StoredMatch, seat: int, engine: EngineRow) -> None:
        """An engine that connects to a game whose seat the computer kept (it timed out
        twice) takes it back, as a person's ``/back`` does."""
        flow = self.svc.flow
        if await flow.deadlines.computer_keeps(stored.match_id, seat):
            outcome = await flow.ticker.back(self._actor(engine), [stored])
            self.svc.delivery.run(outcome.notices)

    async def _states(self, match_id: int, seat: int, token: str, engine: EngineRow
                      ) -> AsyncIterator[str]:
        flow = self.svc.flow
        sent: tuple[int, str] | None = None
        quiet = 0.0
        kind = "gameFull"
        signals = flow.broadcast.signals
        while True:
            revocations = signals.revocations
            if not await self._still_valid(token, engine):
                return  # revoked: no state more (it shows the hand); reconnecting: bad_token
            flow.begin_request()  # a unit of work: rows read afresh
            stored = await flow.load(match_id)
            head = (len(stored.game.history), stored.row.status.value)
            if head != sent:
                sent = head
                quiet = 0.0
                state = await self._state(stored, seat)
                if (signals.revocations != revocations
                        and not await self._still_valid(token, engine)):
                    return  # revoked while the state was read: not even this one
                yield json.dumps({"type": kind, **state}) + "\n"
                kind = "gameState"
                if stored.row.status is not MatchStatus.ACTIVE:
                    return
            elif quiet >= KEEPALIVE:
                quiet = 0.0
                yield "\n"
            quiet += RECHECK
            if signals.revocations == revocations:
                await signals.wait(match_id, RECHECK)

    # Moves --------------------------------------------------------------------------------

    async def move(self, request: Request) -> Response:
        found = await self._game(request)
        if isinstance(found, Response):
            return found
        engine, stored, _seat = found
        try:
            body = json.loads(await request.body())
        except (ValueError, UnicodeDecodeError):
            body = None
        if (not isinstance(body, dict) or not isinstance(body.get("move"), str)
                or not isinstance(body.get("seq"), int) or isinstance(body.get("seq"), bool)):
            return error("malformed", 'Send {"move": "QC M12", "seq": N}.')
        seq: int = body["seq"]
        # The words are read under the lock, after the turn's checks; in English, whatever
        # the engine's row says (the protocol's words are English).
        actor = replace(self._actor(engine), reply_language="en")
        outcome = await self.svc.flow.play(stored.match_id, actor,
                                           partial(parse_move, text=body["move"]),
                                           expected_seq=seq, door=Door.ENGINE)
        verdict = outcome.verdict
        if isinstance(verdict, Accepted):
            self.svc.delivery.run(outcome.notices)
            return JSONResponse({"ok": True, "seq": verdict.next_seq})
        assert verdict is not None, "a move's outcome carries its verdict"
        return await self._refused(stored.match_id, seq, verdict)

    async def _refused(self, match_id: int, seq: int, verdict: Refused) -> Response:
        """The verdict of a refused move in the protocol's codes (:data:`CODES`)."""
        reason, text = verdict.reason, verdict.text or ""
        if reason is Refusal.ILLEGAL:
            return await self._illegal(match_id, seq, text)
        if reason in (Refusal.NOT_YOUR_TURN, Refusal.OVER):
            return error("game_over" if reason is Refusal.OVER else "not_your_turn", text)
        if reason in (Refusal.GONE, Refusal.NOT_SEATED):
            return error("unknown_game", "No such game.")
        if reason is Refusal.STALE:
            return error("stale", "This move answers an older position (seq "
                                  f"{seq}); the position now is seq {verdict.next_seq}.")
        return error("stale", text or "The position changed meanwhile.")  # overtaken

    async def _illegal(self, match_id: int, seq: int, reason: str) -> Response:
        """``illegal_move`` for the move ``seq``; the :data:`ILLEGAL_LIMIT`-th in one turn
        makes the stand-in move for the engine at once (the answer says so)."""
        key = (match_id, seq)
        if len(self.illegal) > 10_000:
            self.illegal.clear()  # old turns' counts; a live turn at worst starts again
        self.illegal[key] = count = self.illegal.get(key, 0) + 1
        if count < ILLEGAL_LIMIT:
            return error("illegal_move", reason)
        self.illegal.pop(key, None)
        self.svc.delivery.run(await self.svc.flow.ticker.timeout(match_id, seq, illegal=True))
        return error("illegal_move", f"{reason} After {ILLEGAL_LIMIT} illegal moves the "
                                     "computer moved for you.")

    async def resign(self, request: Request) -> Response:
        found = await self._game(request)
        if isinstance(found, Response):
            return found
        engine, stored, _seat = found
        if stored.row.status is not MatchStatus.ACTIVE:
            return error("game_over", self.svc.flow.catalogs.get("en")._("This match is over."))
        outcome = await self.svc.flow.resign(stored, self._actor(engine))
        self.svc.delivery.run(outcome.notices)
        return JSONResponse({"ok": True, "message": outcome.reply or "Resigned."})
