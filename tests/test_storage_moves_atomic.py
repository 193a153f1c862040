"""The steps of one move are stored whole or not at all, on both backends (a webhook worker
killed between a card and its "end" must not leave the card stored and the update marked
processed, which would skip the "end" when Telegram delivers the update again)."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest

from krendzu import Match, Settings
from storage import Store, open_store
from tests.storage_helpers import add_users, seats_for

#: The database aborts the second step (a step without an update id) like a process dying.
TRIGGERS = {
    "sqlite": ["CREATE TRIGGER die BEFORE INSERT ON moves WHEN NEW.update_id IS NULL "
               "BEGIN SELECT RAISE(ABORT, 'killed between the steps'); END"],
    "postgres": [
        "CREATE FUNCTION die() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "IF NEW.update_id IS NULL THEN RAISE EXCEPTION 'killed between the steps'; END IF; "
        "RETURN NEW; END $$",
        "CREATE TRIGGER die BEFORE INSERT ON moves FOR EACH ROW EXECUTE FUNCTION die()"],
}
DROP = {"sqlite": ["DROP TRIGGER die"], "postgres": ["DROP TRIGGER die ON moves"]}


def run_sql(target: str, statements: list[str]) -> None:
    if kind_of(target) == "postgres":
        with psycopg.connect(target, autocommit=True) as conn:
            for sql in statements:
                conn.execute(sql.encode())  # bytes: sent as they are, no placeholders
    else:
        with sqlite3.connect(target) as conn:
            for sql in statements:
                conn.execute(sql)


def kind_of(target: str) -> str:
    return "postgres" if target.startswith("postgresql") else "sqlite"


async def two_steps(store: Store) -> tuple[int, list[tuple[int, object]]]:
    """A match and the first two legal steps of its first mover, numbered."""
    from krendzu import Table

    await add_users(store, 1, 2)
    stored = await store.create_match(-5, Settings(), seats_for(Table.DUEL, [1, 2]), seed=11)
    game: Match = stored.game.clone()
    steps: list[tuple[int, object]] = []
    for seq in (1, 2):
        step = game.legal_actions()[0]
        game.apply(step)
        steps.append((seq, step))
    return stored.match_id, steps


async def test_a_moves_steps_are_stored_whole_or_not_at_all(store_target: str) -> None:
    kind = kind_of(store_target)
    async with await open_store(store_target) as store:
        assert store.appends_atomically
        match_id, steps = await two_steps(store)
        run_sql(store_target, TRIGGERS[kind])
        with pytest.raises(Exception, match="killed between the steps"):
            await store.append_moves(match_id, steps, update_id=4242)  # type: ignore[arg-type]
        assert (await store.load_match(match_id)).moves == ()
        assert not await store.seen_update(4242), "the update is not marked processed"
        run_sql(store_target, DROP[kind])
        rows = await store.append_moves(match_id, steps, update_id=4242)  # type: ignore[arg-type]
        assert [(r.seq, r.update_id) for r in rows] == [(1, 4242), (2, None)]
        assert len((await store.load_match(match_id)).moves) == 2
        assert await store.seen_update(4242)
