"""Calibrating the opponent model of :mod:`krendzu.ai.inference` on arena games.

``python -m krendzu.ai.calibrate [--deals 20] [--attacker hard-v1] [--table duel]
[--models 1.5/1.5,-/3] [--draws 200] [--seed 7]``

Plays seeded deals (the arena's) with ``--attacker`` attacking and the normal level
defending. At every defender decision after the attackers' second card it builds the
belief for each temperature (and the uniform one) and scores it against the real hands:

* ``card_loglik``: the mean log-likelihood, per unseen card and other seat, of where the
  card really is, from the belief's estimated marginals (clipped to 1 %..99 %);
* ``threat_brier``: the Brier score of "the attackers hold a card completing this
  playable threat" over the threats on the board — what a defender has to judge;
  ``fresh_threat_brier`` the same over the threats the last card made or changed (the
  ones no attacker turn has tested yet).

Prints one JSON object; the temperature with the best card log-likelihood is ``best``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
from typing import Any

from krendzu.ai.inference import FLOOR, Belief, Model, infer
from krendzu.ai.players import warm_up
from krendzu.ai.threats import mask_of, threat_map
from krendzu.arena import ArenaOptions, deal_tour, play_tour
from krendzu.tour import Tour


def _scores(
    belief: Belief, tour: Tour, rng: random.Random, draws: int
) -> tuple[float, float, float]:
    marg = belief.marginals(rng, draws)
    total = 0.0
    count = 0
    for seat in belief.sizes:
        held = set(tour.hands[seat])
        for card in belief.pool:
            q = min(0.99, max(0.01, marg[seat][card]))
            total += math.log(q if card in held else 1.0 - q)
            count += 1
    attackers = [s for s in tour.roles.attackers if s in belief.sizes]
    now = threat_map(tour.cells, tour.placed)
    threats = [(g, m) for g, m in now.items() if g in tour.fpos]
    # Threats the last card made or changed: the ones a defender has not seen tested yet.
    cells = bytearray(tour.cells)
    cells[tour.placed[-1][1]] = 0
    before = threat_map(cells, tour.placed[:-1])
    fresh = [before.get(g) != m for g, m in threats]
    brier = fresh_brier = math.nan
    if threats and attackers:
        truth = mask_of([c for s in attackers for c in tour.hands[s]])
        hits = [0] * len(threats)
        for _ in range(draws):
            hidden = belief.sample(rng)
            sampled = mask_of([c for s in attackers for c in hidden[s]])
            for i, (_, m) in enumerate(threats):
                hits[i] += bool(m & sampled)
        errors = [(h / draws - bool(m & truth)) ** 2 for h, (_, m) in zip(hits, threats,
                                                                           strict=True)]
        brier = statistics.fmean(errors)
        new = [e for e, f in zip(errors, fresh, strict=True) if f]
        if new:
            fresh_brier = statistics.fmean(new)
    return total / max(1, count), brier, fresh_brier


def parse_model(text: str) -> Model:
    """``T/C/F``: pairwise temperature, claim temperature, floor; ``-`` = off (None)."""
    parts = text.split("/")
    values = [None if p in ("-", "") else float(p) for p in parts]
    return Model(values[0], values[1] if len(values) > 1 else None,
                 values[2] if len(values) > 2 and values[2] is not None else FLOOR)


def calibrate(
    deals: int, attacker: str, table: str, models: list[str], draws: int, seed: int
) -> dict[str, Any]:
    warm_up()
    labels = [*models, "uniform"]
    parsed = [parse_model(m) for m in models]
    logliks: dict[str, list[float]] = {k: [] for k in labels}
    briers: dict[str, list[float]] = {k: [] for k in labels}
    fresh: dict[str, list[float]] = {k: [] for k in labels}
    opts = ArenaOptions(attacker, "normal", seed=seed, table=table)

    def watch(tour: Tour, seat: int) -> None:
        view = tour.observation(seat)
        attacker_turns = sum(1 for t in view.turns if t.player in view.roles.attackers)
        if tour.is_attacker[seat] or attacker_turns < 2 or not tour.attackers_have_cards():
            return
        beliefs = [infer(view, m) for m in parsed] + [Belief.uniform(view)]
        for label, belief in zip(labels, beliefs, strict=True):
            rng = random.Random(f"{len(logliks[label])}")
            ll, brier, fresh_brier = _scores(belief, tour, rng, draws)
            logliks[label].append(ll)
            if not math.isnan(brier):
                briers[label].append(brier)
            if not math.isnan(fresh_brier):
                fresh[label].append(fresh_brier)

    for index in range(deals):
        play_tour(deal_tour(opts, index), attacker, "normal", opts, f"calibrate/{seed}/{index}",
                  {}, watch)
    rows = {
        k: {
            "card_loglik": round(statistics.fmean(logliks[k]), 4),
            "threat_brier": round(statistics.fmean(briers[k]), 4),
            "fresh_threat_brier": round(statistics.fmean(fresh[k]), 4),
        }
        for k in labels
        if logliks[k]
    }
    best = max((k for k in rows if k != "uniform"), key=lambda k: rows[k]["card_loglik"])
    return {
        "attacker": attacker,
        "table": table,
        "deals": deals,
        "decisions": len(logliks["uniform"]),
        "draws": draws,
        "by_temperature": rows,
        "best": best,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m krendzu.ai.calibrate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=20)
    parser.add_argument("--attacker", default="hard-v1")
    parser.add_argument("--table", default="duel")
    parser.add_argument("--models", default="1.5/1.5,3/3,-/1.5,-/3,-/-",
                        help="comma-separated T/C[/F]: pairwise temperature, claim "
                             "temperature, floor; '-' turns a part off")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    models = args.models.split(",")
    report = calibrate(args.deals, args.attacker, args.table, models, args.draws, args.seed)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
