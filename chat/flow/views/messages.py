"""A match's other messages: a player's hand (at the deal, on /hand), the board and score
texts, a hint, the closing summary and the lines that end a match early. Pure: every
name, title and result is passed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chat.describe import (
    hand_text,
    next_text,
    result_text,
    role_text,
    roles_line,
    score_text,
    tour_text,
)
from chat.flow.views import codec
from chat.flow.views.texts import hand_title, steps_text, where
from chat.i18n import Tr
from chat.model import Button
from chat.notices import BoardPicture, DropPanel, Notice, Send
from krendzu import Action, Match, MatchView, Place
from krendzu import Outcome as MatchOutcome
from krendzu.coords import LabelFrame
from storage import StoredMatch


@dataclass(frozen=True, slots=True)
class Reader:
    """Someone a message is written for: their translator, and the seats' names in their
    language (computers are named by level, in words of that language)."""

    tr: Tr
    names: tuple[str, ...]


def deal_message(stored: StoredMatch, seat: int, user_id: int, reader: Reader,
                 title: str | None) -> Send:
    """A new tour's hand, sent to its owner (silently unless they move first)."""
    tr, names = reader.tr, reader.names
    view = stored.game.observation(seat)
    text = "\n".join([
        where(tr, stored.row.chat_id, title),
        tour_text(tr, view) + " · " + role_text(tr, view, seat),
        roles_line(tr, view, names), hand_text(tr, view.tour.hand),
    ])
    return Send(user_id, text, hand=tuple(view.tour.hand),
                silent=seat != stored.game.current_player, match_id=stored.match_id,
                language=tr.language, hand_title=hand_title(tr, view.tour.hand))


def hand_message(stored: StoredMatch, seat: int, user_id: int, tr: Tr,
                 title: str | None) -> Send:
    """``/hand``: the player's cards, with the tour and their role."""
    view = stored.game.observation(seat)
    text = "\n".join([where(tr, stored.row.chat_id, title),
                      tour_text(tr, view) + " · " + role_text(tr, view, seat),
                      hand_text(tr, view.tour.hand)])
    return Send(user_id, text, hand=tuple(view.tour.hand), match_id=stored.match_id,
                language=tr.language, hand_title=hand_title(tr, view.tour.hand))


def board_text(tr: Tr, view: MatchView, names: Sequence[str]) -> str:
    """Under a ``/board`` picture: the tour, the score, who moves next."""
    return "\n".join([tour_text(tr, view), score_text(tr, view, names),
                      next_text(tr, view, names)])


def score_report(game: Match, tr: Tr, names: Sequence[str]) -> str:
    """``/score``: the score, each tour's points, who moves next."""
    view = game.observation(None)
    per_tour = []
    for i, tour in enumerate(game.tours):
        side = " & ".join(names[s] for s in tour.roles.attackers)
        if tour.is_over:
            per_tour.append(tr.n_("Tour {t}: {side} scored {n} point.",
                                  "Tour {t}: {side} scored {n} points.", tour.points,
                                  t=i + 1, side=side))
        else:
            per_tour.append(tr.n_("Tour {t}, being played: {side} {n} point so far.",
                                  "Tour {t}, being played: {side} {n} points so far.",
                                  tour.points, t=i + 1, side=side))
    return "\n".join([score_text(tr, view, names), *per_tour, next_text(tr, view, names)])


def hint_message(stored: StoredMatch, user_id: int, reader: Reader, view: MatchView,
                 frame: LabelFrame, actions: Sequence[Action]) -> Send:
    """The normal level's suggestion, drawn on the player's board."""
    tr = reader.tr
    places = tuple((a.card, a.x, a.y) for a in actions if isinstance(a, Place))
    text = (tr._("💡 Suggestion: {move}", move=steps_text(tr, actions, frame))
            if actions else tr._("No suggestion."))
    return Send(user_id, text, picture=BoardPicture(view, reader.names, tr.language,
                                                    private=True, suggestion=places),
                match_id=stored.match_id)


def closing(stored: StoredMatch, text: str) -> list[Notice]:
    """A match ended early (resigned, cancelled, nobody left): ``text`` in its chat, the
    panels gone, and in a group each player told privately too."""
    notices: list[Notice] = [Send(stored.row.chat_id, text, thread_id=stored.row.thread_id,
                                  group=stored.row.chat_id < 0)]
    for seat in stored.row.seats:
        if seat.user_id is not None:
            notices.append(DropPanel(stored.match_id, seat.user_id))
            if stored.row.chat_id < 0:
                notices.append(Send(seat.user_id, text, silent=True))
    return notices


def summary(stored: StoredMatch, outcome: MatchOutcome, group: Reader,
            players: Mapping[int, Reader], title: str | None) -> list[Notice]:
    """The match played to its end: the result, score and every tour in its chat, with a
    Rematch button; in a group each player gets the result privately (``players``: each
    player's reader by user id)."""
    game = stored.game
    tr, names = group.tr, group.names
    lines = [tr._("🏁 The match is over."), result_text(tr, outcome, names),
             score_text(tr, game.observation(None), names)]
    for i, tour in enumerate(game.tours):
        side = " & ".join(names[s] for s in tour.roles.attackers)
        lines.append(tr.n_("Tour {t}: {side} scored {n} point.",
                           "Tour {t}: {side} scored {n} points.", tour.points, t=i + 1,
                           side=side))
    keyboard = [[Button(tr._("🔁 Rematch"),
                        codec.match_data(stored.match_id, 0, codec.REMATCH_OP))]]
    notices: list[Notice] = [Send(stored.row.chat_id, "\n".join(lines),
                                  thread_id=stored.row.thread_id, keyboard=keyboard,
                                  group=stored.row.chat_id < 0)]
    if stored.row.chat_id < 0:
        for seat in stored.row.seats:
            if seat.user_id is not None:
                reader = players[seat.user_id]
                utr, unames = reader.tr, reader.names
                notices.append(Send(seat.user_id, "\n".join([
                    where(utr, stored.row.chat_id, title), result_text(utr, outcome, unames),
                    score_text(utr, game.observation(None), unames)]), silent=True))
    return notices
