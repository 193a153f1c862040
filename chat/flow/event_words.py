"""The words of ``/arena`` and ``/swiss`` (issue 40), read once, before anything is stored:
pure, as ``/new``'s are (:func:`chat.lobby_model.apply_new_args`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from chat.lobby_model import DEFAULT_GROUP_TIMER, LobbyState, apply_new_args
from chat.model import InputError
from krendzu import Settings, SettingsError, Table

#: An arena lasts between these (minutes); 30 unless said.
MINUTES = (5, 24 * 60)
DEFAULT_MINUTES = 30
_LENGTH = re.compile(r"^(\d{1,4})(m|min|h)?$")


def minutes_of(word: str) -> int | None:
    """``30m``, ``30``, ``2h`` → minutes; ``None`` when the word is no length."""
    found = _LENGTH.match(word)
    if not found:
        return None
    return int(found.group(1)) * (60 if found.group(2) == "h" else 1)


def arena_words(words: Sequence[str]) -> tuple[int, str, bool, int | None]:
    """``/arena``'s words: (minutes, the games' /new words, computers allowed, minutes
    before the start); :class:`InputError` for words it cannot take."""
    minutes, bots, delay = DEFAULT_MINUTES, False, None
    match_words: list[str] = []
    for word in words:
        if (length := minutes_of(word)) is not None:
            minutes = length
        elif word in {"bots=on", "bots=off"}:
            bots = word == "bots=on"
        elif word.startswith("in="):
            delay = minutes_of(word[3:])
            if delay is None or delay > MINUTES[1]:
                raise InputError("Say when it starts as in=10m.")
        else:
            match_words.append(word)
    if not MINUTES[0] <= minutes <= MINUTES[1]:
        raise InputError("An arena lasts from {low} minutes to {high} hours.",
                         low=MINUTES[0], high=MINUTES[1] // 60)
    event_settings(" ".join(match_words))  # InputError for words a duel cannot play
    return minutes, " ".join(match_words), bots, delay


def event_settings(match_args: str) -> tuple[LobbyState, Settings]:
    """The table and settings of an arena's or a league's games (duels) from their /new
    words; :class:`InputError` for words a duel cannot play."""
    state = LobbyState(table=Table.DUEL, timer=DEFAULT_GROUP_TIMER)
    apply_new_args(state, match_args.split(), private=False)
    if state.table is not Table.DUEL:
        raise InputError("Arena games are duels: leave the table out.")
    try:
        return state, state.settings()
    except SettingsError as exc:
        raise InputError("These settings cannot be played: {reason}",
                         reason=str(exc)) from exc
