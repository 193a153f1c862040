"""Words about a match for people: moves, scores, hands and summaries (a person's name as
shown is :mod:`chat.flow.people`'s).

Everything is built from what the reader may see: moves are described by replaying the
public log (a discard is told only as a count), hands only ever for their owner.
"""

from __future__ import annotations

from collections.abc import Sequence

from chat.i18n import Tr
from chat.model import tour_frame
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
from krendzu.board import cell_xy
from krendzu.coords import LabelFrame, frame_for
from krendzu.tour import ANNOUNCE, DISCARD, TERMINAL, Tour


def together(tr: Tr, names: Sequence[str]) -> str:
    """Names joined by the reader's "and" ("Ann and Bob", "Анна и Боб"; "Ann, Bob and Cy"):
    a team or two winners, the same words the pictures use."""
    if len(names) < 2:
        return "".join(names)
    return tr._("{a} and {b}", a=", ".join(names[:-1]), b=names[-1])


def preset_label(tr: Tr, preset: str) -> str:
    """A deal preset's name (:data:`krendzu.DEAL_PRESETS`) in the reader's language: typed
    in English (``deal=sharp``), shown translated."""
    names = {"standard": tr._("standard"), "sharp": tr._("sharp"), "short": tr._("short"),
             "long": tr._("long"), "large": tr._("large"), "cautious": tr._("cautious"),
             "custom": tr._("custom")}
    return names.get(preset, preset)


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


def side_names(tr: Tr, names: Sequence[str], seats: Sequence[int]) -> str:
    return together(tr, [names[s] for s in seats])


def score_text(tr: Tr, view: MatchView, names: Sequence[str]) -> str:
    totals = view.totals
    if view.settings.table is Table.TEAMS:
        return tr._("Score: {a} {x} · {b} {y}", a=together(tr, [names[0], names[2]]),
                    x=totals[0], b=together(tr, [names[1], names[3]]), y=totals[1])
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
                att=side_names(tr, names, roles.attackers),
                dfn=side_names(tr, names, roles.defenders), opener=names[roles.opener])


def label_shift(before: Match | None, after: Match) -> tuple[LabelFrame, LabelFrame] | None:
    """``(old, new)`` when the labels of the tour ``after`` shows moved since ``before``
    (its board grew left of A or above row 1), else ``None``.

    Compared from the start of the turn ``before`` is in: a defender's first card is never
    posted to the group alone (the group sees the whole turn), so a shift that card made is
    told again when the turn ends. A tour that began after ``before`` is compared with the
    unshifted frame every tour starts in, the labels players know (the opening at M13);
    ``before`` ``None`` (the match just began) has nothing to compare."""
    if before is None:
        return None
    new = tour_frame(after)
    old = LabelFrame()
    if before.tour_index == after.tour_index:
        placed = before.tour.placed
        shown = placed[:len(placed) - len(before.tour.pending)]
        old = frame_for(cell_xy(cell) for _, cell in shown)
    return (old, new) if new != old else None


def shift_text(tr: Tr, old: LabelFrame, new: LabelFrame) -> str:
    """The plain words for a label shift: which way and how far every label moved, and the
    opening card's cell (the one cell every player knows) as the example: "The board grew:
    the labels moved one column right (M13 is now N13)."."""
    columns = new.col_shift - old.col_shift
    rows = new.row_shift - old.row_shift
    parts = []
    if columns:
        parts.append(tr._("one column right") if columns == 1 else
                     tr.n_("{n} column right", "{n} columns right", columns))
    if rows:
        parts.append(tr._("one row down") if rows == 1 else
                     tr.n_("{n} row down", "{n} rows down", rows))
    return tr._("The board grew: the labels moved {shift} ({old} is now {new}).",
                shift=together(tr, parts), old=old.label(0, 0), new=new.label(0, 0))


def _cells(frame: LabelFrame, cards: Sequence[tuple[Card, int, int]]) -> str:
    return " + ".join(f"{c.pretty()} {frame.label(x, y)}" for c, x, y in cards)


def describe_moves(tr: Tr, before: Match, actions: Sequence[Action],
                   names: Sequence[str]) -> tuple[list[str], Match]:
    """Replay ``actions`` on a clone of ``before``; lines saying publicly what happened.

    One line per finished turn (``Ann: 9♦ L12 + Q♠ M14``, ``Bob: pass``), a line per scored
    combination (``+1 Ann: K♥ Q♣ J♦ A♠``), skipped players, exchange announcements, tour ends.
    Returns the lines and the state after the actions.

    One labelling only: every cell is labelled in its tour's frame *after all the actions*
    (the frame of the picture the lines go under), also a turn played before a later action
    of the same change grew the board; and when the shown tour's labels moved
    (:func:`label_shift`), the first line says so (:func:`shift_text`), so a player who
    typed A12 reads why their card is now at B12.
    """
    game = before.clone()
    lines: list[str] = []
    #: Finished turns, labelled once every action is applied: (line index, tour, name, cards).
    turns: list[tuple[int, Tour, str, list[tuple[Card, int, int]]]] = []
    # A defender's first card, told already, is the start of the turn being finished.
    pending: list[tuple[Card, int, int]] = list(game.tour.pending)
    if pending:
        # Its points too: the group's post waited for the whole turn (chat.flow.announce),
        # so the turn's post is where the group reads them.
        first = {(x, y) for _card, x, y in pending}
        lines.extend(_combo_line(tr, game.tour, combo, names) for combo in game.tour.combos
                     if first & set(combo.cells))
    for action in actions:
        tour_index = game.tour_index
        tour = game.tour
        seat = tour.current_player
        combos_before = len(tour.combos)
        game.apply(action)
        new_tour = game.tour_index != tour_index
        if isinstance(action, Place):
            pending.append((action.card, action.x, action.y))
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
                turns.append((len(lines), tour, names[seat], pending))
                lines.append("")  # labelled below, in the tour's final frame
            else:
                lines.append(tr._("{name}: pass", name=names[seat]))
            pending = []
            if not new_tour and not tour.is_over and tour.hand_sizes()[seat] == 0:
                lines.append(tr._("{name} has no cards left and will be skipped from now on.",
                                  name=names[seat]))
        if new_tour or tour.is_over:
            lines.append(tour_over_line(tr, game, tour_index, names))
    for index, tour, name, cards in turns:
        lines[index] = f"{name}: {_cells(frame_for(tour.observation(None).placements), cards)}"
    if pending and game.tour.pending:
        lines.append(tr._("{name}: {cells} (may place a second card)",
                          name=names[game.current_player],
                          cells=_cells(tour_frame(game), pending)))
    shift = label_shift(before, game)
    if shift is not None:
        lines.insert(0, shift_text(tr, *shift))
    return lines, game


def _combo_line(tr: Tr, tour: object, combo: object, names: Sequence[str]) -> str:
    board = tour.board()  # type: ignore[attr-defined]
    cards = " ".join(board[cell].pretty() for cell in combo.cells)  # type: ignore[attr-defined]
    attackers = tour.roles.attackers  # type: ignore[attr-defined]
    side = together(tr, [names[s] for s in attackers])
    if combo.own_goal:  # type: ignore[attr-defined]
        by = names[combo.player]  # type: ignore[attr-defined]
        return tr._("+1 {side}: {cards} (own goal by {name})", side=side, cards=cards, name=by)
    return f"+1 {side}: {cards}"


def tour_over_line(tr: Tr, game: Match, tour_index: int, names: Sequence[str]) -> str:
    tour = game.tours[tour_index]
    side = together(tr, [names[s] for s in tour.roles.attackers])
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
        return tr._("{names} win!", names=together(tr, [names[s] for s in winners]))
    if outcome.draw:
        return tr._("A draw between {names}!", names=together(tr, [names[s] for s in winners]))
    if len(winners) > 1:  # the others of a trio one player conceded
        return tr._("{names} win!", names=together(tr, [names[s] for s in winners]))
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


def tour_moves(tr: Tr, tour: Tour, names: Sequence[str]) -> tuple[list[str], list[str]]:
    """A tour's moves for people (``/moves``, a tour's summary, the exported record), as
    ``(exchange, moves)``: what each player exchanged (a count, never a card), then one
    numbered entry per turn in the order played, in the board captions' words (``3. Ann:
    Q♣ M12``, ``4. Bob: pass``, a defender's ``9♦ L12 + Q♠ M14``), each scored combination
    on an indented line under the turn that made it, and a defender's half-made turn last.

    Only cards on the board are named, and move *n* is the record's ``moves[n-1]``. Cells
    are labelled as the tour's board stands now, the picture the reader compares the list
    with: if the board grew left or up during the tour, an older caption named the same cell
    differently, but one list never mixes two labellings."""
    frame = frame_for(tour.observation(None).placements)

    def cells(cards: Sequence[tuple[Card, int, int]]) -> str:
        return " + ".join(f"{c.pretty()} {frame.label(x, y)}" for c, x, y in cards)

    exchange = []
    exchanging = tour.phase in (ANNOUNCE, DISCARD)
    for seat, count in tour.announcements:
        if count == 0:
            exchange.append(tr._("{name} exchanges no cards.", name=names[seat]))
        elif exchanging:
            exchange.append(tr.n_("{name} will exchange {n} card.",
                                  "{name} will exchange {n} cards.", count, name=names[seat]))
        else:
            exchange.append(tr.n_("{name} exchanged {n} card.", "{name} exchanged {n} cards.",
                                  count, name=names[seat]))
    scored: dict[int, list[str]] = {}
    for combo in tour.combos:
        scored.setdefault(combo.move, []).append(_combo_line(tr, tour, combo, names))
    moves = []
    for index, turn in enumerate(tour.turns):
        if turn.cards:
            line = f"{names[turn.player]}: {cells(turn.cards)}"
        else:
            line = tr._("{name}: pass", name=names[turn.player])
        moves.append("\n".join([f"{index + 1}. {line}",
                                *(f"   ↳ {c}" for c in scored.get(index, ()))]))
    if tour.pending:
        index = len(tour.turns_raw)
        line = tr._("{name}: {cells} (may place a second card)",
                    name=names[tour.current_player], cells=cells(tour.pending))
        moves.append("\n".join([f"{index + 1}. {line}",
                                *(f"   ↳ {c}" for c in scored.get(index, ()))]))
    return exchange, moves
