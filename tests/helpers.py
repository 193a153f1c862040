"""Shared test helpers: build tours from written-out hands and play text moves."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence

from krendzu import Table, Tour, parse_action, parse_card, tour_roles


def make_tour(
    table: Table,
    dealer: int,
    hands: Mapping[int, str],
    *,
    exchange_limit: int = 0,
    stock: str | None = None,
) -> Tour:
    """A tour with the given hands ("QC 9D ..." per seat); the rest of the deck is set aside."""
    seats = [[parse_card(c).index for c in hands[s].split()] for s in range(table.players)]
    used = {c for hand in seats for c in hand}
    rest = (
        [parse_card(c).index for c in stock.split()]
        if stock is not None
        else [c for c in range(36) if c not in used]
    )
    return Tour(table, tour_roles(table, dealer), seats, rest, exchange_limit)


def play(tour: Tour, *steps: str) -> None:
    """Apply steps written as action texts: 'QC@0,0', 'pass', 'end', 'ann:1', 'drop:QC'."""
    for step in steps:
        tour.apply(parse_action(step))


def seats_in_order(tour: Tour, steps: Sequence[str]) -> list[int]:
    """Apply ``steps`` and return who was to move before each one."""
    seen = []
    for step in steps:
        seen.append(tour.current_player)
        tour.apply(parse_action(step))
    return seen


def stop_process(proc: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """End a process a test started: SIGTERM, then SIGKILL after ``grace`` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
