"""Tournaments: pure pairing and scoring for the arena, the Swiss league and the "Play now" pool.

State in, decision out, as the engine: the bot keeps the players, games and clock and asks
these functions whom to pair and how the table stands. No Telegram, no SQL, no asyncio, no
unseeded randomness, the standard library only; nothing of the project is imported (the
``tournaments-alone`` contract in ``pyproject.toml``). The rules are in docs/tournaments.md.

- :mod:`tournaments.arena`: Lichess-style arena scoring (fire streaks), standings by
  performance, continuous pairing of waiting players.
"""

from tournaments.common import Outcome, TournamentError

__all__ = ["Outcome", "TournamentError"]
