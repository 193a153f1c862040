"""Rules of a lobby's stored state: read it safely, turn a setting's ↻ button, fill a
private table with computers. Pure functions of :class:`~chat.model.LobbyState`."""

from __future__ import annotations

import logging

from chat.model import LEVELS, TIMER_STEPS, LobbySeat, LobbyState
from krendzu import DEAL_PRESETS, SettingsError, Table
from storage import LobbyRow

log = logging.getLogger(__name__)


def state_of(lobby: LobbyRow) -> LobbyState:
    """The lobby's state; an unreadable one starts afresh with its creator seated."""
    try:
        return LobbyState.from_json(lobby.state)
    except (ValueError, TypeError, KeyError, SettingsError):
        log.warning("lobby %s: unreadable state, starting it afresh", lobby.lobby_id)
        return LobbyState(seats=[LobbySeat("human", lobby.creator_id)])


def fill_computers(state: LobbyState) -> None:
    """A private table: its one person, and computers of the chosen level in every other
    seat."""
    state.seats = [s for s in state.seats if s.kind == "human"][:1]
    while len(state.seats) < state.table.players:
        state.seats.append(LobbySeat("computer", level=state.level))


def cycle(state: LobbyState, op: str) -> None:
    """A setting's ↻ button (or ``level:<l>``): the next value; :class:`SettingsError` if
    the op or the resulting settings are not valid."""
    if op.startswith("level:"):
        level = op[6:]
        if level not in LEVELS:
            raise SettingsError(level)
        state.level = level
        return
    if op == "table":
        tables = list(Table)
        state.table = tables[(tables.index(state.table) + 1) % len(tables)]
        state.tours, state.preset, state.deal = None, "standard", None
    elif op == "tours":
        step = 6 if state.table.players == 3 else 2
        tours = state.settings().tour_count + step
        state.tours = tours if tours <= 12 else step
    elif op == "deal":
        presets = list(DEAL_PRESETS[state.table])
        preset = state.preset if state.preset in presets else presets[-1]
        state.preset, state.deal = presets[(presets.index(preset) + 1) % len(presets)], None
    elif op == "exchange":
        state.exchange = (state.exchange + 1) % 4
    elif op == "timer":
        steps = list(TIMER_STEPS)
        timer = state.timer if state.timer in steps else None
        state.timer = steps[(steps.index(timer) + 1) % len(steps)]
    state.settings()
