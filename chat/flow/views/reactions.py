"""The fixed emoji reactions between a "Play now" match's players (issue 40): strangers
exchange no free text, only moves and these few faces, and anyone may turn them off.

A reaction button is a match button (``v1:m:<match>:0:react:<n>``, :data:`REACTIONS`'s
``n``-th face), so that the flow checks the presser sits at that match before anything is
sent; the received line's 🔕 button is a pool button (``pool:reactions:off``), a setting of
the person, whatever the match."""

from __future__ import annotations

from chat.flow.views import codec
from chat.i18n import Tr
from chat.model import Button, Keyboard

#: The faces a player may send: few and friendly, so no message between strangers is more
#: than a nod.
REACTIONS = ("👍", "😮", "😅", "🤝")
REACT_OP = "react:"
#: The pool ops that turn a person's reactions off and on again.
OFF_OP, ON_OP = "reactions:off", "reactions:on"


def is_reaction(op: str) -> bool:
    """Whether a (possibly forged) panel op is a reaction's, whatever face it names."""
    return op.startswith(REACT_OP)


def reaction_of(op: str) -> int | None:
    """The face a (possibly forged) panel op sends, by its index; ``None`` when the op is no
    reaction, or names no face."""
    if not op.startswith(REACT_OP):
        return None
    index = op[len(REACT_OP):]
    return int(index) if index in {str(i) for i in range(len(REACTIONS))} else None


def reaction_row(match_id: int) -> list[Button]:
    """The row of reaction buttons under a pool match's start and summary messages."""
    return [Button(face, codec.match_data(match_id, 0, f"{REACT_OP}{i}"))
            for i, face in enumerate(REACTIONS)]


def reaction_line(tr: Tr, name: str, index: int) -> tuple[str, Keyboard]:
    """What another player receives: the sender's display name and the face, with the
    button that turns the reactions off."""
    return (f"{name}: {REACTIONS[index]}",
            [[Button(tr._("🔕 Turn reactions off"), codec.pool_data(OFF_OP))]])
