"""Pictures off the event loop: boards and hands drawn in worker processes.

Drawing is pure Python and Pillow work that holds the interpreter lock; in threads it would
still slow the event loop (and every other chat) while a picture is drawn. Worker processes
draw on the other cores; with ``workers=0`` (tests, one-core machines) a thread pool does.
A picture travels as its public description (:class:`~chat.notices.BoardPicture`, a hand's
cards) and comes back as bytes.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from functools import partial
from typing import Any

from chat.notices import BoardPicture
from krendzu import Card
from render import board_photo, hand_png


def draw_board(picture: BoardPicture) -> bytes:
    """The JPEG of a board post or panel: coordinates on the free cells of a panel, the
    suggested cards of a hint."""
    # The font has no 🤖: computer seats are drawn with ⚙ instead of losing their mark.
    names = tuple(name.replace("🤖", "⚙") for name in picture.names)
    options: dict[str, Any] = {"players": names, "lang": picture.language}
    if picture.private:
        options["cell_labels"] = True
    if picture.suggestion:
        options["suggestion"] = picture.suggestion
    return board_photo(picture.view, **options)


def draw_hand(cards: Sequence[Card], language: str, title: str | None) -> bytes:
    """The PNG of a hand, its title in the reader's language (plural chosen already)."""
    return hand_png(tuple(cards), None, lang=language,
                    texts={"hand_title": title} if title else None)


def warm_up() -> None:
    """Load the fonts and card faces once per worker, not on the first player's move."""
    from krendzu import Match, Settings, Table

    match = Match(["a", "b"], Settings(Table("duel")), seed=1)
    match.apply(match.legal_actions()[0])
    view = match.observation(None)
    draw_board(BoardPicture(view, ("a", "b"), "en"))
    draw_board(BoardPicture(view, ("a", "b"), "ru", private=True))


class Painter:
    """Draws pictures in ``workers`` processes, or in threads when ``workers`` is 0."""

    def __init__(self, workers: int = 0) -> None:
        self._executor: Executor
        if workers > 0:
            self._executor = ProcessPoolExecutor(
                max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                initializer=warm_up)
        else:
            self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="painter")

    async def board(self, picture: BoardPicture) -> bytes:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, draw_board, picture)

    async def hand(self, cards: Sequence[Card], language: str, title: str | None) -> bytes:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, draw_hand, tuple(cards), language,
                                          title)

    async def run(self, draw: Callable[..., bytes], *args: Any, **options: Any) -> bytes:
        """Any picture function of ``render`` (a top-level one: workers receive it pickled)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, partial(draw, *args, **options))

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
