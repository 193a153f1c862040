"""After a restart: finish what the store says was not done. A move is stored before it is
announced, and the store's ``announced`` marker says how far announcements got; ratings
of finished matches are retried; computers to move are woken; deadlines get a grace."""

from __future__ import annotations

import logging

from chat.flow.broadcast import Broadcast
from chat.flow.deadlines import Deadlines
from chat.flow.endings import Endings
from chat.flow.games import Games
from chat.notices import ComputerTurn, Mover, Notice, untold
from krendzu import Card, Match
from storage import MatchStatus, SeatKind, Store, StoredMatch

log = logging.getLogger(__name__)


async def resume(store: Store, games: Games, deadlines: Deadlines, broadcast: Broadcast,
                 endings: Endings) -> list[Notice]:
    """Announce what was stored but not announced; wake computers."""
    notices: list[Notice] = []
    await deadlines.resume()
    for row in await store.unrated_matches():
        try:
            await games.rate(row, (await store.load_match(row.match_id)).game)
        except Exception:
            log.exception("match %s cannot be rated", row.match_id)
    rows = [*await store.unannounced_matches(), *await store.active_matches()]
    for row in rows:
        try:
            stored = await games.load(row.match_id)
        except Exception:
            log.exception("match %s cannot be resumed", row.match_id)
            continue
        game = stored.game
        if row.announced_seq < len(game.history):
            # Stopped in the middle of an announcement (its group post waiting for the
            # group's window, say): what Telegram took already is not told again.
            notices += untold(await pending(stored, broadcast),
                              await store.told(row.match_id))
        else:
            if (row.status is MatchStatus.ACTIVE
                    and not await deadlines.someone_present(stored)
                    and not any(s.resigned for s in
                                (await deadlines.stand_ins(row.match_id)).values())):
                # Computers alone (left so before this rule, or by a crash in between):
                # cancelled. A last player's resignation in a trio is finished instead.
                notices += await endings.end_unattended(stored)
                continue
            if (row.seats[game.current_player].kind is SeatKind.COMPUTER
                    or await deadlines.computer_keeps(row.match_id, game.current_player)):
                notices.append(ComputerTurn(row.match_id, stored.next_seq))
            await deadlines.after_moves(stored)
    return notices


async def pending(stored: StoredMatch, broadcast: Broadcast,
                  mover: Mover | None = None, since: int | None = None, *,
                  board: int | None = None, record: bool = True,
                  then: Card | None = None) -> list[Notice]:
    """The announcement of every stored move after the match's ``announced`` marker (or
    after move ``since``; none when that is the end): what a restart owes, and what the
    scaled mode's announcement job sends (its last notice moves the marker). ``mover`` (the
    job's) is told as the mover only if every move told is theirs (a job that waited may
    tell the next player's move too: then no one is). ``board``: the last move the group's
    board post shows, when later than the start (the group is told only what follows it);
    ``record``: as :meth:`Broadcast.change`'s; ``then``: the second card the last move (a
    defender's first card) named, whose cell the defender's panel asks for."""
    row, game = stored.row, stored.game
    start = row.announced_seq if since is None else since
    if start >= len(game.history):
        return []
    before = replay(stored, start)
    actions = list(game.history[start:])
    if mover is not None:
        seat, probe = row.seat_of(mover.user_id), before.clone()
        for action in actions:
            if probe.current_player != seat:
                mover = None
                break
            probe.apply(action)
    group_since = None
    if board is not None and board > start:
        group_since = (replay(stored, board), list(game.history[board:]))
    return await broadcast.change(stored, before, actions, drain=True,
                                  mover=mover.user_id if mover else None,
                                  from_panel=mover.from_panel if mover else False,
                                  then=then or (mover.then if mover else None),
                                  group_since=group_since, record=record)


def replay(stored: StoredMatch, upto: int) -> Match:
    """The match as it was after its move ``upto``."""
    row = stored.row
    match = Match(row.labels, row.settings, seed=row.seed)
    for text in (m.action for m in stored.moves[:upto]):
        match.apply(text)
    return match
