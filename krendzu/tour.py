"""One tour: deal, optional exchange, play until every hand is empty (RULES.md §3–5).

The public surface works with :mod:`krendzu.actions` and :class:`~krendzu.cards.Card`:
``current_player``, ``legal_actions()``, ``apply(action)`` (validating, raising the typed
reasons of :mod:`krendzu.illegal`, subclasses of :class:`~krendzu.errors.IllegalMove`),
``clone()``, ``observation(seat)``.

Underneath is an integer core (card indices 0..35, flat cell indices from
:mod:`krendzu.board`) used by ``apply`` after validation and directly by playouts, the
computer players and the benchmark. The core methods trust their arguments, and so does
``Tour.deal``: a shuffled deck needs none of the constructor's checks but the sizes. Random
play (``random_step``, ``play_random``) is one loop over the core drawing exactly what
``rng.randrange`` would.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from krendzu.actions import Action, Announce, Discard, EndTurn, Pass, Place, Redeal
from krendzu.board import (
    CELLS,
    LINE_CELLS,
    NEIGHBOURS,
    ORIGIN,
    cell_index,
    cell_xy,
    in_reach,
)
from krendzu.cards import DECK_SIZE, Card
from krendzu.combos import CODES, window_table
from krendzu.errors import SettingsError
from krendzu.illegal import (
    BadRedeal,
    CannotPass,
    CardNotInHand,
    CellTaken,
    GameOver,
    NotAnAction,
    NotTouching,
    NoTurnToEnd,
    WrongExchangeCount,
    WrongOpening,
    WrongPhase,
)
from krendzu.tables import DealSizes, Table, TourRoles

CHANCE = -1
TERMINAL = -2

# Phases.
ANNOUNCE = "announce"
DISCARD = "discard"
REDEAL = "redeal"
PLAY = "play"
OVER = "over"

# Compact history codes (see Tour.history): a placement is card * CELLS + cell (>= 0).
_H_PASS = -1
_H_END = -2
_H_REDEAL = -3
_H_ANNOUNCE = -100  # - 100 - count
_H_DISCARD = -1000  # - 1000 - card



@dataclass(frozen=True, slots=True)
class Combination:
    """A scored line: the turn (move index in the tour) that completed it, its cells."""

    move: int
    cells: tuple[tuple[int, int], ...]
    own_goal: bool
    player: int


@dataclass(frozen=True, slots=True)
class Turn:
    """One recorded turn: who, and the cards placed ``(card, x, y)``; empty = a pass."""

    player: int
    cards: tuple[tuple[Card, int, int], ...]


#: Random.shuffle's Fisher–Yates steps over a deck: swap position i with a j drawn below
#: i + 1 from ``k`` random bits (redrawn while too big), i from the top down.
_SHUFFLE_STEPS = tuple((i, (i + 1).bit_length()) for i in range(DECK_SIZE - 1, 0, -1))


def _shuffled_deck(rng: random.Random) -> list[int]:
    """The deck after ``rng.shuffle``, drawing exactly the same numbers: for a plain
    ``Random`` the draws are inlined (CPython's ``_randbelow`` by ``getrandbits``), which
    halves the cost of a deal."""
    deck = list(range(DECK_SIZE))
    if type(rng) is not random.Random:
        rng.shuffle(deck)
        return deck
    getrandbits = rng.getrandbits
    for i, k in _SHUFFLE_STEPS:
        j = getrandbits(k)
        while j > i:
            j = getrandbits(k)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def _turn(seat: int, cards: Sequence[tuple[int, int]]) -> Turn:
    return Turn(seat, tuple((Card._all[c], *cell_xy(cell)) for c, cell in cards))


class Tour:
    """The full (secret-holding) state of one tour. Seats are ints 0..n-1."""

    __slots__ = (
        "_announce_pos",
        "_discard_left",
        "_draws",
        "_history",
        "_pending",
        "_redeal_log",
        "_turn_pos",
        "announcements",
        "cells",
        "combos",
        "discards",
        "exchange_limit",
        "fpos",
        "frontier",
        "hands",
        "initial_hands",
        "is_attacker",
        "phase",
        "placed",
        "points",
        "roles",
        "step_in_turn",
        "stock",
        "table",
        "turns_raw",
        "wtable",
    )

    def __init__(
        self,
        table: Table,
        roles: TourRoles,
        hands: Sequence[Sequence[int]],
        stock: Sequence[int] = (),
        exchange_limit: int = 0,
    ) -> None:
        n = table.players
        if len(hands) != n:
            raise SettingsError(f"a {table.value} tour has {n} hands, not {len(hands)}")
        seen: set[int] = set()
        for hand in [*hands, stock]:
            for card in hand:
                if not 0 <= card < DECK_SIZE or card in seen:
                    raise SettingsError("hands and stock must hold distinct cards of the deck")
                seen.add(card)
        if any(not hand for hand in hands):
            raise SettingsError("every player gets at least one card")
        self._setup(table, roles, [sorted(h) for h in hands], list(stock), exchange_limit)

    def _setup(
        self,
        table: Table,
        roles: TourRoles,
        hands: list[list[int]],
        stock: list[int],
        exchange_limit: int,
    ) -> None:
        """Fresh state from checked, sorted hands (owned from now on): the part of the
        constructor that :meth:`deal` shares without repeating checks a shuffle makes moot."""
        self.table = table
        self.roles = roles
        self.hands = hands
        self.initial_hands: list[tuple[int, ...]] = [tuple(h) for h in hands]
        self.stock = stock
        self.exchange_limit = exchange_limit
        self.is_attacker = [seat in roles.attackers for seat in range(len(hands))]
        self.cells = bytearray(CELLS)
        self.frontier: list[int] = []
        self.fpos: dict[int, int] = {}
        self.placed: list[tuple[int, int]] = []  # (card, cell) in order
        self.points = 0
        self.combos: list[Combination] = []
        # Turns as (seat, ((card, cell), ...)); the turn in progress is in _pending.
        self.turns_raw: list[tuple[int, tuple[tuple[int, int], ...]]] = []
        self._pending: list[tuple[int, int]] = []
        self.wtable = window_table()
        self._history: list[int] = []
        self._redeal_log: list[Redeal] = []
        self.step_in_turn = 0
        self._turn_pos = 0
        # Exchange bookkeeping.
        self.announcements: list[tuple[int, int]] = []
        self._announce_pos = 0
        self.discards: dict[int, list[int]] = {}
        self._discard_left: list[tuple[int, int]] = []
        self._draws: dict[int, tuple[int, ...]] = {}
        self.phase = ANNOUNCE if exchange_limit > 0 else PLAY

    # Construction -------------------------------------------------------------------

    @classmethod
    def deal(
        cls,
        table: Table,
        roles: TourRoles,
        sizes: DealSizes,
        rng: random.Random,
        exchange_limit: int = 0,
    ) -> Tour:
        """Shuffle with ``rng`` and deal; the dealer deals clockwise starting left of itself.

        The hands come from one shuffled deck, so only the sizes need checking."""
        deck = _shuffled_deck(rng)
        n = table.players
        want = [sizes.attacker if seat in roles.attackers else sizes.defender for seat in range(n)]
        if sum(want) > DECK_SIZE:
            raise SettingsError(f"the deal needs {sum(want)} cards, the deck has {DECK_SIZE}")
        if min(want) < 1:
            raise SettingsError("every player gets at least one card")
        hands: list[list[int]] = [[] for _ in range(n)]
        pos = 0
        for i in range(n):
            seat = (roles.dealer + 1 + i) % n
            hands[seat] = sorted(deck[pos : pos + want[seat]])
            pos += want[seat]
        tour = object.__new__(cls)
        tour._setup(table, roles, hands, deck[pos:], exchange_limit)
        return tour

    # Basic queries ------------------------------------------------------------------

    @property
    def players(self) -> int:
        return self.table.players

    @property
    def opening(self) -> bool:
        return not self.placed

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    @property
    def current_player(self) -> int:
        """The seat to act, ``CHANCE`` for the exchange redeal, ``TERMINAL`` when over."""
        phase = self.phase
        if phase == PLAY:
            return self.roles.order[self._turn_pos]
        if phase == ANNOUNCE:
            return self.announce_order[self._announce_pos]
        if phase == DISCARD:
            return self._discard_left[0][0]
        if phase == REDEAL:
            return CHANCE
        return TERMINAL

    @property
    def announce_order(self) -> tuple[int, ...]:
        """Turn order without repeats: the order of exchange announcements and redeal."""
        return tuple(dict.fromkeys(self.roles.order))

    def hand(self, seat: int) -> list[Card]:
        return [Card(c) for c in self.hands[seat]]

    def stock_cards(self) -> list[Card]:
        """The cards set aside (secret from every player)."""
        return [Card(c) for c in sorted(self.stock)]

    def hand_sizes(self) -> tuple[int, ...]:
        return tuple(len(h) for h in self.hands)

    def attackers_have_cards(self) -> bool:
        hands = self.hands
        # A plain loop: a third of the cost of any() over a generator (random play asks often).
        for a in self.roles.attackers:  # noqa: SIM110
            if hands[a]:
                return True
        return False

    def card_at(self, x: int, y: int) -> Card | None:
        if not in_reach(x, y):
            return None
        code = self.cells[cell_index(x, y)]
        return Card(code - 1) if code else None

    def board(self) -> dict[tuple[int, int], Card]:
        return {cell_xy(cell): Card(card) for card, cell in self.placed}

    def points_by_player(self) -> dict[int, int]:
        points = self.points
        return {seat: points if att else 0 for seat, att in enumerate(self.is_attacker)}

    @property
    def history(self) -> list[Action]:
        """Every step applied so far, chance included, as action objects."""
        out: list[Action] = []
        redeals = iter(self._redeal_log)
        for code in self._history:
            if code >= 0:
                card, cell = divmod(code, CELLS)
                x, y = cell_xy(cell)
                out.append(Place(Card(card), x, y))
            elif code == _H_PASS:
                out.append(Pass())
            elif code == _H_END:
                out.append(EndTurn())
            elif code == _H_REDEAL:
                out.append(next(redeals))
            elif code <= _H_DISCARD:
                out.append(Discard(Card(_H_DISCARD - code)))
            else:
                out.append(Announce(_H_ANNOUNCE - code))
        return out

    @property
    def turns(self) -> list[Turn]:
        """Completed turns, as recorded (a pass is a turn with no cards)."""
        return [_turn(seat, cards) for seat, cards in self.turns_raw]

    @property
    def pending(self) -> tuple[tuple[Card, int, int], ...]:
        """The cards of the turn in progress (a defender's first card), if any."""
        return _turn(0, self._pending).cards

    # Legal actions ------------------------------------------------------------------

    def can_pass(self) -> bool:
        return (
            self.phase == PLAY
            and self.placed != []
            and not self.is_attacker[self.current_player]
            and self.step_in_turn == 0
            and self.attackers_have_cards()
        )

    def can_end_turn(self) -> bool:
        return self.phase == PLAY and self.step_in_turn == 1

    def placement_cells(self) -> list[int]:
        """Cells (flat indices) where the current player may place a card."""
        return [ORIGIN] if not self.placed else list(self.frontier)

    def legal_actions(self) -> list[Action]:
        """Every legal step for the current player (empty at chance and terminal nodes)."""
        phase = self.phase
        seat = self.current_player
        if phase == PLAY:
            actions: list[Action] = []
            if self.can_pass():
                actions.append(Pass())
            if self.can_end_turn():
                actions.append(EndTurn())
            cells = [cell_xy(c) for c in self.placement_cells()]
            for card in self.hands[seat]:
                card_obj = Card(card)
                actions.extend(Place(card_obj, x, y) for x, y in cells)
            return actions
        if phase == ANNOUNCE:
            top = min(self.exchange_limit, len(self.hands[seat]))
            return [Announce(k) for k in range(top + 1)]
        if phase == DISCARD:
            return [Discard(Card(c)) for c in self.hands[seat]]
        return []

    # Applying -----------------------------------------------------------------------

    def apply(self, action: Action) -> None:
        """Validate ``action`` for the current player and apply it, or raise the
        :class:`~krendzu.errors.IllegalMove` subclass of :mod:`krendzu.illegal` that says
        why not."""
        phase = self.phase
        if phase == OVER:
            raise GameOver("the tour is over")
        if isinstance(action, Place):
            self._check_place(action)
            self.place(action.card.index, cell_index(action.x, action.y))
        elif isinstance(action, Pass):
            self._check_play_phase("pass")
            if self.step_in_turn:
                raise CannotPass("mid-turn")
            if self.opening:
                raise CannotPass("opening")
            if self.is_attacker[self.current_player]:
                raise CannotPass("attacker")
            if not self.attackers_have_cards():
                raise CannotPass("attackers-out")
            self.pass_turn()
        elif isinstance(action, EndTurn):
            self._check_play_phase("end the turn")
            if self.step_in_turn != 1:
                raise NoTurnToEnd()
            self.end_turn()
        elif isinstance(action, Announce):
            if phase != ANNOUNCE:
                raise WrongPhase(
                    "exchange announcements are over (or there is no exchange)", phase=phase
                )
            top = min(self.exchange_limit, len(self.hands[self.current_player]))
            if not isinstance(action.count, int) or not 0 <= action.count <= top:
                raise WrongExchangeCount(action.count, top)
            self.announce(action.count)
        elif isinstance(action, Discard):
            if phase != DISCARD:
                raise WrongPhase("this is not the time to discard", phase=phase)
            if action.card.index not in self.hands[self.current_player]:
                raise CardNotInHand(action.card)
            self.discard(action.card.index)
        elif isinstance(action, Redeal):
            if phase != REDEAL:
                raise WrongPhase("no redeal is due", phase=phase)
            self._check_redeal(action)
            self.redeal(action)
        else:
            raise NotAnAction(f"not an action: {action!r}", given=action)

    def _check_play_phase(self, what: str) -> None:
        if self.phase != PLAY:
            raise WrongPhase(f"you cannot {what} during the exchange", phase=self.phase)

    def _check_place(self, action: Place) -> None:
        # The card first: a card the player does not hold is the first thing to tell, also
        # during the exchange.
        seat = self.current_player
        if seat >= 0 and action.card.index not in self.hands[seat]:
            raise CardNotInHand(action.card)
        self._check_play_phase("place a card")
        x, y = action.x, action.y
        if self.opening:
            if (x, y) != (0, 0):
                raise WrongOpening(x, y)
            return
        if not in_reach(x, y):
            raise NotTouching(x, y, far=True)
        cell = cell_index(x, y)
        taken = self.cells[cell]
        if taken:
            raise CellTaken(x, y, Card(taken - 1))
        if cell not in self.fpos:
            raise NotTouching(x, y)

    def _check_redeal(self, action: Redeal) -> None:
        order = self.announce_order
        counts = dict(self.announcements)
        if len(action.draws) != len(order):
            raise BadRedeal("a redeal lists one group of cards per player")
        pool = set(self.stock)
        for seat in order:
            pool.update(self.discards.get(seat, ()))
        drawn: set[int] = set()
        for seat, group in zip(order, action.draws, strict=True):
            if len(group) != counts[seat]:
                raise BadRedeal(f"seat {seat} must draw {counts[seat]} cards, not {len(group)}")
            for card in group:
                if card.index not in pool or card.index in drawn:
                    raise BadRedeal(f"{card.pretty()} is not in the redeal pool")
                drawn.add(card.index)

    # Integer core (trusted arguments) -------------------------------------------------

    def place(self, card: int, cell: int, may_score: bool = True) -> int:
        """Place ``card`` from the current player's hand on ``cell``; return points scored.

        ``may_score=False`` is the promise of a caller that keeps a threat map that ``card``
        completes no window through ``cell``: the scoring scan is skipped. This is the
        hottest code of playouts and random play: attributes are read into locals once."""
        seat = self.roles.order[self._turn_pos]
        hand = self.hands[seat]
        hand.remove(card)
        cells = self.cells
        d = card + 1
        cells[cell] = d
        placed = self.placed
        move = (card, cell)
        placed.append(move)
        self._history.append(card * CELLS + cell)
        # Frontier: drop this cell, add its empty neighbours.
        fpos = self.fpos
        frontier = self.frontier
        pos = fpos.pop(cell, None)
        if pos is not None:
            last = frontier.pop()
            if last != cell:
                frontier[pos] = last
                fpos[last] = pos
        for nb in NEIGHBOURS[cell]:
            if not cells[nb] and nb not in fpos:
                fpos[nb] = len(frontier)
                frontier.append(nb)
        # Scoring: the (at most 16) windows through the new cell, none before the fourth
        # card. Along a line ``a b c [d] e f g`` (cells ``pa`` .. ``pg``) a cell is read only
        # when the cells between it and d hold cards: a direction with both neighbours empty
        # costs two reads.
        scored = 0
        if may_score and len(placed) > 3:
            table = self.wtable
            for pa, pb, pc, pe, pf, pg in LINE_CELLS[cell]:
                c = cells[pc]
                e = cells[pe]
                if c:
                    b = cells[pb]
                    if b:
                        a = cells[pa]
                        if a and table[((a * CODES + b) * CODES + c) * CODES + d]:
                            scored += self._score(pa, pe - cell, seat)
                        if e and table[((b * CODES + c) * CODES + d) * CODES + e]:
                            scored += self._score(pb, pe - cell, seat)
                    if not e:
                        continue
                    f = cells[pf]
                    if f and table[((c * CODES + d) * CODES + e) * CODES + f]:
                        scored += self._score(pc, pe - cell, seat)
                elif e:
                    f = cells[pf]
                else:
                    continue
                if f:
                    g = cells[pg]
                    if g and table[((d * CODES + e) * CODES + f) * CODES + g]:
                        scored += self._score(cell, pe - cell, seat)
            if scored:
                self.points += scored
        if self.is_attacker[seat] or self.step_in_turn or not hand or len(placed) == 1:
            pending = self._pending
            self._finish_turn((*pending, move) if pending else (move,))
        else:
            self._pending.append(move)
            self.step_in_turn = 1
        return scored

    def _score(self, start: int, step: int, seat: int) -> int:
        self.combos.append(
            Combination(
                len(self.turns_raw),
                tuple(cell_xy(start + i * step) for i in range(4)),
                not self.is_attacker[seat],
                seat,
            )
        )
        return 1

    def pass_turn(self) -> None:
        self._history.append(_H_PASS)
        self._finish_turn(())

    def end_turn(self) -> None:
        self._history.append(_H_END)
        self._finish_turn(tuple(self._pending))

    def _finish_turn(self, cards: tuple[tuple[int, int], ...]) -> None:
        """Record the turn of ``cards`` (the pending ones included); pass the move on."""
        order = self.roles.order
        pos = self._turn_pos
        self.turns_raw.append((order[pos], cards))
        if self.step_in_turn:  # only a turn's first card is ever left pending
            self._pending = []
            self.step_in_turn = 0
        hands = self.hands
        n = len(order)
        for _ in order:  # the next seat in order that still holds cards
            pos += 1
            if pos == n:
                pos = 0
            if hands[order[pos]]:
                self._turn_pos = pos
                return
        self.phase = OVER

    def announce(self, count: int) -> None:
        seat = self.announce_order[self._announce_pos]
        self.announcements.append((seat, count))
        self._history.append(_H_ANNOUNCE - count)
        self._announce_pos += 1
        if self._announce_pos < len(self.announce_order):
            return
        self._discard_left = [(s, k) for s, k in self.announcements if k > 0]
        self.phase = DISCARD if self._discard_left else PLAY

    def discard(self, card: int) -> None:
        seat, left = self._discard_left[0]
        self.hands[seat].remove(card)
        self.discards.setdefault(seat, []).append(card)
        self._history.append(_H_DISCARD - card)
        if left > 1:
            self._discard_left[0] = (seat, left - 1)
        else:
            self._discard_left.pop(0)
            if not self._discard_left:
                self.phase = REDEAL

    def sample_redeal(self, rng: random.Random) -> Redeal:
        """Chance: shuffle the discards with the set-aside cards; deal in announcement order."""
        pool = list(self.stock)
        for seat in self.announce_order:
            pool.extend(self.discards.get(seat, ()))
        pool.sort()
        rng.shuffle(pool)
        counts = dict(self.announcements)
        draws = []
        pos = 0
        for seat in self.announce_order:
            draws.append(tuple(Card(c) for c in pool[pos : pos + counts[seat]]))
            pos += counts[seat]
        return Redeal(tuple(draws))

    def redeal(self, action: Redeal) -> None:
        drawn: set[int] = set()
        for seat, group in zip(self.announce_order, action.draws, strict=True):
            cards = tuple(c.index for c in group)
            self._draws[seat] = cards
            self.hands[seat].extend(cards)
            self.hands[seat].sort()
            drawn.update(cards)
        pool = set(self.stock)
        for seat in self.announce_order:
            pool.update(self.discards.get(seat, ()))
        self.stock = sorted(pool - drawn)
        self._history.append(_H_REDEAL)
        self._redeal_log.append(action)
        self.phase = PLAY

    def draws(self, seat: int) -> tuple[int, ...]:
        return self._draws.get(seat, ())

    # Random play (playouts, tests, benchmark) -------------------------------------------

    def random_step(self, rng: random.Random) -> None:
        """Apply one uniformly random legal step (chance resolved with ``rng`` too)."""
        if self.phase == OVER:
            raise GameOver("the tour is over")
        self._random_steps(rng, 1)

    def play_random(self, rng: random.Random) -> int:
        """Play uniformly random legal steps to the end; return the attacking side's points."""
        self._random_steps(rng, -1)
        return self.points

    def _random_steps(self, rng: random.Random, steps: int) -> None:
        """Apply ``steps`` uniformly random legal steps (all to the end if negative).

        One loop with the tour's lists in locals, and the legal steps of ``can_pass``,
        ``can_end_turn`` and ``placement_cells`` inlined: an optional pass or end of turn
        first, then every (card, cell) pair. Random play is the benchmark's and the tests'
        workhorse."""
        order = self.roles.order
        hands = self.hands
        frontier = self.frontier
        is_attacker = self.is_attacker
        # A step draws rng.randrange(n) (n >= 1: the seat holds a card, the frontier is
        # never empty), i.e. rng._randbelow(n); for a plain Random that is inlined below:
        # n.bit_length() random bits, drawn again while too big. The same numbers.
        # (_randbelow is CPython's private method, so typeshed does not declare it.)
        randbelow: Callable[[int], int] = rng._randbelow  # type: ignore[attr-defined]
        getrandbits = rng.getrandbits if type(rng) is random.Random else None
        while steps and self.phase != OVER:
            steps -= 1
            if self.phase != PLAY:
                self._random_exchange_step(rng)
                continue
            seat = order[self._turn_pos]
            hand = hands[seat]
            if not self.placed:
                self.place(hand[randbelow(len(hand))], ORIGIN)
                continue
            if self.step_in_turn:
                extra = 1
            elif is_attacker[seat]:
                extra = 0
            else:
                extra = 1 if self.attackers_have_cards() else 0
            n = len(frontier)
            choices = extra + len(hand) * n
            if getrandbits is None:
                pick = randbelow(choices)
            else:
                bits = choices.bit_length()
                pick = getrandbits(bits)
                while pick >= choices:
                    pick = getrandbits(bits)
            if pick >= extra:
                card_i, cell_i = divmod(pick - extra, n)
                self.place(hand[card_i], frontier[cell_i])
            elif self.step_in_turn:
                self.end_turn()
            else:
                self.pass_turn()

    def _random_exchange_step(self, rng: random.Random) -> None:
        """One random step of the exchange: an announcement, a discard or the redeal."""
        phase = self.phase
        if phase == ANNOUNCE:
            seat = self.current_player
            self.announce(rng.randint(0, min(self.exchange_limit, len(self.hands[seat]))))
        elif phase == DISCARD:
            hand = self.hands[self.current_player]
            self.discard(hand[rng.randrange(len(hand))])
        else:
            self.redeal(self.sample_redeal(rng))

    # Copies and views -----------------------------------------------------------------

    def clone(self) -> Tour:
        new = object.__new__(Tour)
        new.table = self.table
        new.roles = self.roles
        new.hands = [list(h) for h in self.hands]
        new.initial_hands = self.initial_hands
        new.stock = list(self.stock)
        new.exchange_limit = self.exchange_limit
        new.is_attacker = self.is_attacker
        new.cells = self.cells[:]
        new.frontier = self.frontier[:]
        new.fpos = self.fpos.copy()
        new.placed = self.placed[:]
        new.points = self.points
        new.combos = self.combos[:]
        new.turns_raw = self.turns_raw[:]
        new.wtable = self.wtable
        new._pending = self._pending[:]
        new._history = self._history[:]
        new._redeal_log = self._redeal_log[:]
        new.step_in_turn = self.step_in_turn
        new._turn_pos = self._turn_pos
        new.announcements = self.announcements[:]
        new._announce_pos = self._announce_pos
        new.discards = {k: v[:] for k, v in self.discards.items()}
        new._discard_left = self._discard_left[:]
        new._draws = dict(self._draws)
        new.phase = self.phase
        return new

    def observation(self, seat: int | None) -> TourView:
        """What ``seat`` may see (``None``: a spectator, i.e. the public view)."""
        return TourView.of(self, seat)

    def __repr__(self) -> str:
        return (
            f"<Tour {self.table.value} phase={self.phase} cards={len(self.placed)} "
            f"points={self.points} to_move={self.current_player}>"
        )


@dataclass(frozen=True, slots=True)
class TourView:
    """A player's (or the public's) view of a tour: nothing hidden from that viewer leaks."""

    viewer: int | None
    table: Table
    roles: TourRoles
    phase: str
    current_player: int
    hand: tuple[Card, ...]
    hand_sizes: tuple[int, ...]
    placements: tuple[tuple[Card, int, int], ...]
    turns: tuple[Turn, ...]
    pending: tuple[tuple[Card, int, int], ...]
    step_in_turn: int
    points: int
    combos: tuple[Combination, ...]
    exchange_limit: int
    announcements: tuple[tuple[int, int], ...]
    discards_done: tuple[int, ...]
    own_discards: tuple[Card, ...]
    own_draws: tuple[Card, ...]
    legal: tuple[Action, ...]

    @classmethod
    def of(cls, tour: Tour, seat: int | None) -> TourView:
        n = tour.players
        # The seat whose hand this view shows; None for the public (or a seat not at table).
        viewer = seat if seat is not None and 0 <= seat < n else None
        legal: tuple[Action, ...] = ()
        if viewer is not None and tour.current_player == viewer:
            legal = tuple(tour.legal_actions())
        return cls(
            viewer=viewer,
            table=tour.table,
            roles=tour.roles,
            phase=tour.phase,
            current_player=tour.current_player,
            hand=tuple(tour.hand(viewer)) if viewer is not None else (),
            hand_sizes=tour.hand_sizes(),
            placements=tuple((Card(c), *cell_xy(cell)) for c, cell in tour.placed),
            turns=tuple(tour.turns),
            pending=tour.pending,
            step_in_turn=tour.step_in_turn,
            points=tour.points,
            combos=tuple(tour.combos),
            exchange_limit=tour.exchange_limit,
            announcements=tuple(tour.announcements),
            discards_done=tuple(len(tour.discards.get(s, ())) for s in range(n)),
            own_discards=(
                tuple(Card(c) for c in tour.discards.get(viewer, ())) if viewer is not None else ()
            ),
            own_draws=tuple(Card(c) for c in tour.draws(viewer)) if viewer is not None else (),
            legal=legal,
        )

    @property
    def board(self) -> dict[tuple[int, int], Card]:
        return {(x, y): card for card, x, y in self.placements}

    @property
    def unseen(self) -> frozenset[Card]:
        """Cards this viewer has not seen: in other hands or set aside (own discards count)."""
        seen = {c for c, _, _ in self.placements} | set(self.hand)
        return frozenset(c for c in Card._all if c not in seen)

    @property
    def is_over(self) -> bool:
        return self.phase == OVER
