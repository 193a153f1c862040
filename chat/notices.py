"""What the flow asks delivery to do: plain data, no ``telegram``.

The flow decides *what to tell whom*; delivery decides *how* (pictures, keyboards, pacing,
flood limits, retries). A picture travels as a :class:`BoardPicture` — an immutable view of
the position — and is drawn by delivery off the event loop, only if it is still sent. (A flow
call's answer, which carries them, is :class:`chat.outcomes.Outcome`.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol

from chat.model import Keyboard
from krendzu import Card, MatchView
from krendzu import Outcome as MatchOutcome  # not this module's Outcome of a flow call
from krendzu.coords import LabelFrame


@dataclass(frozen=True, slots=True)
class BoardPicture:
    """A board drawn from ``view`` (a public or one seat's observation)."""

    view: MatchView
    names: tuple[str, ...]
    language: str
    private: bool = False  # the reader's own panel: label the free cells
    suggestion: tuple[tuple[Card, int, int], ...] = ()
    outcome: MatchOutcome | None = None  # a finished match's result, resignations included


@dataclass(frozen=True, slots=True)
class Drawing:
    """A picture to draw just before it is sent: ``draw(*args, **options)``, a top-level
    function of :mod:`render` (the drawing processes receive it pickled) returning bytes.

    A queued reply holds this small description, not the bytes: a flood of requests waiting
    for a busy chat costs no drawing and little memory, and a reply dropped from the queue is
    never drawn. Pictures with a ``key`` are remembered by the painter for a while, so the
    same one asked again (a replay, a leaderboard) is drawn once; the key must name
    everything the picture shows."""

    draw: Callable[..., bytes]
    args: tuple[Any, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    key: Hashable | None = None


#: A notice's place in a match's announcements: (match id, key), e.g. ``(7, "deal:2:1001")``
#: for the hand of tour 3 sent to user 1001. The store keeps the keys of what was delivered
#: (:meth:`storage.Store.note_told`); the scaled mode's announcement jobs skip a notice
#: whose key is there, so a job run again after its worker was killed resumes after the
#: last notice Telegram took instead of telling it twice.
Told = tuple[int, str]
#: The told key of a group's board posts: its number is the last move the newest one shows.
BOARD_KEY = "board"


@dataclass(frozen=True, slots=True)
class Send:
    """A new message: text, or a picture with ``text`` as its caption."""

    chat_id: int
    text: str
    thread_id: int | None = None
    keyboard: Keyboard | None = None
    silent: bool = False
    picture: BoardPicture | None = None
    hand: tuple[Card, ...] | None = None  # a hand picture instead of a board
    language: str = "en"  # of the words drawn in a hand picture
    hand_title: str | None = None  # the hand picture's title, plural already chosen
    photo: bytes | Drawing | None = None  # a picture drawn already (the rules) or later
    document: tuple[str, bytes] | None = None  # (file name, content)
    animation: tuple[str, bytes | Drawing] | None = None  # (file name, content)
    group: bool = False  # counts against the group's message limit
    #: Remember the sent message as this player's panel in this match.
    panel_of: tuple[int, int] | None = None  # (match_id, user_id)
    #: A panel's: what the player's previous panel says once this one replaces it (its
    #: keyboard goes too), in the player's language.
    replaces: str | None = None
    #: The match a private message is about: if the player cannot be written to, its group
    #: is told (without any card).
    match_id: int | None = None
    #: An information reply (``rules``, ``help``, ``stats``, ``top``, ...): it waits behind
    #: board posts and panels, and a newer one of the same kind replaces one still queued.
    info: str | None = None
    #: What of a match's announcement this tells, (match id, key): noted in the store once
    #: Telegram took it, so that an announcement run again skips it (:data:`Told`).
    told: Told | None = None
    #: Sent as a reply to this message of the chat (a pointer to an earlier answer).
    reply_to: int | None = None
    #: A panel's (``panel_of``): the move lines it shows, remembered in the write of the
    #: panel's message (:meth:`storage.Store.set_panel`), which the mover's next record
    #: starts from; ``None``: remembered otherwise (chat/flow/broadcast.py).
    lines: tuple[str, ...] | None = None
    #: A typed move's record to its mover (``match_id``'s): the mover's panel is forgotten
    #: (with its lines) in the write that notes the record, and then says ``replaces``
    #: without its keyboard, as a :class:`DropPanel` before it did, one write for two.
    drops_panel: bool = False
    #: The first message of a group's information answer (:mod:`chat.answers`): delivery
    #: reports its message id once sent, or that it was not sent.
    answer: Hashable | None = None


@dataclass(frozen=True, slots=True)
class Ephemeral:
    """A message in a group that one member alone sees (Telegram's ephemeral messages, issue
    42): ``send`` says what (its ``chat_id`` is the group; its ``panel_of`` makes it the
    player's panel, named then by the group, the receiver and its ephemeral id).

    It goes as the answer to the receiver's press (``callback_query_id``) or ephemeral
    command (``reply_to``: that command's ``ephemeral_message_id``), within the 15 seconds
    Telegram allows, or pushed (neither): only a bot that administers the group may push,
    so a push to a group where it does not is dropped (``chat/sending.py`` learns which).
    It counts against the group's window of writes like a post, ahead of the group's queue."""

    send: Send
    receiver: int
    callback_query_id: str | None = None
    reply_to: int | None = None

    @property
    def chat_id(self) -> int:
        return self.send.chat_id

    @property
    def told(self) -> Told | None:
        return self.send.told


@dataclass(frozen=True, slots=True)
class EditPanel:
    """Replace the text/caption and keyboard of a player's current panel, if there is one;
    otherwise send ``fallback``. ``picture``: the position changed since the panel was
    drawn, so its photo is replaced too (the caption never describes another board than
    the one shown)."""

    match_id: int
    user_id: int
    text: str
    keyboard: Keyboard | None
    fallback: Send | Ephemeral | None = None
    picture: BoardPicture | None = None
    told: Told | None = None  # as :attr:`Send.told`


@dataclass(frozen=True, slots=True)
class ShowLobby:
    """Edit the lobby message in place (or post it when it has none yet)."""

    lobby_id: int
    chat_id: int
    thread_id: int | None
    message_id: int | None
    text: str
    keyboard: Keyboard | None
    #: An arena's post (issue 40; ``lobby_id`` is then the arena's id): the same edit in
    #: place, its new message noted as the arena's.
    arena: bool = False


SEEN_FOR = 0.5  # seconds a board job's look stands for the sender's read (SeenPost.fresh)


class SeenPost(NamedTuple):
    """A match's newest board post as its board job looked at it in the claim of the group's
    window (:class:`storage.pg_windows.BoardLook`): message id (``None``: none), caption,
    and a :func:`time.monotonic` time no later than the look."""

    message_id: int | None
    caption: str
    at: float

    def fresh(self) -> bool:
        """Whether it stands for the sender's read just before the post: the job hands the
        post over right after the look, so an older one means the post waited (the window,
        another write, a busy event loop), and the sender reads afresh, as late as before."""
        return time.monotonic() - self.at <= SEEN_FOR


class RecordEnd(Protocol):
    """A job's end written inside a notice's record's write (:class:`chat.jobs.manager.JobEnd`):
    called with the store's connection in it, then told :meth:`committed`."""

    async def __call__(self, conn: Any) -> None: ...

    def committed(self) -> None: ...


@dataclass(frozen=True, slots=True)
class BoardPost:
    """The group's board after moves. Coalescable: a newer one for the same match replaces
    one not yet sent, keeping every move line."""

    match_id: int
    chat_id: int
    thread_id: int | None
    lines: tuple[str, ...]
    footer: str
    picture: BoardPicture
    #: Buttons under the post (the player to move's "your turn" link).
    keyboard: Keyboard | None = None
    #: The labelling of the cells ``lines`` name: the frame of the picture's tour.
    frame: LabelFrame = field(default_factory=LabelFrame)
    #: The last move the post shows (a group's: noted as the match's ``board`` key once
    #: posted, so that an announcement run again tells the group only the moves after it).
    seq: int = 0
    #: When the first move it tells was committed (Unix seconds), for the move → board post
    #: latency (chat/metrics.py); kept by coalescing, which only adds later moves.
    moved_at: float | None = None
    #: Further told keys (key, move number) noted in the same write as the post (the
    #: scaled mode's board job's ``group`` key when the post is all it tells the group).
    notes: tuple[tuple[str, int], ...] = ()
    #: The group's newest post as the board job looked just before handing this one over
    #: (``None``, or not :meth:`~SeenPost.fresh`: the sender reads it just before the post;
    #: only so late a look finds a post of a second run of the job the sweeper made).
    seen: SeenPost | None = None
    #: The board job's end, written in the post's record (its last write), where the
    #: worker wrote it in a transaction of its own; ``None``: no job ends with it.
    end: RecordEnd | None = field(default=None, compare=False)

    def looked(self, board: tuple[int, str] | None, at: float) -> BoardPost:
        """This post with ``board`` as the group's newest post its job looked at since ``at``."""
        message_id, caption = board if board is not None else (None, "")
        return replace(self, seen=SeenPost(message_id, caption, at))

    def merged(self, newer: BoardPost) -> BoardPost | None:
        """``newer`` with this queued post's lines first (coalescing), or ``None`` when they
        cannot share one caption: another match, or lines in another labelling. Once the
        board grew left or up in between, this post's "B12" is the newer one's "C12", and
        one caption never mixes two labellings: rather than rewrite words already written,
        the older post goes out as it is, under its own picture (a shift is rare, so the
        flood gate hardly feels the extra post; in a tidy group the newer one replaces it)."""
        if newer.match_id != self.match_id or newer.frame != self.frame:
            return None
        return replace(newer, lines=self.lines + newer.lines,
                       moved_at=self.moved_at if self.moved_at is not None else newer.moved_at)


@dataclass(frozen=True, slots=True)
class ComputerTurn:
    """Let the computer seat to move play, after the pacing delay."""

    match_id: int
    seq: int


@dataclass(frozen=True, slots=True)
class Announced:
    """Everything before this was handed to delivery: move the outbox marker."""

    match_id: int
    seq: int


@dataclass(frozen=True, slots=True)
class DropPanel:
    """The player's panel is out of date: remove its keyboard (and, with a ``note``, say
    why instead of its old caption, which still asked for a move)."""

    match_id: int
    user_id: int
    note: str | None = None
    #: The lines the dropped panel showed are forgotten in the same write (a mover's).
    forget_lines: bool = False


@dataclass(frozen=True, slots=True)
class BoardClock:
    """Refresh the clock line (the caption's last line, starting with ``⏱``) of the group's
    newest board post of the match, keeping its button."""

    match_id: int
    chat_id: int
    clock: str
    keyboard: Keyboard | None = None


Notice = (Send | Ephemeral | EditPanel | ShowLobby | BoardPost | ComputerTurn | Announced
          | DropPanel | BoardClock)


def untold(notices: Sequence[Notice], told: Mapping[str, int]) -> list[Notice]:
    """``notices`` less those whose :data:`Told` key is in ``told`` (the store's notes of
    what Telegram took already): what a restart, or an announcement job run again, still
    owes."""
    return [n for n in notices
            if (key := getattr(n, "told", None)) is None or key[1] not in told]


@dataclass(slots=True)
class Held:
    """The notices handling one update told, held back while it is processed (chat/web.py):
    they are queued only once they are stored (chat/outbox.py). Closed when the update is
    done: a task it started that tells something later is queued at once, as elsewhere."""

    notices: list[Notice] = field(default_factory=list)
    open: bool = True


#: The update being processed in this task holds its notices (a webhook worker with a reply
#: outbox); ``None``: :meth:`Delivery.run` queues them at once.
HELD: ContextVar[Held | None] = ContextVar("krendzu_held", default=None)


def chat_of(notice: Notice) -> int:
    """The chat a notice is written to (and queued for)."""
    if isinstance(notice, Send | ShowLobby | BoardPost | BoardClock):
        return notice.chat_id
    if isinstance(notice, EditPanel | DropPanel):
        return notice.user_id
    if isinstance(notice, Ephemeral):  # after its receiver's panel edits, not the group's posts
        return notice.receiver
    raise TypeError(type(notice).__name__)
