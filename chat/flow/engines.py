"""Outside engines (issue 31): ``/engine`` in the private chat, seating an engine with
``/add @NAME``, and who an engine's token is.

An engine plays under a user id of its own (:func:`storage.engine_user_id`, far below every
Telegram id): at a table it is an ordinary person's seat, so statistics, ratings, ``/top``,
turn timers and the stand-in for an absent player apply unchanged, and delivery never sends
it a Telegram message. Its token (192 random bits) is shown once; only its SHA-256 is
stored, so a leaked database names no working token.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from chat.flow.base import Actor
from chat.flow.people import People
from chat.i18n import Tr
from chat.lobby_model import LobbySeat, LobbyState
from chat.model import LEVEL_CODES
from storage import (
    ENGINE_USER_BASE,
    EngineExists,
    EngineRow,
    Store,
    Visibility,
    is_engine_user,
)

#: An engine's name: a letter, then letters, digits, ``_`` or ``-``; at most 32 in all.
ENGINE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,31}")
#: Concurrent matches an owner may allow one engine.
MAX_MATCHES_LIMIT = 50
#: Engines one person may register.
ENGINES_PER_OWNER = 10
#: The turn timer of a private match with an engine (a duel with people has none).
ENGINE_DUEL_TIMER = 30


def new_token() -> str:
    """192 random bits, URL-safe (32 characters)."""
    return secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    """What is stored of a token: its SHA-256, hex."""
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def engine_id_of(user_id: int) -> int | None:
    """The engine a seat's user id belongs to (``None`` for a person)."""
    return -user_id - ENGINE_USER_BASE if is_engine_user(user_id) else None


@dataclass(frozen=True, slots=True)
class EngineAnswer:
    """What ``/engine`` answers; ``secret`` marks text holding a token (private only)."""

    text: str
    secret: bool = False


class Engines:
    """``/engine new|list|token|delete|set`` and the checks of seating an engine."""

    def __init__(self, store: Store, people: People, *, api_url: str | None,
                 revoked: Callable[[int], None] | None = None) -> None:
        self.store = store
        self.people = people
        #: Where engines connect (``KRENDZU_PUBLIC_URL`` + ``/api/engine/v1``), or ``None``
        #: when the bot serves no engine protocol.
        self.api_url = api_url
        #: Told the engine id when its token stops working (a new token, a deletion): wakes
        #: this process's streams, which close when their token is gone (other processes
        #: learn it from the store: PostgreSQL's NOTIFY, or their own re-reading).
        self.revoked = revoked

    async def authenticate(self, token: str) -> EngineRow | None:
        """The engine this token is (``None`` for a wrong, rotated or deleted one)."""
        if not token or len(token) > 200:
            return None
        return await self.store.engine_by_token(token_hash(token))

    async def command(self, actor: Actor, args: list[str], *, private: bool) -> EngineAnswer:
        """One ``/engine`` command; tokens only ever in the private chat."""
        tr = await self.people.user_tr(actor.user_id)
        if not private:
            return EngineAnswer(tr._("Engines are managed in my private chat (a token must "
                                     "never be shown in a group): send /engine there."))
        if self.api_url is None:
            return EngineAnswer(tr._(
                "This bot does not serve the engine protocol: its operator has to set "
                "KRENDZU_PUBLIC_URL (the address engines connect to) and KRENDZU_WEB_LISTEN "
                "(where the bot's web server listens)."))
        words = [a.strip() for a in args if a.strip()]
        verb = words[0].lower() if words else ""
        if verb == "new" and len(words) == 2:
            return await self._new(actor, words[1], tr)
        if verb == "list" and len(words) == 1:
            return await self._list(actor, tr)
        if verb in ("token", "delete") and len(words) == 2:
            engine = await self._own(actor, words[1])
            if engine is None:
                return EngineAnswer(tr._("You have no engine called “{name}”: /engine list "
                                         "shows yours.", name=words[1][:32]))
            if verb == "delete":
                await self.store.delete_engine(engine.engine_id)
                self._revoked(engine.engine_id)
                return EngineAnswer(tr._("{name} is deleted: its token stops working. Its "
                                         "matches and statistics stay.", name=engine.name))
            token = new_token()
            await self.store.update_engine(engine.engine_id, token_hash=token_hash(token))
            self._revoked(engine.engine_id)
            return EngineAnswer(tr._("A new token for {name} (the old one stops working "
                                     "now). It is shown only this once:\n{token}",
                                     name=engine.name, token=token), secret=True)
        if verb == "set" and len(words) == 3:
            return await self._set(actor, words[1], words[2].lower(), tr)
        return EngineAnswer(self.usage(tr))

    def _revoked(self, engine_id: int) -> None:
        if self.revoked is not None:
            self.revoked(engine_id)

    def usage(self, tr: Tr) -> str:
        return tr._(
            "Engines are programs that play here through the engine protocol ({url}; see "
            "docs/engines.md).\n/engine new NAME: register one (its token is shown once)\n"
            "/engine list: yours\n/engine token NAME: a new token\n/engine delete NAME\n"
            "/engine set NAME open|owner|off: who may invite it\n/engine set NAME max=N: "
            "matches at once\nAt a table, /add @NAME seats it.", url=self.api_url or "—")

    async def _own(self, actor: Actor, name: str) -> EngineRow | None:
        engine = await self.store.engine_by_name(name[:40])
        return engine if engine is not None and engine.owner_id == actor.user_id else None

    async def _new(self, actor: Actor, name: str, tr: Tr) -> EngineAnswer:
        if not ENGINE_NAME.fullmatch(name) or name.lower() in LEVEL_CODES:
            return EngineAnswer(tr._("An engine's name is a letter followed by up to 31 "
                                     "letters, digits, “_” or “-”, and not a level's name."))
        if len(await self.store.engines_of(actor.user_id)) >= ENGINES_PER_OWNER:
            return EngineAnswer(tr._("You have {n} engines, as many as one person may.",
                                     n=ENGINES_PER_OWNER))
        token = new_token()
        try:
            engine = await self.store.create_engine(actor.user_id, name, token_hash(token))
        except EngineExists:
            mine = await self._own(actor, name)
            if mine is not None:  # typed twice, or the update run again after a worker died
                return EngineAnswer(tr._(
                    "🤖 {name} is yours already. Its token is shown only once: /engine token "
                    "{name} makes a new one (the old one stops working).", name=mine.name))
            return EngineAnswer(tr._("The name “{name}” is taken: choose another.", name=name))
        return EngineAnswer(tr._(
            "🤖 {name} is registered. Its token, shown only this once (keep it secret; "
            "/engine token {name} makes a new one):\n{token}\nIt connects to {url}. At a "
            "table, /add @{name} seats it.", name=engine.name, token=token,
            url=self.api_url or ""), secret=True)

    async def _list(self, actor: Actor, tr: Tr) -> EngineAnswer:
        engines = await self.store.engines_of(actor.user_id)
        if not engines:
            return EngineAnswer(tr._("You have no engines yet: /engine new NAME registers "
                                     "one."))
        lines = []
        for engine in engines:
            playing = await self.store.count_active_matches(user_id=engine.user_id)
            lines.append(tr._("🤖 {name}: invited by {who}, {playing} of {max} matches",
                              name=engine.name, who=self.visibility_text(tr, engine.visibility),
                              playing=playing, max=engine.max_matches))
        return EngineAnswer("\n".join(lines))

    @staticmethod
    def visibility_text(tr: Tr, visibility: Visibility) -> str:
        if visibility is Visibility.OPEN:
            return tr._("anyone")
        if visibility is Visibility.OWNER:
            return tr._("you only")
        return tr._("nobody")

    async def _set(self, actor: Actor, name: str, value: str, tr: Tr) -> EngineAnswer:
        engine = await self._own(actor, name)
        if engine is None:
            return EngineAnswer(tr._("You have no engine called “{name}”: /engine list "
                                     "shows yours.", name=name[:32]))
        if value in {v.value for v in Visibility}:
            engine = await self.store.update_engine(engine.engine_id,
                                                    visibility=Visibility(value))
        elif (value.startswith("max=") and value[4:].isascii() and value[4:].isdigit()
              and 1 <= int(value[4:]) <= MAX_MATCHES_LIMIT):
            engine = await self.store.update_engine(engine.engine_id,
                                                    max_matches=int(value[4:]))
        else:
            return EngineAnswer(tr._("Write /engine set NAME open, owner or off, or "
                                     "/engine set NAME max=N (1 to {high}).",
                                     high=MAX_MATCHES_LIMIT))
        return EngineAnswer(tr._("🤖 {name}: invited by {who}, at most {max} matches at once.",
                                 name=engine.name,
                                 who=self.visibility_text(tr, engine.visibility),
                                 max=engine.max_matches))

    async def seat(self, state: LobbyState, actor: Actor, name: str, tr: Tr) -> str | None:
        """Seat the engine called ``name`` in ``state`` (the caller stores it): ``None``
        when seated, else why not. Honours who may invite it and its matches at once; at a
        private table it takes a computer's seat, and the table gets a turn timer."""
        engine = await self.store.engine_by_name(name[:40]) if ENGINE_NAME.fullmatch(
            name) else None
        if engine is None:
            return tr._("No engine is called “{name}”.", name=name[:32])
        if engine.visibility is Visibility.OFF:
            return tr._("🤖 {name} accepts no invitations now.", name=engine.name)
        if engine.visibility is Visibility.OWNER and engine.owner_id != actor.user_id:
            return tr._("Only the owner of 🤖 {name} may invite it.", name=engine.name)
        if any(s.user_id == engine.user_id for s in state.seats):
            return tr._("🤖 {name} is seated already.", name=engine.name)
        playing = await self.store.count_active_matches(user_id=engine.user_id)
        if playing >= engine.max_matches:
            return tr.n_("🤖 {name} is playing {n} match, as many as its owner allows.",
                         "🤖 {name} is playing {n} matches, as many as its owner allows.",
                         playing, name=engine.name)
        if state.full:
            computers = [i for i, s in enumerate(state.seats) if s.kind == "computer"]
            if not state.private or not computers:
                return tr._("All seats are taken.")
            del state.seats[computers[-1]]
        state.seats.append(LobbySeat("human", engine.user_id))
        if state.private and state.timer is None:
            state.timer = ENGINE_DUEL_TIMER
        return None

    async def offered(self, owner_id: int) -> list[str]:
        """The names of a person's engines a lobby offers as buttons (not those closed)."""
        return [e.name for e in await self.store.engines_of(owner_id)
                if e.visibility is not Visibility.OFF]

    async def start_refusal(self, user_ids: list[int], tr: Tr) -> str | None:
        """Why a match cannot start for one of its engines (gone, closed to invitations
        meanwhile, or playing as many matches as allowed); ``None``: it may."""
        for user_id in user_ids:
            engine_id = engine_id_of(user_id)
            if engine_id is None:
                continue
            engine = await self.store.get_engine(engine_id)
            if engine is None or engine.visibility is Visibility.OFF:
                name = await self.people.name_of(user_id)
                return tr._("{name} accepts no invitations now: /cancel this set-up and "
                            "start another without it.", name=name)
            playing = await self.store.count_active_matches(user_id=user_id)
            if playing >= engine.max_matches:
                return tr.n_("🤖 {name} is playing {n} match, as many as its owner allows.",
                             "🤖 {name} is playing {n} matches, as many as its owner allows.",
                             playing, name=engine.name)
        return None
