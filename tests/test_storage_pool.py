"""The "Play now" pool and its blocks in the store (issue 40), on both backends: one entry a
person, taken out all together or not at all, one computer offer a wait, blocks both ways;
and the reserved chat ids of pool matches."""

from __future__ import annotations

import asyncio

from krendzu import Settings, Table
from storage import (
    ENGINE_USER_BASE,
    SeatSpec,
    Store,
    engine_user_id,
    is_pool_chat,
    open_store,
    pool_chat_id,
)


async def test_one_person_is_in_the_pool_once(store: Store) -> None:
    assert await store.join_pool(1, "duel", 1000, 10.0)
    assert not await store.join_pool(1, "duel", 1200, 11.0)
    assert not await store.join_pool(1, "trio", 900, 12.0)
    entries = await store.pool_entries()
    assert [(e.user_id, e.table, e.rating, e.joined_at) for e in entries] == [
        (1, "duel", 1000, 10.0)]
    assert (await store.pool_entry(1)) == entries[0]
    assert await store.leave_pool(1)
    assert not await store.leave_pool(1)
    assert await store.pool_entry(1) is None
    # Entries are numbered once: a new one never reuses an old number (its match's chat).
    assert await store.join_pool(1, "duel", 1000, 13.0)
    again = await store.pool_entry(1)
    assert again is not None and again.entry_id > entries[0].entry_id


async def test_two_joins_at_once_leave_one_entry(store: Store) -> None:
    answers = await asyncio.gather(*(store.join_pool(7, "duel", 1000, float(i))
                                     for i in range(5)))
    assert sorted(answers) == [False, False, False, False, True]
    assert len(await store.pool_entries()) == 1


async def test_a_table_is_taken_out_whole_or_not_at_all(store: Store) -> None:
    for user_id in (1, 2, 3):
        await store.join_pool(user_id, "duel", 1000, float(user_id))
    await store.leave_pool(3)
    assert not await store.take_from_pool([1, 3])  # 3 left: nobody is taken
    assert [e.user_id for e in await store.pool_entries()] == [1, 2]
    assert await store.take_from_pool([1, 2])
    assert await store.pool_entries() == []
    assert not await store.take_from_pool([1, 2])  # a second process finds them gone


async def test_a_wait_gets_one_computer_offer(store: Store) -> None:
    await store.join_pool(1, "duel", 1000, 0.0)
    assert await store.offer_computer(1, "normal")
    assert not await store.offer_computer(1, "hard")
    entry = await store.pool_entry(1)
    assert entry is not None and entry.offered == "normal"
    assert not await store.offer_computer(2, "easy")  # not waiting


async def test_a_block_works_both_ways_and_is_kept_once(store: Store) -> None:
    await store.block(1, 2)
    await store.block(1, 2)
    await store.block(3, 1)
    assert await store.blocks_among([1]) == {1: {2, 3}, 2: {1}, 3: {1}}
    assert await store.blocks_among([2]) == {1: {2}, 2: {1}}
    assert await store.blocks_among([4]) == {}
    assert await store.blocks_among([]) == {}


async def test_reactions_turned_off_are_kept_across_a_reopening(
        store: Store, store_target: str) -> None:
    for user_id, name in ((1, "Ann"), (2, "Bob"), (3, "Cy")):
        await store.upsert_user(user_id, name)
    assert await store.reactions_off([1, 2, 3]) == set()  # on unless turned off
    assert await store.set_reactions(1, False)
    assert await store.set_reactions(2, False)
    assert await store.set_reactions(2, True)
    assert not await store.set_reactions(9, False)  # nobody: nothing kept
    assert await store.reactions_off([1, 2, 3, 9]) == {1}
    assert await store.reactions_off([2, 3]) == set()
    assert await store.reactions_off([]) == set()
    await store.upsert_user(1, "Ann B.", language="ru")  # a new name keeps the setting
    await store.close()
    again = await open_store(store_target)
    try:
        assert await again.reactions_off([1, 2, 3]) == {1}
    finally:
        await again.close()


async def test_a_pool_match_has_a_chat_of_its_own(store: Store) -> None:
    chat = pool_chat_id(5)
    assert is_pool_chat(chat) and not is_pool_chat(-1001234567890) and not is_pool_chat(5)
    assert not is_pool_chat(engine_user_id(1)) and chat > -ENGINE_USER_BASE
    for user_id, name in ((1, "Ann"), (2, "Bob")):
        await store.upsert_user(user_id, name)
    stored = await store.create_match(chat, Settings(table=Table.DUEL),
                                      [SeatSpec.human(1), SeatSpec.human(2)], seed=3)
    assert (await store.active_match(chat)).match_id == stored.match_id  # type: ignore[union-attr]
    assert await store.count_active_matches(user_id=1) == 1


async def test_the_pool_leaderboard_counts_the_pool_matches_alone(store: Store) -> None:
    """``top_players(pool_chat_id(0))``: everyone's figures of every pool match's chat
    summed, and nobody who never played one (``/top pool``)."""
    for user_id, name in ((1, "Ann"), (2, "Bob"), (3, "Cy")):
        await store.upsert_user(user_id, name)
    rows = ((1, pool_chat_id(1), 1, 1), (2, pool_chat_id(1), 1, 0), (1, pool_chat_id(9), 1, 0),
            (1, -100, 5, 5), (3, -100, 4, 4))
    for user_id, chat_id, matches, wins in rows:
        await store.upsert_chat(chat_id)
        await store._modify(  # the figures a finished match leaves (no match needed here)
            "INSERT INTO user_stats (user_id, chat_id, matches, wins) VALUES (?, ?, ?, ?)",
            (user_id, chat_id, matches, wins))
    page, total = await store.top_players(pool_chat_id(0))
    assert total == 2
    assert [(s.user_id, s.matches, s.wins) for s, _ in page] == [(1, 2, 1), (2, 1, 0)]
    everyone, total = await store.top_players(None)
    assert total == 3 and {s.user_id: s.matches for s, _ in everyone} == {1: 7, 2: 1, 3: 4}
    assert (await store.top_players(pool_chat_id(0), 0))[1] == 2  # a page past the end
