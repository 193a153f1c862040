"""Reading the other players' hands from their public moves (the hard level's sampler).

Uniformly sampled deals ignore what the table has seen. An attacker that could score never
leaves the point on the board; it builds threats it can complete itself; it swaps its weak
seeds in the exchange. So a deal in which the attacker held a card that would have scored
last turn, or none of the cards completing the threat it just built, explains its moves
badly, and a defender that keeps such deals wastes its blocks on dead threats and passes
on live ones.

The model of another attacking seat is the normal player (:mod:`krendzu.ai.heuristic`):

* its move scores are computed on the board it saw, for every card the viewer cannot see,
  with the rest of its hand counted on average (the chance that the hidden part holds a
  completing card, as the viewer knows it now);
* the chosen move is compared with the best move each unseen card would have made: a card
  ``y`` in the hand is kept with weight ``sigmoid((score(chosen) - best(y)) / T)`` (a
  card that would have scored 100 where the seat scored nothing is all but ruled out);
* every threat the chosen move built is a *claim*: deals in which the seat holds none of
  its completing cards are kept with probability ``exp(-(own - other) / C)``, the score
  difference the normal player sees between a threat it can and cannot complete;
* its last non-scoring placement is also read by *rank*, as a search player makes it:
  the hard level and the oracle choose among the normal scoring's best 8 moves for the
  hand they hold, the best of them 43 % of the time, so a deal is kept with the
  likelihood :data:`RANK_CURVE` gives the number of moves that score better than the
  chosen one under that deal's whole hand (scored exactly: each threat completable by
  the rest of that hand or not): 1 if none, about 0.2 for 1 to 4, 0.1 to 0.15 for 5 to
  7, hardly anything beyond or if that hand could have scored. This tells one fresh
  threat from the next (a side effect of a move that was best anyway says little), which
  the claims cannot; the curve is measured by ``benchmarks/rank.py``;
* an attacker that announced fewer cards than it could swap kept no weak seed (a queen,
  8, J or K) but by drawing it.

``T`` (:data:`TEMPERATURE`) and ``C`` (:data:`CLAIM_TEMPERATURE`) are calibrated with
:mod:`krendzu.ai.calibrate` (how well the beliefs predict the true hands and the live
threats in arena games). Sampling draws each hidden hand in turn, with probability
proportional to the product of its cards' weights (a conditional Poisson draw), then
accepts or redraws it by the claims and the rank checks. Everything is a pure function of
the observation: the hard level stays an observation-only player.
"""

from __future__ import annotations

import math
import random
from collections import OrderedDict
from dataclasses import dataclass
from functools import cache, lru_cache

from krendzu.ai.heuristic import exchange_choice, seed_value
from krendzu.ai.state import fill_hidden, opening_tour, placed_by_seat, replay, unseen_cards
from krendzu.ai.threats import FULL, chance, gap_mask, mask_of, pair_potential
from krendzu.board import LINE_STEPS, NEIGHBOUR_STEPS
from krendzu.tour import TourView

#: Temperatures of the opponent model (score points per factor e), see the module
#: docstring; calibrated on arena games (docs/ai.md): the comparison with each card's best
#: move, and the claims.
TEMPERATURE = 12.0
CLAIM_TEMPERATURE = 5.0
#: Least weight one turn leaves a card (the model is a model: people do miss points).
FLOOR = 0.03
#: Weight of an attacker's weak seed it did not swap although it could have.
KEPT_WEAK = 0.3
#: Redraws of a hand its claims reject before the best of them is taken.
TRIES = 12
#: Boards whose move shapes are kept (the same turns are read again every decision).
_SHAPES_KEPT = 512
#: The rank reading of another attacker's last turns (:class:`RankCheck`): how many of
#: its last turns are read; the likelihood of a hand under which ``b`` moves score better
#: than the chosen one (``RANK_CURVE[b]``, ``RANK_TAIL`` beyond), and of a hand that could
#: have scored. The curve is how often the oracle and the hard level, searching the
#: scoring's best 8 moves, chose the move of each rank under the hand they really held
#: (``python benchmarks/rank.py``, 1,190 moves, docs/ai.md).
RANK_TURNS = 1
RANK_CURVE = (1.0, 0.26, 0.23, 0.21, 0.19, 0.15, 0.13, 0.10, 0.02, 0.01)
RANK_TAIL = 0.005
RANK_FLOOR = 0.02


#: One card on one cell, for a rank check: (upper bound, cell, base score, new threats as
#: (completion mask, score if the rest of the hand completes it, score if not)).
Entry = tuple[float, int, float, tuple[tuple[int, float, float], ...]]


class RankCheck:
    """One non-scoring placement of another attacker, read as a search player makes it:
    the move was among the normal scoring's best few for the hand it held (the hard level
    and the oracle search only those), most often the best. A hand's likelihood is
    ``curve[b]`` when ``b`` of its moves score better than the chosen one (``tail`` when
    ``len(curve)`` or more do); a hand with a card that would have scored gets ``floor``."""

    __slots__ = ("card", "cell", "chosen", "curve", "floor", "known", "scoring", "seat",
                 "table", "tail")

    def __init__(self, seat: int, known: int, scoring: int, card: int, cell: int,
                 table: dict[int, list[Entry]], curve: tuple[float, ...] = RANK_CURVE,
                 tail: float = RANK_TAIL, floor: float = RANK_FLOOR) -> None:
        self.seat = seat
        self.known = known
        self.scoring = scoring
        self.card = card
        self.cell = cell
        self.table = table
        self.chosen = next(e for e in table[card] if e[1] == cell)
        self.curve = curve
        self.tail = tail
        self.floor = floor

    def likelihood(self, hand: list[int]) -> float:
        better = self.better(hand, len(self.curve))
        if better < 0:
            return self.floor
        return self.curve[better] if better < len(self.curve) else self.tail

    def better(self, hand: list[int], cap: int = 64) -> int:
        """How many moves of ``hand`` (with the cards the seat placed since) score better
        than the chosen one, counted up to ``cap``; −1 if the hand could have scored."""
        held = mask_of(hand) | self.known
        if held & self.scoring:
            return -1
        card0, cell0 = self.card, self.cell
        s0 = _move_score(self.chosen, held & ~(1 << card0))
        better = 0
        todo = held
        table = self.table
        while todo:
            low = todo & -todo
            todo ^= low
            y = low.bit_length() - 1
            rest = held & ~low
            for entry in table[y]:
                if entry[0] <= s0:
                    break
                if entry[1] == cell0 and y == card0:
                    continue
                if _move_score(entry, rest) > s0:
                    better += 1
                    if better >= cap:
                        return better
        return better


def _move_score(entry: Entry, rest: int) -> float:
    """A rank-table move's score when the rest of the hand is ``rest`` (a fork of its own:
    the normal scoring's bonus)."""
    score = entry[2]
    own = 0
    for m, own_v, other_v in entry[3]:
        if m & rest:
            score += own_v
            own += 1
        else:
            score += other_v
    if own >= 2:
        score += 6.0 if own == 2 else 10.0
    return score


def rank_table(shapes: list[CellShape], cards: int, placed: int, hand_size: int,
               partner_cards: int) -> dict[int, list[Entry]]:
    """Per card of ``cards``: every cell's move as the normal attacker scores it with a
    hand of ``hand_size`` (the parts that do not depend on the rest of the hand), best
    bound first."""
    def_unseen = FULL & ~placed
    u_def = def_unseen.bit_count()
    k_own = max(1, hand_size - 1)
    u_me = max(1, u_def - hand_size)
    out: dict[int, list[Entry]] = {}
    todo = cards
    while todo:
        low = todo & -todo
        todo ^= low
        y = low.bit_length() - 1
        entries: list[Entry] = []
        for sh in shapes:
            base = sh.pairs[y] - seed_value(y) / 2000.0
            new: dict[int, tuple[int, float]] = {}
            for row, g, weight in sh.twos:
                m = row[y]
                if m:
                    old = new.get(g)
                    new[g] = (m | old[0], max(weight, old[1])) if old else (m, weight)
            threats = []
            ub = base
            for m, weight in new.values():
                p_def = chance((m & def_unseen).bit_count(), u_def, k_own)
                own_v = 4.0 * weight * (1.5 - 0.5 * p_def)
                other_v = 2.0 * weight * p_def
                if partner_cards:
                    other_v += 2.0 * weight * chance((m & def_unseen).bit_count(), u_me,
                                                     partner_cards)
                threats.append((m, own_v, other_v))
                ub += max(own_v, other_v)
            if len(threats) >= 2:
                ub += 10.0
            entries.append((ub, sh.cell, base, tuple(threats)))
        entries.sort(key=lambda e: -e[0])
        out[y] = entries
    return out


@dataclass(frozen=True, slots=True)
class Claim:
    """A threat ``seat`` built: deals in which it holds none of ``cards`` (a mask of the
    viewer's unseen cards) are kept with probability ``keep``."""

    seat: int
    cards: int
    keep: float


class Belief:
    """Weighted hidden hands for one viewer: per other seat a weight for every unseen
    card, plus the claims. :meth:`sample` deals the other hands."""

    def __init__(
        self,
        pool: list[int],
        sizes: dict[int, int],
        weights: dict[int, list[float]],
        claims: list[Claim],
        ranks: list[RankCheck] | None = None,
    ) -> None:
        self.pool = pool
        self.sizes = sizes
        self.weights = weights
        self.claims = claims
        self.ranks = ranks or []
        self._first: tuple[list[float], list[list[float]]] | None = None

    @classmethod
    def uniform(cls, view: TourView) -> Belief:
        """No evidence: every consistent deal equally likely (the hard-v1 sampler)."""
        sizes = _hidden_sizes(view)
        return cls(unseen_cards(view), sizes, {s: [1.0] * 36 for s in sizes}, [])

    def without_ranks(self) -> Belief:
        """The same evidence without the rank checks (what they add, measured by the
        benchmarks): ``infer(view, Model(rank_turns=0))`` without reading the turns again."""
        return Belief(self.pool, self.sizes, self.weights, self.claims)

    def sample(self, rng: random.Random) -> dict[int, list[int]]:
        """Other seats' current hands, drawn in proportion to the evidence."""
        best: tuple[float, dict[int, list[int]]] | None = None
        for _ in range(TRIES):
            hidden = self._draw(rng)
            keep = 1.0
            for claim in self.claims:
                if not mask_of(hidden[claim.seat]) & claim.cards:
                    keep *= claim.keep
            for check in self.ranks:
                keep *= check.likelihood(hidden[check.seat])
            if keep >= 1.0 or rng.random() < keep:
                return hidden
            if best is None or keep > best[0]:
                best = (keep, hidden)
        assert best is not None
        return best[1]

    def _draw(self, rng: random.Random) -> dict[int, list[int]]:
        left = self.pool
        out: dict[int, list[int]] = {}
        for n, (seat, size) in enumerate(self.sizes.items()):
            w = self.weights[seat]
            if n == 0:  # the first seat always draws from the whole pool: sums kept
                if self._first is None:
                    first_w = [w[c] for c in left]
                    self._first = (first_w, subset_sums(first_w, size))
                hand = _draw_with(left, self._first[0], self._first[1], size, rng)
            else:
                hand = draw_weighted(left, [w[c] for c in left], size, rng)
            out[seat] = hand
            taken = set(hand)
            left = [c for c in left if c not in taken]
        return out

    def marginals(self, rng: random.Random, draws: int = 200) -> dict[int, list[float]]:
        """Estimated chance of every card being in each seat's hand (for calibration)."""
        counts = {s: [0.0] * 36 for s in self.sizes}
        for _ in range(draws):
            for seat, hand in self.sample(rng).items():
                for c in hand:
                    counts[seat][c] += 1.0 / draws
        return counts


def draw_weighted(cards: list[int], weights: list[float], k: int, rng: random.Random) -> list[int]:
    """``k`` of ``cards`` with probability proportional to the product of their weights
    (a conditional Poisson draw: exact, by the sums over subsets from the back)."""
    return _draw_with(cards, weights, subset_sums(weights, k), k, rng)


def subset_sums(weights: list[float], k: int) -> list[list[float]]:
    """``below[i][j]``: total weight of the ``j``-card subsets of the cards from ``i`` on."""
    n = len(weights)
    below = [[1.0] + [0.0] * max(0, k) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        wi = weights[i]
        row = below[i]
        nxt = below[i + 1]
        for j in range(1, min(k, n - i) + 1):
            row[j] = nxt[j] + wi * nxt[j - 1]
    return below


def _draw_with(
    cards: list[int], weights: list[float], below: list[list[float]], k: int, rng: random.Random
) -> list[int]:
    n = len(cards)
    if k >= n:
        return list(cards)
    if k <= 0:
        return []
    out: list[int] = []
    j = k
    for i in range(n):
        if n - i == j:
            out.extend(cards[i:])
            break
        if rng.random() * below[i][j] < weights[i] * below[i + 1][j - 1]:
            out.append(cards[i])
            j -= 1
            if not j:
                break
    return out


def _hidden_sizes(view: TourView) -> dict[int, int]:
    return {s: n for s, n in enumerate(view.hand_sizes) if s != view.viewer}


# Move shapes: what a card on a cell would do, whatever the hand -------------------------

@lru_cache(maxsize=4096)
def _gap_row(w: tuple[int, ...], k: int, j: int) -> tuple[int, ...]:
    """Per card: the completion mask of two-card window ``w`` with that card put at ``k``
    (the gap left at ``j``). Bounded: a long-running bot sees ever new windows."""
    masks = []
    for y in range(36):
        filled = list(w)
        filled[k] = y + 1
        f = [v for v in filled if v]
        masks.append(gap_mask(f[0], f[1], f[2], j))
    return tuple(masks)


@lru_cache(maxsize=1024)
def _pair_row(w: tuple[int, ...], k: int) -> tuple[float, ...]:
    """Per card: the pair potential of one-card window ``w`` with that card put at ``k``."""
    values = []
    for y in range(36):
        filled = list(w)
        filled[k] = y + 1
        values.append(pair_potential(tuple(filled)) / 90.0)
    return tuple(values)


@dataclass(frozen=True, slots=True)
class CellShape:
    """One placement cell: the masks of the lines a card there completes, the two-card
    windows it would turn into threats (per card, with the gap and its weight: 1 if the
    gap is playable then, 0.4 if not yet), and the pair potential per card."""

    cell: int
    full: tuple[int, ...]
    twos: tuple[tuple[tuple[int, ...], int, float], ...]
    pairs: tuple[float, ...]


def cell_shapes(
    cells: bytearray | bytes, frontier: list[int], fpos: dict[int, int]
) -> list[CellShape]:
    """The shape of every cell of ``frontier``, in cell order."""
    out = []
    for c in sorted(frontier):
        full: list[int] = []
        twos: list[tuple[tuple[int, ...], int, float]] = []
        pairs = [0.0] * 36
        near = {c + s for s in NEIGHBOUR_STEPS}
        for step in LINE_STEPS:
            for k in range(4):
                start = c - k * step
                w = (cells[start], cells[start + step], cells[start + 2 * step],
                     cells[start + 3 * step])
                n = 4 - w.count(0)
                if n == 3:
                    f = [v for v in w if v]
                    full.append(gap_mask(f[0], f[1], f[2], k))
                elif n == 2:
                    j = next(i for i in range(4) if i != k and not w[i])
                    g = start + j * step
                    twos.append((_gap_row(w, k, j), g, 1.0 if g in fpos or g in near else 0.4))
                elif n == 1:
                    row = _pair_row(w, k)
                    pairs = [a + b for a, b in zip(pairs, row, strict=True)]
        out.append(CellShape(c, tuple(full), tuple(twos), tuple(pairs)))
    return out


_SHAPES: OrderedDict[tuple[tuple[int, int], ...], list[CellShape]] = OrderedDict()


def _shapes_for(key: tuple[tuple[int, int], ...], cells: bytearray, frontier: list[int],
                fpos: dict[int, int]) -> list[CellShape]:
    shapes = _SHAPES.get(key)
    if shapes is None:
        shapes = cell_shapes(cells, frontier, fpos)
        _SHAPES[key] = shapes
        if len(_SHAPES) > _SHAPES_KEPT:
            _SHAPES.popitem(last=False)
    else:
        _SHAPES.move_to_end(key)
    return shapes


# Scoring a move with the rest of the hand counted on average ----------------------------

class _Mover:
    """The normal attacker's score for a card on a cell, as the viewer can reckon it: for
    each move the attacker's other cards are ``rest_known`` (placed by it later) plus
    ``hidden`` unseen ones out of ``pool``."""

    __slots__ = ("def_unseen", "k_own", "u_def")

    def __init__(self, placed: int, hand_size: int) -> None:
        self.def_unseen = FULL & ~placed
        self.u_def = self.def_unseen.bit_count()
        self.k_own = max(1, hand_size - 1)

    def score(self, shape: CellShape, y: int, rest_known: int, pool: int, hidden: int
              ) -> tuple[float, list[tuple[int, float]]]:
        """Score of card ``y`` on the shape's cell, and each new threat as ``(mask, own -
        other)``: what holding a completing card adds to the score."""
        bit = 1 << y
        score = 100.0 * sum(1 for m in shape.full if m & bit) + shape.pairs[y]
        score -= seed_value(y) / 2000.0
        if not shape.twos:
            return score, []
        new: dict[int, tuple[int, float]] = {}
        for row, g, weight in shape.twos:
            m = row[y]
            if m:
                old = new.get(g)
                new[g] = (m | old[0], max(weight, old[1])) if old else (m, weight)
        u = pool.bit_count()
        gains: list[tuple[int, float]] = []
        owns: list[float] = []
        for m, weight in new.values():
            p_def = chance((m & self.def_unseen).bit_count(), self.u_def, self.k_own)
            own_v = 4.0 * weight * (1.5 - 0.5 * p_def)
            other_v = 2.0 * weight * p_def
            p_own = 1.0 if m & rest_known else chance((m & pool).bit_count(), u, hidden)
            score += p_own * own_v + (1.0 - p_own) * other_v
            owns.append(p_own)
            gains.append((m, own_v - other_v))
        if len(owns) >= 2:  # a fork of its own: at least two of the new threats completable
            none = math.prod(1.0 - p for p in owns)
            one = sum(p * math.prod(1.0 - q for j, q in enumerate(owns) if j != i)
                      for i, p in enumerate(owns))
            score += 6.0 * max(0.0, 1.0 - none - one)
        return score, gains


@dataclass(frozen=True, slots=True)
class Model:
    """The opponent model's knobs (calibrated by :mod:`krendzu.ai.calibrate`).

    ``temperature`` scales the comparison of the chosen move with each card's best move
    (``None``: compare only points — a card that would have scored where the seat did not
    gets ``floor``, every other card is left alone); ``claim_temperature`` scales the
    claims (``None``: no claims); ``rank_turns`` of each attacker's last turns are also
    read by rank (0: none), with ``rank_curve``, ``rank_tail`` and ``rank_floor`` as in
    :class:`RankCheck`."""

    temperature: float | None = TEMPERATURE
    claim_temperature: float | None = CLAIM_TEMPERATURE
    floor: float = FLOOR
    rank_turns: int = RANK_TURNS
    rank_curve: tuple[float, ...] = RANK_CURVE
    rank_tail: float = RANK_TAIL
    rank_floor: float = RANK_FLOOR


MODEL = Model()


def infer(view: TourView, model: Model = MODEL) -> Belief:
    """The belief about the other hands that ``view`` supports (see the module docstring)."""
    pool = unseen_cards(view)
    pool_mask = mask_of(pool)
    sizes = _hidden_sizes(view)
    logw = {s: [0.0] * 36 for s in sizes}
    claims: list[Claim] = []
    attackers = set(view.roles.attackers)
    _exchange_evidence(view, attackers, pool, logw)
    # The cards a seat placed from one of its turns on were surely in its hand then.
    placed = placed_by_seat(view)
    played_so_far: dict[int, int] = {}
    watched = {s for s in sizes if s in attackers and sizes[s]}
    if not watched:
        return Belief(pool, sizes, {s: _normalized(w, pool) for s, w in logw.items()}, [])
    tour = opening_tour(view, fill_hidden(view))
    log_floor = math.log(model.floor)
    temperature = model.temperature
    claim_t = model.claim_temperature
    ranks: list[RankCheck] = []
    turns_left = {s: 0 for s in watched}
    for turn in view.turns:
        if turn.player in watched and turn.cards:
            turns_left[turn.player] += 1
    for seat, cards in replay(view, tour):
        if seat not in watched or not cards:
            continue
        turns_left[seat] -= 1
        played_before = played_so_far.get(seat, 0)
        played_so_far[seat] = played_before + len(cards)
        if not tour.placed:
            continue  # the opening card says next to nothing
        known = mask_of(placed[seat][played_before:])  # cards in its hand at this turn
        card, cell = cards[0]
        shapes = _shapes_for(tuple(tour.placed), tour.cells, tour.frontier, tour.fpos)
        if turns_left[seat] < model.rank_turns and sizes[seat]:
            scoring = 0
            for sh in shapes:
                for m in sh.full:
                    scoring |= m
            if not scoring >> card & 1:
                placed_now = mask_of([c for c, _ in tour.placed])
                partners = sum(len(tour.hands[s]) for s in attackers if s != seat)
                table = rank_table(shapes, (pool_mask | known) & ~scoring | (1 << card),
                                   placed_now, len(tour.hands[seat]), partners)
                ranks.append(RankCheck(seat, known, scoring, card, cell, table,
                                       model.rank_curve, model.rank_tail, model.rank_floor))
        mover = _Mover(mask_of([c for c, _ in tour.placed]), sizes[seat] + known.bit_count())
        hidden = sizes[seat]
        chosen_shape = next(sh for sh in shapes if sh.cell == cell)
        chosen, gains = mover.score(chosen_shape, card, known & ~(1 << card), pool_mask, hidden)
        weights = logw[seat]
        if hidden:
            for y in pool:
                rest_pool = pool_mask & ~(1 << y)
                best = max(mover.score(sh, y, known, rest_pool, hidden - 1)[0] for sh in shapes)
                if temperature is None:
                    if best >= 100.0 > chosen:
                        weights[y] += log_floor
                    continue
                z = (chosen - best) / temperature
                lw = -math.log1p(math.exp(-z)) if z > -30 else z
                weights[y] += max(lw, log_floor)
            for mask, gain in gains:
                if claim_t is None or mask & known & ~(1 << card) or not mask & pool_mask:
                    continue
                if gain > 0:
                    claims.append(Claim(seat, mask & pool_mask, math.exp(-gain / claim_t)))
    return Belief(pool, sizes, {s: _normalized(w, pool) for s, w in logw.items()}, claims,
                  ranks)


def _exchange_evidence(
    view: TourView, attackers: set[int], pool: list[int], logw: dict[int, list[float]]
) -> None:
    """An attacker that announced fewer cards than it could swap held no more weak seeds
    than it swapped: a weak seed it holds now came back in the redeal, if at all."""
    if not view.exchange_limit or not view.announcements:
        return
    placed = placed_by_seat(view)
    weak = _weak_seeds()
    for seat, count in view.announcements:
        if seat not in logw or seat not in attackers:
            continue
        dealt = view.hand_sizes[seat] + len(placed[seat])
        if count < min(view.exchange_limit, dealt):
            for c in pool:
                if c in weak:
                    logw[seat][c] += math.log(KEPT_WEAK)


@cache
def _weak_seeds() -> frozenset[int]:
    return frozenset(exchange_choice(list(range(36)), True, 36))


def _normalized(logs: list[float], pool: list[int]) -> list[float]:
    """Weights from log-weights, the most likely unseen card at 1."""
    top = max(logs[c] for c in pool) if pool else 0.0
    return [math.exp(max(v - top, -60.0)) for v in logs]
