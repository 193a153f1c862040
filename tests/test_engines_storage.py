"""Outside engines in storage (issue 31), over every backend: names unique whatever their
case, only the token's hash kept, settings changed, and an engine playing under a user of its
own whose statistics and rating work like a person's."""

from __future__ import annotations

import hashlib

import pytest

from krendzu import Settings
from storage import (
    EngineExists,
    NotFound,
    SeatSpec,
    Store,
    Visibility,
    engine_user_id,
    is_engine_user,
)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def test_register_find_change_delete(store: Store) -> None:
    engine = await store.create_engine(7, "DeepKr", digest("secret-1"))
    assert engine.owner_id == 7 and engine.name == "DeepKr"
    assert engine.visibility is Visibility.OPEN and engine.max_matches == 4
    assert is_engine_user(engine.user_id) and not is_engine_user(7)
    assert not is_engine_user(-1001234567890)  # a supergroup's id is no engine
    user = await store.get_user(engine.user_id)
    assert user is not None and user.display_name == "🤖 DeepKr"
    assert not user.can_write_privately
    with pytest.raises(EngineExists):
        await store.create_engine(8, "deepkr", digest("other"))
    assert await store.engine_by_name("DEEPKR") == engine
    assert await store.engine_by_token(digest("secret-1")) == engine
    assert await store.engine_by_token("secret-1") is None  # the token itself is not stored
    changed = await store.update_engine(engine.engine_id, token_hash=digest("secret-2"),
                                        visibility=Visibility.OWNER, max_matches=2)
    assert changed.visibility is Visibility.OWNER and changed.max_matches == 2
    assert await store.engine_by_token(digest("secret-1")) is None
    assert await store.engine_by_token(digest("secret-2")) == changed
    second = await store.create_engine(7, "Other", digest("secret-3"))
    assert [e.name for e in await store.engines_of(7)] == ["DeepKr", "Other"]
    assert await store.engines_of(8) == []
    assert await store.delete_engine(engine.engine_id)
    assert not await store.delete_engine(engine.engine_id)
    assert await store.get_engine(engine.engine_id) is None
    with pytest.raises(NotFound):
        await store.update_engine(engine.engine_id, max_matches=3)
    # A new engine never gets a deleted one's id (nor its user and statistics).
    third = await store.create_engine(7, "DeepKr", digest("secret-4"))
    assert third.engine_id not in (engine.engine_id, second.engine_id)


async def test_an_engine_seat_is_a_person_seat(store: Store) -> None:
    engine = await store.create_engine(7, "Bot1", digest("t"))
    await store.upsert_user(7, "Ann")
    stored = await store.create_match(-100, Settings(), [SeatSpec.human(7),
                                                         SeatSpec.human(engine.user_id)])
    assert stored.row.seat_of(engine_user_id(engine.engine_id)) == 1
    assert await store.count_active_matches(user_id=engine.user_id) == 1
