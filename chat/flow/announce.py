"""From a stored change to the notices that tell everyone about it: a pure function.

:func:`announce` gets the change (the match before it, the actions applied, who made them)
and everything the words need (each reader's language and seat names, the group's title,
the result, whether a computer moves next), and returns the notices plus the move lines each
new panel shows. It starts no timer and writes no cache: :mod:`chat.flow.broadcast` gathers
its input and records its output.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from chat.describe import (
    describe_moves,
    hand_text,
    label_shift,
    next_text,
    roles_line,
    score_text,
    shift_text,
    tour_text,
)
from chat.flow.views import codec
from chat.flow.views import panel as panels
from chat.flow.views.messages import Reader, deal_message, summary, tour_summary
from chat.flow.views.texts import clock_text, where
from chat.flow.views.webapp import AppLinks
from chat.model import Button, Keyboard, tour_frame
from chat.notices import (
    Announced,
    BoardPicture,
    BoardPost,
    ComputerTurn,
    DropPanel,
    EditPanel,
    Ephemeral,
    Notice,
    Send,
)
from krendzu import Action, Card, Match, MatchView
from krendzu import Outcome as MatchOutcome
from storage import SeatKind, StoredMatch, is_detached_chat


@dataclass(frozen=True, slots=True)
class Change:
    """``actions`` applied to ``before`` (``None``: the match just began) and stored: ``stored``
    is the match after them. ``mover``: the person who made them (``None``: a computer, a
    stand-in, moves of several people, or rows from before the doors were stored);
    ``from_panel``: they pressed their panel's buttons (else typed). A stored move's is
    read from its rows (:func:`stored_change`)."""

    stored: StoredMatch
    before: Match | None
    actions: Sequence[Action]
    mover: int | None = None
    from_panel: bool = False
    #: The mover's first card of a two-card defence was placed from a key that named this
    #: second card: their panel asks for its cell at once (four taps, in both modes).
    then: Card | None = None
    #: The group was told more than ``before`` already (its board post shows the moves up
    #: to a later one: an announcement run again after its worker was killed): the match
    #: as that post shows it and the actions since, which are all the group is told.
    group_since: tuple[Match, Sequence[Action]] | None = None
    #: When the first move told was committed (Unix seconds; ``None``: none told).
    moved_at: float | None = None


def stored_change(stored: StoredMatch, start: int, *, before: Match | None = None,
                  board: int | None = None) -> Change:
    """The change the stored moves after move ``start`` make, as the rows say it: who made
    them and through which door (:attr:`storage.MoveRow.by`), whoever tells it, whenever
    (the process that stored them, a job worker, a restart). A mover is named only when
    every move told is theirs (a job that waited may tell the next player's move too:
    then no one is sent a record of moves that were not all theirs); their panel is edited
    into the record when the last move came from it (:attr:`storage.Door.from_panel`); the
    second card named by the last move's key (``then``) is asked for at once.

    ``before``: the position after move ``start`` when the caller holds it (the same as
    :func:`replay`, not simulated again). ``board``: the last move the group's board post
    shows, when later than ``start`` (the group is told only what follows it)."""
    rows = stored.moves[start:]
    game = stored.game
    people = {row.by.user_id for row in rows}
    mover = people.pop() if len(people) == 1 else None
    last = rows[-1].by if rows else None
    then = Card.parse(last.then) if last is not None and last.then else None
    group_since = None
    if board is not None and board > start:
        group_since = (replay(stored, board), list(game.history[board:]))
    return Change(stored, before if before is not None else replay(stored, start),
                  list(game.history[start:]), mover,
                  mover is not None and last is not None and last.door.from_panel, then,
                  group_since, rows[0].created_at.timestamp() if rows else None)


def replay(stored: StoredMatch, upto: int) -> Match:
    """The match as it was after its move ``upto``, from the stored rows."""
    row = stored.row
    match = Match(row.labels, row.settings, seed=row.seed)
    for text in (m.action for m in stored.moves[:upto]):
        match.apply(text)
    return match


@dataclass(frozen=True, slots=True)
class Audience:
    """Who reads about the change, and what the words need, read beforehand."""

    group: Reader  # the match's chat
    players: Mapping[int, Reader]  # every seated person, by user id
    title: str | None  # the group's title, for private messages
    result: MatchOutcome | None  # a finished match's outcome
    mover_shown: Sequence[str] = ()  # the move lines the mover's panel showed
    computer_next: bool = False  # a computer makes the next move
    bot_username: str = ""  # for the board post's "your move" link (none without it)
    seconds_left: int | None = None  # the turn timer of the next move, if one runs
    app: AppLinks | None = None  # the Mini App's links (issue 29), when it is served
    #: The group's players open their panels in the group (issue 42): each player's own
    #: messages become ephemeral messages of the group, and the board post's button opens
    #: the panel there.
    in_group: bool = False
    #: In the group, the bot may push them unasked (it administers the group, or that is
    #: not known yet); otherwise they are left out, and the board post's button, ``/hand``
    #: and the panel's own edits tell the player.
    push: bool = False


@dataclass(slots=True)
class Announcement:
    notices: list[Notice]
    #: (user id, the move lines their new panel shows), for the panels among ``notices``.
    panels: list[tuple[int, list[str]]] = field(default_factory=list)


def turn_keyboard(change: Change, audience: Audience) -> Keyboard | None:
    return turn_button(change.stored, audience.group, audience.bot_username, audience.app,
                       computer_next=audience.computer_next, in_group=audience.in_group)


def turn_button(stored: StoredMatch, group: Reader, bot_username: str,
                app: AppLinks | None = None, *,
                computer_next: bool = False, in_group: bool = False) -> Keyboard | None:
    """The board post's buttons: the person to move opens their private panel with one
    tap (a link to the bot's chat with ``/start t<match>``; none when a computer moves), and,
    when the Mini App is registered (``app`` with a name), "▶ Play · 👀 Watch": a direct Mini
    App link (a group may not carry ``web_app`` buttons) that opens the board over the chat,
    a player's with their hand, anyone else's as a spectator's (issue 40). One button for
    both: the page tells them apart by the signed ``initData``, and the post stays small."""
    row, game = stored.row, stored.game
    if game.is_over:
        return None
    rows: Keyboard = []
    seat = row.seats[game.current_player]
    if in_group and not computer_next and seat.kind is SeatKind.HUMAN \
            and seat.user_id is not None:
        # The panel opens in the group, seen by its player alone (chat/handlers/buttons.py).
        rows.append([Button(group.tr._("🃏 {name}: your move",
                                       name=group.names[game.current_player]),
                            codec.open_panel_data(row.match_id, stored.next_seq))])
    elif (bot_username and not computer_next and seat.kind is SeatKind.HUMAN
            and seat.user_id is not None):
        rows.append([Button(group.tr._("🃏 {name}: your move",
                                       name=group.names[game.current_player]),
                            url=codec.turn_link(bot_username, row.match_id))])
    link = app.group_url(row.match_id) if app is not None else None
    if link:
        rows.append([Button(group.tr._("▶ Play · 👀 Watch"), url=link)])
    return rows or None


def announce(change: Change, audience: Audience) -> Announcement:
    """Notices telling everyone about the change and what comes next."""
    stored, before, actions, mover = change.stored, change.before, change.actions, change.mover
    row, game = stored.row, stored.game
    group_tr, names = audience.group.tr, audience.group.names
    result = audience.result
    out = Announcement([])
    notices = out.notices
    private_match = row.chat_id > 0
    lines: list[str] = []
    if before is not None:
        lines, _ = describe_moves(group_tr, before, actions, names)
    mid, end = row.match_id, len(game.history)
    # What the group is told: the change, or only what its last board post does not show.
    group_lines, group_before = lines, before
    if change.group_since is not None:
        group_before, since = change.group_since
        group_lines = describe_moves(group_tr, group_before, since, names)[0] if since else []
    # The labels moved (the board grew left or up): the lines say so first, and every
    # caption's lines are labelled as its picture (BoardPost.frame).
    shift = label_shift(before, game)
    frame = tour_frame(game)
    new_tour = before is None or before.tour_index != game.tour_index
    view = game.observation(None)
    group_told = change.group_since is not None and not change.group_since[1]
    if not private_match and not group_told:
        footer = "\n".join(x for x in (
            score_text(group_tr, view, names),
            tour_text(group_tr, view) + " · " + next_text(group_tr, view, names)
            if not view.match_over else next_text(group_tr, view, names),
        ) if x)
        head = group_lines + ([roles_line(group_tr, view, names)]
                        if (group_before is None or group_before.tour_index != game.tour_index)
                        and not view.match_over else [])
        if audience.seconds_left and not audience.computer_next:
            footer += "\n" + clock_text(group_tr, audience.seconds_left)
        if not (group_lines and game.tour.pending):
            # A defender's first card of a turn that may take a second is not posted: the
            # group sees the whole turn in one post when it ends (its lines name both cards).
            notices.append(BoardPost(row.match_id, row.chat_id, row.thread_id, tuple(head),
                                     footer, BoardPicture(view, names, group_tr.language,
                                                          outcome=result),
                                     keyboard=turn_keyboard(change, audience), frame=frame,
                                     seq=end, moved_at=change.moved_at))
        if before is not None:
            # Each tour this change ended: its moves, in a summary that stays.
            for index in range(before.tour_index, len(game.tours)):
                if game.tours[index].is_over and not (
                        index < len(before.tours) and before.tours[index].is_over):
                    notices.append(replace(tour_summary(stored, index, audience.group),
                                           told=(mid, f"tour:{index}")))

    def panel(seat: int, user_id: int, reader: Reader, shown: Sequence[str], *,
              edit: bool = False, card: Card | None = None,
              seen: MatchView | None = None) -> None:
        left = audience.seconds_left
        # An edited panel gets the new board too: its caption describes the position after
        # the change (:class:`EditPanel`'s ``picture``).
        notices.append(told(panels.panel(
            stored, seat, user_id, reader.tr, reader.names, shown, audience.title, edit=edit,
            redraw=True, card=card, clock=clock_text(reader.tr, left, panel=True) if left
            else "", app=audience.app, view=seen), f"panel:{stored.next_seq}:{user_id}"))
        out.panels.append((user_id, panels.shown(shown)))

    def told(notice: Notice, key: str) -> Notice:
        """The notice with its place in the match's announcements (:data:`Told`)."""
        return replace(notice, told=(mid, key)) if isinstance(notice, Send | EditPanel) \
            else notice

    humans = [s for s in row.seats if s.kind is SeatKind.HUMAN and s.user_id is not None]
    current = game.current_player
    # Mid-turn, the second card named by the first one's key: its cells at once.
    then = change.then if (change.then is not None and not game.is_over
                           and game.tour.pending
                           and change.then in game.observation(current).tour.hand) else None
    for seat in humans:
        user_id = seat.user_id
        assert user_id is not None
        reader = audience.players[user_id]
        tr, own_names = reader.tr, reader.names
        own_lines = lines
        if tr.language != group_tr.language and before is not None:
            own_lines, _ = describe_moves(tr, before, actions, own_names)
        seat_view = game.observation(seat.seat) if not game.is_over else None
        to_move = seat.seat == current and not game.is_over
        if user_id == mover:
            # The mover's panel turns into the record of the move (what it showed
            # before, then the move), with the hand.
            shown = list(audience.mover_shown)
            if shown and before is not None and before.tour.pending:
                shown = shown[:-1]  # "first card (may place a second)": now a whole turn
                # The first card's points come again with the turn's lines (describe_moves
                # tells the group them there): once in the record.
                while shown and shown[-1].startswith("+1 ") and shown[-1] in own_lines:
                    shown = shown[:-1]
            if shift is not None:
                shown = []  # in the old labels, above a board in the new ones
            record = [*shown, *own_lines][-panels.PANEL_LINES:]
            text = "\n".join([*record,
                              hand_text(tr, seat_view.tour.hand) if seat_view else ""])
            if to_move and not new_tour:
                panel(seat.seat, user_id, reader, record, edit=change.from_panel, card=then,
                      seen=seat_view)
                continue
            if change.from_panel:
                notices.append(EditPanel(row.match_id, user_id, text.strip(), None,
                                         picture=BoardPicture(
                                             seat_view or view, own_names, tr.language,
                                             private=seat_view is not None,
                                             outcome=result),
                                         told=(mid, f"record:{end}:{user_id}")))
            else:
                # Typed: the answer belongs below what was typed, not in an old panel.
                notices.append(DropPanel(row.match_id, user_id, panels.closed_note(tr)))
                notices.append(Send(user_id, text.strip(), match_id=row.match_id,
                                    told=(mid, f"record:{end}:{user_id}")))
        elif not to_move:
            notices.append(DropPanel(row.match_id, user_id, panels.closed_note(tr)))
        if new_tour and seat_view is not None:
            notices.append(told(deal_message(stored, seat.seat, user_id, reader,
                                             audience.title),
                                f"deal:{game.tour_index}:{user_id}"))
        if to_move:
            panel(seat.seat, user_id, reader,
                  own_lines if private_match or user_id != mover else [], card=then,
                  seen=seat_view)
        elif own_lines and ((private_match and mover is None)
                            or (is_detached_chat(row.chat_id) and user_id != mover
                                and not game.tour.pending)):
            # Alone with computers and not to move: follow their moves like a group. A pool
            # match's players have no group: who neither moved nor moves next follows the
            # others' whole turns the same way.
            footer = score_text(tr, view, own_names) + "\n" + (
                next_text(tr, view, own_names) if view.match_over else
                tour_text(tr, view) + " · " + next_text(tr, view, own_names))
            notices.append(BoardPost(row.match_id, user_id, None, tuple(own_lines), footer,
                                     BoardPicture(view, own_names, tr.language,
                                                  outcome=result), frame=frame,
                                     moved_at=change.moved_at))
        elif shift is not None and user_id != mover and not game.tour.pending:
            # Neither moving nor next (a third or fourth player): told apart, as the group
            # is, once the turn that grew the board is whole.
            notices.append(Send(user_id, where(tr, row.chat_id, audience.title) + "\n"
                                + shift_text(tr, *shift), match_id=row.match_id,
                                told=(mid, f"shift:{end}:{user_id}")))
    if game.is_over:
        assert result is not None, "a summary comes after the last move"
        notices.extend(told(n, f"end:{n.chat_id}") if isinstance(n, Send) else n
                       for n in summary(stored, result, audience.group, audience.players,
                                        audience.title))
    elif audience.computer_next:
        notices.append(ComputerTurn(row.match_id, stored.next_seq))
    notices.append(Announced(row.match_id, len(game.history)))
    if audience.in_group and not private_match:
        out.notices = in_group(notices, row.chat_id, row.thread_id, push=audience.push)
        kept = {n.receiver for n in out.notices if isinstance(n, Ephemeral)
                and n.send.panel_of is not None} | {
            n.user_id for n in out.notices if isinstance(n, EditPanel)}
        out.panels = [(user, lines) for user, lines in out.panels if user in kept]
    return out


def in_group(notices: Sequence[Notice], chat_id: int, thread_id: int | None, *,
             push: bool) -> list[Notice]:
    """The notices of a group match whose players' panels are in the group (issue 42): each
    message to a player (a panel, a record, a deal, a note) becomes an ephemeral message of
    the group for that player, pushed when the bot may push (:attr:`Audience.push`), else
    left out: the board post's button opens the panel within the press's 15 seconds, and
    ``/hand`` shows the cards. Edits of a panel stay edits (delivery finds where it is),
    but the one that turns the mover's panel into the record of the move deletes it; the
    new panel an edit falls back to when the old one is gone is pushed alike."""

    def ephemeral(send: Send) -> Ephemeral | None:
        if not push:
            return None
        return Ephemeral(replace(send, chat_id=chat_id, thread_id=thread_id, group=True),
                         receiver=send.chat_id)

    out: list[Notice] = []
    for notice in notices:
        if isinstance(notice, Send) and notice.chat_id > 0:
            if (pushed := ephemeral(notice)) is not None:
                out.append(pushed)
        elif isinstance(notice, EditPanel) and notice.keyboard is None:
            # The mover's panel made the move: the board post tells it, and the panel is
            # deleted rather than edited into a record (a deletion takes no slot of the
            # group's ~20 writes a minute, an edit does; docs/ephemeral.md).
            out.append(DropPanel(notice.match_id, notice.user_id))
        elif isinstance(notice, EditPanel) and isinstance(notice.fallback, Send):
            out.append(replace(notice, fallback=ephemeral(notice.fallback)))
        elif isinstance(notice, BoardPost) and notice.chat_id > 0:
            continue  # a private board following computers: the group's post tells it
        else:
            out.append(notice)
    return out
