"""What the Mini App's page is told about a match: pure functions of the stored match, the
caller's seat and language, kept apart from the routes (chat/miniapp/api.py) that check who
asks and answer over HTTP.

:func:`state_json` is the page's whole picture of a match: ``game.observation(seat)`` only,
so a seated player gets their own hand and nothing of another's, anyone else the public board.
"""

from __future__ import annotations

from typing import Any

from chat.describe import next_text, role_text, score_text, together, tour_over_line, tour_text
from chat.i18n import Tr
from chat.model import tour_frame
from krendzu import Action, IllegalMove, Match, Place, Redeal, parse_action
from krendzu.coords import ORIGIN_COLUMN, ORIGIN_ROW, LabelFrame, frame_for
from krendzu.tour import ANNOUNCE, DISCARD, PLAY, TourView
from krendzu.viewjson import view_to_json
from render.board import board_layout
from storage import MatchStatus, StoredMatch


def prompt(tr: Tr, stored: StoredMatch, seat: int | None, names: tuple[str, ...]) -> str:
    """What the caller is asked to do now, in the bot's own words (as the private panel)."""
    game = stored.game
    view = game.observation(seat)
    tour = view.tour
    if stored.row.status is not MatchStatus.ACTIVE or view.match_over:
        return next_text(tr, game.observation(None), names)
    if seat is None:
        return (tr._("You are watching: the players' hands stay hidden.") + " "
                + next_text(tr, view, names))
    if tour.current_player != seat:
        return next_text(tr, view, names)
    if tour.phase == ANNOUNCE:
        return tr._("Exchange: how many cards will you swap for new ones?")
    if tour.phase == DISCARD:
        left = dict(tour.announcements)[seat] - tour.discards_done[seat]
        return tr.n_("Choose {n} more card to exchange.", "Choose {n} more cards to exchange.",
                     left)
    if tour.step_in_turn:
        return tr._("Place a second card, or end your turn.")
    if any(not isinstance(a, Place) for a in tour.legal):
        return tr._("Your move: choose a card (or pass).")
    return tr._("Your move: choose a card.")


def _cells(frame: LabelFrame, cards: tuple[tuple[Any, int, int], ...]) -> str:
    return " + ".join(f"{c.pretty()} {frame.label(x, y)}" for c, x, y in cards)


def scored_lines(tr: Tr, tour: TourView, move: int, names: tuple[str, ...]) -> list[str]:
    """Each line the tour's turn ``move`` scored, in words: who scores (the attacking
    side, also for a defender's own goal), +1, and which line (its cards and the labels of
    its two ends, as the board shows them)."""
    frame = frame_for(tour.placements)
    board = {(x, y): card for card, x, y in tour.placements}
    side = together(tr, [names[s] for s in tour.roles.attackers])
    lines = []
    for combo in tour.combos:
        if combo.move != move:
            continue
        cards = " ".join(board[cell].pretty() for cell in combo.cells)
        ends = f"{frame.label(*combo.cells[0])}–{frame.label(*combo.cells[-1])}"
        if combo.own_goal:
            lines.append(tr._("+1 for {side}: the line {cards} ({cells}), an own goal by "
                              "{name}.", side=side, cards=cards, cells=ends,
                              name=names[combo.player]))
        else:
            lines.append(tr._("+1 for {side}: the line {cards} ({cells}).", side=side,
                              cards=cards, cells=ends))
    return lines


def recent_lines(tr: Tr, game: Match, names: tuple[str, ...]) -> list[dict[str, Any]]:
    """What happened lately, in words (the board alone shows a scored line only as a
    stroke over the cards): the last round of the tour being played, one turn a player,
    each with the lines it scored, and a defender's first card of the turn in progress;
    while a new tour has no card yet, how the last one ended. Public: it names only cards
    on the board."""
    tour = game.tour.observation(None)
    out: list[dict[str, Any]] = []
    if not tour.turns and not tour.pending:
        if game.tour_index > 0:
            out.append({"text": tour_over_line(tr, game, game.tour_index - 1, names),
                        "scored": False})
        return out
    frame = frame_for(tour.placements)
    for index in range(max(0, len(tour.turns) - len(names)), len(tour.turns)):
        turn = tour.turns[index]
        text = (f"{names[turn.player]}: {_cells(frame, turn.cards)}" if turn.cards
                else tr._("{name}: pass", name=names[turn.player]))
        out.append({"text": text, "scored": False})
        out += [{"text": line, "scored": True}
                for line in scored_lines(tr, tour, index, names)]
    if tour.pending:
        out.append({"text": tr._("{name}: {cells} (may place a second card)",
                                 name=names[tour.current_player],
                                 cells=_cells(frame, tour.pending)), "scored": False})
        out += [{"text": line, "scored": True}
                for line in scored_lines(tr, tour, len(tour.turns), names)]
    if game.tour.is_over:  # the match's last tour, played to its end
        out.append({"text": tour_over_line(tr, game, game.tour_index, names),
                    "scored": False})
    return out


def state_json(stored: StoredMatch, seat: int | None, names: tuple[str, ...], tr: Tr, *,
               token: str, seconds_left: float | None,
               resigned: bool = False) -> dict[str, Any]:
    """The match as ``seat`` may see it (``None``: the public board), for the page.

    Built from ``game.observation(seat)`` only (``view``: :func:`krendzu.viewjson.view_to_json`,
    the engine protocol's form), plus what the page draws with the same model as the
    pictures (render/board.py's area and krendzu/coords.py's labels: M13 is the opening) and
    the lines the bot's messages say, in ``tr``'s language. ``resigned``: the caller resigned
    and the computer plays their seat (a trio in a group): no Hint or Resign any more."""
    game = stored.game
    view = game.observation(seat)
    tour = view.tour
    public = game.observation(None)
    # The labels are /play's (the tour's frame: every card and every cell a card may go to
    # has one); the area is the picture's, less any margin column or row that frame has no
    # label for (the picture would relabel the board to show it).
    frame = tour_frame(game)
    x0, y0, x1, y1 = board_layout(public, header=False, frame=frame).area
    x0 = max(x0, -(ORIGIN_COLUMN + frame.col_shift))
    y0 = max(y0, 1 - ORIGIN_ROW - frame.row_shift)
    over = stored.row.status is not MatchStatus.ACTIVE or view.match_over
    cells = {(x, y) for _, x, y in tour.placements}
    cells |= {(a.x, a.y) for a in tour.legal if isinstance(a, Place)}
    labels = {f"{x},{y}": frame.label(x, y) for x, y in cells}
    last = [[x, y] for _, x, y in (tour.turns[-1].cards if tour.turns else ())]
    mine = seat is not None and not over and tour.current_player == seat
    # A defender's first card of a turn that may take a second one (the panel's rule):
    # the page offers "play and end the turn" or "play, then a second card".
    pair = (mine and tour.phase == PLAY and tour.step_in_turn == 0 and bool(tour.placements)
            and len(tour.hand) >= 2 and seat not in tour.roles.attackers)
    return {
        "match": token,
        "status": stored.row.status.value,
        "over": over,
        "seat": seat,
        "players": list(names),
        # Each seat as the page lists it: name, role and cards in hand (counts are public).
        "seats": [{"name": name,
                   "role": tr._("attacks") if i in tour.roles.attackers else tr._("defends"),
                   "cards": tr.n_("{n} card", "{n} cards", tour.hand_sizes[i])}
                  for i, name in enumerate(names)],
        "language": tr.language,
        "seq": stored.next_seq,
        "moves": len(game.history),
        "secondsLeft": None if over or seconds_left is None else round(seconds_left),
        "myTurn": mine,
        "pair": pair,
        # The bot's /hint (on the player's own turn) and /resign (a player still seated).
        "canHint": mine and not resigned,
        "canResign": seat is not None and not over and not resigned,
        "columns": [[x, frame.column_label(x)] for x in range(x0, x1 + 1)],
        "rows": [[y, frame.row_label(y)] for y in range(y0, y1 + 1)],
        "labels": labels,
        "last": last,
        "lines": {
            "score": score_text(tr, public, names),
            "tour": tour_text(tr, public) + (" · " + role_text(tr, view, seat)
                                             if seat is not None and not over else ""),
            "prompt": prompt(tr, stored, seat, names),
        },
        "recent": recent_lines(tr, game, names),
        "view": view_to_json(view),
    }


def parse_actions(raw: object) -> list[Action] | None:
    """The steps a request names (at most a turn's worth), or ``None`` if they are not
    steps a person may make."""
    if not isinstance(raw, list) or not 1 <= len(raw) <= 8:
        return None
    steps: list[Action] = []
    for item in raw:
        if not isinstance(item, str) or len(item) > 40:
            return None
        try:
            step = parse_action(item)
        except (IllegalMove, ValueError):
            return None
        if isinstance(step, Redeal):  # the dealer's, never a player's
            return None
        steps.append(step)
    return steps
