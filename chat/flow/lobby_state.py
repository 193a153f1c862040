"""Rules of a lobby's stored state: read it safely, the choices its settings sub-menu
offers (and the old ↻ buttons' next value), fill a private table with computers. Pure
functions of :class:`~chat.lobby_model.LobbyState`."""

from __future__ import annotations

import logging

from chat.lobby_model import TIMER_STEPS, LobbySeat, LobbyState
from chat.model import LEVELS
from krendzu import DEAL_PRESETS, SettingsError, Table
from storage import LobbyRow, is_engine_user

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
    people = [s for s in state.seats if s.kind == "human" and not is_engine_user(s.user_id)]
    engines = [s for s in state.seats if s.kind == "human" and is_engine_user(s.user_id)]
    state.seats = (people[:1] + engines)[:state.table.players]
    while len(state.seats) < state.table.players:
        state.seats.append(LobbySeat("computer", level=state.level))


#: The settings the lobby's sub-menu offers, one row each, in this order.
SETTING_OPTIONS: tuple[str, ...] = ("table", "tours", "deal", "exchange", "timer")
#: The button value of "no timer" / "no exchange".
OFF = "off"
#: Turn timers the sub-menu offers (``/new timer=N`` sets any other): few enough that the
#: row, its name included, stays readable at phone width.
MENU_TIMERS: tuple[int | None, ...] = (None, 60, 90, 180, 300)


def seat_person(state: LobbyState, user_id: int) -> None:
    """Seat a person; an invitation of theirs is used up."""
    state.seats.append(LobbySeat("human", user_id))
    state.invited = [u for u in state.invited if u != user_id]


def fit_seats(state: LobbyState) -> None:
    """After a change of table: seats past the new size go, computers first; a private
    table is filled with computers again."""
    while len(state.seats) > state.table.players:
        extra = next((i for i in range(len(state.seats) - 1, -1, -1)
                      if state.seats[i].kind == "computer"), len(state.seats) - 1)
        del state.seats[extra]
    if state.private:
        fill_computers(state)


def setting_choices(state: LobbyState) -> dict[str, list[str]]:
    """Every option's values, as written in button data, that the sub-menu offers for this
    table. The same list checks a press, so a forged value (``set:tours:999``) is refused
    even where the settings could play it."""
    tours = (6, 12) if state.table.players == 3 else (2, 4, 6, 8)
    return {
        "table": [t.value for t in Table],
        "tours": [str(n) for n in tours],
        "deal": list(DEAL_PRESETS[state.table]),
        "exchange": [OFF, "1", "2", "3"],
        "timer": [OFF if t is None else str(t) for t in MENU_TIMERS],
    }


def current_choice(state: LobbyState, option: str) -> str:
    """The option's value as written in button data (a custom ``/new`` value that no button
    offers, e.g. ``timer=45``, matches none)."""
    if option == "table":
        return state.table.value
    if option == "tours":
        return str(state.settings().tour_count)
    if option == "deal":
        return state.preset if state.deal is None else "custom"
    if option == "exchange":
        return str(state.exchange) if state.exchange else OFF
    if option == "timer":
        return str(state.timer) if state.timer else OFF
    raise SettingsError(option)


def choose(state: LobbyState, option: str, value: str) -> None:
    """A value pressed in the settings sub-menu; :class:`SettingsError`, the state left as
    it was, for an option or value the sub-menu does not offer."""
    if value not in setting_choices(state).get(option, []):
        raise SettingsError(f"{option}={value[:20]} is not offered")
    if option == "table":
        if Table(value) is not state.table:
            state.table = Table(value)
            state.tours, state.preset, state.deal = None, "standard", None
    elif option == "tours":
        state.tours = int(value)
    elif option == "deal":
        state.preset, state.deal = value, None
    elif option == "exchange":
        state.exchange = 0 if value == OFF else int(value)
    elif option == "timer":
        state.timer = None if value == OFF else int(value)
    state.settings()


def cycle(state: LobbyState, op: str) -> None:
    """A setting's ↻ button (or ``level:<l>``): the next value; :class:`SettingsError` if
    the op or the resulting settings are not valid. Lobby messages no longer show ↻ (the
    settings sub-menu replaced them), but older ones in chats still carry them."""
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
