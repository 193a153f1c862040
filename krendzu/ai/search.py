"""The hard level: determinized flat Monte-Carlo over whole candidate turns.

1. The normal player's scoring proposes a few candidate turns (attacker: its best
   placements; defender: pass, its best single blocks and double blocks).
2. Each iteration samples the hidden hands consistently with the view (hand sizes, board,
   unseen cards) and in proportion to how well they explain the other players' moves so
   far (:mod:`krendzu.ai.inference`; uniformly for the ``hard-v1`` baseline), plays every
   candidate turn on that same
   deal and finishes the tour with a cheap threat-aware rollout policy, with the same
   rollout random stream for every candidate (common random numbers: the comparison is
   paired, so it needs far fewer playouts).
3. Rollouts are *fair*: a rollout defender judges threats against every card it cannot see
   in the sampled deal, never against the sampled attacker hand; except that half of a
   hard attacker's deals face a *wary* defence, one that reads the attackers' hands
   (:data:`WARY_SHARE`), so that the search does not count on bait that a reader ignores.
4. The candidate with the best mean (attacker: most points, defender: fewest) wins; the
   normal player's favourite gets a small head start, so noise alone does not overturn it,
   and a hard defender's candidate pays for every card it places (the rollouts alone
   undervalue a spare card, see :data:`CARD_WEIGHT`).

Budget: ``iterations`` (reproducible; the default) or ``budget_ms`` (wall clock, for the
bot). ``stats`` keeps playouts and elapsed time for the benchmark.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

from krendzu.ai.heuristic import Heuristic, Knowledge, Turn
from krendzu.ai.inference import infer
from krendzu.ai.state import sample_hidden, with_hands
from krendzu.ai.threats import FULL, MASKS, chance, mask_of, threat_map, update_threats
from krendzu.board import LINE_CELLS
from krendzu.combos import CODES
from krendzu.tour import OVER, Tour, TourView


def _place(tour: Tour, threats: dict[int, int], card: int, cell: int) -> None:
    """``tour.place`` keeping ``threats`` current; the threat map tells whether the card
    completes a window at all, so the engine scans for combinations only when it does."""
    tour.place(card, cell, threats.get(cell, 0) >> card & 1 != 0)
    update_threats(threats, tour.cells, cell)


def _new_threats(
    cells: bytearray, pa3: int, pb3: int, code: int, a1: int, a2: int, b1: int, b2: int
) -> int:
    """Cards completing the windows along a line ``a3 a2 a1 [code] b1 b2 b3`` that a card
    ``code`` turns into threats (three cards and a gap); ``pa3`` and ``pb3`` are the cells
    of ``a3`` and ``b3``, read only when needed."""
    masks = MASKS
    m = 0
    if a1:
        if a2:
            key = ((a2 * CODES + a1) * CODES + code) * 4
            if not cells[pa3]:
                m |= masks[key]
            if not b1:
                m |= masks[key + 3]
        if b1:
            key = ((a1 * CODES + code) * CODES + b1) * 4
            if not a2:
                m |= masks[key]
            if not b2:
                m |= masks[key + 3]
        elif b2:
            m |= masks[((a1 * CODES + code) * CODES + b2) * 4 + 2]
    if b1:
        if b2:
            key = ((code * CODES + b1) * CODES + b2) * 4
            if not cells[pb3]:
                m |= masks[key + 3]
            if not a1:
                m |= masks[key]
        if not a1 and a2:
            m |= masks[((a2 * CODES + code) * CODES + b1) * 4 + 1]
    return m


def _quiet_card(hm: int, m: int, hand: list[int]) -> int:
    """The first card of ``hand`` (mask ``hm``) outside the completion mask ``m``, else the
    first card: hands are sorted, so that is the lowest bit of ``hm & ~m``."""
    free = hm & ~m
    return (free & -free).bit_length() - 1 if free else hand[0]


def rollout(
    tour: Tour, threats: dict[int, int], rng: random.Random, wary: bool = False
) -> None:
    """Finish ``tour`` with the light policy (``threats`` kept current). Fair: every seat
    uses its own hand and the board only, unless ``wary``: then the defenders read the
    attackers' hands, block exactly the threats they can complete and let the others be
    (the opponent a search attacker should fear: see :data:`WARY_SHARE`)."""
    cells = tour.cells
    fpos = tour.fpos
    frontier = tour.frontier
    hands = tour.hands
    is_att = tour.is_attacker
    attackers = tour.roles.attackers
    defenders = tour.roles.defenders
    placed_mask = mask_of([c for c, _ in tour.placed])
    # A hand only loses the cards its seat places: its mask is the one at the start less
    # every card placed since.
    hand_masks = [mask_of(h) for h in hands]
    rand = rng.random
    while tour.phase != OVER:
        seat = tour.current_player
        hand = hands[seat]
        hm = hand_masks[seat] & ~placed_mask
        if is_att[seat]:
            # Complete a playable threat if the hand can; else the best of four random
            # placements, worth 2 per direction in which it makes a threat the rest of
            # the hand completes (plus a random tie-break).
            for cell, m in threats.items():
                both = m & hm
                if both and cell in fpos:
                    card = (both & -both).bit_length() - 1
                    break
            else:
                best = -1.0
                nf = len(frontier)
                nh = len(hand)
                for _ in range(4):
                    sample_cell = frontier[int(rand() * nf)]
                    sample_card = hand[int(rand() * nh)]
                    rest = hm & ~(1 << sample_card)
                    value = rand()
                    if rest:
                        code = sample_card + 1
                        for pa3, pa2, pa1, pb1, pb2, pb3 in LINE_CELLS[sample_cell]:
                            a1 = cells[pa1]
                            b1 = cells[pb1]
                            if not a1 and not b1:
                                continue
                            a2 = cells[pa2]
                            b2 = cells[pb2]
                            # A new threat needs two more cards in a window: without such
                            # a pair _new_threats is 0, so it is not asked.
                            if not (a1 and (a2 or b1 or b2)) and not (b1 and (a2 or b2)):
                                continue
                            if rest & _new_threats(cells, pa3, pb3, code, a1, a2, b1, b2):
                                value += 2.0
                    if value > best:
                        best, card, cell = value, sample_card, sample_cell
            _place(tour, threats, card, cell)
            placed_mask |= 1 << card
            continue
        # Defender.
        k = 0
        for s in attackers:
            k += len(hands[s])
        if not k:
            # Nothing can score any more except an own goal: play anything harmless.
            for cell in frontier:
                free = hm & ~threats.get(cell, 0)
                if free:
                    card = (free & -free).bit_length() - 1
                    break
            else:
                card, cell = hand[0], frontier[0]
            _place(tour, threats, card, cell)
            placed_mask |= 1 << card
            if tour.step_in_turn == 1:
                tour.end_turn()
            continue
        unseen = FULL & ~hm & ~placed_mask
        u = unseen.bit_count()
        mine = 0
        for s in defenders:
            mine += len(hands[s])
        spare = mine - k
        t1 = 0.22 if spare >= 4 else 0.3 if spare >= 1 else 0.4
        p1 = p2 = 0.0
        g1 = g2 = -1
        held = 0
        if wary:
            for s in attackers:
                held |= hand_masks[s]
            held &= ~placed_mask
        for g, m in threats.items():
            if g in fpos:
                if wary:
                    p = 1.0 if m & held else 0.0
                else:
                    p = chance((m & unseen).bit_count(), u, k)
                if p > p1:
                    p2, g2 = p1, g1
                    p1, g1 = p, g
                elif p > p2:
                    p2, g2 = p, g
        if p1 < t1:
            if tour.can_pass():
                tour.pass_turn()
            else:  # the opening or no attacker cards: handled above / a quiet card
                cells_now = frontier or tour.placement_cells()
                cell = cells_now[int(rand() * len(cells_now))]
                card = _quiet_card(hm, threats.get(cell, 0), hand)
                _place(tour, threats, card, cell)
                placed_mask |= 1 << card
                if tour.phase != OVER and tour.step_in_turn == 1:
                    tour.end_turn()
            continue
        card = _quiet_card(hm, threats[g1], hand)
        _place(tour, threats, card, g1)
        placed_mask |= 1 << card
        if tour.phase == OVER or tour.step_in_turn != 1:
            continue
        if p2 >= t1 + 0.1 and g2 in fpos and g2 in threats:
            card = _quiet_card(hm & ~(1 << card), threats[g2], hand)
            _place(tour, threats, card, g2)
            placed_mask |= 1 << card
        else:
            tour.end_turn()


def candidate_turns(
    heur: Heuristic, tour: Tour, seat: int, width: int, exact: bool = False
) -> list[Turn]:
    """The normal player's best few whole turns (its favourite first)."""
    know = Knowledge(tour, seat, exact=exact)
    if tour.is_attacker[seat]:
        moves = heur.attacker_moves(tour, seat, know)
        if moves and moves[0][0] >= 100:
            return [[(moves[0][1], moves[0][2])]]  # a sure point: no need to search
        return [[(card, cell)] for _, card, cell in moves[:width]]
    options = heur.defender_options(tour, seat, know, second=tour.step_in_turn == 1)
    out: list[Turn] = []
    for _, turn in options:
        if turn not in out:
            out.append(turn)
        if len(out) >= width:
            break
    return out


#: Deals a hard attacker draws up front: the search's first iterations.
ODDS_DRAWS = 32
#: Deals a defender draws up front (a draw costs about 17 µs, a playout of every candidate
#: about 1 ms): they judge the threats and are the search's first iterations.
DEFENCE_DRAWS = 256
#: Share of the normal scoring's card cost (rationing) a defender's candidate pays per
#: card it places. The light rollouts undervalue a spare card: their attacker builds far
#: fewer live threats than a real one, so without it the search doubled too often and ran
#: out of cards before the attacker (docs/ai.md). Tuned in the arena: 0.35 to 1.5 do
#: about as well.
CARD_WEIGHT = 0.5
#: Share of a hard attacker's sampled deals whose rollouts face a *wary* defence, one that
#: reads the attackers' hands (:func:`rollout`). Fair rollout defenders judge a threat by
#: counting the cards they cannot see, so they block bait and let live threats be about
#: equally: a search against them alone builds threats it cannot complete, which a
#: defender that reads hands (the hard level itself, the oracle, a good player) does not
#: fall for. Half and half keeps most of what bait wins against the normal player and
#: most of what honest threats win against readers (docs/ai.md).
WARY_SHARE = 0.5


def best_turn(cands: list[Turn], means: list[float], prior: float, spend: float) -> Turn:
    """The candidate of best value: its mean playout result (points won, or points
    conceded negated), a head start ``prior`` for the scoring's favourite (the first), less
    ``spend`` for every card it places (ties go to the earlier candidate)."""
    best_i = 0
    best_v = None
    for i, mean in enumerate(means):
        value = mean + (prior if i == 0 else 0.0) - 0.0001 * i - spend * len(cands[i])
        if best_v is None or value > best_v:
            best_v, best_i = value, i
    return cands[best_i]


class Informed(Heuristic):
    """The normal scoring with the attackers' holdings judged by sampled deals (the share
    of them in which the attackers hold a card of the mask, the counting chance as one
    more vote) instead of by counting unseen cards alone."""

    def __init__(self, base: Heuristic, attacker_hands: list[int]) -> None:
        super().__init__(base.style)
        self.attacker_hands = attacker_hands
        self._seen: dict[int, float] = {}

    def odds(self, mask: int, unseen: int, u: int, k: int) -> float:
        p = self._seen.get(mask)
        if p is None:
            hands = self.attacker_hands
            hits = sum(1 for h in hands if h & mask)
            p = (hits + super().odds(mask, unseen, u, k)) / (len(hands) + 1)
            self._seen[mask] = p
        return p


class SearchStats:
    """Counters of the last and of all searches (for the benchmark)."""

    def __init__(self) -> None:
        self.playouts = 0
        self.seconds = 0.0
        self.searches = 0

    def rate(self) -> float:
        return self.playouts / self.seconds if self.seconds else 0.0


class FlatMonteCarlo:
    def __init__(
        self,
        heur: Heuristic,
        *,
        iterations: int = 24,
        budget_ms: float | None = None,
        width: int = 8,
        prior: float = 0.06,
        inference: bool = True,
        wary: float = 0.0,
    ) -> None:
        self.heur = heur
        self.iterations = iterations
        self.budget_ms = budget_ms
        self.width = width
        self.prior = prior
        self.inference = inference
        self.wary = wary
        self.stats = SearchStats()

    def choose(self, view: TourView, base: Tour, rng: random.Random) -> Turn:
        """The turn for the view's seat; hidden hands sampled afresh every iteration, by
        the evidence of the other players' moves (:mod:`krendzu.ai.inference`) or, with
        ``inference`` off (hard-v1), uniformly."""
        start = time.perf_counter()
        seat = view.viewer
        assert seat is not None
        cands = candidate_turns(self.heur, base, seat, self.width)
        if len(cands) <= 1:
            return cands[0] if cands else []
        if self.inference:
            belief = infer(view)
            spend = 0.0
            if not base.is_attacker[seat] and base.attackers_have_cards():
                # Judge the threats by the deals the evidence supports, not by counting;
                # every card placed pays its share of the rationing cost.
                drawn = [belief.sample(rng) for _ in range(DEFENCE_DRAWS)]
                attackers = [s for s in base.roles.attackers if s != seat]
                masks = [mask_of([c for s in attackers for c in d[s]]) for d in drawn]
                cands = candidate_turns(Informed(self.heur, masks), base, seat, self.width)
                if len(cands) <= 1:
                    return cands[0] if cands else []
                spend = CARD_WEIGHT * self.heur.card_cost(base, seat, Knowledge(base, seat))
            else:
                drawn = [belief.sample(rng) for _ in range(ODDS_DRAWS)]
            deals = iter(drawn)

            def deal() -> Tour:
                hidden = next(deals, None)
                return with_hands(base, belief.sample(rng) if hidden is None else hidden)

            return self._search(cands, base, seat, deal, rng, start, spend)
        return self._search(cands, base, seat,
                            lambda: with_hands(base, sample_hidden(view, rng)), rng, start)

    def choose_full(self, tour: Tour, rng: random.Random) -> Turn:
        """Perfect information (the oracle): the real hands in every playout."""
        start = time.perf_counter()
        seat = tour.current_player
        cands = candidate_turns(self.heur, tour, seat, self.width, exact=True)
        return self._search(cands, tour, seat, tour.clone, rng, start)

    def _search(
        self,
        cands: list[Turn],
        base: Tour,
        seat: int,
        deal: Callable[[], Tour],
        rng: random.Random,
        start: float,
        spend: float = 0.0,
    ) -> Turn:
        if len(cands) <= 1:
            return cands[0] if cands else []
        deadline = None if self.budget_ms is None else start + self.budget_ms / 1000.0
        attacker = base.is_attacker[seat]
        # An attacker's deal faces a wary defence with probability ``self.wary``, decided
        # by the deal's rollout seed (the same for every candidate: the comparison stays
        # paired, and the decision's rng stream is unchanged).
        wary_below = int(self.wary * 65536) if attacker else 0
        totals = [0.0] * len(cands)
        n = 0
        base_points = base.points
        playouts = 0
        loop_start = time.perf_counter()
        while True:
            if deadline is None:
                if n >= self.iterations:
                    break
            elif n >= 2:
                # Stop when one more sampled deal (with room for a slow one) would end
                # past the budget: the decision, not just the search, keeps to it.
                now = time.perf_counter()
                if now + 2.0 * (now - loop_start) / n >= deadline:
                    break
            tour = deal()
            threats0 = threat_map(tour.cells, tour.placed)
            seed = rng.getrandbits(32)
            wary = (seed & 0xFFFF) < wary_below
            for i, turn in enumerate(cands):
                t = tour.clone()
                threats = dict(threats0)
                if not turn:
                    if t.step_in_turn == 1:
                        t.end_turn()
                    else:
                        t.pass_turn()
                else:
                    for card, cell in turn:
                        _place(t, threats, card, cell)
                    if t.phase != OVER and t.step_in_turn == 1:
                        t.end_turn()
                rollout(t, threats, random.Random(seed), wary)
                totals[i] += t.points - base_points
                playouts += 1
            n += 1
        elapsed = time.perf_counter() - start
        self.stats.playouts += playouts
        self.stats.seconds += elapsed
        self.stats.searches += 1
        sign = 1.0 if attacker else -1.0
        return best_turn(cands, [sign * total / n for total in totals], self.prior, spend)
