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
    together,
    tour_moves,
    tour_over_line,
    tour_text,
)
from chat.flow.views import codec
from chat.flow.views.reactions import reaction_row
from chat.flow.views.texts import hand_title, steps_text, where
from chat.flow.views.webapp import AppLinks
from chat.i18n import Tr
from chat.model import Button, Keyboard
from chat.notices import BoardPicture, BoardPost, DropPanel, Notice, Send
from krendzu import Action, Match, MatchView, Place
from krendzu import Outcome as MatchOutcome
from krendzu.coords import LabelFrame
from storage import MatchRow, StoredMatch, is_detached_chat, is_pool_chat


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
        side = together(tr, [names[s] for s in tour.roles.attackers])
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
                 frame: LabelFrame, actions: Sequence[Action], seq: int) -> Send:
    """The normal level's suggestion, drawn on the player's board, with a Play it key that
    plays it at move ``seq`` (the button data carries the whole turn; a press after the
    match moved on is refused as out of date)."""
    tr = reader.tr
    places = tuple((a.card, a.x, a.y) for a in actions if isinstance(a, Place))
    text = (tr._("💡 Suggestion: {move}", move=steps_text(tr, actions, frame))
            if actions else tr._("No suggestion."))
    op = codec.play_op(actions)
    try:
        data = codec.match_data(stored.match_id, seq, op) if op else None
    except ValueError:  # over Telegram's 64 bytes: the suggestion is typed instead
        data = None
    keyboard = [[Button(tr._("▶ Play it"), data)]] if data else None
    return Send(user_id, text, keyboard=keyboard,
                picture=BoardPicture(view, reader.names, tr.language, private=True,
                                     suggestion=places),
                match_id=stored.match_id)


def chat_line(row: MatchRow, text: str) -> list[Notice]:
    """A line for the match's chat (someone left, came back): in a group, one silent post;
    a pool match has no chat to post in, so each of its players is told privately (in the
    language the pool match's chat was given: theirs when they share one)."""
    if is_detached_chat(row.chat_id):
        return [Send(seat.user_id, text, silent=True, match_id=row.match_id)
                for seat in row.seats if seat.user_id is not None]
    return [Send(row.chat_id, text, thread_id=row.thread_id, silent=True,
                 group=row.chat_id < 0)]


def closing(stored: StoredMatch, text: str) -> list[Notice]:
    """A match ended without a result (cancelled, nobody left): ``text`` in its chat, the
    panels gone, and in a group each player told privately too. (A resignation is a
    result: :func:`resigned`.)"""
    notices: list[Notice] = [Send(stored.row.chat_id, text, thread_id=stored.row.thread_id,
                                  group=stored.row.chat_id < 0)]
    for seat in stored.row.seats:
        if seat.user_id is not None:
            notices.append(DropPanel(stored.match_id, seat.user_id))
            if stored.row.chat_id < 0:
                notices.append(Send(seat.user_id, text, silent=True))
    return notices


def summary(stored: StoredMatch, outcome: MatchOutcome, group: Reader,
            players: Mapping[int, Reader], title: str | None, *,
            reason: str | None = None) -> list[Notice]:
    """The match played to its end, or resigned (``reason``: the line naming who resigned
    and who takes the match, said instead of the result): the result, score and every tour
    in its chat, with a Rematch button; in a group each player gets the result privately
    (``players``: each player's reader by user id)."""
    game = stored.game
    tr, names = group.tr, group.names
    lines = [tr._("🏁 The match is over."), reason or result_text(tr, outcome, names),
             score_text(tr, game.observation(None), names)]
    for i, tour in enumerate(game.tours):
        side = together(tr, [names[s] for s in tour.roles.attackers])
        if not tour.is_over:  # the tour a resignation broke off
            lines.append(tr.n_("Tour {t}, broken off: {side} {n} point.",
                               "Tour {t}, broken off: {side} {n} points.", tour.points,
                               t=i + 1, side=side))
            continue
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
                # A pool match's players are strangers: each may block the others, or
                # send them one of the fixed reactions.
                block = [[Button(utr._("🚫 Block"), codec.match_data(
                    stored.match_id, 0, codec.BLOCK_OP))], reaction_row(stored.match_id)
                    ] if is_pool_chat(stored.row.chat_id) else None
                notices.append(Send(seat.user_id, "\n".join([
                    where(utr, stored.row.chat_id, title),
                    reason or result_text(utr, outcome, unames),
                    score_text(utr, game.observation(None), unames)]), silent=True,
                    keyboard=block))
    return notices


def resigned(stored: StoredMatch, outcome: MatchOutcome, line: str, group: Reader,
             players: Mapping[int, Reader], title: str | None) -> list[Notice]:
    """A match ended by a resignation (``line`` says who resigned and who takes it), told
    as a match played to its end is (:func:`chat.flow.announce.announce`): the final board
    post with the result in its picture (a tidy group's live board gives way to it, a
    private chat's followed board turns into it), in a group the moves of the tour it broke
    off, every panel closed, and the summary with its Rematch button."""
    row, game = stored.row, stored.game
    tr, names = group.tr, group.names
    view = game.observation(None)
    footer = score_text(tr, view, names) + "\n" + tr._("The match is over.")
    notices: list[Notice] = [BoardPost(
        row.match_id, row.chat_id, row.thread_id, (line,), footer,
        BoardPicture(view, names, tr.language, outcome=outcome))]
    if row.chat_id < 0 and any(tour_moves(tr, game.tour, names)):
        notices.append(tour_summary(stored, game.tour_index, group))
    notices += [DropPanel(row.match_id, seat.user_id) for seat in row.seats
                if seat.user_id is not None]
    return notices + summary(stored, outcome, group, players, title, reason=line)


#: Telegram's longest message, counted as Telegram counts: in UTF-16 code units.
TEXT_LIMIT = 4096


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def moves_text(tr: Tr, game: Match, tour_index: int, names: Sequence[str], *,
               head: Sequence[str] = (), foot: Sequence[str] = (),
               limit: int = TEXT_LIMIT) -> str:
    """``head``, the tour's exchange and numbered moves (:func:`chat.describe.tour_moves`),
    who scored once it is over, and ``foot``, within ``limit``. A longer list keeps its
    newest moves, the ones a reader asks about, and says how many earlier ones it leaves
    out (the /export record keeps every move of a finished tour)."""
    tour = game.tours[tour_index]
    exchange, moves = tour_moves(tr, tour, names)
    top = [*head, *exchange]
    if not moves:
        top.append(tr._("No card has been placed yet."))
    bottom = [*([tour_over_line(tr, game, tour_index, names)] if tour.is_over else []),
              *foot]

    def note(n: int) -> list[str]:
        return [tr.n_("… {n} earlier move is not shown.",
                      "… {n} earlier moves are not shown.", n)] if n else []

    # Each line counted with its line break: one more than the text, hence ``limit + 1``.
    fixed = sum(utf16_length(line) + 1 for line in (*top, *bottom))
    sizes = [utf16_length(move) + 1 for move in moves]
    total, dropped = fixed + sum(sizes), 0
    while dropped < len(moves) and total + sum(
            utf16_length(line) + 1 for line in note(dropped)) > limit + 1:
        total -= sizes[dropped]
        dropped += 1
    return "\n".join([*top, *note(dropped), *moves[dropped:], *bottom])


def moves_report(game: Match, tour_index: int, tr: Tr, names: Sequence[str]) -> str:
    """``/moves``: a tour's moves so far (the current tour unless another is asked for),
    and who moves next while it is being played."""
    view = game.observation(None)
    head = [tr._("Moves of tour {t}/{total}:", t=tour_index + 1,
                 total=game.settings.tour_count)]
    running = tour_index == game.tour_index and not game.tours[tour_index].is_over
    return moves_text(tr, game, tour_index, names, head=head,
                      foot=[next_text(tr, view, names)] if running else [])


def tour_summary(stored: StoredMatch, tour_index: int, group: Reader) -> Send:
    """A tour played out, told in its group below the board post that ended it: the tour's
    numbered moves, who scored, the score.

    A message of its own, not more lines in the board post's caption: a caption holds 1024
    characters while a long tour's list runs to a few thousand, and a board post gives way
    to the next one (a tidy group deletes it), whereas the summaries stay, so the group
    keeps every tour's moves in a message of up to 4096 (longer: the newest moves, and the
    /export record holds them all). Silent, as board posts are."""
    tr, names, game = group.tr, group.names, stored.game
    head = ["📋 " + tr._("Tour {t}/{total}: the moves", t=tour_index + 1,
                        total=game.settings.tour_count)]
    text = moves_text(tr, game, tour_index, names, head=head,
                      foot=[score_text(tr, game.observation(None), names)])
    return Send(stored.row.chat_id, text, thread_id=stored.row.thread_id, silent=True,
                group=stored.row.chat_id < 0)


def watch_offer(tr: Tr, app: AppLinks | None, match_id: int) -> tuple[str, Keyboard] | None:
    """A pool match's watch link (issue 40), under its start message to each player: a line
    saying what friends would see, 📤 to send them the link (Telegram's share dialog) and 🙈
    to turn it off for good. ``None`` when the Mini App has no direct link (no short name):
    then no link exists that a friend could open."""
    share = app.share_url(match_id, tr._("👀 Watch my Krendzu match")) if app else None
    if share is None:
        return None
    return (tr._("👀 Friends may watch this match: the board and the score, never a hand. "
                 "Any player can turn the watch link off (🙈, or /settings watch=off)."),
            [[Button(tr._("📤 Share the watch link"), url=share)],
             [Button(tr._("🙈 Turn the watch link off"), codec.watch_off_data(match_id))]])
