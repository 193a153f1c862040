"""Lobbies and the announced-move marker (schema v3)."""

from __future__ import annotations

import pytest

from krendzu import Settings
from storage import DuplicateUpdate, LobbyExists, LobbyStatus, NotFound, SeatSpec, open_store


async def test_lobby_lifecycle_and_start_in_one_transaction(store_target: str) -> None:
    path = store_target
    async with await open_store(path) as store:
        lobby = await store.create_lobby(-100, 7, {"table": "duel", "seats": []}, thread_id=5)
        assert lobby.status is LobbyStatus.OPEN and lobby.thread_id == 5
        with pytest.raises(LobbyExists):
            await store.create_lobby(-100, 8, {}, thread_id=5)
        other = await store.create_lobby(-100, 8, {"x": 1})  # another topic: fine
        assert (await store.open_lobby(-100, 5)) == lobby
        changed = await store.update_lobby(lobby.lobby_id, state={"seats": [7]}, message_id=42)
        assert changed.state == {"seats": [7]} and changed.message_id == 42
        await store.upsert_user(7, "Ann")
        stored = await store.create_match(
            -100, Settings(), [SeatSpec.human(7), SeatSpec.computer(2)], thread_id=5,
            lobby_id=lobby.lobby_id,
        )
        started = await store.get_lobby(lobby.lobby_id)
        assert started.status is LobbyStatus.STARTED and started.match_id == stored.match_id
        assert await store.lobby_of_match(stored.match_id) == started
        assert await store.open_lobby(-100, 5) is None
        with pytest.raises(NotFound):
            await store.update_lobby(lobby.lobby_id, state={})
        assert [lb.lobby_id for lb in await store.open_lobbies()] == [other.lobby_id]
        await store.update_lobby(other.lobby_id, status=LobbyStatus.CLOSED)
        assert await store.open_lobbies() == []
    async with await open_store(path) as store:  # survives a reopen
        assert (await store.get_lobby(lobby.lobby_id)).match_id == stored.match_id


async def test_a_lobby_change_with_its_update_id_applies_once(store_target: str) -> None:
    """The update id goes into the ledger with the change: the same update again changes
    nothing (a webhook worker killed before its own ledger write runs the update again)."""
    async with await open_store(store_target) as store:
        lobby = await store.create_lobby(-100, 7, {"seats": ["human"]})
        changed = await store.update_lobby(lobby.lobby_id, state={"seats": ["human", "cpu"]},
                                           update_id=901)
        assert changed.state == {"seats": ["human", "cpu"]}
        assert await store.seen_update(901)
        with pytest.raises(DuplicateUpdate):
            await store.update_lobby(lobby.lobby_id, state={"seats": ["human", "cpu", "cpu"]},
                                     update_id=901)
        assert (await store.get_lobby(lobby.lobby_id)).state == {"seats": ["human", "cpu"]}
        assert not await store.mark_update(901), "the ledger has it: the webhook answers 200"


async def test_start_with_a_closed_lobby_writes_nothing(store_target: str) -> None:
    async with await open_store(store_target) as store:
        lobby = await store.create_lobby(-1, 7, {})
        await store.update_lobby(lobby.lobby_id, status=LobbyStatus.CLOSED)
        with pytest.raises(NotFound):
            await store.create_match(-1, Settings(), [SeatSpec.computer(1), SeatSpec.computer(2)],
                                     lobby_id=lobby.lobby_id)
        assert await store.active_match(-1) is None


async def test_announced_marker_only_grows(store_target: str) -> None:
    async with await open_store(store_target) as store:
        stored = await store.create_match(-1, Settings(), [SeatSpec.computer(1),
                                                           SeatSpec.computer(2)])
        assert stored.row.announced_seq == 0
        game = stored.game
        action = game.legal_actions()[0]
        await store.append_move(stored.match_id, 1, action)
        assert (await store.get_match(stored.match_id)).announced_seq == 0
        await store.set_announced(stored.match_id, 1)
        await store.set_announced(stored.match_id, 0)
        row = await store.get_match(stored.match_id)
        assert row.announced_seq == 1 and row.move_count == 1


async def test_migrate_chat_moves_matches_and_lobbies(store_target: str) -> None:
    async with await open_store(store_target) as store:
        await store.upsert_chat(-5, language="ru")
        stored = await store.create_match(-5, Settings(), [SeatSpec.computer(1),
                                                           SeatSpec.computer(2)])
        lobby = await store.create_lobby(-5, 1, {}, thread_id=3)
        await store.migrate_chat(-5, -1005)
        assert (await store.active_match(-1005)).match_id == stored.match_id
        assert await store.active_match(-5) is None
        assert (await store.open_lobby(-1005, 3)).lobby_id == lobby.lobby_id
        assert (await store.get_chat(-1005)).language == "ru"
