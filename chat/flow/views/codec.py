"""Button data and invitation links: built and read back by this one module.

Telegram hands a pressed button's data back as untrusted text (it can be forged), so every
format written here is also parsed here, and nowhere else:

- ``v1:l:<lobby>:<op>`` for a lobby button (:func:`lobby_data`);
- ``v1:m:<match>:<seq>:<op>`` for a match button (:func:`match_data`), where ``seq`` is the
  number the next move gets: a press from an older panel no longer matches and is refused;
- the private panel's ops (:func:`card_op` … :func:`decode_op`);
- the invitation link's ``start`` payload ``j<lobby>_<key>`` (:func:`join_link`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chat.model import MAX_CALLBACK_BYTES, InputError
from krendzu import Action, Announce, Card, Discard, EndTurn, Pass, Place

_LOBBY_DATA = re.compile(r"^v1:l:([0-9]{1,12}):([a-z0-9:=/_-]{1,40})$")
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


# The private panel's ops -----------------------------------------------------------------
#
# Steps: ``p<card>@x,y`` place, ``pass``, ``end``, ``a<n>`` exchange n cards, ``x<card>``
# exchange this card. Navigation: ``c<card>`` a card chosen to place, ``k<card>:<x>`` its
# column, ``d<card>`` a card chosen to exchange, ``h`` back, ``hint``. Under a finished
# match's summary: ``rematch``.

BACK_OP = "h"
HINT_OP = "hint"
PASS_OP = "pass"
END_OP = "end"
REMATCH_OP = "rematch"


def card_op(card: Card) -> str:
    return f"c{card.code()}"


def column_op(card: Card, x: int) -> str:
    return f"k{card.code()}:{x}"


def place_op(card: Card, x: int, y: int) -> str:
    return f"p{card.code()}@{x},{y}"


def choose_discard_op(card: Card) -> str:
    return f"d{card.code()}"


def discard_op(card: Card) -> str:
    return f"x{card.code()}"


def announce_op(count: int) -> str:
    return f"a{count}"


@dataclass(frozen=True, slots=True)
class Step:
    """A game step: played like a typed move."""

    action: Action


@dataclass(frozen=True, slots=True)
class Show:
    """Redraw the panel: a card chosen (to place, or to exchange: ``stage`` "discard"), its
    column, or back to the hand (all ``None``)."""

    card: Card | None = None
    stage: str = ""
    column: int | None = None


@dataclass(frozen=True, slots=True)
class AskHint:
    pass


@dataclass(frozen=True, slots=True)
class Rematch:
    pass


@dataclass(frozen=True, slots=True)
class Invalid:
    """Not an op this module writes (forged, or from an older version)."""


PanelOp = Step | Show | AskHint | Rematch | Invalid


def decode_op(op: str) -> PanelOp:
    """A panel op (untrusted) → what it asks for. Whether the card is in the hand, the
    panel is the newest and it is the presser's turn is the flow's to check."""
    if op == REMATCH_OP:
        return Rematch()
    step = _step_of(op)
    if step is not None:
        return Step(step)
    try:
        if op[0] in "cdk":
            card = Card.parse(op[1:].split(":")[0])
            column = int(op.split(":")[1]) if op[0] == "k" else None
            return Show(card, "discard" if op[0] == "d" else "", column)
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


# Invitation links -------------------------------------------------------------------------

#: ``j<lobby id>_<invite key>``: at most 64 characters of ``A-Za-z0-9_-`` (Telegram's rule
#: for a ``start`` payload).
JOIN_PAYLOAD = re.compile(r"j([0-9]{1,15})_([A-Za-z0-9_-]{16,43})")


def join_link(bot_username: str, lobby_id: int, invite_key: str) -> str:
    """The invitation link: the lobby id plus its secret key (never the id alone)."""
    return f"https://t.me/{bot_username}?start=j{lobby_id}_{invite_key}"


def parse_join_payload(payload: str) -> tuple[int, str] | None:
    """``j<lobby>_<key>`` → (lobby id, key); ``None`` for anything else."""
    found = JOIN_PAYLOAD.fullmatch(payload)
    return (int(found.group(1)), found.group(2)) if found else None
