"""Plain data of the chat layer: lobby state, keyboards, command arguments, and a typed move
as the engine's steps, read on the labels of the tour's board (:func:`tour_frame`). (Button
data is written and read by :mod:`chat.flow.views.codec`.)

Nothing here imports ``telegram``: buttons are :class:`Button` rows that delivery turns into
inline keyboards, and every parser raises :class:`InputError` (a ``ValueError``) whose
``key`` and ``values`` name a translatable message.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from krendzu import (
    DEAL_PRESETS,
    Action,
    Card,
    DealSizes,
    EndTurn,
    IllegalMove,
    Match,
    Pass,
    Place,
    Settings,
    SettingsError,
    Table,
    parse_card,
)
from krendzu.board import cell_xy
from krendzu.coords import CoordinateError, LabelFrame, frame_for
from krendzu.tour import PLAY

#: Computer levels offered to players, weakest first, and their storage codes.
LEVELS: tuple[str, ...] = ("easy", "normal", "hard")
LEVEL_CODES: dict[str, int] = {"random": 0, "easy": 1, "normal": 2, "hard": 3}
LEVEL_NAMES: dict[int, str] = {code: name for name, code in LEVEL_CODES.items()}
DEFAULT_LEVEL = "normal"
#: Telegram: callback data is at most 64 bytes, a keyboard at most 100 buttons, 8 a row.
MAX_CALLBACK_BYTES = 64
MAX_BUTTONS = 100
MAX_ROW = 8
#: Longest message text we read; anything longer is refused before parsing.
MAX_INPUT = 300


class InputError(ValueError):
    """Bad input from a player; ``key`` is an English message to translate with ``values``."""

    def __init__(self, key: str, /, **values: Any) -> None:
        super().__init__(key.format(**values) if values else key)
        self.key = key
        self.values = values


# Keyboards ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Button:
    label: str
    data: str | None = None
    url: str | None = None
    #: A ``web_app`` button's page URL (the Mini App; Telegram allows it in private chats only).
    web_app: str | None = None


Keyboard = list[list[Button]]


def rows_of(buttons: list[Button], width: int) -> Keyboard:
    width = max(1, min(width, MAX_ROW))
    return [buttons[i : i + width] for i in range(0, len(buttons), width)]


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


def ascii_number(text: str) -> bool:
    """Whether ``text`` is a whole number written in ASCII digits. ``str.isdigit`` alone is
    also true for ``²`` (which ``int`` refuses with a ValueError) and ``٣`` (which ``int``
    reads as 3): every number a person types is checked with this instead."""
    return text.isascii() and text.isdigit()


def _int(value: str, key: str) -> int:
    if not ascii_number(value) or len(value) > 3:
        raise InputError("“{key}” needs a whole number.", key=key)
    return int(value)


@dataclass(frozen=True, slots=True)
class Placement:
    card: Card
    x: int
    y: int


def parse_placements(words: list[str], frame: LabelFrame) -> list[Placement]:
    """``QC M12 [9D L12]`` (also ``QC@M12``, ``Q♣ m 12``) → one or two placements."""
    tokens = _tokens(words)
    if not tokens:
        raise InputError("Write a card and a cell, e.g. /play QC M12.")
    out: list[Placement] = []
    i = 0
    while i < len(tokens):
        card_text = tokens[i]
        try:
            card = parse_card(card_text)
        except ValueError as exc:
            raise InputError("“{text}” is not a card. Cards look like QC, 10D, Q♣ or Дт.",
                             text=card_text[:12]) from exc
        cell_words = tokens[i + 1 : i + 3]
        if not cell_words:
            raise InputError("Where should {card} go? Add a cell, e.g. {card} M12.",
                             card=card.pretty())
        # A cell is one token (M12, 12M) or two (M 12).
        for used in (1, 2):
            text = " ".join(cell_words[:used])
            try:
                x, y = frame.parse(text)
            except CoordinateError:
                continue
            out.append(Placement(card, x, y))
            i += 1 + used
            break
        else:
            raise InputError("“{text}” is not a cell: a column letter and a row number, e.g. "
                             "M12.", text=cell_words[0][:12])
    if len(out) > 2:
        raise InputError("At most two cards in one turn.")
    return out


def _tokens(words: list[str]) -> list[str]:
    out: list[str] = []
    for word in words:
        out.extend(t for t in re.split(r"[\s@,;]+|(?:->|→)", word) if t)
    return out


def looks_like_move(text: str) -> bool:
    """Plain text in a private chat that is meant as a move (``QC M12``, ``pass``)."""
    words = text.strip().split()
    return 2 <= len(words) <= 6 and len(text) <= 60


#: Words that pass, or end a defender's turn after one card, typed alone in the private chat
#: (any case) or after ``/play``.
PASS_WORDS = frozenset({"pass", "пас", "/pass"})
END_WORDS = frozenset({"end", "конец", "готово", "хватит"})


def tour_frame(game: Match) -> LabelFrame:
    """The labels of the tour's board now. From the placed cells themselves: a move asks
    for it several times, and the public observation built for it each time copied the
    whole tour (a tenth of the announcement's CPU in ``benchmarks/bot.py``)."""
    return frame_for(cell_xy(cell) for _, cell in game.tour.placed)


def words_to_steps(game: Match, seat: int | None, words: Sequence[str]) -> list[Action]:
    """A typed move (``QC M12``, ``9D L12 QS M14``, ``pass``, ``end``) as the steps of
    ``seat``'s turn: a defender's one-card move also ends the turn. :class:`InputError` for
    words that are not a move."""
    lowered = [w.lower() for w in words]
    if lowered in (["pass"], ["пас"]):
        return [Pass()]
    if len(lowered) == 1 and lowered[0] in END_WORDS:
        return [EndTurn()]
    placements = parse_placements(list(words), tour_frame(game))
    defender = (seat is not None and game.current_player == seat
                and game.tour.phase == PLAY
                and seat not in game.tour.roles.attackers
                and bool(game.tour.placed) and game.tour.step_in_turn == 0)
    return placements_to_steps(placements, defender)


def placements_to_steps(placements: Sequence[Placement], defender_turn: bool) -> list[Action]:
    steps: list[Action] = [Place(p.card, p.x, p.y) for p in placements]
    if defender_turn and len(steps) == 1:
        steps.append(EndTurn())
    return steps


def without_needless_end(game: Match, steps: Sequence[Action]) -> list[Action]:
    """Drop an ``EndTurn`` that a one-card ``/play`` adds when the card already ended the turn
    (the defender's last card, or the tour's end)."""
    if not steps or not isinstance(steps[-1], EndTurn) or len(steps) < 2:
        return list(steps)
    trial = game.clone()
    seat = trial.current_player
    try:
        for step in steps[:-1]:
            trial.apply(step)
    except IllegalMove:
        return list(steps)  # the check that follows explains what is wrong
    if turn_is_over(trial, seat):
        return list(steps[:-1])
    return list(steps)


def turn_is_over(trial: Match, seat: int) -> bool:
    """After a defender's first card: whether that card already ended the seat's turn (its
    last card, or the tour's end), so an ``EndTurn`` added by a one-card ``/play`` is not
    needed."""
    return trial.is_over or trial.current_player != seat or trial.tour.step_in_turn != 1
