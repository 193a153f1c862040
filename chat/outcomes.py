"""What a flow call answers: an :class:`Outcome` (a short reply for the actor and the
notices of :mod:`chat.notices` for everyone), and for a move its :data:`Verdict`, checked once
and then stored (:class:`Accepted`) or not (:class:`Refused`, with its :class:`Refusal`).

Apart from :mod:`chat.notices` because these are not notices: delivery never sees them. Every
door (a Telegram handler, the engine API, the Mini App) reads an outcome and tells its caller
in its own way; only the notices it carries go on to delivery."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from chat.notices import Notice


class Refusal(Enum):
    """Why :meth:`chat.flow.Flow.play` stored nothing, in the order the flow checks: each
    door translates it (a Telegram reply, an HTTP status and code)."""

    GONE = "gone"  # the match does not exist
    NOT_SEATED = "not_seated"  # the actor plays no seat of it
    OVER = "over"  # it ended
    STALE = "stale"  # the move answers another position than the stored one (its seq)
    NOT_YOUR_TURN = "not_your_turn"
    ILLEGAL = "illegal"  # words that are no move, or a step the rules refuse
    OVERTAKEN = "overtaken"  # checked, but another move was stored first (another process)
    REPEATED = "repeated"  # this very update was stored already: nothing to say again


@dataclass(frozen=True, slots=True, eq=False)
class Accepted:
    """A move checked once and stored: the numbers its steps got in the store."""

    seqs: tuple[int, ...]
    #: The number the next move will get (the position a door answers with).
    next_seq: int
    #: The steps as understood (:attr:`echo`), or how to say them when a door asks: a move
    #: typed in a chat is told by its board post, and its request says nothing it would not
    #: show (``Flow.play(echo=False)``).
    said: str | Callable[[], str] | None = None

    @property
    def echo(self) -> str | None:
        """The steps as understood ("✓ Q♣ → M12"), in the actor's language."""
        return self.said() if callable(self.said) else self.said

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Accepted):
            return NotImplemented
        return (self.seqs, self.next_seq, self.echo) == (other.seqs, other.next_seq,
                                                         other.echo)

    def __hash__(self) -> int:
        return hash((self.seqs, self.next_seq))


@dataclass(frozen=True, slots=True)
class Refused:
    """A move that changed nothing, and why: ``text`` is the flow's reply to the actor (in
    their language; ``None``: nothing to say), ``next_seq`` the stored position's next
    number where the flow read it (a door tells a stale caller where the match is)."""

    reason: Refusal
    text: str | None = None
    next_seq: int | None = None


#: What :meth:`chat.flow.Flow.play` decided: checked once, then stored or refused.
Verdict = Accepted | Refused


@dataclass(slots=True)
class Outcome:
    """A flow call's answer: a short toast/reply for the actor plus notices for everyone."""

    reply: str | None = None
    notices: list[Notice] = field(default_factory=list)
    alert: bool = False  # show the toast as an alert box
    private_reply: bool = False  # answer the actor privately (it names a held card)
    #: For a button press: a t.me link the client opens (the bot's private chat with Start).
    url: str | None = None
    #: The move's announcement is a job's (the scaled mode): ``notices`` is empty although
    #: the board is on its way, so a typed move gets no reply in the chat (its board is the
    #: answer, as in the embedded mode); a button's toast still shows ``reply``.
    announced_later: bool = False
    #: A move's verdict (:meth:`chat.flow.Flow.play`, a computer's or a timer's turn);
    #: ``None`` for every other flow call.
    verdict: Verdict | None = None

    @property
    def accepted(self) -> bool:
        """Whether the request changed something everyone is told of: a move by its
        verdict; any other call by its notices, or the job the change deferred."""
        if self.verdict is not None:
            return isinstance(self.verdict, Accepted)
        return bool(self.notices) or self.announced_later
