"""The arenas' store (storage/store_arenas.py) on both backends: one unfinished arena a
group and a person, pausing and coming back, nobody seated in two games at once, a result
set once, and an arena game's statistics counted in its group."""

from __future__ import annotations

from krendzu import Settings, Table
from storage import ArenaStatus, SeatSpec, Store, arena_chat_id


async def test_one_open_arena_a_group_and_one_a_person(store: Store) -> None:
    arena = await store.create_arena(-100, None, 1, minutes=30, match_args="timer=60",
                                     bots=False, starts_at=None)
    assert arena is not None and arena.status is ArenaStatus.LOBBY and not arena.bots
    assert await store.create_arena(-100, None, 2, minutes=10, match_args="", bots=True,
                                    starts_at=None) is None
    other = await store.create_arena(-200, 7, 2, minutes=10, match_args="", bots=True,
                                     starts_at=123.0)
    assert other is not None and other.thread_id == 7 and other.starts_at == 123.0
    assert await store.join_arena(arena.arena_id, 11, 1000) == "joined"
    assert await store.join_arena(arena.arena_id, 11, 1000) == "already"
    assert await store.join_arena(other.arena_id, 11, 1000) == "elsewhere"
    assert await store.pause_arena(arena.arena_id, 11)
    assert not await store.pause_arena(arena.arena_id, 11)
    assert [e.paused for e in await store.arena_entries(arena.arena_id)] == [True]
    assert await store.join_arena(arena.arena_id, 11, 1000) == "back"
    assert await store.latest_arena(-100) == await store.get_arena(arena.arena_id)
    assert [a.arena_id for a in await store.open_arenas()] == [arena.arena_id, other.arena_id]
    # Started by one process only; once over, the group may make another.
    assert await store.update_arena(arena.arena_id, status=ArenaStatus.RUNNING,
                                    starts_at=5.0, ends_at=65.0, was=ArenaStatus.LOBBY)
    assert not await store.update_arena(arena.arena_id, status=ArenaStatus.RUNNING,
                                        was=ArenaStatus.LOBBY)
    assert await store.update_arena(arena.arena_id, message_id=77)
    assert await store.update_arena(arena.arena_id, status=ArenaStatus.FINISHED)
    row = await store.get_arena(arena.arena_id)
    assert row is not None and row.message_id == 77 and row.ends_at == 65.0
    assert await store.join_arena(other.arena_id, 11, 1000) == "joined"
    assert await store.create_arena(-100, None, 2, minutes=10, match_args="", bots=False,
                                    starts_at=None) is not None


async def test_games_seat_nobody_twice_and_count_in_the_group(store: Store) -> None:
    arena = await store.create_arena(-300, None, 1, minutes=30, match_args="", bots=False,
                                     starts_at=None)
    assert arena is not None
    for user in (1, 2, 3):
        await store.upsert_user(user, f"P{user}")
        await store.join_arena(arena.arena_id, user, 1000)
    game = await store.start_arena_game(arena.arena_id, 1, 2)
    assert game is not None
    assert await store.start_arena_game(arena.arena_id, 2, 3) is None  # 2 is playing
    computer = await store.start_arena_game(arena.arena_id, 3, None)
    assert computer is not None
    await store.set_arena_game_match(computer, None)  # never made: void
    stored = await store.create_match(arena_chat_id(game), Settings(table=Table.DUEL),
                                      [SeatSpec.human(1), SeatSpec.human(2)])
    await store.set_arena_game_match(game, stored.match_id)
    assert (await store.arena_of_game_chat(arena_chat_id(game))) == arena
    assert await store.arena_of_game_chat(-300) is None
    games = await store.arena_games(arena.arena_id)
    assert [(g.first, g.second, g.match_id, g.result) for g in games] == [
        (1, 2, stored.match_id, None), (3, None, None, "void")]
    assert await store.finish_arena_game(game, "first")
    assert not await store.finish_arena_game(game, "second")
    assert await store.start_arena_game(arena.arena_id, 2, 3) is not None
