"""The private panel of the player to move: its text, its keyboard, and the button data of
every key (written with :mod:`chat.flow.views.codec`, which also reads it back).

Pure: the caller remembers which move lines the panel shows (:func:`shown`), so the panel
can become the record of the move later.
"""

from __future__ import annotations

from collections.abc import Sequence

from chat.describe import hand_text, role_text, score_text, tour_frame, tour_text
from chat.flow.views import codec
from chat.flow.views.texts import where
from chat.i18n import Tr
from chat.model import Button, Keyboard, rows_of
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


def panel(stored: StoredMatch, seat: int, user_id: int, tr: Tr, names: Sequence[str],
          lines: Sequence[str], title: str | None, *, edit: bool = False, stage: str = "",
          card: Card | None = None, column: int | None = None) -> Notice:
    """The panel: where (``title``: the group's), the last moves, tour, role and score, the
    hand, what to do, the buttons; a new message with the board, or (``edit``) the pressed
    panel edited."""
    view = stored.game.observation(seat)
    hand = view.tour.hand
    head = [where(tr, stored.row.chat_id, title), *lines[-PANEL_LINES:],
            tour_text(tr, view) + " · " + role_text(tr, view, seat) + " · "
            + score_text(tr, view, names), hand_text(tr, hand)]
    prompt, keyboard = panel_keyboard(stored, view, tr, stage, card, column)
    text = "\n".join([*head, "", prompt])
    if edit:
        return EditPanel(stored.match_id, user_id, text, keyboard,
                         fallback=Send(user_id, text, keyboard=keyboard,
                                       picture=BoardPicture(view, tuple(names), tr.language,
                                                            private=True),
                                       panel_of=(stored.match_id, user_id)))
    return Send(user_id, text, keyboard=keyboard,
                picture=BoardPicture(view, tuple(names), tr.language, private=True),
                panel_of=(stored.match_id, user_id))


def panel_keyboard(stored: StoredMatch, view: MatchView, tr: Tr, stage: str,
                   card: Card | None, column: int | None) -> tuple[str, Keyboard]:
    """What the player is asked, and the keys to answer: an exchange count, the cards to
    exchange, or a card, then its cell (directly, or column then row when there are many)."""
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
    if card is not None:
        cells = sorted({(a.x, a.y) for a in legal if isinstance(a, Place) and a.card == card},
                       key=lambda c: (c[1], c[0]))
        back = [Button(tr._("◀ Back"), data(codec.BACK_OP))]
        if column is not None:
            cells = [c for c in cells if c[0] == column]
        if len(cells) <= DIRECT_CELLS:
            buttons = [Button(frame.label(x, y), data(codec.place_op(card, x, y)))
                       for x, y in cells]
            return (tr._("{card}: choose a cell (the free cells are labelled on the "
                         "picture).", card=card.pretty()), [*rows_of(buttons, 5), back])
        columns = sorted({x for x, _ in cells})
        buttons = [Button(frame.column_label(x), data(codec.column_op(card, x)))
                   for x in columns]
        return (tr._("{card}: choose a column, then a row.", card=card.pretty()),
                [*rows_of(buttons, 8), back])
    rows = rows_of([Button(c.pretty(), data(codec.card_op(c))) for c in hand], 8)
    extra = []
    if any(isinstance(a, Pass) for a in legal):
        extra.append(Button(tr._("Pass"), data(codec.PASS_OP)))
    if any(isinstance(a, EndTurn) for a in legal):
        extra.append(Button(tr._("End turn"), data(codec.END_OP)))
    extra.append(Button(tr._("💡 Hint"), data(codec.HINT_OP)))
    rows.append(extra)
    if tour.step_in_turn:
        prompt = tr._("Place a second card, or end your turn.")
    elif any(isinstance(a, Pass) for a in legal):
        prompt = tr._("Your move: choose a card (or pass).")
    else:
        prompt = tr._("Your move: choose a card.")
    return prompt + " " + tr._("Or type e.g. /play QC M12."), rows
