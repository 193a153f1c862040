"""The private panel of the player to move: its text, its keyboard, and the button data of
every key (written with :mod:`chat.flow.views.codec`, which also reads it back).

Pure: the caller remembers which move lines the panel shows (:func:`shown`), so the panel
can become the record of the move later.
"""

from __future__ import annotations

from collections.abc import Sequence

from chat.describe import hand_text, role_text, score_text, tour_text
from chat.flow.views import codec
from chat.flow.views.texts import where
from chat.flow.views.webapp import AppLinks
from chat.i18n import Tr
from chat.model import Button, Keyboard, rows_of, tour_frame
from chat.notices import BoardPicture, EditPanel, Notice, Send
from krendzu import Announce, Card, EndTurn, MatchView, Pass, Place
from krendzu.tour import ANNOUNCE, DISCARD, PLAY
from storage import StoredMatch

#: Show cells as buttons directly when there are at most this many; else column, then row.
DIRECT_CELLS = 40
#: Move lines a panel shows above the hand.
PANEL_LINES = 6


def shown(lines: Sequence[str]) -> list[str]:
    """The move lines a panel built with ``lines`` shows."""
    return list(lines[-PANEL_LINES:])


#: The ``stage`` of a defender's first card with the second card picked already (its cells
#: place it and then ask for the second one's): ``then:<card code>``.
THEN = "then:"


def then_stage(second: Card) -> str:
    return THEN + second.code()


def second_of(stage: str) -> Card | None:
    """The second card a ``then:`` stage names (``None`` for any other stage)."""
    if not stage.startswith(THEN):
        return None
    try:
        return Card.parse(stage.removeprefix(THEN))
    except ValueError:
        return None


def play_button(tr: Tr, app: AppLinks, match_id: int) -> Button:
    """The private chat's "▶ Play": a ``web_app`` button opening the Mini App's page."""
    return Button(tr._("▶ Play"), web_app=app.page_url(match_id))


def closed_note(tr: Tr) -> str:
    """What a panel says once it is closed because play moved on (its keys are gone)."""
    return tr._("⤵ This panel is closed: the game moved on. The newest messages are below.")


def panel(stored: StoredMatch, seat: int, user_id: int, tr: Tr, names: Sequence[str],
          lines: Sequence[str], title: str | None, *, edit: bool = False, stage: str = "",
          card: Card | None = None, column: int | None = None,
          redraw: bool = False, clock: str = "", app: AppLinks | None = None,
          view: MatchView | None = None) -> Notice:
    """The panel: where (``title``: the group's), the last moves, tour, role and score, the
    hand, the turn timer's ``clock`` line, what to do, the buttons; a new message with the
    board (the player's previous panel then says it was replaced), or (``edit``) the pressed
    panel edited: its caption only while the position is the one its photo shows (a
    navigation), its photo too (``redraw``) after a move. ``view``: the seat's observation
    of ``stored.game`` when the caller has it already (the player to move's lists every
    legal step, hundreds of placements: built once a move, not twice)."""
    if view is None:
        view = stored.game.observation(seat)
    hand = view.tour.hand
    head = [where(tr, stored.row.chat_id, title), *lines[-PANEL_LINES:],
            tour_text(tr, view) + " · " + role_text(tr, view, seat) + " · "
            + score_text(tr, view, names), hand_text(tr, hand)]
    prompt, keyboard = panel_keyboard(stored, view, tr, stage, card, column)
    if app is not None and keyboard:
        # The Mini App (issue 29): the same match on a board one taps, in a private chat
        # as a web_app button.
        keyboard = [*keyboard, [play_button(tr, app, stored.match_id)]]
    text = "\n".join([*head, *([clock] if clock else []), "", prompt])
    picture = BoardPicture(view, tuple(names), tr.language, private=True)
    new = Send(user_id, text, keyboard=keyboard, picture=picture,
               panel_of=(stored.match_id, user_id),
               replaces=tr._("⤵ This panel was replaced by the newer one below."))
    if edit:
        return EditPanel(stored.match_id, user_id, text, keyboard, fallback=new,
                         picture=picture if redraw else None)
    return new


def panel_keyboard(stored: StoredMatch, view: MatchView, tr: Tr, stage: str,
                   card: Card | None, column: int | None) -> tuple[str, Keyboard]:
    """What the player is asked, and the keys to answer: an exchange count, the cards to
    exchange, or a card, then its cell (directly, or column then row when there are many).

    Taps of a turn (cells shown directly): the tour's opening, where M13 is the one legal
    cell, is one (the card key carries its cell); an attacker's card is two (card, cell); a
    defender's one card then "end" is two (card, cell: the cell key of a turn's first card
    ends the turn, there is no separate End turn to press); a defender's two cards are four
    (card, the second card under "+", the first one's cell, the second one's cell). Mid-turn
    (the second card's cells left with ◀ Back) End turn is one tap, or the typed word.
    ``stage``: "discard", or :func:`then_stage` (a defender's second card picked)."""
    mid, seq = stored.match_id, stored.next_seq
    tour = view.tour
    hand = sorted(tour.hand)
    legal = tour.legal

    def data(op: str) -> str:
        return codec.match_data(mid, seq, op)

    if tour.phase == ANNOUNCE:
        counts = sorted(a.count for a in legal if isinstance(a, Announce))
        return (tr._("Exchange: how many cards will you swap for new ones? (/exchange N)"),
                rows_of([Button(str(n), data(codec.announce_op(n))) for n in counts], 8))
    if tour.phase == DISCARD:
        left = dict(tour.announcements)[tour.current_player] - tour.discards_done[
            tour.current_player]
        if stage == "discard" and card is not None:
            return (tr._("Exchange {card}?", card=card.pretty()),
                    [[Button(tr._("✓ Exchange {card}", card=card.pretty()),
                             data(codec.discard_op(card))),
                      Button(tr._("◀ Back"), data(codec.BACK_OP))]])
        return (tr.n_("Choose {n} more card to exchange (/discard CARD).",
                      "Choose {n} more cards to exchange (/discard CARD).", left),
                rows_of([Button(c.pretty(), data(codec.choose_discard_op(c))) for c in hand],
                        8))
    if tour.phase != PLAY:
        return "", []
    frame = tour_frame(stored.game)
    # A defender's first card of a turn (not the tour's opening, a second card left): its
    # cell alone plays it and ends the turn, so one card then "end" is two taps (card,
    # cell); two cards stay four taps (card, the second card under "+", cell, cell).
    pair = (tour.step_in_turn == 0 and bool(tour.placements) and len(hand) >= 2
            and tour.current_player not in tour.roles.attackers)
    if card is not None:
        second = second_of(stage) if pair else None
        if second is not None and (second == card or second not in hand):
            second = None
        cells = sorted({(a.x, a.y) for a in legal if isinstance(a, Place) and a.card == card},
                       key=lambda c: (c[1], c[0]))
        back = [Button(tr._("◀ Back"), data(codec.BACK_OP))]
        seconds = rows_of([Button("+" + c.pretty(), data(codec.card_op(card, c)))
                           for c in hand if c != card], 8) if pair and second is None else []
        if second is not None:
            prompt = tr._("{card}, then {second}: choose the cell of {card}.",
                          card=card.pretty(), second=second.pretty())
        elif pair:
            prompt = tr._("{card}: tap a cell to play it alone (that ends your turn), or "
                          "first tap a second card (+) to play two.", card=card.pretty())
        else:
            prompt = tr._("{card}: choose a cell (the free cells are labelled on the "
                          "picture).", card=card.pretty())
        if column is not None:
            cells = [c for c in cells if c[0] == column]
        if len(cells) <= DIRECT_CELLS:
            buttons = [Button(frame.label(x, y), data(codec.place_op(
                card, x, y, end=pair and second is None, then=second))) for x, y in cells]
            return prompt, [*rows_of(buttons, 5), *seconds, back]
        columns = sorted({x for x, _ in cells})
        buttons = [Button(frame.column_label(x), data(codec.column_op(card, x, second)))
                   for x in columns]
        return (tr._("{card}: choose a column, then a row.", card=card.pretty()),
                [*rows_of(buttons, 8), *seconds, back])
    targets = {(a.x, a.y) for a in legal if isinstance(a, Place)}
    only = next(iter(targets)) if len(targets) == 1 and not pair else None
    if only is not None:
        # One cell for every card (the tour's opening: M13): a card key plays the card
        # there, one tap.
        rows = rows_of([Button(c.pretty(), data(codec.place_op(c, *only))) for c in hand], 8)
    else:
        rows = rows_of([Button(c.pretty(), data(codec.card_op(c))) for c in hand], 8)
    extra = []
    if any(isinstance(a, Pass) for a in legal):
        extra.append(Button(tr._("Pass"), data(codec.PASS_OP)))
    if any(isinstance(a, EndTurn) for a in legal):
        extra.append(Button(tr._("End turn"), data(codec.END_OP)))
    extra.append(Button(tr._("💡 Hint"), data(codec.HINT_OP)))
    rows.append(extra)
    if only is not None:
        prompt = tr._("Tap a card: it goes to {cell}.", cell=frame.label(*only))
    elif tour.step_in_turn:
        prompt = tr._("Place a second card, or end your turn.")
    elif any(isinstance(a, Pass) for a in legal):
        prompt = tr._("Your move: choose a card (or pass).")
    else:
        prompt = tr._("Your move: choose a card.")
    return prompt + " " + tr._("Or type e.g. /play QC M12."), rows
