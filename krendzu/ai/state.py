"""From what a player sees to a playable integer :class:`~krendzu.tour.Tour`.

A computer player decides from ``observation(seat)`` only. To think with the fast integer
core it rebuilds a *determinized* tour: its own hand is real, every other hand is filled
with cards it cannot see (``fill`` deterministic, or ``sample`` from an rng), and the public
turns are replayed so that the board, points, turn order and pending card are exactly as
observed. Nothing hidden from the viewer is ever read.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from krendzu.board import cell_index
from krendzu.match import MatchView
from krendzu.tour import PLAY, Tour, TourView


def tour_view(view: MatchView | TourView) -> TourView:
    return view.tour if isinstance(view, MatchView) else view


def unseen_cards(view: TourView) -> list[int]:
    """Card indices the viewer cannot see (other hands and the set-aside cards), sorted."""
    seen = {c.index for c in view.hand}
    seen.update(c.index for c, _, _ in view.placements)
    return [c for c in range(36) if c not in seen]


def placed_by_seat(view: TourView) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {s: [] for s in range(len(view.hand_sizes))}
    for turn in view.turns:
        out[turn.player].extend(c.index for c, _, _ in turn.cards)
    if view.pending:
        out[view.current_player].extend(c.index for c, _, _ in view.pending)
    return out


def rebuild(view: TourView, hidden: dict[int, list[int]]) -> Tour:
    """A play-phase tour equal to ``view`` with the other players' current hands ``hidden``.

    The rebuilt tour has no exchange (it starts at the hands held when play began); its
    ``stock`` holds every card that is neither in a hand nor on the board.
    """
    tour = opening_tour(view, hidden)
    for _ in replay(view, tour):
        pass
    return tour


def opening_tour(view: TourView, hidden: dict[int, list[int]]) -> Tour:
    """The view's tour as play began: each hand is its current cards (``hidden`` for the
    other seats) plus what that seat has placed since; no card on the board yet."""
    if view.viewer is None:
        raise ValueError("a computer player needs a seat's view, not the public one")
    if view.phase != PLAY:
        raise ValueError("only a play-phase view can be rebuilt")
    n = len(view.hand_sizes)
    placed = placed_by_seat(view)
    hands: list[list[int]] = []
    for seat in range(n):
        now = [c.index for c in view.hand] if seat == view.viewer else list(hidden[seat])
        hands.append(now + placed[seat])
    used = {c for h in hands for c in h}
    stock = [c for c in range(36) if c not in used]
    return Tour(view.table, view.roles, hands, stock, 0)


def replay(view: TourView, tour: Tour) -> Iterator[tuple[int, tuple[tuple[int, int], ...]]]:
    """Play the view's public turns (then its pending card) on ``tour`` from
    :func:`opening_tour`, yielding ``(seat, cards)`` just before each is played, so
    a caller can look at the board each player saw. ``cards`` are ``(card, cell)``."""
    for turn in view.turns:
        cards = tuple((c.index, cell_index(x, y)) for c, x, y in turn.cards)
        yield turn.player, cards
        if not cards:
            tour.pass_turn()
            continue
        for card, cell in cards:
            tour.place(card, cell)
        if tour.step_in_turn == 1:
            tour.end_turn()
    if view.pending:
        cards = tuple((c.index, cell_index(x, y)) for c, x, y in view.pending)
        yield view.current_player, cards
        for card, cell in cards:
            tour.place(card, cell)


def with_hands(base: Tour, hidden: dict[int, list[int]]) -> Tour:
    """A copy of a rebuilt tour with the other seats' current hands replaced: the same
    tour :func:`rebuild` would give for ``hidden``, without replaying the turns again."""
    tour = base.clone()
    for seat, cards in hidden.items():
        tour.hands[seat] = sorted(cards)
    return tour


def _deal_hidden(view: TourView, pool: list[int]) -> dict[int, list[int]]:
    """Hand ``pool`` out to the other seats in seat order, as many as each holds."""
    out: dict[int, list[int]] = {}
    pos = 0
    for seat, size in enumerate(view.hand_sizes):
        if seat == view.viewer:
            continue
        out[seat] = pool[pos : pos + size]
        pos += size
    return out


def fill_hidden(view: TourView) -> dict[int, list[int]]:
    """Other hands filled with unseen cards in a fixed order (sizes right, contents
    meaningless): for players that only use the board, their hand and the hand sizes."""
    return _deal_hidden(view, unseen_cards(view))


def sample_hidden(view: TourView, rng: random.Random) -> dict[int, list[int]]:
    """Other hands dealt uniformly from the unseen cards, consistently with every public
    fact: hand sizes, cards on the board, and the exchange (announced counts only tell how
    many cards changed hands; the discards stay unseen, so they may be anywhere)."""
    pool = unseen_cards(view)
    rng.shuffle(pool)
    return _deal_hidden(view, pool)


def determinize(view: MatchView | TourView, rng: random.Random | None = None) -> Tour:
    """Rebuild the view's tour; other hands sampled with ``rng`` (or filled if ``None``)."""
    tv = tour_view(view)
    hidden = fill_hidden(tv) if rng is None else sample_hidden(tv, rng)
    return rebuild(tv, hidden)
