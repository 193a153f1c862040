"""Computer players: ``random``, ``easy``, ``normal``, ``hard`` and the ``oracle``.

Every player but the oracle decides from a seat's observation (a
:class:`~krendzu.match.MatchView` or :class:`~krendzu.tour.TourView`) and the ``rng`` it is
given — never from the global ``random`` and never from another player's hidden cards.
The oracle is a perfect-information reference: it is handed the full
:class:`~krendzu.tour.Tour` through :meth:`OraclePlayer.decide_full`.

``decide`` returns the whole turn as actions: one step in the exchange (``Announce`` or one
``Discard``); ``[Place]`` for an attacker or the opening; ``[Pass()]``, ``[Place, EndTurn()]``
or ``[Place, Place]`` for a defender (``[EndTurn()]`` or ``[Place]`` after its first card).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable

from krendzu.actions import Action, Announce, Discard, EndTurn, Pass, Place
from krendzu.ai.greedy import greedy_turn
from krendzu.ai.heuristic import EASY, NORMAL, Heuristic, Style, Turn, exchange_choice
from krendzu.ai.search import WARY_SHARE, FlatMonteCarlo
from krendzu.ai.state import determinize, tour_view
from krendzu.board import cell_xy
from krendzu.cards import Card
from krendzu.match import MatchView
from krendzu.tour import ANNOUNCE, DISCARD, PLAY, Tour, TourView

LEVELS = ("random", "easy", "normal", "hard", "oracle")
#: Extra yardsticks the arena accepts besides the product levels: the notes' greedy player
#: and the hard level as it was before it read hands (uniformly sampled deals, no card cost).
BASELINES = ("greedy", "hard-v1")
#: The bot's thinking time for the hard level.
BOT_BUDGET_MS = 1000.0
DEFAULT_ITERATIONS = 24


def turn_to_actions(tour: Tour, plan: Turn) -> list[Action]:
    """A planned turn (integer cards and cells) as the actions that play it on ``tour``."""
    if not plan:
        return [EndTurn()] if tour.step_in_turn == 1 else [Pass()]
    seat = tour.current_player
    sim = tour.clone()
    out: list[Action] = []
    for card, cell in plan:
        if sim.phase != PLAY or sim.current_player != seat or (out and sim.step_in_turn != 1):
            break
        out.append(Place(Card(card), *cell_xy(cell)))
        sim.place(card, cell)
    if sim.phase == PLAY and sim.step_in_turn == 1:
        out.append(EndTurn())
    return out


class Player(ABC):
    """A computer player. ``decide`` → the whole turn; ``next_action`` → its first step."""

    level: str = "?"

    @abstractmethod
    def decide(self, view: MatchView | TourView, rng: random.Random) -> list[Action]: ...

    def next_action(self, view: MatchView | TourView, rng: random.Random) -> Action:
        return self.decide(view, rng)[0]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.level}>"


#: An exchange policy: (hand, attacking?, how many at most, rng) -> the cards to swap.
ExchangeChooser = Callable[[list[int], bool, int, random.Random], list[int]]


def _exchange_step(
    view: TourView, rng: random.Random, choose: ExchangeChooser
) -> list[Action] | None:
    """The exchange steps (announce, discard) shared by the levels; ``None`` in play."""
    seat = view.viewer
    assert seat is not None
    hand = sorted(c.index for c in view.hand)
    attacker = seat in view.roles.attackers
    if view.phase == ANNOUNCE:
        chosen = choose(hand, attacker, min(view.exchange_limit, len(hand)), rng)
        return [Announce(len(chosen))]
    if view.phase == DISCARD:
        announced = dict(view.announcements)[seat]
        left = announced - view.discards_done[seat]
        # The announced count was taken from the hand before discarding: rebuild it.
        before = sorted([*hand, *(c.index for c in view.own_discards)])
        chosen = choose(before, attacker, announced, rng)
        todo = [c for c in chosen if c in hand]
        if len(todo) < left:
            todo += [c for c in hand if c not in todo]
        return [Discard(Card(todo[0]))]
    return None


class RandomPlayer(Player):
    """Uniformly random legal steps (a whole turn is a sequence of random steps)."""

    level = "random"

    def decide(self, view: MatchView | TourView, rng: random.Random) -> list[Action]:
        tv = tour_view(view)
        if tv.phase != PLAY:
            return [rng.choice(tv.legal)]
        tour = determinize(tv)
        seat = tv.viewer
        out: list[Action] = []
        while True:
            legal = tour.legal_actions()
            action = legal[rng.randrange(len(legal))]
            out.append(action)
            tour.apply(action)
            if tour.phase != PLAY or tour.current_player != seat or tour.step_in_turn == 0:
                return out


def _heuristic_exchange(
    hand: list[int], attacker: bool, limit: int, rng: random.Random
) -> list[int]:
    return exchange_choice(hand, attacker, limit)


def _easy_exchange(hand: list[int], attacker: bool, limit: int, rng: random.Random) -> list[int]:
    # A beginner swaps its queens when attacking (the rules' advice), nothing else.
    if not attacker:
        return []
    return [c for c in hand if c % 9 == 6][:limit]


class HeuristicPlayer(Player):
    """``normal`` (fast tactics) or ``easy`` (the same with human-like mistakes)."""

    def __init__(self, style: Style = NORMAL, level: str = "normal") -> None:
        self.style = style
        self.level = level
        self.heur = Heuristic(style)

    def decide(self, view: MatchView | TourView, rng: random.Random) -> list[Action]:
        tv = tour_view(view)
        chooser = _easy_exchange if self.style is EASY else _heuristic_exchange
        step = _exchange_step(tv, rng, chooser)
        if step is not None:
            return step
        tour = determinize(tv)
        assert tv.viewer is not None
        plan = self.plan(tv, tour, rng)
        return turn_to_actions(tour, plan)

    def plan(self, view: TourView, tour: Tour, rng: random.Random) -> Turn:
        assert view.viewer is not None
        return self.heur.turn(tour, view.viewer, rng)


class HardPlayer(HeuristicPlayer):
    """Determinized Monte-Carlo search over the normal player's candidate turns, on deals
    weighted by what the other players' moves reveal; a defender pays for every card it
    places (``inference=False``: uniform deals and no card cost, the ``hard-v1``
    baseline)."""

    def __init__(
        self,
        *,
        iterations: int | None = None,
        budget_ms: float | None = None,
        width: int | None = None,
        inference: bool = True,
    ) -> None:
        super().__init__(NORMAL, "hard" if inference else "hard-v1")
        # hard-v1 keeps the fair rollouts it had: no wary defence.
        self.search = _search(self.heur, iterations, budget_ms, width, inference,
                              WARY_SHARE if inference else 0.0)

    def plan(self, view: TourView, tour: Tour, rng: random.Random) -> Turn:
        return self.search.choose(view, tour, rng)


def _search(
    heur: Heuristic,
    iterations: int | None,
    budget_ms: float | None,
    width: int | None = None,
    inference: bool = True,
    wary: float = 0.0,
) -> FlatMonteCarlo:
    """The flat Monte-Carlo search of the hard level and the oracle."""
    if width is None:  # more thinking time → more candidate turns worth comparing
        width = 8 if budget_ms is None else min(14, 8 + int(budget_ms // 250))
    return FlatMonteCarlo(
        heur,
        iterations=iterations if iterations is not None else DEFAULT_ITERATIONS,
        budget_ms=budget_ms,
        width=width,
        inference=inference,
        wary=wary,
    )


class GreedyPlayer(HeuristicPlayer):
    """The notes' greedy baseline (see :mod:`krendzu.ai.greedy`)."""

    def __init__(self) -> None:
        super().__init__(NORMAL, "greedy")

    def plan(self, view: TourView, tour: Tour, rng: random.Random) -> Turn:
        assert view.viewer is not None
        return greedy_turn(tour, view.viewer, rng)


class OraclePlayer(Player):
    """Perfect-information reference, the upper bound the levels are compared with: the
    hard level's search, but every playout uses the real hands (and candidates are chosen
    knowing the exact attacker cards). It is the fixed yardstick every arena figure since
    2026-11-22 is measured against, so it keeps that search: no card cost for a defence,
    no wary defence in an attacker's rollouts (docs/ai.md gives the share of the gap with
    an oracle that has the wary rollouts too). It cannot decide from an observation; the
    arena calls :meth:`decide_full` with the real tour."""

    level = "oracle"

    def __init__(
        self, *, iterations: int | None = None, budget_ms: float | None = None
    ) -> None:
        self.heur = Heuristic(NORMAL)
        self.search = _search(self.heur, iterations, budget_ms)

    def decide(self, view: MatchView | TourView, rng: random.Random) -> list[Action]:
        raise TypeError("the oracle sees every hand: call decide_full(tour, rng)")

    def decide_full(self, tour: Tour, rng: random.Random) -> list[Action]:
        """The turn for ``tour.current_player``, knowing every hand (a reference only)."""
        seat = tour.current_player
        if tour.phase != PLAY:
            view = tour.observation(seat)
            step = _exchange_step(view, rng, _heuristic_exchange)
            assert step is not None
            return step
        plan = self.search.choose_full(tour, rng)
        return turn_to_actions(tour, plan)


def warm_up() -> None:
    """Fill the lookup tables and caches once (about 0.1–0.2 s), e.g. at bot start, so the
    first decision is as fast as the others."""
    from krendzu.ai.heuristic import seed_value
    from krendzu.combos import window_table

    window_table()
    for card in range(36):
        seed_value(card)


def make_player(
    level: str,
    *,
    iterations: int | None = None,
    budget_ms: float | None = None,
    seed: int | None = None,
) -> Player:
    """A player of ``level`` (one of :data:`LEVELS`). ``iterations`` / ``budget_ms`` set the
    hard level's search budget (iterations are reproducible; a time budget is not).
    ``seed`` is accepted for symmetry: decisions always use the rng passed to ``decide``."""
    del seed
    if level == "random":
        return RandomPlayer()
    if level == "easy":
        return HeuristicPlayer(EASY, "easy")
    if level == "normal":
        return HeuristicPlayer(NORMAL, "normal")
    if level == "hard":
        return HardPlayer(iterations=iterations, budget_ms=budget_ms)
    if level == "oracle":
        return OraclePlayer(iterations=iterations, budget_ms=budget_ms)
    if level == "greedy":
        return GreedyPlayer()
    if level == "hard-v1":
        return HardPlayer(iterations=iterations, budget_ms=budget_ms, inference=False)
    raise ValueError(f"unknown level {level!r}: use one of {', '.join(LEVELS)}")
