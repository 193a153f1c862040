"""The lobby message of a match being set up: its text and keyboard (button data written
with :mod:`chat.flow.views.codec`, which also reads it back). Pure.

Names come from ``name_of`` (the names this process has seen; ``"?"`` for others), so the
view never waits for the store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from chat.describe import level_label, preset_label, table_label
from chat.flow.lobby_state import OFF, SETTING_OPTIONS, current_choice, setting_choices
from chat.flow.views import codec
from chat.i18n import Tr
from chat.lobby_model import LobbyState
from chat.model import LEVELS, Button, Keyboard
from chat.notices import ShowLobby
from krendzu import DEAL_PRESETS, Table
from storage import LobbyRow

NameOf = Callable[[int], str]


def show_lobby(lobby: LobbyRow, state: LobbyState, tr: Tr, name_of: NameOf,
               bot_username: str, *, repost: bool = False,
               engines: Sequence[str] = ()) -> ShowLobby:
    """The lobby message edited in place, or (``repost``) sent anew below the chat.
    ``engines``: the creator's outside engines, offered beside the computer levels."""
    return ShowLobby(lobby.lobby_id, lobby.chat_id, lobby.thread_id,
                     None if repost else lobby.message_id, lobby_text(state, tr, name_of),
                     lobby_keyboard(lobby, state, tr, bot_username, engines))


def closed_lobby(lobby: LobbyRow, text: str) -> ShowLobby:
    """The lobby message replaced by ``text``, without buttons (cancelled, expired,
    started)."""
    return ShowLobby(lobby.lobby_id, lobby.chat_id, lobby.thread_id, lobby.message_id, text,
                     None)


def started_text(state: LobbyState, tr: Tr, name_of: NameOf) -> str:
    """The lobby's last words: the table as it started, without the instructions."""
    return (lobby_text(state, tr, name_of).rsplit("\n\n", 1)[0] + "\n\n"
            + tr._("The match has started. Good luck!"))


def lobby_text(state: LobbyState, tr: Tr, name_of: NameOf) -> str:
    settings = state.settings()
    lines = [tr._("🃏 Krendzu — a new match"), "", table_label(tr, state.table, long=True)]
    deal = settings.deal_sizes
    preset = preset_label(tr, settings.preset)
    lines.append(tr._("Tours: {tours} · Deal: {a}/{d} ({preset}) · Exchange: {exchange}",
                      tours=settings.tour_count, a=deal.attacker, d=deal.defender,
                      preset=preset, exchange=state.exchange or tr._("off")))
    lines.append(tr._("Turn timer: {seconds} s", seconds=state.timer) if state.timer
                 else tr._("Turn timer: off"))
    lines.append("")
    for i in range(state.table.players):
        team = ""
        if state.table is Table.TEAMS:
            team = " · " + (tr._("team A") if i % 2 == 0 else tr._("team B"))
        if i < len(state.seats):
            seat = state.seats[i]
            who = (name_of(seat.user_id or 0) if seat.kind == "human"
                   else level_label(tr, seat.level or "normal"))
            if seat.user_id in state.waiting:
                who += " ⏳"
        else:
            who = tr._("— free seat —")
        lines.append(f"{i + 1}. {who}{team}")
    if state.waiting:
        lines.append("")
        lines.append(tr._("Rematch: waiting for {names} to press Rematch (or Join).",
                          names=", ".join(name_of(u) for u in state.waiting)))
    waiting = [name_of(u) for u in state.invited if state.seat_of(u) is None]
    if waiting and not state.full:
        lines.append("")
        lines.append(tr._("Waiting for {names} to press Start in my private chat.",
                          names=", ".join(waiting)))
    lines.append("")
    if state.menu == "settings":
        lines.append(tr._("⚙ Settings: ✓ marks the current choices. ◀ Back returns to the "
                          "seats and Start."))
    elif state.private:
        lines.append(tr._("Choose the computer's level and press Start."))
    elif state.full:
        lines.append(tr._("All seats are taken: press Start (or /go)."))
    else:
        lines.append(tr._("Press Join (or /join) to take a seat, or add a computer player. "
                          "The creator may change the settings."))
    return "\n".join(lines)


def lobby_keyboard(lobby: LobbyRow, state: LobbyState, tr: Tr, bot_username: str,
                   engines: Sequence[str] = ()) -> Keyboard:
    """The main view: at most eight buttons (seats, computers, ⚙ Settings, Start, Cancel);
    the computer levels and the settings open on a press (:attr:`LobbyState.menu`)."""
    lid = lobby.lobby_id
    if state.menu == "settings":
        return settings_keyboard(lid, state, tr)
    back = Button(tr._("◀ Back"), codec.lobby_data(lid, codec.menu_op(codec.MENU_MAIN)))
    settings = Button(tr._("⚙ Settings"), codec.lobby_data(lid, codec.menu_op(codec.MENU_SETTINGS)))
    rows: Keyboard = []
    if state.private:
        rows.append([Button(("✓ " if state.level == lv else "") + level_label(tr, lv),
                            codec.lobby_data(lid, f"level:{lv}")) for lv in LEVELS])
        rows.append([settings])
    else:
        rows.append([Button(tr._("Join"), codec.lobby_data(lid, "join")),
                     Button(tr._("Leave"), codec.lobby_data(lid, "leave"))])
        if state.full:
            rows.append([settings])
        elif state.menu == "add":
            rows.append([Button("+ " + level_label(tr, lv), codec.lobby_data(lid, f"add:{lv}"))
                         for lv in LEVELS] + [back])
            if engines:  # the creator's outside engines: /add @NAME as a button
                rows.append([Button("+ 🤖 " + name,
                                    codec.lobby_data(lid, f"add:@{name.lower()}"))
                             for name in engines[:3]])
        else:
            rows.append([Button(tr._("🤖 Add computer"),
                                codec.lobby_data(lid, codec.menu_op(codec.MENU_ADD))),
                         settings])
        if any(u for u in state.invited if state.seat_of(u) is None):
            rows.append([Button(tr._("🔑 Open my private chat to join"),
                                url=codec.join_link(bot_username, lid, state.invite_key))])
    rows.append([Button(tr._("▶ Start"), codec.lobby_data(lid, "go")),
                 Button(tr._("✖ Cancel"), codec.lobby_data(lid, "cancel"))])
    return rows


def settings_keyboard(lid: int, state: LobbyState, tr: Tr) -> Keyboard:
    """The settings sub-menu: the tables on two rows, then one row per option (its name,
    then its values), the current value ✓; ◀ Back and Start below."""
    choices = setting_choices(state)

    def choice(option: str, value: str, text: str) -> Button:
        mark = "✓ " if current_choice(state, option) == value else ""
        return Button(mark + text, codec.lobby_data(lid, codec.setting_op(option, value)))

    tables = {t.value: table_label(tr, t) for t in Table}
    rows: Keyboard = [
        [choice("table", t.value, tables[t.value]) for t in (Table.DUEL, Table.TEAMS)],
        [choice("table", t.value, tables[t.value])
         for t in (Table.TRIO_LONE_ATTACKER, Table.TRIO_LONE_DEFENDER)],
    ]
    names = {"tours": tr._("Tours:"), "deal": tr._("Deal:"), "exchange": tr._("Exchange:"),
             "timer": tr._("Timer:")}
    presets = DEAL_PRESETS[state.table]
    for option in SETTING_OPTIONS[1:]:
        row = [Button(names[option], codec.lobby_data(lid, codec.setting_op(option)))]
        for value in choices[option]:
            if option == "deal":
                text = f"{presets[value].attacker}/{presets[value].defender}"
            else:
                text = tr._("off") if value == OFF else value
            row.append(choice(option, value, text))
        rows.append(row)
    rows.append([Button(tr._("◀ Back"), codec.lobby_data(lid, codec.menu_op(codec.MENU_MAIN))),
                 Button(tr._("▶ Start"), codec.lobby_data(lid, "go"))])
    return rows
