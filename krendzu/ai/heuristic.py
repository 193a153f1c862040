"""The heuristic player (levels ``normal`` and ``easy``) on the integer core.

Tactics from the rules source (RULES.md, source A, «Тактика»):

* Attacker: complete a combination when it holds the completing card; otherwise build
  threats it can complete itself (a hole or the end of a line of three), prefer forks (two
  live threats, more than a defender wants to block), open pairs that extend both ways
  (static pair potential), threats the defender will judge unlikely (few unseen completing
  cards), and keep the cards that complete its live threats.
* Defender: judge each playable threat by the chance that the attackers hold a completing
  card (counting only cards it cannot see), block the most dangerous, use a second card
  only when what is left is still dangerous (a real fork), pass when a threat is harmless
  (a queen beside a pip card gives no threat at all), never complete a line itself, choose
  blocking cards that create as little as possible, and ration its cards: the fewer spare
  cards it has over the attackers, the more a card costs.
* Exchange: an attacker swaps its weakest seed cards (a queen above all, then 8, J, K);
  a defender keeps its hand (every card it holds is one the attackers lack).

The same code with perfect knowledge (the exact attacker cards as "unseen") is the oracle.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

from krendzu.ai.threats import (
    FULL,
    chance,
    gap_mask,
    mask_of,
    pair_potential,
    threat_map,
)
from krendzu.board import LINE_STEPS, NEIGHBOUR_STEPS, ORIGIN
from krendzu.tour import Tour

Turn = list[tuple[int, int]]  # (card, cell) placed this turn; [] = pass / end


@cache
def seed_value(card: int) -> int:
    """Static promise of a lone card as the seed of a line: total pair potential with every
    other card beside it (the source: a queen is the worst seed, then 8, J and K)."""
    total = 0
    code = card + 1
    for other in range(36):
        if other == card:
            continue
        o = other + 1
        for w in ((code, o, 0, 0), (0, code, o, 0), (0, 0, code, o)):
            total += pair_potential(w)
    return total


def exchange_choice(hand: list[int], attacker: bool, limit: int) -> list[int]:
    """Cards a normal player swaps: the attacker's weak seeds, the defender none."""
    if not attacker or limit <= 0:
        return []
    values = {c: seed_value(c) for c in range(36)}
    mean = sum(values.values()) / 36
    # Below 95 % of the average seed: the queens (91 %), J and K (92 %) and the 8 (93 %).
    weak = sorted((c for c in hand if values[c] < 0.95 * mean), key=lambda c: (values[c], c))
    return weak[:limit]


@dataclass
class Style:
    """Knobs separating the levels (``normal`` is the default)."""

    forks: bool = True  # value forks and hidden threats
    noise: float = 0.0  # attacker: chance of a casual move among the top few
    oversight: float = 0.0  # defender: chance of not noticing each threat
    complete_miss: float = 0.0  # attacker: chance of not seeing a completion
    careful_blocks: bool = True  # defender: choose the blocking card with care
    count_unseen: bool = True  # defender: count only unseen cards as possible completers
    ration: bool = True  # defender: a card costs more when few are spare
    preempt: bool = True  # defender: with cards to spare, block a budding fork


NORMAL = Style()
EASY = Style(
    forks=False,
    noise=0.3,
    oversight=0.3,
    complete_miss=0.1,
    careful_blocks=False,
    count_unseen=False,
    ration=False,
    preempt=False,
)


#: How much a budding fork (see :meth:`Heuristic.fork_points`) weighs against a threat.
FORK_WEIGHT = 0.2
#: Scale of what a defender's card is worth (rationing), tuned in the arena.
CARD_COST_SCALE = 0.75


class Knowledge:
    """What a seat knows, as masks: its hand, the board, the cards it cannot see."""

    __slots__ = ("hand", "opp_cards", "placed", "unseen")

    def __init__(self, tour: Tour, seat: int, exact: bool = False) -> None:
        self.hand = mask_of(tour.hands[seat])
        self.placed = mask_of([c for c, _ in tour.placed])
        attacker = tour.is_attacker[seat]
        opponents = [s for s in range(tour.players) if tour.is_attacker[s] != attacker]
        self.opp_cards = sum(len(tour.hands[s]) for s in opponents)
        if exact:
            self.unseen = mask_of([c for s in opponents for c in tour.hands[s]])
        else:
            self.unseen = FULL & ~self.hand & ~self.placed


class Heuristic:
    """Scores the moves of one seat on a (determinized) tour."""

    def __init__(self, style: Style = NORMAL) -> None:
        self.style = style

    # Attacker -----------------------------------------------------------------------

    def attacker_moves(
        self, tour: Tour, seat: int, know: Knowledge, threats: dict[int, int] | None = None
    ) -> list[tuple[float, int, int]]:
        """Every (score, card, cell) for the attacker to move, best first."""
        cells = tour.cells
        fpos = tour.fpos
        hand = tour.hands[seat]
        hmask = know.hand
        if threats is None:
            threats = threat_map(cells, tour.placed)
        forks = self.style.forks
        # The defender's view of the unseen cards: everything the attacker cannot see
        # (partners and set-aside cards) plus the attacker's own hand.
        def_unseen = know.unseen | hmask
        u_def = def_unseen.bit_count()
        k_own = max(1, len(hand) - 1)
        own_live = {
            g: m & hmask for g, m in threats.items() if g in fpos and m & hmask
        }
        partners = [
            s for s in range(tour.players) if tour.is_attacker[s] and s != seat
        ]
        partner_cards = sum(len(tour.hands[s]) for s in partners)
        u_me = know.unseen.bit_count()
        out: list[tuple[float, int, int]] = []
        for c in tour.placement_cells():
            full: list[int] = []
            twos: list[tuple[list[int], int, int, int]] = []
            ones: list[tuple[list[int], int]] = []
            for step in LINE_STEPS:
                for k in range(4):
                    start = c - k * step
                    w = [cells[start], cells[start + step], cells[start + 2 * step],
                         cells[start + 3 * step]]
                    n = 4 - w.count(0)
                    if n == 3:
                        f = [x for x in w if x]
                        full.append(gap_mask(f[0], f[1], f[2], k))
                    elif n == 2:
                        j = next(i for i in range(4) if i != k and not w[i])
                        twos.append((w, k, j, start + j * step))
                    elif n == 1:
                        ones.append((w, k))
            here = threats.get(c, 0)
            for x in hand:
                bit = 1 << x
                rest = hmask & ~bit
                pts = 0
                for m in full:
                    if m & bit:
                        pts += 1
                score = 100.0 * pts
                if here and not pts and here & rest:
                    score -= 4.0  # plugging its own hole
                new: dict[int, int] = {}
                code = x + 1
                for w, k, j, g in twos:
                    w2 = list(w)
                    w2[k] = code
                    f = [v for v in w2 if v]
                    m = gap_mask(f[0], f[1], f[2], j)
                    if m:
                        new[g] = new.get(g, 0) | m
                n_own = 0
                for g, m in new.items():
                    own = m & rest
                    live = g in fpos or any(g == c + s for s in NEIGHBOUR_STEPS)
                    weight = 1.0 if live else 0.4
                    if own:
                        if g in own_live:
                            score += 1.0 * weight
                            continue
                        n_own += 1
                        if forks:
                            p_def = chance((m & def_unseen).bit_count(), u_def, k_own)
                            score += 4.0 * weight * (1.5 - 0.5 * p_def)
                        else:
                            score += 4.0 * weight
                    else:
                        p_def = chance((m & def_unseen).bit_count(), u_def, k_own)
                        score += 2.0 * weight * p_def
                        if partner_cards:
                            score += 2.0 * weight * chance(
                                (m & know.unseen).bit_count(), u_me, partner_cards
                            )
                if forks:
                    total_own = n_own + sum(1 for g in own_live if g != c)
                    if total_own >= 2 and n_own:
                        score += 6.0 if total_own == 2 else 10.0
                pp = 0
                for w, k in ones:
                    w2 = list(w)
                    w2[k] = code
                    pp += pair_potential(tuple(w2))
                score += pp / 90.0
                if not pts:
                    for g, m in own_live.items():
                        if g != c and m & bit and not (m & rest):
                            score -= 3.0  # spends the only card completing a live threat
                            break
                score -= seed_value(x) / 2000.0
                out.append((score, x, c))
        out.sort(key=lambda t: (-t[0], t[1], t[2]))
        return out

    def attacker_turn(self, tour: Tour, seat: int, know: Knowledge, rng: random.Random) -> Turn:
        moves = self.attacker_moves(tour, seat, know)
        style = self.style
        if style.noise and moves:
            top = moves[0]
            if top[0] >= 100 and rng.random() < style.complete_miss:
                moves = [m for m in moves if m[0] < 100] or moves
            if rng.random() < style.noise:
                pick = moves[rng.randrange(min(6, len(moves)))]
                return [(pick[1], pick[2])]
        best = moves[0]
        return [(best[1], best[2])]

    # Defender -----------------------------------------------------------------------

    def odds(self, mask: int, unseen: int, u: int, k: int) -> float:
        """Chance the opponents (``k`` cards out of the ``u`` in ``unseen``) hold a card of
        ``mask``, by counting; the hard level judges by the deals it reads instead."""
        return chance((mask & unseen).bit_count(), u, k)

    def _live(
        self, tour: Tour, know: Knowledge, threats: dict[int, int], rng: random.Random | None
    ) -> dict[int, float]:
        fpos = tour.fpos
        unseen = know.unseen
        if not self.style.count_unseen:
            unseen = FULL & ~know.placed
        u = unseen.bit_count()
        k = know.opp_cards
        out = {}
        oversight = self.style.oversight
        for g, m in threats.items():
            if g in fpos:
                p = self.odds(m, unseen, u, k)
                if p > 0.0:
                    if oversight and rng is not None and rng.random() < oversight:
                        continue
                    out[g] = p
        return out

    def _harm(
        self,
        tour: Tour,
        know: Knowledge,
        threats: dict[int, int],
        card: int,
        cell: int,
    ) -> tuple[float, dict[int, float]] | None:
        """Cost of the defender putting ``card`` on ``cell`` beyond the block itself:
        threats it creates or makes playable (as chances) and pairs it offers. ``None``
        for an own goal."""
        cells = tour.cells
        if threats.get(cell, 0) >> card & 1:
            return None
        unseen = know.unseen
        u = unseen.bit_count()
        k = know.opp_cards
        code = card + 1
        created: dict[int, int] = {}
        pp = 0
        for step in LINE_STEPS:
            for i in range(4):
                start = cell - i * step
                w = [cells[start], cells[start + step], cells[start + 2 * step],
                     cells[start + 3 * step]]
                n = 4 - w.count(0)
                if n == 2:
                    j = next(t for t in range(4) if t != i and not w[t])
                    w[i] = code
                    f = [v for v in w if v]
                    m = gap_mask(f[0], f[1], f[2], j)
                    if m:
                        g = start + j * step
                        created[g] = created.get(g, 0) | m
                elif n == 1:
                    w[i] = code
                    pp += pair_potential(tuple(w))
        fpos = tour.fpos
        newp: dict[int, float] = {}
        for g, m in created.items():
            old = threats.get(g, 0)
            live = g in fpos or any(g == cell + s for s in NEIGHBOUR_STEPS)
            p = self.odds(old | m, unseen, u, k)
            if live:
                newp[g] = p
        for s in NEIGHBOUR_STEPS:
            g = cell + s
            if g not in fpos and not cells[g] and g in threats and g not in newp:
                newp[g] = self.odds(threats[g], unseen, u, k)
        return pp / 400.0, newp

    def card_cost(self, tour: Tour, seat: int, know: Knowledge) -> float:
        if not self.style.ration:
            return 0.28
        mine = sum(len(tour.hands[s]) for s in range(tour.players) if not tour.is_attacker[s])
        spare = mine - know.opp_cards
        if spare >= 5:
            cost = 0.16
        elif spare >= 3:
            cost = 0.22
        elif spare >= 1:
            cost = 0.3
        else:
            cost = 0.4
        return cost * CARD_COST_SCALE

    @staticmethod
    def _risk(ps: dict[int, float]) -> float:
        # Chance the attackers can score next turn (threats taken as independent), plus a
        # little for the threats left to block afterwards.
        keep = 1.0
        total = 0.0
        for p in ps.values():
            keep *= 1.0 - p
            total += p
        miss = 1.0 - keep
        return miss + 0.15 * max(0.0, total - miss)

    def defender_options(
        self,
        tour: Tour,
        seat: int,
        know: Knowledge,
        rng: random.Random | None = None,
        second: bool = False,
    ) -> list[tuple[float, Turn]]:
        """Whole-turn options (cost, cards) for the defender to move, cheapest first.

        ``second``: the defender already placed its first card (options: end, one more)."""
        threats = threat_map(tour.cells, tour.placed)
        hand = tour.hands[seat]
        must = not tour.can_pass() and not second
        if second and not tour.attackers_have_cards():
            return [(0.0, [])]
        if not tour.attackers_have_cards() or not tour.placed:
            return [(0.0, [self._quiet_place(tour, seat, threats)])]
        live = self._live(tour, know, threats, rng)
        lam = self.card_cost(tour, seat, know)
        options: list[tuple[float, Turn]] = []
        ranked = sorted(live.items(), key=lambda t: (-t[1], t[0]))[:4]
        targets = [g for g, _ in ranked]
        forks: dict[int, float] = {}
        if self.style.preempt and not second:
            forks = self.fork_points(tour, know, threats)
            for c, _ in sorted(forks.items(), key=lambda t: (-t[1], t[0]))[:3]:
                if c not in targets:
                    targets.append(c)
        fw = FORK_WEIGHT

        def fork_risk(*taken: int) -> float:
            return fw * sum(q for c, q in forks.items() if c not in taken)

        if not must:
            options.append((self._risk(live) + fork_risk(), []))

        singles: list[tuple[float, int, int, dict[int, float]]] = []
        for g in targets:
            best: tuple[float, int, dict[int, float]] | None = None
            cards = hand
            if not self.style.careful_blocks and rng is not None:
                cards = [hand[rng.randrange(len(hand))]]
            for y in cards:
                res = self._harm(tour, know, threats, y, g)
                if res is None:
                    continue
                pp, newp = res
                after = {h: p for h, p in live.items() if h != g}
                for h, p in newp.items():
                    if p > after.get(h, 0.0):
                        after[h] = p
                cost = self._risk(after) + pp
                if best is None or cost < best[0] - 1e-12:
                    best = (cost, y, newp)
            if best is not None:
                cost, y, newp = best
                singles.append((cost, y, g, newp))
                options.append((cost + lam + fork_risk(g), [(y, g)]))
        if not second and len(hand) >= 2:
            singles.sort(key=lambda t: (t[0], t[2]))
            top = singles[:4]
            for i in range(len(top)):
                for j in range(i + 1, len(top)):
                    _, y1, g1, n1 = top[i]
                    _, y2, g2, n2 = top[j]
                    if g1 == g2:
                        continue
                    if y1 == y2:
                        alt = self._other_card(tour, know, threats, y1, g2)
                        if alt is None:
                            continue
                        y2 = alt
                    after = {h: p for h, p in live.items() if h not in (g1, g2)}
                    for newp in (n1, n2):
                        for h, p in newp.items():
                            if h not in (g1, g2) and p > after.get(h, 0.0):
                                after[h] = p
                    if g2 not in tour.fpos and g1 not in tour.fpos:
                        continue
                    cost = self._risk(after) + 2 * lam + 0.08 + fork_risk(g1, g2)
                    first, other = (g1, y1), (g2, y2)
                    if g1 not in tour.fpos:
                        first, other = other, first
                    options.append((cost, [(first[1], first[0]), (other[1], other[0])]))
        if not options:
            return [(0.0, [self._quiet_place(tour, seat, threats)])]
        options.sort(key=lambda t: (t[0], len(t[1]), t[1]))
        return options

    def _other_card(
        self, tour: Tour, know: Knowledge, threats: dict[int, int], used: int, cell: int
    ) -> int | None:
        best = None
        for y in tour.hands[tour.current_player]:
            if y == used:
                continue
            res = self._harm(tour, know, threats, y, cell)
            if res is None:
                continue
            cost = sum(res[1].values()) + res[0]
            if best is None or cost < best[0]:
                best = (cost, y)
        return None if best is None else best[1]

    def fork_points(
        self, tour: Tour, know: Knowledge, threats: dict[int, int]
    ) -> dict[int, float]:
        """Cells where one card the defender cannot see would make two new live threats
        at once (a fork in the making) → the chance the attackers hold such a card."""
        cells = tour.cells
        fpos = tour.fpos
        unseen = know.unseen
        u = unseen.bit_count()
        k = know.opp_cards
        pool = [x for x in range(36) if unseen >> x & 1]
        out: dict[int, float] = {}
        for c in tour.frontier:
            twos = []
            for step in LINE_STEPS:
                for i in range(4):
                    start = c - i * step
                    w = [cells[start], cells[start + step], cells[start + 2 * step],
                         cells[start + 3 * step]]
                    if w.count(0) == 2:
                        j = next(t for t in range(4) if t != i and not w[t])
                        g = start + j * step
                        if g in fpos or any(g == c + s for s in NEIGHBOUR_STEPS):
                            twos.append((w, i, j, g))
            if len(twos) < 2:
                continue
            forking = 0
            for x in pool:
                code = x + 1
                others = unseen & ~(1 << x)
                gaps: set[int] = set()
                for w, i, j, g in twos:
                    if g in gaps:
                        continue
                    w2 = list(w)
                    w2[i] = code
                    f = [v for v in w2 if v]
                    if gap_mask(f[0], f[1], f[2], j) & others:
                        gaps.add(g)
                if len(gaps) >= 2:
                    forking |= 1 << x
            if forking:
                out[c] = chance(forking.bit_count(), u, k)
        return out

    def _quiet_place(self, tour: Tour, seat: int, threats: dict[int, int]) -> tuple[int, int]:
        """A placement that scores nothing and creates as little as possible."""
        if not tour.placed:
            hand = tour.hands[seat]
            return (min(hand, key=lambda c: (seed_value(c), c)), ORIGIN)
        know = Knowledge(tour, seat)
        best = None
        cells = sorted(tour.frontier)
        for c in cells:
            for y in tour.hands[seat]:
                res = self._harm(tour, know, threats, y, c)
                if res is None:
                    continue
                cost = sum(res[1].values()) + res[0]
                if best is None or cost < best[0]:
                    best = (cost, y, c)
            if best is not None and best[0] == 0.0:
                break
        if best is None:  # every placement is an own goal: take the first
            return (tour.hands[seat][0], cells[0])
        return (best[1], best[2])

    def defender_turn(
        self, tour: Tour, seat: int, know: Knowledge, rng: random.Random
    ) -> Turn:
        second = tour.step_in_turn == 1
        options = self.defender_options(tour, seat, know, rng, second=second)
        return options[0][1]

    # Whole turn ---------------------------------------------------------------------

    def turn(
        self, tour: Tour, seat: int, rng: random.Random, exact: bool = False
    ) -> Turn:
        know = Knowledge(tour, seat, exact=exact)
        if tour.is_attacker[seat]:
            return self.attacker_turn(tour, seat, know, rng)
        return self.defender_turn(tour, seat, know, rng)
