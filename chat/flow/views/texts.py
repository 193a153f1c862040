"""Fixed texts of a match: where it is played, a hand's title, a move as understood, and why
a move is refused. Pure functions of a translator and plain values."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from chat.i18n import Tr
from krendzu import (
    Action,
    Announce,
    CannotPass,
    Card,
    CardNotInHand,
    CellTaken,
    Discard,
    EndTurn,
    GameOver,
    IllegalMove,
    NotTouching,
    NotYourTurn,
    Pass,
    Place,
    WrongExchangeCount,
    WrongOpening,
    WrongPhase,
)
from storage import is_arena_chat, is_pool_chat

log = logging.getLogger(__name__)


def where(tr: Tr, chat_id: int, title: str | None, *, inline: bool = False) -> str:
    """Which match a private message is about: the first line of a hand, a panel or a
    summary, or (``inline``) words inside a sentence such as the turn timer's reminder.
    ``title``: the group's title as remembered (``None`` or empty: not known)."""
    if inline:
        if chat_id > 0:
            return tr._("your match against the computer")
        if is_pool_chat(chat_id):
            return tr._("in your Play now match")
        if is_arena_chat(chat_id):
            return tr._("in your tournament game")
        return tr._("in “{title}”", title=title or "?")
    if chat_id > 0:
        return tr._("🃏 Your match against the computer")
    if is_pool_chat(chat_id):
        return tr._("⚡ Your Play now match")
    if is_arena_chat(chat_id):
        return tr._("🏆 Your tournament game")
    if not title:
        return tr._("🃏 Match in a group")
    return tr._("🃏 Match in “{title}”", title=title)


def clock_time(seconds: int) -> str:
    """``95`` → ``1:35``."""
    seconds = max(0, seconds)
    return f"{seconds // 60}:{seconds % 60:02d}"


def clock_text(tr: Tr, seconds: int, *, panel: bool = False, reminder: bool = False) -> str:
    """The turn timer's line: the board post's (``⏱ 1:30 to move``), or the panel's, which
    also says what happens at zero. The board's line is the caption's last, starting with
    ``⏱``, so that the reminder can refresh it (:class:`chat.notices.BoardClock`)."""
    time = clock_time(seconds)
    if reminder:
        return tr._("⏰ {time} left for your move: then the computer moves for you.", time=time)
    if panel:
        return tr._("⏱ {time} for your move: then the computer moves for you.", time=time)
    return tr._("⏱ {time} to move", time=time)


def hand_title(tr: Tr, hand: Sequence[Card]) -> str:
    if not hand:
        return tr._("No cards left")
    return tr.n_("Your hand · {n} card", "Your hand · {n} cards", len(hand))


def echo(tr: Tr, actions: Sequence[Action], frame: object) -> str:
    """The answer to an accepted move: the steps as understood."""
    return "✓ " + (steps_text(tr, actions, frame) or "")


def steps_text(tr: Tr, actions: Sequence[Action], frame: object) -> str:
    parts = []
    for a in actions:
        if isinstance(a, Place):
            parts.append(f"{a.card.pretty()} → {frame.label(a.x, a.y)}")  # type: ignore[attr-defined]
        elif isinstance(a, Pass):
            parts.append(tr._("pass"))
        elif isinstance(a, Announce):
            parts.append(tr.n_("exchange {n} card", "exchange {n} cards", a.count))
        elif isinstance(a, Discard):
            parts.append(tr._("exchange {card}", card=a.card.pretty()))
        elif isinstance(a, EndTurn) and not parts:
            parts.append(tr._("end the turn"))
    return ", ".join(parts)


def illegal(tr: Tr, step: Action, frame: object, exc: IllegalMove) -> str:
    """The reply to a refused step, chosen by the engine's reason (:mod:`krendzu.illegal`);
    the step only picks the wording (a card placed or discarded, a pass, an exchange)."""
    if isinstance(exc, NotYourTurn | GameOver) and isinstance(step, Place):
        # The turn ended with an earlier card of the same command (an attacker's one card,
        # the opening card, a last card).
        return tr._("Your turn ends before {card}: play it in a turn of its own.",
                    card=step.card.pretty())
    if isinstance(exc, CardNotInHand):
        if isinstance(step, Discard):
            return tr._("You cannot exchange {card} now.", card=exc.card.pretty())
        return tr._("You do not hold {card}.", card=exc.card.pretty())
    if isinstance(exc, CellTaken | NotTouching):
        x, y = exc.cell
        label = frame.label(x, y) if frame.fits(x, y) else "?"  # type: ignore[attr-defined]
        if isinstance(exc, CellTaken):
            return tr._("{cell} is taken. Choose a free cell next to a card.", cell=label)
        return tr._("{card} cannot go to {cell}: a card must touch another card edge to edge.",
                    card=step.card.pretty() if isinstance(step, Place) else "?", cell=label)
    if isinstance(exc, WrongOpening):
        return tr._("The first card goes to M13.")
    if isinstance(exc, CannotPass) or (isinstance(exc, WrongPhase) and isinstance(step, Pass)):
        return tr._("You cannot pass now.")
    if isinstance(exc, WrongExchangeCount) or (isinstance(exc, WrongPhase)
                                               and isinstance(step, Announce)):
        return tr._("You cannot exchange that many cards now.")
    if isinstance(exc, WrongPhase) and isinstance(step, Discard):
        return tr._("You cannot exchange {card} now.", card=step.card.pretty())
    if isinstance(exc, WrongPhase) and isinstance(step, Place):
        return tr._("Cards are placed after the exchange.")
    log.debug("illegal step %s: %s", type(step).__name__, type(exc).__name__)
    return tr._("That move is not allowed now.")
