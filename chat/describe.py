"""Words about a match for people: names, moves, scores, hands and summaries.

Everything is built from what the reader may see: moves are described by replaying the
public log (a discard is told only as a count), hands only ever for their owner.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from chat.i18n import Tr
from krendzu import (
    Action,
    Announce,
    Card,
    Discard,
    EndTurn,
    Match,
    MatchView,
    Outcome,
    Pass,
    Place,
    Table,
)
from krendzu.coords import LabelFrame, frame_for
from krendzu.tour import ANNOUNCE, DISCARD, TERMINAL

MAX_NAME = 24
#: Zero-width joiners stay: they shape Persian and Indic words and join emoji sequences,
#: and cannot reorder or hide text around them.
_JOINERS = frozenset("\u200c\u200d")
#: Letters and symbols that draw nothing (Hangul fillers, the blank Braille pattern): a
#: favourite for "invisible" names.
_BLANKS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def visible(text: str) -> str:
    """``text`` without invisible formatting: bidi controls (U+202A..U+202E, U+2066..U+2069,
    U+200E/F), zero-width spaces, soft hyphens and every other format character (Unicode
    category Cf), control characters (Cc), lone surrogates (Cs) and blank fillers.

    Names are shown inside the bot's own sentences ("{name} left the table"): a right-to-left
    override in a name would reverse the rest of the sentence, and invisible characters make
    two players look alike or a name look empty."""
    return "".join(ch for ch in text if ch not in _BLANKS and (
        ch in _JOINERS or unicodedata.category(ch) not in ("Cf", "Cc", "Cs")))


def _shown(name: str) -> str:
    """The visible part of a name, spaces collapsed; empty if nothing of it shows."""
    name = " ".join(visible(name).split())
    return name if name.strip("".join(_JOINERS)) else ""


def short_name(name: str) -> str:
    name = _shown(name) or "?"
    return name if len(name) <= MAX_NAME else name[: MAX_NAME - 1] + "…"


def person_name(full_name: str | None, username: str | None) -> str:
    """A Telegram user's display name: the full name as far as it is visible, else the
    username, else "Player" (a name of invisible characters only would show nothing)."""
    for candidate in (full_name, username):
        if candidate and _shown(candidate):
            return short_name(candidate)
    return "Player"


def level_label(tr: Tr, level: str) -> str:
    names = {"easy": tr._("Easy"), "normal": tr._("Normal"), "hard": tr._("Hard"),
             "random": tr._("Random")}
    return "🤖 " + names.get(level, level)


def cards_text(cards: Sequence[Card]) -> str:
    return " ".join(c.pretty() for c in sorted(cards)) or "—"


def hand_text(tr: Tr, cards: Sequence[Card]) -> str:
    if not cards:
        return tr._("Your hand is empty.")
    return tr.n_("Your hand ({n} card): {cards}", "Your hand ({n} cards): {cards}",
                 len(cards), cards=cards_text(cards))


def side_names(view: MatchView, names: Sequence[str], seats: Sequence[int]) -> str:
    return " & ".join(names[s] for s in seats)


def score_text(tr: Tr, view: MatchView, names: Sequence[str]) -> str:
    totals = view.totals
    if view.settings.table is Table.TEAMS:
        return tr._("Score: {a} {x} · {b} {y}", a=f"{names[0]} & {names[2]}", x=totals[0],
                    b=f"{names[1]} & {names[3]}", y=totals[1])
    parts = " · ".join(f"{names[s]} {totals[s]}" for s in range(len(names)))
    return tr._("Score: {parts}", parts=parts)


def role_text(tr: Tr, view: MatchView, seat: int) -> str:
    if seat in view.tour.roles.attackers:
        return tr._("you attack")
    return tr._("you defend")


def tour_text(tr: Tr, view: MatchView) -> str:
    return tr._("Tour {n}/{total}", n=view.tour_index + 1, total=view.settings.tour_count)


def next_text(tr: Tr, view: MatchView, names: Sequence[str]) -> str:
    """Who acts next and in what role, or that the match is over."""
    if view.match_over:
        return tr._("The match is over.")
    seat = view.tour.current_player
    if seat == TERMINAL:
        return ""
    if view.tour.phase == ANNOUNCE:
        return tr._("Next: {name} announces how many cards to exchange.", name=names[seat])
    if view.tour.phase == DISCARD:
        return tr._("Next: {name} chooses cards to exchange.", name=names[seat])
    if seat in view.tour.roles.attackers:
        return tr._("Next: {name} (attacker).", name=names[seat])
    if view.tour.step_in_turn:
        return tr._("Next: {name} (defender) may place a second card.", name=names[seat])
    return tr._("Next: {name} (defender).", name=names[seat])


def roles_line(tr: Tr, view: MatchView, names: Sequence[str]) -> str:
    roles = view.tour.roles
    return tr._("Attack: {att}. Defence: {dfn}. {opener} opens.",
                att=side_names(view, names, roles.attackers),
                dfn=side_names(view, names, roles.defenders), opener=names[roles.opener])


def tour_frame(game: Match) -> LabelFrame:
    return frame_for(game.tour.observation(None).placements)


def describe_moves(tr: Tr, before: Match, actions: Sequence[Action],
                   names: Sequence[str]) -> tuple[list[str], Match]:
    """Replay ``actions`` on a clone of ``before``; lines saying publicly what happened.

    One line per finished turn (``Ann: 9♦ L12 + Q♠ M14``, ``Bob: pass``), a line per scored
    combination (``+1 Ann: K♥ Q♣ J♦ A♠``), skipped players, exchange announcements, tour ends.
    Returns the lines and the state after the actions.
    """
    game = before.clone()
    lines: list[str] = []
    # A defender's first card, told already, is the start of the turn being finished.
    pending: list[tuple[Card, int, int]] = list(game.tour.pending)
    for action in actions:
        tour_index = game.tour_index
        tour = game.tour
        seat = tour.current_player
        combos_before = len(tour.combos)
        game.apply(action)
        new_tour = game.tour_index != tour_index
        if isinstance(action, Place):
            pending.append((action.card, action.x, action.y))
        frame = frame_for(tour.observation(None).placements)
        if isinstance(action, Place):
            for combo in tour.combos[combos_before:]:
                lines.append(_combo_line(tr, tour, combo, names))
        if isinstance(action, Announce):
            if action.count == 0:
                lines.append(tr._("{name} exchanges no cards.", name=names[seat]))
            else:
                lines.append(tr.n_("{name} will exchange {n} card.",
                                   "{name} will exchange {n} cards.", action.count,
                                   name=names[seat]))
            continue
        if isinstance(action, Discard):
            if tour.phase not in (ANNOUNCE, DISCARD) or new_tour:
                lines.append(tr._("The exchange is done: new cards were dealt."))
            else:  # say what happened, never which card
                chosen = len(tour.discards.get(seat, ()))
                total = dict(tour.announcements)[seat]
                lines.append(tr.n_("{name} has picked {k} of {n} card to exchange.",
                                   "{name} has picked {k} of {n} cards to exchange.", total,
                                   name=names[seat], k=chosen))
            continue
        turn_over = new_tour or tour.current_player != seat or tour.step_in_turn == 0
        if isinstance(action, Pass | EndTurn) or turn_over:
            if not turn_over:
                continue
            if pending:
                cells = " + ".join(f"{c.pretty()} {frame.label(x, y)}" for c, x, y in pending)
                lines.append(f"{names[seat]}: {cells}")
            else:
                lines.append(tr._("{name}: pass", name=names[seat]))
            pending = []
            if not new_tour and not tour.is_over and tour.hand_sizes()[seat] == 0:
                lines.append(tr._("{name} has no cards left and will be skipped from now on.",
                                  name=names[seat]))
        if new_tour or tour.is_over:
            lines.append(tour_over_line(tr, game, tour_index, names))
    if pending and game.tour.pending:
        frame = frame_for(game.tour.observation(None).placements)
        cells = " + ".join(f"{c.pretty()} {frame.label(x, y)}" for c, x, y in pending)
        lines.append(tr._("{name}: {cells} (may place a second card)",
                          name=names[game.current_player], cells=cells))
    return lines, game


def _combo_line(tr: Tr, tour: object, combo: object, names: Sequence[str]) -> str:
    board = tour.board()  # type: ignore[attr-defined]
    cards = " ".join(board[cell].pretty() for cell in combo.cells)  # type: ignore[attr-defined]
    attackers = tour.roles.attackers  # type: ignore[attr-defined]
    side = " & ".join(names[s] for s in attackers)
    if combo.own_goal:  # type: ignore[attr-defined]
        by = names[combo.player]  # type: ignore[attr-defined]
        return tr._("+1 {side}: {cards} (own goal by {name})", side=side, cards=cards, name=by)
    return f"+1 {side}: {cards}"


def tour_over_line(tr: Tr, game: Match, tour_index: int, names: Sequence[str]) -> str:
    tour = game.tours[tour_index]
    side = " & ".join(names[s] for s in tour.roles.attackers)
    return tr.n_("Tour {t} is over: {side} scored {n} point.",
                 "Tour {t} is over: {side} scored {n} points.", tour.points, t=tour_index + 1,
                 side=side)


def result_text(tr: Tr, outcome: Outcome, names: Sequence[str]) -> str:
    """Who won, from the engine's outcome (:mod:`krendzu.outcome`): the winner the
    statistics and ratings count too."""
    winners = outcome.winners
    if not winners:
        return tr._("Nobody wins: every player resigned.")
    if outcome.table is Table.TEAMS:
        if outcome.draw:
            return tr._("A draw!")
        return tr._("{names} win!", names=" & ".join(names[s] for s in winners))
    if outcome.draw:
        return tr._("A draw between {names}!", names=", ".join(names[s] for s in winners))
    if len(winners) > 1:  # the others of a trio one player conceded
        return tr._("{names} win!", names=" & ".join(names[s] for s in winners))
    return tr._("{name} wins!", name=names[winners[0]])


def table_label(tr: Tr, table: Table, *, long: bool = False) -> str:
    """The table's name: short for lists (``/history``), or (``long``) the lobby's line that
    says how the seats play."""
    if long:
        return {
            Table.DUEL: tr._("Table: 2 players, one against one"),
            Table.TRIO_LONE_ATTACKER: tr._("Table: 3 players — a lone attacker against two "
                                           "defenders"),
            Table.TRIO_LONE_DEFENDER: tr._("Table: 3 players — two attackers against a lone "
                                           "defender"),
            Table.TEAMS: tr._("Table: 4 players in two teams (seats 1 & 3 against 2 & 4)"),
        }[table]
    return {
        Table.DUEL: tr._("duel"),
        Table.TRIO_LONE_ATTACKER: tr._("trio, lone attacker"),
        Table.TRIO_LONE_DEFENDER: tr._("trio, lone defender"),
        Table.TEAMS: tr._("teams"),
    }[table]
