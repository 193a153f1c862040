"""Computer players for every table, both roles and the exchange (see docs/ai.md).

>>> import random
>>> from krendzu import Match
>>> from krendzu.ai import make_player
>>> match = Match(["ann", "bot"], seed=1)
>>> bot = make_player("normal")
>>> actions = bot.decide(match.observation(match.current_player), random.Random(0))
"""

from krendzu.ai.players import (
    BASELINES,
    BOT_BUDGET_MS,
    LEVELS,
    HardPlayer,
    HeuristicPlayer,
    OraclePlayer,
    Player,
    RandomPlayer,
    make_player,
    turn_to_actions,
    warm_up,
)
from krendzu.ai.state import determinize, rebuild, sample_hidden

__all__ = [
    "BASELINES",
    "BOT_BUDGET_MS",
    "LEVELS",
    "HardPlayer",
    "HeuristicPlayer",
    "OraclePlayer",
    "Player",
    "RandomPlayer",
    "determinize",
    "make_player",
    "rebuild",
    "sample_hidden",
    "turn_to_actions",
    "warm_up",
]
