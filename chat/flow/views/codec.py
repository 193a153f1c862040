"""Button data and invitation links: built and read back by this one module.

Telegram hands a pressed button's data back as untrusted text (it can be forged), so every
format written here is also parsed here, and nowhere else:

- ``v1:l:<lobby>:<op>`` for a lobby button (:func:`lobby_data`; its ops are listed above
  :func:`menu_op`);
- ``v1:m:<match>:<seq>:<op>`` for a match button (:func:`match_data`), where ``seq`` is the
  number the next move gets: a press from an older panel no longer matches and is refused;
- the private panel's ops (:func:`card_op` … :func:`decode_op`);
- the invitation link's ``start`` payload ``j<lobby>_<key>`` (:func:`join_link`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chat.model import MAX_CALLBACK_BYTES, InputError
from krendzu import Action, Announce, Card, Discard, EndTurn, Pass, Place

_LOBBY_DATA = re.compile(r"^v1:l:([0-9]{1,12}):([a-z0-9:=/_@-]{1,40})$")  # add:@engine
_MATCH_DATA = re.compile(r"^v1:m:([0-9]{1,12}):([0-9]{1,6}):([A-Za-z0-9@,:=/_-]{1,40})$")


@dataclass(frozen=True, slots=True)
class LobbyPress:
    lobby_id: int
    op: str


@dataclass(frozen=True, slots=True)
class MatchPress:
    match_id: int
    seq: int
    op: str


def lobby_data(lobby_id: int, op: str) -> str:
    return _checked(f"v1:l:{lobby_id}:{op}")


def match_data(match_id: int, seq: int, op: str) -> str:
    return _checked(f"v1:m:{match_id}:{seq}:{op}")


def _checked(data: str) -> str:
    if len(data.encode()) > MAX_CALLBACK_BYTES:
        raise ValueError(f"button data over {MAX_CALLBACK_BYTES} bytes: {data!r}")
    return data


def parse_press(data: str | None) -> LobbyPress | MatchPress:
    """Untrusted button data → a press; :class:`InputError` for anything malformed."""
    if not data or len(data) > MAX_CALLBACK_BYTES:
        raise InputError("This button is not valid any more.")
    if m := _LOBBY_DATA.match(data):
        return LobbyPress(int(m.group(1)), m.group(2))
    if m := _MATCH_DATA.match(data):
        return MatchPress(int(m.group(1)), int(m.group(2)), m.group(3))
    raise InputError("This button is not valid any more.")


# The lobby's ops ---------------------------------------------------------------------------
#
# ``join``, ``leave``, ``add:<level>``, ``go``, ``cancel``, ``level:<level>`` (a private
# table's computers); ``menu:add`` / ``menu:settings`` / ``menu:main`` switch the keyboard
# (the computer levels, the settings sub-menu, back); ``set:<option>:<value>`` chooses a
# setting, ``set:<option>`` is the row's name (pressing it only explains). Older lobby
# messages still in chats carry ``add`` and the ↻ ops ``table``, ``tours``, ``deal``,
# ``exchange``, ``timer``: still accepted.

MENU_MAIN = "main"
MENU_ADD = "add"
MENU_SETTINGS = "settings"


def menu_op(menu: str) -> str:
    return f"menu:{menu}"


def setting_op(option: str, value: str = "") -> str:
    return f"set:{option}:{value}" if value else f"set:{option}"


def menu_of(op: str) -> str | None:
    """``menu:<menu>`` → the menu ("main", "add", "settings"); ``None`` for other ops."""
    kind, _, menu = op.partition(":")
    return menu if kind == "menu" and menu in (MENU_MAIN, MENU_ADD, MENU_SETTINGS) else None


def setting_of(op: str) -> tuple[str, str] | None:
    """``set:<option>[:<value>]`` → (option, value or ""); ``None`` for other ops. Whether
    the value is offered is the lobby's to check."""
    kind, _, rest = op.partition(":")
    if kind != "set" or not rest:
        return None
    option, _, value = rest.partition(":")
    return option, value


# The private panel's ops -----------------------------------------------------------------
#
# Steps: ``p<card>@x,y`` place, ``pass``, ``end``, ``a<n>`` exchange n cards, ``x<card>``
# exchange this card. A defender's first card of a turn: ``p<card>@x,y:end`` places it and
# ends the turn (one card), ``p<card>@x,y:<second>`` places it and asks for the cell of the
# second card, picked beforehand (two cards). A hint's Play it: ``t<step>/<step>…``, the
# suggested turn's steps written as above. Navigation: ``c<card>`` a card chosen to place
# (``c<card>:<second>``: with the second card picked), ``k<card>:<x>[:<second>]`` its
# column, ``d<card>`` a card chosen to exchange, ``h`` back, ``hint``. Under a finished
# match's summary: ``rematch``. Ops of older panels (without the tails) read as before.

BACK_OP = "h"
HINT_OP = "hint"
PASS_OP = "pass"
END_OP = "end"
REMATCH_OP = "rematch"
#: The board post's "your move" in a group whose panels open there: the presser's panel,
#: an ephemeral message of the group (issue 42).
OPEN_OP = "open"
#: Under a finished pool match's summary: never be paired with the other players again.
BLOCK_OP = "block"
#: The longest op :data:`_MATCH_DATA` reads.
MAX_OP = 40


def card_op(card: Card, second: Card | None = None) -> str:
    return f"c{card.code()}" + (f":{second.code()}" if second else "")


def column_op(card: Card, x: int, second: Card | None = None) -> str:
    return f"k{card.code()}:{x}" + (f":{second.code()}" if second else "")


def place_op(card: Card, x: int, y: int, *, end: bool = False,
             then: Card | None = None) -> str:
    """Place ``card``; ``end``: and end the turn; ``then``: and ask for that card's cell."""
    tail = f":{END_OP}" if end else f":{then.code()}" if then else ""
    return f"p{card.code()}@{x},{y}{tail}"


def play_op(actions: Sequence[Action]) -> str | None:
    """A suggested turn as one op (the hint's Play it); ``None`` when it does not fit in
    button data (a long exchange)."""
    parts = [_op_of(a) for a in actions]
    if not parts or None in parts:
        return None
    op = "t" + "/".join(p for p in parts if p)
    return op if len(op) <= MAX_OP else None


def is_hint_play(op: str) -> bool:
    """The op of a hint's Play it: its message is the hint, not the player's panel."""
    return op.startswith("t")


def _op_of(action: Action) -> str | None:
    if isinstance(action, Place):
        return place_op(action.card, action.x, action.y)
    if isinstance(action, Pass):
        return PASS_OP
    if isinstance(action, EndTurn):
        return END_OP
    if isinstance(action, Announce):
        return announce_op(action.count)
    if isinstance(action, Discard):
        return discard_op(action.card)
    return None


def choose_discard_op(card: Card) -> str:
    return f"d{card.code()}"


def discard_op(card: Card) -> str:
    return f"x{card.code()}"


def announce_op(count: int) -> str:
    return f"a{count}"


@dataclass(frozen=True, slots=True)
class Step:
    """Game steps, played like a typed move: ``action``, then ``more`` (the ``EndTurn`` of
    a defender's one-card turn, or the rest of a hint's turn). ``then``: the card whose cell
    the panel asks for next (a defender's second card, picked before the first one's cell);
    ``suggested``: the hint's Play it, pressed under the hint rather than on the panel."""

    action: Action
    more: tuple[Action, ...] = ()
    then: Card | None = None
    suggested: bool = False

    @property
    def actions(self) -> list[Action]:
        return [self.action, *self.more]


@dataclass(frozen=True, slots=True)
class Show:
    """Redraw the panel: a card chosen (to place, or to exchange: ``stage`` "discard"), its
    column, or back to the hand (all ``None``); ``second``: a defender's second card,
    picked before the first one's cell."""

    card: Card | None = None
    stage: str = ""
    column: int | None = None
    second: Card | None = None


@dataclass(frozen=True, slots=True)
class AskHint:
    pass


@dataclass(frozen=True, slots=True)
class Rematch:
    pass


@dataclass(frozen=True, slots=True)
class OpenPanel:
    """Open the presser's panel in the group (the board post's button, issue 42)."""


@dataclass(frozen=True, slots=True)
class Invalid:
    """Not an op this module writes (forged, or from an older version)."""


@dataclass(frozen=True, slots=True)
class Block:
    """🚫 Block under a pool match's summary (issue 40)."""


PanelOp = Step | Show | AskHint | Rematch | OpenPanel | Block | Invalid


def decode_op(op: str) -> PanelOp:
    """A panel op (untrusted) → what it asks for. Whether the card is in the hand, the
    panel is the newest and it is the presser's turn is the flow's to check."""
    if op == REMATCH_OP:
        return Rematch()
    if op == OPEN_OP:
        return OpenPanel()
    if op == BLOCK_OP:
        return Block()
    step = _step_of(op)
    if step is not None:
        return Step(step)
    try:
        if op.startswith("p") and ":" in op:
            body, _, tail = op.partition(":")
            place = _step_of(body)
            if not isinstance(place, Place):
                return Invalid()
            if tail == END_OP:
                return Step(place, (EndTurn(),))
            return Step(place, then=Card.parse(tail))
        if op.startswith("t"):
            steps = [_step_of(part) for part in op[1:].split("/")]
            if not steps or None in steps:
                return Invalid()
            first, *then = (s for s in steps if s is not None)
            return Step(first, tuple(then), suggested=True)
        if op[0] in "cdk":
            card_text, *rest = op[1:].split(":")
            card = Card.parse(card_text)
            column = int(rest.pop(0)) if op[0] == "k" else None
            if len(rest) > (0 if op[0] == "d" else 1):
                return Invalid()
            second = Card.parse(rest[0]) if rest else None
            return Show(card, "discard" if op[0] == "d" else "", column, second)
        if op == HINT_OP:
            return AskHint()
        if op == BACK_OP:
            return Show()
    except (ValueError, IndexError):
        pass
    return Invalid()


def _step_of(op: str) -> Action | None:
    """Panel ops that are game steps: p<card>@x,y, pass, end, a<n>, x<card>."""
    try:
        if op.startswith("p") and op != PASS_OP:
            card, _, cell = op[1:].partition("@")
            x, _, y = cell.partition(",")
            return Place(Card.parse(card), int(x), int(y))
        if op == PASS_OP:
            return Pass()
        if op == END_OP:
            return EndTurn()
        if op.startswith("a") and op[1:].isdigit():
            return Announce(int(op[1:]))
        if op.startswith("x"):
            return Discard(Card.parse(op[1:]))
    except ValueError:
        return None
    return None


# "Play now" (issue 40) -------------------------------------------------------------------
#
# The pool's buttons ride on the greeting's lobby id 0 (no lobby has it): ``pool`` joins
# the queue (or leaves it, as ``/playnow`` again does), ``pool:leave`` leaves it,
# ``pool:c:<level>`` accepts the computer offered, ``pool:w:<match>`` turns a pool match's
# watch link off.

POOL_LOBBY = 0


def pool_data(op: str = "") -> str:
    """A pool button's data: ``op`` empty (join), ``leave``, ``c:<level>``."""
    return lobby_data(POOL_LOBBY, f"pool:{op}" if op else "pool")


def watch_off_data(match_id: int) -> str:
    """🙈 under a pool match's start message: close the match to spectators (issue 40)."""
    return pool_data(f"w:{match_id}")


def pool_op(press: LobbyPress) -> str | None:
    """The pool op of a press (``""``: join), or ``None`` when it is not a pool button."""
    if press.lobby_id != POOL_LOBBY or not (press.op == "pool" or press.op.startswith("pool:")):
        return None
    return press.op[5:]


# Arenas and leagues (issue 40): their posts' buttons ride on lobby id 0 too,
# ``arena:<op>:<id>``, ``op`` being ``join``, ``pause`` or ``go`` (start now).

def arena_data(arena_id: int, op: str) -> str:
    return lobby_data(POOL_LOBBY, f"arena:{op}:{arena_id}")


def arena_op(press: LobbyPress) -> tuple[str, int] | None:
    """(op, arena id) of an arena button, or ``None`` when it is not one (or is malformed)."""
    if press.lobby_id != POOL_LOBBY or not press.op.startswith("arena:"):
        return None
    _, op, number = [*press.op.split(":"), "", ""][:3]
    if op not in ("join", "pause", "go") or not number.isdigit() or len(number) > 15:
        return None
    return op, int(number)


# Invitation links -------------------------------------------------------------------------

#: ``j<lobby id>_<invite key>``: at most 64 characters of ``A-Za-z0-9_-`` (Telegram's rule
#: for a ``start`` payload).
JOIN_PAYLOAD = re.compile(r"j([0-9]{1,15})_([A-Za-z0-9_-]{16,43})")


def join_link(bot_username: str, lobby_id: int, invite_key: str) -> str:
    """The invitation link: the lobby id plus its secret key (never the id alone)."""
    return f"https://t.me/{bot_username}?start=j{lobby_id}_{invite_key}"


TURN_PAYLOAD = re.compile(r"t([0-9]{1,15})")

#: The ``start`` payload of the link a group line gives someone the bot cannot write to
#: privately: ``/start`` takes it as a plain Start (the welcome; a player's hands and panels
#: come by themselves), and it names no group, match or person.
HELLO_PAYLOAD = "hello"


def hello_link(bot_username: str) -> str:
    """The bot's private chat, opened with Start, from a group line (as the invitation link
    is for a lobby's Join)."""
    return f"https://t.me/{bot_username}?start={HELLO_PAYLOAD}"


def open_panel_data(match_id: int, seq: int) -> str:
    """The board post's "your move" button where panels open in the group."""
    return match_data(match_id, seq, OPEN_OP)


def is_open_panel(op: str) -> bool:
    return op == OPEN_OP


def turn_link(bot_username: str, match_id: int) -> str:
    """The board post's "your move" link: ``/start t<match>`` brings the player's panel to
    the bottom of the private chat (a stranger who opens it learns nothing)."""
    return f"https://t.me/{bot_username}?start=t{match_id}"


def parse_turn_payload(payload: str) -> int | None:
    """``t<match>`` → the match id; ``None`` for anything else."""
    found = TURN_PAYLOAD.fullmatch(payload)
    return int(found.group(1)) if found else None


def parse_join_payload(payload: str) -> tuple[int, str] | None:
    """``j<lobby>_<key>`` → (lobby id, key); ``None`` for anything else."""
    found = JOIN_PAYLOAD.fullmatch(payload)
    return (int(found.group(1)), found.group(2)) if found else None
