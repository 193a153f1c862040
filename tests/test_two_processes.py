"""Two flows on one database, as two processes of the scaled mode would be: nothing a
request needs may live only in the process that saw the last change (issue 26: no state
that only one process knows; caches are read-through and checked against the move number)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator

import pytest

from chat.computer import Thinker
from chat.flow import Actor, Flow
from chat.i18n import Catalogs
from storage import MatchStatus, PanelMessage, open_store

ANN, BOB = Actor(1, "Ann", "en"), Actor(2, "Bob", "en")
GROUP = -100


@pytest.fixture
async def flows(store_target: str) -> AsyncIterator[tuple[Flow, Flow]]:
    """Two flows, each with a store of its own on one database: a SQLite file, or
    PostgreSQL (``tests/conftest.py``), where each store is a pool as a process has."""
    thinker = Thinker(workers=0)
    stores = [await open_store(store_target) for _ in range(2)]
    yield tuple(Flow(s, Catalogs(), thinker.decide, bot_username="kbot")  # type: ignore[misc]
                for s in stores)
    thinker.close()
    for store in stores:
        await store.close()


async def started_duel(flow: Flow) -> int:
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(GROUP, None, ANN, ["deal=short"], title="Friends")
    await flow.lobby_action(GROUP, None, BOB, "join")
    await flow.lobby_action(GROUP, None, ANN, "go")
    stored = await flow.find_match(GROUP, None, ANN.user_id)
    assert stored is not None
    return stored.match_id


async def test_moves_alternate_between_two_processes(flows: tuple[Flow, Flow]) -> None:
    """Each process in turn serves the next move: a kept match that another process has
    moved on is never used (every move is accepted, none is "someone was quicker")."""
    first, second = flows
    match_id = await started_duel(first)
    rng = random.Random(7)
    actors = {ANN.user_id: ANN, BOB.user_id: BOB}
    served = 0
    for turn in range(400):
        flow = (first, second)[turn % 2]
        stored = await flow.load(match_id)
        if stored.row.status is not MatchStatus.ACTIVE:
            break
        user_id = stored.row.seats[stored.game.current_player].user_id
        assert user_id is not None
        step = rng.choice(stored.game.legal_actions())
        outcome = await flow.play(match_id, actors[user_id], [step], update_id=5000 + turn)
        assert outcome.reply and outcome.reply.startswith("✓"), (turn, outcome.reply)
        served += 1
    assert served > 20
    final = await first.store.load_match(match_id)
    assert final.row.status is MatchStatus.FINISHED
    assert len(final.moves) == served


async def test_names_languages_titles_and_panel_lines_are_read_from_the_store(
        flows: tuple[Flow, Flow]) -> None:
    first, second = flows
    match_id = await started_duel(first)
    assert (await second.user_tr(BOB.user_id)).language == "en"
    await first.set_language(BOB.user_id, BOB, "ru")
    assert (await second.user_tr(BOB.user_id)).language == "ru"
    await first.set_language(GROUP, ANN, "ru")
    assert (await second.chat_tr(GROUP)).language == "ru"
    await first.see_user(Actor(ANN.user_id, "Annie", "en"))
    assert await second.name_of(ANN.user_id) == "Annie"
    await first.remember_title(GROUP, "Card night")
    assert await second.people.title_of(GROUP) == "Card night"
    await first.set_tidy(GROUP, True)
    assert await second.is_tidy(GROUP)
    await first.games.show(match_id, {ANN.user_id: ["Bob: 7♥ M13"], BOB.user_id: ["x"]})
    assert await second.games.shown(match_id, ANN.user_id) == ["Bob: 7♥ M13"]
    await second.games.show(match_id, {ANN.user_id: None})
    assert await first.games.shown(match_id, ANN.user_id) == []
    assert await first.games.shown(match_id, BOB.user_id) == ["x"]


async def test_a_failed_write_never_leaves_a_move_in_the_kept_match(
        flows: tuple[Flow, Flow]) -> None:
    """The kept game had a step applied whose write then failed: the next read sees that
    the stored moves do not match and reads the match afresh."""
    first, _ = flows
    match_id = await started_duel(first)
    stored = await first.load(match_id)
    before = len(stored.game.history)
    stored.game.apply(stored.game.legal_actions()[0])  # applied, never stored
    again = await first.load(match_id)
    assert len(again.game.history) == before


async def test_panel_messages_are_stored_for_every_process(flows: tuple[Flow, Flow]) -> None:
    """Delivery's panel ids live in the store: a panel sent by one process is edited by
    another (chat.sending.Sender reads them there)."""
    first, second = flows
    match_id = await started_duel(first)
    assert await second.store.get_panel(match_id, ANN.user_id) is None
    assert await first.store.set_panel(match_id, ANN.user_id, PanelMessage(41, True)) is None
    assert await second.store.get_panel(match_id, ANN.user_id) == (41, True, None)
    # The second one is an ephemeral message of group -5 (issue 42): named by its id there.
    assert await second.store.set_panel(match_id, ANN.user_id,
                                        PanelMessage(42, False, -5)) == (41, True, None)
    assert await first.store.get_panel(match_id, ANN.user_id) == (42, False, -5)
    await first.store.set_panel(match_id, ANN.user_id, None)
    assert await second.store.get_panel(match_id, ANN.user_id) is None


async def test_two_processes_matching_one_pool_seat_each_person_once(
        flows: tuple[Flow, Flow]) -> None:
    """Issue 40: ten people wait in the "Play now" pool, with ratings that pair within the
    window; two processes match it at once, again and again. Each person sits at one table:
    a table leaves the pool whole or not at all (Store.take_from_pool)."""
    first, second = flows
    store = first.store
    people = range(101, 111)
    for user_id in people:
        await store.upsert_user(user_id, f"P{user_id}")
        # 1000, 1010, ... 1090: everyone's window (100) takes in their neighbours.
        assert await store.join_pool(user_id, "duel", 1000 + 10 * (user_id - 101), time.time())
    await asyncio.gather(*(flow.pool.tick() for _ in range(4) for flow in (first, second)))
    assert await store.pool_entries() == []
    seated = [await store.matches_of_user(user_id) for user_id in people]
    assert all(len(rows) == 1 for rows in seated), seated
    matches = {rows[0].match_id: rows[0] for rows in seated}
    assert len(matches) == 5
    for row in matches.values():
        a, b = (seat.user_id for seat in row.seats)
        assert a is not None and b is not None and abs(a - b) == 1  # the nearest ratings
