"""Tournaments: pure pairing and scoring for the arena, the Swiss league and the "Play now" pool.

State in, decision out, as the engine: the bot keeps the players, games and clock and asks
these functions whom to pair and how the table stands. No Telegram, no SQL, no asyncio, no
unseeded randomness, the standard library only; nothing of the project is imported (the
``tournaments-alone`` contract in ``pyproject.toml``). The rules are in docs/tournaments.md.

- :mod:`tournaments.arena`: Lichess-style arena scoring (fire streaks), standings by
  performance, continuous pairing of waiting players.
- :mod:`tournaments.swiss`: a Swiss league's rounds (by score, no repeat, one bye at most),
  Buchholz and Sonneborn–Berger; :mod:`tournaments.matching` is the blossom matching that
  bounds its search.
- :mod:`tournaments.pool`: the "Play now" pool, matched by rating within windows that widen
  while people wait, and the computer offer after the wait.
"""

from tournaments.common import Outcome, TournamentError

__all__ = ["Outcome", "TournamentError"]
