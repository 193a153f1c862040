"""After a restart: finish what the store says was not done. A move is stored before it is
announced, and the store's ``announced`` marker says how far announcements got: the one
announcer (:meth:`chat.flow.broadcast.Broadcast.announce`) tells the rest from the rows, the
movers named as when they moved; ratings of finished matches are retried; computers to move
are woken; deadlines get a grace."""

from __future__ import annotations

import logging

from chat.flow.broadcast import Broadcast
from chat.flow.deadlines import Deadlines
from chat.flow.endings import Endings
from chat.flow.games import Games
from chat.notices import ComputerTurn, Notice, untold
from storage import MatchStatus, SeatKind, Store

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
            # The mover is named from the rows: the moves' own, as when they were stored.
            notices += untold(await broadcast.announce(stored),
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
