"""Spectators (issue 40, section 4): the "👀 Watch" link of group and pool matches, a pool
match's players turning it off, and what a stranger holding the link gets from the Mini
App's API: the public board and never an unplayed card, then, once a player turned the link
off, nothing of the match at all."""

from __future__ import annotations

from krendzu import Settings, Table
from storage import SeatSpec, Store, pool_chat_id


async def test_a_match_closed_to_spectators_stays_closed(store: Store) -> None:
    """The first player who turns the link off is kept; a second press changes nothing, and
    the other matches stay open (both backends)."""
    for user_id, name in ((1, "Ann"), (2, "Bob")):
        await store.upsert_user(user_id, name)
    first, second = [await store.create_match(pool_chat_id(n), Settings(table=Table.DUEL),
                                              [SeatSpec.human(1), SeatSpec.human(2)], seed=n)
                     for n in (1, 2)]
    assert not await store.watch_is_off(first.match_id)
    assert await store.turn_watch_off(first.match_id, 2)
    assert not await store.turn_watch_off(first.match_id, 1)
    assert await store.watch_is_off(first.match_id)
    assert not await store.watch_is_off(second.match_id)
    found = await store._query("SELECT user_id FROM watch_off", (), lambda r: r["user_id"])
    assert found == [2]
