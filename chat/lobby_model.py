"""A lobby's stored state and the ``/new`` words that set it: the seats in joining order,
the table and its settings, the menus and invitation keys (:class:`LobbyState`, kept as JSON
by the store and changed only under the chat's lock), and :func:`apply_new_args`.

Plain data like :mod:`chat.model`, apart from it because a typed move never needs it: the
move's path reads :mod:`chat.model` (its parsers), a set-up reads this.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, field
from typing import Any

from chat.model import DEFAULT_LEVEL, LEVEL_CODES, LEVELS, InputError, ascii_number
from krendzu import DEAL_PRESETS, DealSizes, Settings, SettingsError, Table

# Lobby state ----------------------------------------------------------------------------


@dataclass(slots=True)
class LobbySeat:
    kind: str  # "human" or "computer"
    user_id: int | None = None
    level: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "user_id": self.user_id, "level": self.level}

    @classmethod
    def from_json(cls, data: Any) -> LobbySeat:
        if not isinstance(data, dict) or data.get("kind") not in ("human", "computer"):
            raise ValueError("bad seat")
        seat = cls(data["kind"], data.get("user_id"), data.get("level"))
        if seat.kind == "human" and not isinstance(seat.user_id, int):
            raise ValueError("bad human seat")
        if seat.kind == "computer" and seat.level not in LEVEL_CODES:
            raise ValueError("bad computer seat")
        return seat


@dataclass(slots=True)
class LobbyState:
    """What a lobby holds: table, settings, seats in joining order, invitations, language."""

    table: Table = Table.DUEL
    tours: int | None = None
    preset: str = "standard"
    deal: tuple[int, int] | None = None  # custom (attacker, defender) sizes
    exchange: int = 0
    seats: list[LobbySeat] = field(default_factory=list)
    invited: list[int] = field(default_factory=list)  # users sent to start the bot
    language: str = "en"
    private: bool = False
    level: str = DEFAULT_LEVEL  # the computer level of a private match
    title: str = ""  # the chat's title, for private panels
    timer: int | None = None  # seconds per turn (None: no timer)
    #: A rematch: the match it repeats, and the players whose seat waits for their press.
    rematch_of: int | None = None
    waiting: list[int] = field(default_factory=list)
    #: The secret half of the lobby's invitation link (``/start j<lobby>_<key>``): lobby ids
    #: are sequential, so the id alone would let anyone guess their way to a seat.
    invite_key: str = field(default_factory=lambda: new_invite_key())
    #: Which keyboard the lobby message shows: the main one (""), the computer levels to add
    #: ("add") or the settings sub-menu ("settings"). Stored, so every redraw (someone joins
    #: while the creator is choosing) keeps the view the creator opened.
    menu: str = ""

    def settings(self) -> Settings:
        """The match settings; :class:`SettingsError` if they cannot be played."""
        deal = DealSizes(*self.deal) if self.deal else None
        return Settings(
            table=self.table, tours=self.tours, exchange_limit=self.exchange, deal=deal,
            preset=self.preset,
        )

    @property
    def full(self) -> bool:
        return len(self.seats) >= self.table.players

    def seat_of(self, user_id: int) -> int | None:
        for i, seat in enumerate(self.seats):
            if seat.kind == "human" and seat.user_id == user_id:
                return i
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table.value, "tours": self.tours, "preset": self.preset,
            "deal": list(self.deal) if self.deal else None, "exchange": self.exchange,
            "seats": [s.to_json() for s in self.seats], "invited": self.invited,
            "language": self.language, "private": self.private, "level": self.level,
            "title": self.title, "timer": self.timer, "rematch_of": self.rematch_of,
            "waiting": self.waiting, "invite_key": self.invite_key, "menu": self.menu,
        }

    @classmethod
    def from_json(cls, data: Any) -> LobbyState:
        """Read stored state; ``ValueError`` for anything that is not a valid lobby."""
        if not isinstance(data, dict):
            raise ValueError("lobby state is not an object")
        deal = data.get("deal")
        state = cls(
            table=Table.parse(data.get("table", "duel")),
            tours=data.get("tours"),
            preset=str(data.get("preset", "standard")),
            deal=(int(deal[0]), int(deal[1])) if deal else None,
            exchange=int(data.get("exchange", 0)),
            seats=[LobbySeat.from_json(s) for s in data.get("seats", [])],
            invited=[int(u) for u in data.get("invited", [])],
            language=str(data.get("language", "en")),
            private=bool(data.get("private", False)),
            level=str(data.get("level", DEFAULT_LEVEL)),
            title=str(data.get("title", "")),
            timer=_timer_from(data),
            rematch_of=int(data["rematch_of"]) if data.get("rematch_of") is not None else None,
            waiting=[int(u) for u in data.get("waiting", [])],
        )
        key = data.get("invite_key")
        if isinstance(key, str) and INVITE_KEY.fullmatch(key):
            state.invite_key = key
        if state.level not in LEVEL_CODES:
            raise ValueError("bad level")
        menu = data.get("menu", "")
        state.menu = menu if menu in LOBBY_MENUS else ""
        return state


#: The lobby's keyboards (:attr:`LobbyState.menu`): main, the levels to add, the settings.
LOBBY_MENUS: tuple[str, ...] = ("", "add", "settings")
INVITE_KEY = re.compile(r"[A-Za-z0-9_-]{16,43}")


def new_invite_key() -> str:
    """128 random bits, URL-safe (22 characters)."""
    return secrets.token_urlsafe(16)


def _timer_from(data: dict[str, Any]) -> int | None:
    if "timer" not in data:  # a lobby from before timers: the default of its chat type
        return None if data.get("private") else DEFAULT_GROUP_TIMER
    timer = data["timer"]
    return None if timer is None else max(TIMER_MIN, min(TIMER_MAX, int(timer)))


# Command arguments ----------------------------------------------------------------------

_KEY_VALUE = re.compile(r"^([a-z]+)=(\S+)$")
#: Turn timer: the default in groups (a private duel has none), bounds, and the ↻ steps.
DEFAULT_GROUP_TIMER = 90
TIMER_MIN, TIMER_MAX = 15, 3600
TIMER_STEPS: tuple[int | None, ...] = (None, 30, 60, 90, 180, 300)
_DEAL = re.compile(r"^([0-9]{1,2})/([0-9]{1,2})$")


def apply_new_args(state: LobbyState, args: list[str], *, private: bool) -> LobbyState:
    """``/new [TABLE] [tours=N] [deal=A/D|deal=PRESET] [exchange=K] [level=L]`` → state."""
    for raw in args:
        word = raw.strip().lower()
        if not word:
            continue
        if word in {t.value for t in Table}:
            state.table = Table(word)
            state.preset, state.deal, state.tours = "standard", None, None
            continue
        m = _KEY_VALUE.match(word)
        if not m:
            raise InputError(
                "I did not understand “{word}”. Try: /new duel tours=2 deal=12/14 exchange=2",
                word=raw[:30],
            )
        key, value = m.groups()
        if key == "tours":
            state.tours = _int(value, key)
        elif key == "exchange":
            state.exchange = _int(value, key)
        elif key == "timer":
            if value in ("off", "0", "no", "нет"):
                state.timer = None
            else:
                seconds = _int(value.removesuffix("s"), key)
                if not TIMER_MIN <= seconds <= TIMER_MAX:
                    raise InputError("A turn timer is {low} to {high} seconds, or off.",
                                     low=TIMER_MIN, high=TIMER_MAX)
                state.timer = seconds
        elif key == "deal":
            if dm := _DEAL.match(value):
                state.deal, state.preset = (int(dm.group(1)), int(dm.group(2))), "custom"
            elif value in DEAL_PRESETS[state.table]:
                state.preset, state.deal = value, None
            else:
                names = ", ".join(DEAL_PRESETS[state.table])
                raise InputError(
                    "Unknown deal “{value}”: write cards per attacker/defender like 12/14, "
                    "or a preset: {names}.", value=value[:20], names=names,
                )
        elif key == "level" and private:
            if value not in LEVELS:
                raise InputError("Unknown level “{value}”: use easy, normal or hard.",
                                 value=value[:20])
            state.level = value
        else:
            raise InputError("Unknown setting “{key}”.", key=key[:20])
    try:
        state.settings()
    except SettingsError as exc:
        raise InputError("These settings cannot be played: tours are an even number (a multiple "
                         "of 6 for three players, at most 60) and the deal must fit the 36 "
                         "cards.") from exc
    return state


def _int(value: str, key: str) -> int:
    if not ascii_number(value) or len(value) > 3:
        raise InputError("“{key}” needs a whole number.", key=key)
    return int(value)
