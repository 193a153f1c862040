"""Pictures off the event loop: boards and hands drawn in worker processes.

Drawing is pure Python and Pillow work that holds the interpreter lock; in threads it would
still slow the event loop (and every other chat) while a picture is drawn. Worker processes
draw on the other cores; with ``workers=0`` (tests, one-core machines) a thread pool does.
A picture travels as its public description (:class:`~chat.notices.BoardPicture`, a hand's
cards, a :class:`~chat.notices.Drawing`) with the words it shows in the reader's language
(:func:`chat.i18n.picture_texts`: the catalog is read here, the workers get a small dict) and
comes back as bytes. Drawings with a key are
remembered (a few MiB, least recently used first out): the same replay or leaderboard asked
for twenty times is drawn once, and twenty requests arriving together share that one drawing.

A board travels as its view's public part (:func:`public_part`: no hand, no legal steps), so
the workers never hold a hand and a panel's board is one picture whoever reads it. A move's
group board and the next player's panel show one position, without and with the free cells'
labels: the first asked for brings its twin along (:func:`draw_boards`, one drawing and one
trip to a worker), while the twins drawn here are asked for (:meth:`Painter._pairs`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import sys
import threading
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from chat.caches import ByteLru
from chat.i18n import Catalogs, Tr, picture_texts
from chat.notices import BoardPicture, Drawing
from chat.workers import close_pool, pool_closed, worker_pool
from krendzu import Card, MatchView
from render import board_photo, board_photos, hand_png, replay_gif
from render.board import Position

#: What a picture function returns: bytes, or the bytes of a pair (:func:`draw_boards`).
Drawn = TypeVar("Drawn")

#: Drawn pictures kept by key: a replay GIF is up to a few hundred KiB.
KEEP_BYTES = 8 * 1024 * 1024
KEEP_PICTURES = 64
#: Boards kept by what they show (a JPEG of about 90-140 KiB): the same board goes to
#: several places around one move (a finished match's final board to the group and to the
#: mover's panel, a panel edit's fallback, a send tried again, the scaled mode's board job
#: after its announcement), and a board post's labelled twin waits here for the next
#: player's panel (asked for up to a few hundred milliseconds later when a hundred matches
#: move at once): enough for the moves being told at once.
KEEP_BOARD_BYTES = 8 * 1024 * 1024
KEEP_BOARDS = 64
#: A board's twin not asked for once this many newer boards were drawn is counted unasked;
#: the painter draws twins while two in three of the last :data:`TWIN_HISTORY` were asked
#: for (and while fewer than :data:`TWIN_SAMPLE` are known).
WATCH_TWINS = 64
TWIN_HISTORY = 48
TWIN_SAMPLE = 12


def draw_board(picture: BoardPicture, texts: Mapping[str, str] | None = None) -> bytes:
    """The JPEG of a board post or panel: coordinates on the free cells of a panel, the
    suggested cards of a hint; ``texts``: the header's words in the reader's language."""
    view, options = _board_options(picture, texts)
    if picture.private:
        options["cell_labels"] = True
    return board_photo(view, **options)


def draw_boards(picture: BoardPicture,
                texts: Mapping[str, str] | None = None) -> tuple[bytes, bytes]:
    """The JPEGs of ``picture`` as a board post and as a panel (``private`` False and True;
    no suggestion), drawn once (:func:`render.board_photos`): the group's board and the
    next player's panel of a move are the same position. The same bytes twice where the
    panel labels no cell."""
    view, options = _board_options(picture, texts)
    return board_photos(view, **options)


def _board_options(picture: BoardPicture, texts: Mapping[str, str] | None,
                   ) -> tuple[MatchView | Position, dict[str, Any]]:
    """What :func:`render.board_photo` draws ``picture`` from, but its cell labels."""
    # A computer seat's "🤖 Level" is drawn by render with a robot face of its own (the
    # font has no emoji), so the picture names it as the texts do.
    names = tuple(picture.names)
    options: dict[str, Any] = {"players": names, "texts": texts}
    if picture.suggestion:
        options["suggestion"] = picture.suggestion
    if picture.outcome is not None:
        # The header names the winner the summary names (a resigned trio seat ranks last),
        # also for a match a resignation ended before its last move.
        return replace(Position.of(picture.view, names), outcome=picture.outcome,
                       match_over=True), options
    return picture.view, options


def draw_hand(cards: Sequence[Card], texts: Mapping[str, str] | None,
              title: str | None) -> bytes:
    """The PNG of a hand, its title in the reader's language (plural chosen already)."""
    words = dict(texts or {})
    if title:
        words["hand_title"] = title
    return hand_png(tuple(cards), None, texts=words)


def draw_replay(record: bytes, tour: int, texts: Mapping[str, str] | None = None) -> bytes:
    """The GIF replay of one tour of an exported record (its JSON, as sent alongside), in
    the words of ``texts`` (:func:`chat.i18n.picture_texts`; English without them), each
    seat drawn with the display name the record gives its id (``names``)."""
    data = json.loads(record)
    names = data.get("names") or {}
    players = [str(names.get(p, p)) for p in data["players"]]
    return replay_gif(data, tour=tour, texts=texts, players=players)


def warm_up() -> None:
    """Load the fonts and card faces once per worker, not on the first player's move."""
    from krendzu import Match, Settings, Table

    match = Match(["a", "b"], Settings(Table("duel")), seed=1)
    match.apply(match.legal_actions()[0])
    view = match.observation(None)
    draw_board(BoardPicture(view, ("a", "b"), "en"))
    draw_board(BoardPicture(view, ("Анна", "Борис"), "ru", private=True))  # Cyrillic glyphs


def public_part(view: MatchView) -> MatchView:
    """``view`` as the public sees it: a seat's hand, own discards and draws and legal steps
    dropped (the spectators' observation, field for field). A board picture draws public
    facts only, so this is all of a view that the drawing processes get and that keys a
    picture: a panel's board is the same picture for either seat, and the hundreds of
    legal placements of the seat to move are neither pickled to a worker nor hashed."""
    tour = view.tour
    if view.viewer is None and tour.viewer is None:
        return view
    return replace(view, viewer=None, tour=replace(
        tour, viewer=None, hand=(), own_discards=(), own_draws=(), legal=()))


class HashedOnce:
    """A key whose hash is computed once. A board's key is a whole observation (every card
    placed, the names, the labels); the painter looks it up in its cache, its drawings in
    progress and puts it back, five or six hashes of the same deep tuple a picture."""

    __slots__ = ("hash", "value")

    def __init__(self, value: Hashable) -> None:
        self.value = value
        self.hash = hash(value)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return (self is other or (isinstance(other, HashedOnce) and self.hash == other.hash
                and self.value == other.value))


class Painter:
    """Draws pictures in ``workers`` processes, or in threads when ``workers`` is 0, in the
    languages of ``catalogs`` (the application's; read from the locale folder without)."""

    def __init__(self, workers: int = 0, catalogs: Catalogs | None = None) -> None:
        self.catalogs = catalogs or Catalogs()
        self._executor: Executor
        #: The pool's manager thread once closed, for :meth:`wait_closed`.
        self._manager: threading.Thread | None = None
        if workers > 0:
            self._executor = worker_pool(workers, warm_up)  # stops with the bot
        else:
            self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="painter")
        self.kept: ByteLru[Hashable] = ByteLru(KEEP_BYTES, KEEP_PICTURES)
        #: Boards apart, so that the boards of busy matches never push a replay out.
        self.boards: ByteLru[Hashable] = ByteLru(KEEP_BOARD_BYTES, KEEP_BOARDS)
        self._drawing: dict[Hashable, asyncio.Future[bytes]] = {}
        #: The twins of the boards drawn lately, not asked for yet (oldest first), and
        #: whether each of the last twins was asked for (:meth:`_pairs`).
        self._twins: OrderedDict[HashedOnce, None] = OrderedDict()
        self._twin_asked: deque[bool] = deque(maxlen=TWIN_HISTORY)

    def texts(self, language: str) -> dict[str, str]:
        """The pictures' words in ``language`` (English for a language without a catalog)."""
        return picture_texts(self.catalogs.get(language))

    async def board(self, picture: BoardPicture) -> bytes:
        """The board's JPEG, drawn and encoded once wherever the same picture goes (the
        picture names everything it shows: the view, the names, the language, the labels,
        the suggestion, the result); callers asking while it is drawn wait for that one.
        Only the view's public part goes to the drawing (:func:`public_part`).

        A board without a suggestion is drawn with its twin, the same position with the
        free cells labelled or not (:func:`draw_boards`, one drawing, one trip to a worker):
        a move's board post and the next player's panel ask for the two within milliseconds
        of each other, and the second finds its picture drawn or being drawn. Only while
        twins are asked for here, though (:meth:`_pairs`): where another process tells
        the group (the scaled mode's board job on another job worker) or nobody has a
        panel (computers), a twin would be encoded for nothing."""
        picture = replace(picture, view=public_part(picture.view))
        key = HashedOnce(("board", picture))
        if not picture.suggestion:
            self._asked(key)
        found = self.boards.get(key)
        if found is not None:
            return found
        pending = self._drawing.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        texts = self.texts(picture.language)
        alone = partial(self.run, draw_board, picture, texts)
        if picture.suggestion:
            return await self._once(key, self.boards, alone)
        twin = HashedOnce(("board", replace(picture, private=not picture.private)))
        if twin in self._drawing or self.boards.get(twin) is not None:
            return await self._once(key, self.boards, alone)
        pairs = self._pairs()
        self._expect(twin)
        if not pairs:
            return await self._once(key, self.boards, alone)
        plain, labelled = (twin, key) if picture.private else (key, twin)
        pair = asyncio.ensure_future(self.run(draw_boards, replace(picture, private=False),
                                              texts))
        for index, part_key in enumerate((plain, labelled)):
            part = asyncio.ensure_future(_part(pair, index))
            self._drawing[part_key] = part
            part.add_done_callback(partial(self._drawn, part_key, self.boards))
        return await asyncio.shield(self._drawing[key])

    def _pairs(self) -> bool:
        """Whether to draw a board with its twin: while at least two in three of the
        twins of the boards drawn lately were asked for (any while too few are known)."""
        asked = self._twin_asked
        return len(asked) < TWIN_SAMPLE or 3 * sum(asked) >= 2 * len(asked)

    def _expect(self, twin: HashedOnce) -> None:
        """A board was drawn: will its twin be asked for? (Not once :data:`WATCH_TWINS`
        newer boards were drawn first.)"""
        self._twins[twin] = None
        self._twins.move_to_end(twin)
        while len(self._twins) > WATCH_TWINS:
            self._twins.popitem(last=False)
            self._twin_asked.append(False)

    def _asked(self, key: HashedOnce) -> None:
        if key in self._twins:
            del self._twins[key]
            self._twin_asked.append(True)

    async def hand(self, cards: Sequence[Card], language: str, title: str | None) -> bytes:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, draw_hand, tuple(cards),
                                          self.texts(language), title)

    async def run(self, draw: Callable[..., Drawn], *args: Any, **options: Any) -> Drawn:
        """Any picture function of ``render`` (a top-level one: workers receive it pickled)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(draw, *args, **options))

    async def draw(self, drawing: Drawing) -> bytes:
        """Draw a notice's picture now; one with a key once while it is remembered (callers
        asking while it is being drawn wait for that drawing)."""
        key = drawing.key
        if key is None:
            return await self.run(drawing.draw, *drawing.args, **drawing.options)
        return await self._once(key, self.kept, partial(
            self.run, drawing.draw, *drawing.args, **drawing.options))

    async def _once(self, key: Hashable, kept: ByteLru[Hashable],
                    make: Callable[[], Awaitable[bytes]]) -> bytes:
        """``make()``'s bytes, kept in ``kept`` under ``key``; made once while kept or
        being made."""
        found = kept.get(key)
        if found is not None:
            return found
        pending = self._drawing.get(key)
        if pending is None:
            # A task of its own: a caller cancelled while waiting does not cancel the drawing
            # the others wait for.
            pending = asyncio.ensure_future(make())
            self._drawing[key] = pending
            pending.add_done_callback(partial(self._drawn, key, kept))
        return await asyncio.shield(pending)

    def _drawn(self, key: Hashable, kept: ByteLru[Hashable],
               task: asyncio.Future[bytes]) -> None:
        self._drawing.pop(key, None)
        if not task.cancelled() and task.exception() is None:
            kept.put(key, task.result())

    def close(self) -> None:
        self._manager = close_pool(self._executor)

    async def wait_closed(self) -> None:
        """After :meth:`close`: until the pool's processes are gone (chat/workers.py)."""
        await pool_closed(self._manager)


async def _part(pair: Awaitable[tuple[bytes, bytes]], index: int) -> bytes:
    """One picture of a pair being drawn."""
    return (await pair)[index]


async def rules_picture(kind: str, tr: Tr) -> bytes:
    """A picture for ``/rules`` in ``tr``'s language, drawn off the event loop once per kind
    and language."""
    return await asyncio.to_thread(_rules_picture, kind, tr)


#: The rules pictures by the name ``/rules`` and the files in ``docs/img`` use.
RULES_PICTURES = {"rules": "rules", "board": "board-example", "coordinates": "coordinates"}


@functools.lru_cache(maxsize=8)
def _rules_picture(kind: str, tr: Tr) -> bytes:
    from render import illustrations

    return illustrations.PICTURES[RULES_PICTURES[kind]](texts=picture_texts(tr))


def main(argv: list[str] | None = None) -> int:
    """``python -m chat.painter [OUT_DIR]``: the rules pictures in every language of the
    catalog, as ``NAME-LANG.png`` (the ones in ``docs/img``)."""
    from render.illustrations import write_all

    out = Path(argv[0] if argv else "docs/img")
    catalogs = Catalogs()
    for path in write_all(out, {language: picture_texts(catalogs.get(language))
                                for language in catalogs.languages}):
        print(f"{path}  {path.stat().st_size // 1024} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
