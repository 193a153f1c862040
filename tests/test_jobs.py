"""The scaled mode's durable jobs (chat/jobs/) on a real throwaway PostgreSQL (tests/pg.py)
and the fake Bot API: announcements deferred in the move's own transaction, delivered by a
worker that moves the marker, timers and computer moves keyed by the move number, stalled
jobs of a killed worker swept."""

from __future__ import annotations

import contextlib
import itertools
import json
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from chat import notices
from chat.compose_scaled import open_job_services
from chat.flow import Actor
from chat.jobs import (
    ANNOUNCE_QUEUE,
    COMPUTER_QUEUE,
    DEFAULT_QUEUES,
    JobServices,
    defer_board,
    migrate,
    news,
    sweep_stalled,
    worker_options,
)
from chat.notices import Send
from krendzu import Settings
from storage import Door, MatchRow, MovedBy, SeatSpec, StorageError
from tests.bot_harness import Harness
from tests.bot_harness import test_config as bot_config
from tests.fakebot import Chat, FakeTelegram

ANN, BOB = Actor(1, "Ann", "en"), Actor(2, "Bob", "en")
GROUP = -4242


@dataclass
class Scaled:
    fake: FakeTelegram
    svc: JobServices
    url: str
    group: Chat

    async def run(self, queues: tuple[str, ...] = DEFAULT_QUEUES) -> None:
        """A worker that stops once the queues hold nothing it may run now."""
        options = worker_options(self.svc, queues, wait=False)
        options["install_signal_handlers"] = False
        await self.svc.jobs.app.run_worker_async(**options)

    async def jobs(self, task: str | None = None) -> list[dict[str, Any]]:
        return await jobs_in(self.url, task)

    async def sql(self, query: str, params: Any = ()) -> None:
        async with await psycopg.AsyncConnection.connect(self.url, autocommit=True) as c:
            await c.execute(query, params)

    def group_calls(self) -> int:
        return len(self.fake.calls_to(chat=self.group, ok=True))


async def jobs_in(url: str, task: str | None = None) -> list[dict[str, Any]]:
    """procrastinate's jobs (of ``task``), oldest first."""
    async with await psycopg.AsyncConnection.connect(url, row_factory=dict_row) as c:
        cur = await c.execute(
            "SELECT id, task_name, status, args, lock, queueing_lock, attempts "
            "FROM procrastinate_jobs WHERE %(t)s::text IS NULL OR task_name = %(t)s "
            "ORDER BY id", {"t": task})
        return list(await cur.fetchall())


@contextlib.asynccontextmanager
async def bot_duel(tmp_path: Path, pg_url: str, group_id: int
                   ) -> AsyncIterator[tuple[Harness, Chat, MatchRow]]:
    """The real bot (``KRENDZU_JOBS=procrastinate``) on PostgreSQL with a group duel of
    Ann (1) and Bob (2) started; the web process's moves wait for :func:`announce`."""
    from tests.bot_harness import running_bot, start_group_duel

    fake = FakeTelegram()
    ann, bob = fake.user(1, "Ann"), fake.user(2, "Bob")
    group = fake.group(group_id, "Club", members=[ann, bob])
    for user in (ann, bob):
        fake.user_starts(user)
    async with running_bot(tmp_path, fake, database=pg_url, jobs=True) as h:
        await h.settle()
        yield h, group, await start_group_duel(h, group, ann, bob)


async def announce(h: Harness, group: Chat) -> None:
    """A job worker (another process's services on the bot's configuration, the same fake
    Telegram) runs the announcements waiting."""
    async with open_job_services(h.config, request=h.fake.request()) as svc:
        await Scaled(h.fake, svc, h.config.database, group).run((ANNOUNCE_QUEUE,))


@pytest.fixture
async def scaled(tmp_path: Path, pg_url: str) -> AsyncIterator[Scaled]:
    assert await migrate(pg_url)
    assert not await migrate(pg_url)  # idempotent
    fake = FakeTelegram()
    for actor in (ANN, BOB):
        fake.user(actor.user_id, actor.name).started = True
    group = fake.group(GROUP, "Club", members=[fake.users[ANN.user_id],
                                               fake.users[BOB.user_id]])
    config = bot_config(tmp_path, fake, database=pg_url)
    async with open_job_services(config, request=fake.request()) as svc:
        yield Scaled(fake, svc, pg_url, group)


async def group_duel(s: Scaled) -> int:
    """A duel in the group (with the groups' default turn timer), started by the flow."""
    flow = s.svc.flow
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(GROUP, None, ANN, ["duel"], title="Club")
    await flow.lobby_action(GROUP, None, BOB, "join")
    started = await flow.lobby_action(GROUP, None, ANN, "go")
    assert started.notices, "a match's start is told at once, as in the embedded mode"
    row = await s.svc.store.active_match(GROUP)
    assert row is not None
    return row.match_id


async def move(s: Scaled, match_id: int) -> None:
    """The player to move makes a legal step through the flow."""
    stored = await s.svc.flow.load(match_id)
    user_id = stored.row.seats[stored.game.current_player].user_id
    actor = ANN if user_id == ANN.user_id else BOB
    outcome = await s.svc.flow.play(match_id, actor, [stored.game.legal_actions()[0]])
    assert outcome.reply and outcome.reply.startswith("✓"), outcome.reply
    assert outcome.notices == [], "the announcement is the job's, not the mover's process"


async def test_a_move_commits_with_its_announcement_job(scaled: Scaled) -> None:
    s = scaled
    match_id = await group_duel(s)
    assert await s.jobs("announce") == []
    store = s.svc.store
    hook = store.after_append
    assert hook is not None

    async def then_fail(conn: Any, mid: int, seq: int) -> None:
        await hook(conn, mid, seq)
        raise RuntimeError("the transaction fails after the job was deferred")

    stored = await store.load_match(match_id)
    store.after_append = then_fail
    with pytest.raises((RuntimeError, StorageError)):
        await store.append_move(match_id, stored.next_seq, stored.game.legal_actions()[0])
    store.after_append = hook
    assert (await store.load_match(match_id)).row.move_count == 0
    assert await s.jobs("announce") == [], "rolled back with the move"

    mover = (await s.svc.flow.load(match_id)).row.seats[stored.game.current_player].user_id
    await move(s, match_id)
    jobs = await s.jobs("announce")
    # The job carries the match alone: who moved and through which door are the move's rows.
    assert [(j["status"], j["args"], j["lock"], j["queueing_lock"]) for j in jobs] == [
        ("todo", {"match_id": match_id}, f"match:{match_id}", f"announce:{match_id}")]
    assert [m.by for m in (await store.load_match(match_id)).moves] == [
        MovedBy(mover, Door.TYPED)]
    # A second move while that job waits: no second job (it announces both when it runs).
    await move(s, match_id)
    assert len(await s.jobs("announce")) == 1


async def test_the_worker_announces_once_and_moves_the_marker(scaled: Scaled) -> None:
    s = scaled
    match_id = await group_duel(s)
    await move(s, match_id)
    before = s.group_calls()
    assert (await s.svc.store.get_match(match_id)).announced_seq == 0
    await s.run((ANNOUNCE_QUEUE,))
    assert [j["status"] for j in await s.jobs("announce")] == ["succeeded"]
    assert (await s.svc.store.get_match(match_id)).announced_seq == 1
    posts = [c for c in s.fake.calls_to(chat=s.group, ok=True)[before:]
             if c.method.lower() in ("sendphoto", "editmessagemedia", "editmessagecaption")]
    assert posts, "the board post went to the group"
    # Run again (at least once: a job killed after sending runs again): nothing is sent twice.
    sent = s.group_calls()
    await s.svc.jobs.announce.defer_async(match_id=match_id)
    await s.run((ANNOUNCE_QUEUE,))
    assert [j["status"] for j in await s.jobs("announce")] == ["succeeded", "succeeded"]
    assert s.group_calls() == sent


async def test_workers_are_woken_for_jobs_due_now_not_for_later_ones(scaled: Scaled) -> None:
    """procrastinate's insert trigger, narrowed by ``migrate``: a job due now notifies the
    workers of its queue, a turn timer scheduled later does not (they would all ask for a
    job in vain); it is found by their poll when it is due."""
    import asyncio
    import datetime

    s = scaled
    async with await psycopg.AsyncConnection.connect(s.url, autocommit=True) as listener:
        await listener.execute('LISTEN "procrastinate_queue_v1#timers"')
        later = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=60)
        await s.svc.jobs.turn_timer.configure(schedule_at=later).defer_async(
            match_id=1, seq=1)
        await s.svc.jobs.turn_timer.defer_async(match_id=2, seq=1)
        woken: list[str] = []

        async def listen() -> None:
            async for note in listener.notifies():
                woken.append(note.payload)

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(listen(), timeout=1.0)
    ids = {j["args"]["match_id"]: j["id"] for j in await s.jobs("turn_timer")}
    assert [json.loads(p)["job_id"] for p in woken] == [ids[2]], woken


async def test_a_job_telling_two_players_moves_names_no_mover(scaled: Scaled) -> None:
    """The announcement job tells its move's mover, read from the move's rows; a job that
    waited while the next player moved too (their own job refused by the queueing lock)
    tells both moves and names no mover: no one is sent the record of moves that were not
    all theirs."""
    s = scaled
    match_id = await group_duel(s)
    flow = s.svc.flow
    first = await flow.load(match_id)
    opener = first.row.seats[first.game.current_player].user_id or 0
    second = next(u for u in (ANN.user_id, BOB.user_id) if u != opener)
    await move(s, match_id)

    def records(notices: list[Any], user_id: int) -> list[Send]:
        """Messages to the user without buttons: the record of a typed move (a panel has
        buttons)."""
        return [n for n in notices if isinstance(n, Send) and n.chat_id == user_id
                and n.keyboard is None]

    if (await flow.load(match_id)).game.current_player != first.game.current_player:
        assert records(await flow.announce_pending(match_id), opener), \
            "its own move's record: the job tells the mover as the embedded mode does"
    for _ in range(6):  # until the other player has moved too
        stored = await flow.load(match_id)
        mine = stored.row.seats[stored.game.current_player].user_id == opener
        await move(s, match_id)
        if not mine:
            break
    jobs = await s.jobs("announce")
    assert [j["args"] for j in jobs] == [{"match_id": match_id}], jobs
    # Moves of both players are told without a mover's record.
    told = await flow.announce_pending(match_id)
    for user_id in (opener, second):
        assert not records(told, user_id), told


async def test_a_panel_never_waits_behind_the_groups_post(scaled: Scaled) -> None:
    """A group's window is full (19 posts in the last minute): the announcement sends the
    next player's panel at once and ends, the group's board post is the board job's, due
    when the window opens, and no job holds a worker's slot or the match meanwhile. The
    next player moves: their move's panel goes out at once too, and the one board post,
    when the window opens, shows both moves. Before, the announcement waited for the
    window with the match's lock held, and a move made after its post had gone out waited
    for the next one's ("⏱ 0:45" of 90 s on arrival)."""
    import asyncio

    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")  # the start's timers: not this test's
    flow = s.svc.flow

    async def to_move() -> int:
        stored = await flow.load(match_id)
        return stored.row.seats[stored.game.current_player].user_id or 0

    opener = await to_move()
    while await to_move() == opener:
        await move(s, match_id)
    second = opener ^ ANN.user_id ^ BOB.user_id
    # The group's window: full until 4 s from now.
    opens = time.time() + 4.0
    full = [opens - 60.0] * 19
    await s.sql("INSERT INTO flood_groups (chat_id, sent) VALUES (%s, %s)", (GROUP, full))
    mark = len(s.fake.calls)
    await s.run((ANNOUNCE_QUEUE,))  # stops once nothing is due now
    assert time.time() < opens - 1.0, "the announcement waited for the group's window"
    assert [j["status"] for j in await s.jobs("announce")] == ["succeeded"]
    boards = await s.jobs("board")
    assert [j["status"] for j in boards] == ["succeeded", "todo"], boards  # due later
    calls = s.fake.calls[mark:]
    assert not [c for c in calls if c.chat_id == GROUP], "the window is full"
    assert [c for c in calls if c.chat_id == second and "reply_markup" in c.params], \
        "the next player's panel went out at once"
    while await to_move() == second:
        await move(s, match_id)
    mark2 = len(s.fake.calls)
    await s.run((ANNOUNCE_QUEUE,))
    assert time.time() < opens - 0.5
    assert [c for c in s.fake.calls[mark2:] if c.chat_id == opener
            and "reply_markup" in c.params], "the newer move's panel went out at once"
    assert [c for c in s.fake.calls[mark2:] if c.chat_id == second
            and "reply_markup" not in c.params and c.method == "sendMessage"], \
        "the newer move's mover got its record (its job's mover)"
    row = await s.svc.store.get_match(match_id)
    assert row.announced_seq == row.move_count
    await asyncio.sleep(max(0.0, opens - time.time()) + 0.1)
    await s.run((ANNOUNCE_QUEUE,))
    calls = s.fake.calls[mark:]
    posts = [c for c in calls if c.chat_id == GROUP and c.method == "sendPhoto"]
    assert len(posts) == 1, [(c.method, c.chat_id) for c in calls]
    lines = posts[0].params["caption"]
    names = {ANN.user_id: "Ann", BOB.user_id: "Bob"}
    assert f"{names[opener]}:" in lines and f"{names[second]}:" in lines, lines
    assert {j["status"] for j in await s.jobs("board")} == {"succeeded"}
    assert (await s.svc.store.told(match_id))["board"] == row.move_count


async def test_a_late_panel_gets_the_whole_turn(scaled: Scaled) -> None:
    """A turn's clock starts no earlier than its panel: an announcement that runs late
    (behind a killed worker's, which holds the match for up to 15 s) moves the turn's
    deadline by the delay, so the panel shows the whole 90 s and the turn timer fires that
    much later. Before, the panel arrived with "⏱ 1:15" of 1:30."""
    s = scaled
    match_id = await group_duel(s)
    store = s.svc.store
    stored = await s.svc.flow.load(match_id)
    opener = stored.row.seats[stored.game.current_player].user_id
    await move(s, match_id)
    stored = await s.svc.flow.load(match_id)
    user_id = stored.row.seats[stored.game.current_player].user_id
    assert user_id != opener
    timer = await store.timer_of(match_id)
    assert timer is not None and timer.deadline is not None and timer.seq == stored.next_seq
    # As if the move had been stored 15 s ago and its announcement had waited since.
    await store.arm_timer(match_id, timer.seq, timer.deadline - 15.0)
    mark = len(s.fake.calls)
    await s.run((ANNOUNCE_QUEUE,))
    [panel] = [c for c in s.fake.calls[mark:] if c.chat_id == user_id
               and "reply_markup" in c.params]
    assert "⏱ 1:30 for your move" in panel.params["caption"], panel.params["caption"]
    after = await store.timer_of(match_id)
    assert after is not None and after.deadline is not None
    assert after.deadline >= time.time() + 88, after
    [timer_job] = [j for j in await s.jobs("turn_timer") if j["status"] == "todo"]
    assert timer_job["args"] == {"match_id": match_id, "seq": timer.seq}


async def test_a_retried_announcement_tells_nothing_twice(scaled: Scaled) -> None:
    """A job worker is killed right after Telegram took the group's board post and the
    next panel, before the announcement was marked done; meanwhile the next player moved.
    The retried announcement (and board job) resume after the last notice Telegram took:
    the group's next post names only the newer move, no panel or record is sent twice.
    Before, the retry posted the first move again (82fd220 caught only a whole repeat)."""
    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")
    flow, store = s.svc.flow, s.svc.store

    async def to_move() -> int:
        stored = await flow.load(match_id)
        return stored.row.seats[stored.game.current_player].user_id or 0

    opener = await to_move()
    while await to_move() == opener:
        await move(s, match_id)
    first = (await store.get_match(match_id)).move_count
    mark = len(s.fake.calls)
    await s.run((ANNOUNCE_QUEUE,))  # the announcement and the group's board go out
    told = [c for c in s.fake.calls[mark:] if c.method in ("sendPhoto", "sendMessage")]
    assert [c for c in told if c.chat_id == GROUP], "the board went out"
    # The worker was killed before its marks: the marker back, the jobs to run again.
    await s.sql("UPDATE matches SET announced_seq = 0 WHERE match_id = %s", (match_id,))
    with contextlib.suppress(psycopg.errors.UndefinedTable):  # none before the ledger
        await s.sql("DELETE FROM told WHERE match_id = %s AND key = 'group'", (match_id,))
    second = await to_move()
    while await to_move() == second:
        await move(s, match_id)
    assert (await store.get_match(match_id)).move_count > first
    mark = len(s.fake.calls)
    await s.svc.jobs.announce.defer_async(match_id=match_id)
    await s.run((ANNOUNCE_QUEUE,))
    again = s.fake.calls[mark:]
    posts = [c for c in again if c.chat_id == GROUP and c.method == "sendPhoto"]
    assert len(posts) == 1, [(c.method, c.chat_id) for c in again]
    caption = posts[0].params["caption"]
    names = {ANN.user_id: "Ann", BOB.user_id: "Bob"}
    assert f"{names[second]}:" in caption, caption
    assert f"{names[opener]}:" not in caption.split("\n")[0], \
        f"the first move was told again: {caption!r}"
    repeated = [c for c in again if c.chat_id == second and c.method == "sendPhoto"
                and "reply_markup" in c.params]
    assert not repeated, "the panel Telegram took before the kill was sent again"
    row = await store.get_match(match_id)
    assert row.announced_seq == row.move_count


async def test_a_board_post_is_noted_with_its_message_and_never_posted_twice(
        scaled: Scaled) -> None:
    """The board job's post is remembered with its told keys in one write: after it the
    ``board`` and ``group`` keys both name the post's last move. A board job run again
    although nothing was noted (its worker killed in between, as before they were one
    write) compares its post with the group's newest post, read just before it, and posts
    nothing twice."""
    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")
    await move(s, match_id)
    await s.run((ANNOUNCE_QUEUE,))
    row = await s.svc.store.get_match(match_id)
    told = await s.svc.store.told(match_id)
    assert told["board"] == told["group"] == row.move_count == row.announced_seq, told
    posted = await s.svc.store.board_message(match_id)
    assert posted is not None
    await s.sql("DELETE FROM told WHERE match_id = %s AND key IN ('board', 'group')",
                (match_id,))
    mark = len(s.fake.calls)
    await defer_board(s.svc.jobs, match_id)
    await s.run((ANNOUNCE_QUEUE,))
    again = [c for c in s.fake.calls[mark:] if c.chat_id == GROUP and c.method == "sendPhoto"]
    assert not again, "the board Telegram took was posted again"
    assert await s.svc.store.board_message(match_id) == posted


def board_reads(s: Scaled) -> list[int]:
    """The matches whose group's newest board post the store is asked for, from now on."""
    store: Any = s.svc.store
    reads: list[int] = []
    plain = store.board_message

    async def board_message(mid: int) -> Any:
        reads.append(mid)
        return await plain(mid)

    store.board_message = board_message
    return reads


async def uncounted_board_message(s: Scaled, match_id: int) -> Any:
    """The group's newest board post as the store has it, not counted by :func:`board_reads`."""
    store: Any = s.svc.store
    return await type(store).board_message(store, match_id)


async def test_a_board_job_looks_at_the_groups_newest_post_in_its_windows_claim(
        scaled: Scaled) -> None:
    """The statement that claims the group's window for the board job's post reads the
    match's newest board post too, right before the post is handed over: the sender
    compares the new post with it, with no read of its own (a PostgreSQL transaction of a
    move's), and a board job run again after a kill still posts nothing twice."""
    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")
    reads = board_reads(s)
    await move(s, match_id)
    await s.run((ANNOUNCE_QUEUE,))
    posted = await uncounted_board_message(s, match_id)
    assert posted is not None and (await s.svc.store.told(match_id))["board"] == 1
    assert reads == [], "the sender read the group's newest post on its own"
    # Run again although nothing was noted (its worker killed between the post and the
    # notes, as before they were one write): the claim's look finds the post, none goes.
    await s.sql("DELETE FROM told WHERE match_id = %s AND key IN ('board', 'group')",
                (match_id,))
    mark = len(s.fake.calls)
    await defer_board(s.svc.jobs, match_id)
    await s.run((ANNOUNCE_QUEUE,))
    assert not [c for c in s.fake.calls[mark:] if c.chat_id == GROUP
                and c.method == "sendPhoto"], "the board Telegram took was posted again"
    assert await uncounted_board_message(s, match_id) == posted and reads == []


async def test_a_board_posts_look_grown_old_is_read_again_just_before_the_post(
        scaled: Scaled, monkeypatch: pytest.MonkeyPatch) -> None:
    """A post that waited after its job's look (for the window, behind another write, on a
    busy event loop: here every look is too old) is compared with the group's newest post
    read just before it, as late as before the look was taken in the window's claim."""
    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")
    monkeypatch.setattr(notices, "SEEN_FOR", -1.0)
    reads = board_reads(s)
    mark = len(s.fake.calls)
    await move(s, match_id)
    await s.run((ANNOUNCE_QUEUE,))
    assert reads == [match_id]
    assert len([c for c in s.fake.calls[mark:] if c.chat_id == GROUP
                and c.method == "sendPhoto"]) == 1


async def test_an_announcement_waiting_for_its_posts_asks_the_store_only_when_a_move_came(
        scaled: Scaled, monkeypatch: pytest.MonkeyPatch) -> None:
    """The mover's private chat answers 429 for three seconds, so the announcement waits
    for its record that long. Meanwhile the next player moves once: the waiting job tells
    that move alongside (its panel and its mover's record go out while the first record
    still waits), having looked at the match's head when the move's notification came (its
    look "once a second besides" put off here, so only PostgreSQL's notice can make it
    look). Before, it looked every quarter of a second (about twelve transactions for
    nothing over the wait)."""
    import asyncio

    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")
    flow, store = s.svc.flow, s.svc.store

    async def to_move() -> int:
        stored = await flow.load(match_id)
        return stored.row.seats[stored.game.current_player].user_id or 0

    opener = await to_move()
    while await to_move() == opener:
        await move(s, match_id)
    second = opener ^ ANN.user_id ^ BOB.user_id
    looked = 0
    head = store.match_head

    async def counted(mid: int) -> tuple[MatchRow, int]:
        nonlocal looked
        looked += 1
        return await head(mid)

    store.match_head = counted  # type: ignore[method-assign]
    # Only the notification may make it look: no look "once a second besides" in the wait.
    monkeypatch.setattr(news, "LOOK_ANYWAY", 60.0)
    s.fake.flood(opener, 3.0)
    mark = len(s.fake.calls)
    running = asyncio.create_task(s.run((ANNOUNCE_QUEUE,)))
    loop = asyncio.get_running_loop()
    end = loop.time() + 10
    while not [c for c in s.fake.calls[mark:] if c.chat_id == second and c.ok
               and "reply_markup" in c.params]:
        assert loop.time() < end, "the next player's panel did not go out"
        await asyncio.sleep(0.02)
    first = (await store.get_match(match_id)).move_count
    while await to_move() == second:
        await move(s, match_id)
    await asyncio.wait_for(running, 20)
    row = await store.get_match(match_id)
    assert row.move_count > first and row.announced_seq == row.move_count
    records = [c for c in s.fake.calls[mark:] if c.chat_id == second and c.ok
               and c.method == "sendMessage" and "reply_markup" not in c.params]
    assert records, "the newer move's mover got its record"
    assert records[0].time < max(c.time for c in s.fake.calls_to(chat=opener, ok=True)), \
        "the newer move was told alongside, while the first record waited"
    assert 1 <= looked <= 2, looked


async def test_a_move_replaces_the_timers_waiting_for_an_earlier_move(scaled: Scaled) -> None:
    """Each move arms the next turn's timer and reminder in place of the waiting ones:
    a match has one of each waiting, for its newest move (left waiting, they piled up by
    the thousand and slowed every worker's fetch)."""
    s = scaled
    match_id = await group_duel(s)
    for _ in range(3):
        await move(s, match_id)
    seq = (await s.svc.store.timer_of(match_id)).seq  # type: ignore[union-attr]
    assert seq > 1
    for task in ("turn_timer", "reminder"):
        waiting = [j for j in await s.jobs(task) if j["status"] == "todo"]
        assert [j["args"] for j in waiting] == [{"match_id": match_id, "seq": seq}], waiting
        assert waiting[0]["queueing_lock"] == f"{task.split('_')[-1]}:{match_id}"


async def test_turn_timers_carry_their_move_number(scaled: Scaled) -> None:
    s = scaled
    store = s.svc.store
    match_id = await group_duel(s)
    timers = await s.jobs("turn_timer")
    assert [(j["status"], j["args"]) for j in timers] == [
        ("todo", {"match_id": match_id, "seq": 1})], "armed with the first turn's deadline"
    assert [j["args"] for j in await s.jobs("reminder")] == [{"match_id": match_id, "seq": 1}]
    await move(s, match_id)
    await s.run((ANNOUNCE_QUEUE,))
    # The timer of move 1 fires now, after the match moved on: it does nothing.
    count = (await store.get_match(match_id)).move_count
    calls = len(s.fake.calls)
    await s.svc.jobs.turn_timer.defer_async(match_id=match_id, seq=1)
    await s.run()
    assert (await store.get_match(match_id)).move_count == count
    assert len(s.fake.calls) == calls
    assert (await store.stand_ins(match_id)) == {}
    # The current move's deadline passes: the stand-in moves for the seat, the group is told.
    timer = await store.timer_of(match_id)
    assert timer is not None and timer.seq == count + 1
    await store.arm_timer(match_id, timer.seq, time.time() - 1)  # defers its jobs, due now
    await s.run()
    row = await store.get_match(match_id)
    assert row.move_count > count
    assert [st.timeouts for st in (await store.stand_ins(match_id)).values()] == [1]
    assert any("ran out of time" in (m.text or m.caption or "")
               for m in s.fake.sent(s.group)), s.fake.describe()
    assert row.announced_seq == row.move_count, "the stand-in's move was announced too"


async def test_a_computer_move_is_stored_once_however_often_its_job_runs(
        scaled: Scaled) -> None:
    s = scaled
    store = s.svc.store
    stored = await store.create_match(GROUP, Settings(),
                                      [SeatSpec.computer(1), SeatSpec.computer(1)])
    match_id = stored.match_id
    # A computer is to move first: its job was deferred with the match.
    assert [j["args"] for j in await s.jobs("computer_move")] == [
        {"match_id": match_id, "seq": 1}]
    await s.run((COMPUTER_QUEUE,))
    after = (await store.load_match(match_id)).moves
    assert after and after[0].seq == 1
    await s.svc.jobs.computer_move.defer_async(match_id=match_id, seq=1)
    await s.run((COMPUTER_QUEUE,))
    assert (await store.load_match(match_id)).moves == after, "the stale decision is dropped"
    assert [j["status"] for j in await s.jobs("computer_move")] == ["succeeded", "succeeded"]
    # Its move committed with its announcement job (run by the announcement workers).
    assert [j["status"] for j in await s.jobs("announce")] == ["todo"]


async def test_a_computer_turn_no_move_brought_survives_the_process_that_caused_it(
        scaled: Scaled) -> None:
    """A match that starts with the computer to move, and a seat handed to the computer on
    /leave: the computer's job commits with that change (before the flow even returns), so
    when the process that made the change dies right after it (here: its notices are never
    delivered, nothing of it runs any more), a computer worker still makes the move."""
    s = scaled
    flow, store = s.svc.flow, s.svc.store
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    # 1. A duel with a computer; set up again until the computer is the first to move.
    for _ in range(40):
        await flow.new_lobby(GROUP, None, ANN, ["duel"], title="Club")
        await flow.lobby_action(GROUP, None, ANN, "add:easy")
        await flow.lobby_action(GROUP, None, ANN, "go")  # the process dies: nothing told
        row = await store.active_match(GROUP)
        assert row is not None
        stored = await store.load_match(row.match_id)
        if stored.row.seats[stored.game.current_player].user_id is None:
            break
        assert await store.abandon_match(row.match_id)
    else:
        raise AssertionError("the computer never moved first in 40 deals")
    assert [(j["args"], j["status"]) for j in await s.jobs("computer_move")
            if j["args"]["match_id"] == row.match_id] == [
        ({"match_id": row.match_id, "seq": 1}, "todo")]
    await s.run((COMPUTER_QUEUE,))
    assert (await store.get_match(row.match_id)).move_count >= 1, "the worker moved"
    assert await store.abandon_match(row.match_id)
    # 2. A person to move leaves: their seat goes to the computer, which moves for them.
    match_id = await group_duel(s)
    stored = await store.load_match(match_id)
    seat = stored.game.current_player
    leaver = ANN if stored.row.seats[seat].user_id == ANN.user_id else BOB
    await s.sql("DELETE FROM procrastinate_jobs")
    await flow.ticker.hand_over(stored, seat, f"{leaver.name} left")  # then the process dies
    assert [j["args"] for j in await s.jobs("computer_move")] == [
        {"match_id": match_id, "seq": stored.next_seq}]
    await s.run((COMPUTER_QUEUE,))
    after = await store.load_match(match_id)
    assert after.next_seq > stored.next_seq, "the computer moved for the seat that was left"
    assert [j["status"] for j in await s.jobs("computer_move")] == ["succeeded"]


async def stall(s: Scaled, task: str) -> int:
    """A worker takes the oldest ``task`` job and is killed: the job stays ``doing`` and the
    worker's heartbeat grows old. The job's id."""
    manager = s.svc.jobs.app.job_manager
    worker_id = await manager.register_worker()
    job = await manager.fetch_job(queues=None, worker_id=worker_id)
    assert job is not None and job.id is not None and job.task_name == task
    await s.sql("UPDATE procrastinate_workers SET last_heartbeat = NOW() - INTERVAL '1 hour' "
                "WHERE id = %s", (worker_id,))
    return job.id


async def test_a_stalled_job_of_a_killed_worker_is_retried(scaled: Scaled) -> None:
    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")  # the start's timers: not this test's
    await move(s, match_id)
    job_id = await stall(s, "announce")
    await s.run((ANNOUNCE_QUEUE,))  # the match's lock is held by the stalled job
    assert (await s.svc.store.get_match(match_id)).announced_seq == 0
    assert await sweep_stalled(s.svc.jobs.app) == 1
    [job] = await s.jobs("announce")
    assert (job["id"], job["status"], job["attempts"]) == (job_id, "todo", 1)
    await s.run((ANNOUNCE_QUEUE,))
    assert (await s.svc.store.get_match(match_id)).announced_seq == 1
    assert await sweep_stalled(s.svc.jobs.app) == 0


async def test_a_stalled_job_whose_queueing_lock_was_taken_is_closed(scaled: Scaled) -> None:
    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")
    await move(s, match_id)
    stalled = await stall(s, "announce")
    await move(s, match_id)  # a new waiting job: the stalled one no longer holds the lock
    assert [j["status"] for j in await s.jobs("announce")] == ["doing", "todo"]
    assert await sweep_stalled(s.svc.jobs.app) == 0  # retrying would break the unique index
    first = (await s.jobs("announce"))[0]
    assert (first["id"], first["status"]) == (stalled, "failed")
    await s.run((ANNOUNCE_QUEUE,))
    assert (await s.svc.store.get_match(match_id)).announced_seq == 2


async def test_a_stalled_timer_superseded_by_a_move_is_deleted(scaled: Scaled) -> None:
    """A turn timer whose worker was killed, when a move has armed the next one meanwhile:
    the sweep deletes it, as the move deleted the waiting ones it replaced (retrying would
    break the queueing lock's unique index; closed as failed it would read as a timer that
    never fired)."""
    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")
    timer = await s.svc.store.timer_of(match_id)
    assert timer is not None
    await s.svc.store.arm_timer(match_id, timer.seq, time.time() - 1)  # due now
    stalled = await stall(s, "turn_timer")
    await move(s, match_id)
    assert await sweep_stalled(s.svc.jobs.app) == 0
    timers = await s.jobs("turn_timer")
    assert stalled not in [j["id"] for j in timers]
    assert [j["status"] for j in timers] == ["todo"], timers


def test_the_sweeper_is_periodic_without_a_lock(tmp_path: Path) -> None:
    from chat.jobs import build_jobs

    jobs = build_jobs("postgresql://nobody@/nothing")  # nothing connects before it opens
    periodic = [p.task.name for p in jobs.app.periodic_registry.periodic_tasks.values()]
    assert periodic == ["sweep"]
    assert jobs.sweep.lock is None and jobs.announce.queue == ANNOUNCE_QUEUE
    # Every 5 s, as procrastinate itself reads the cron line (croniter: the seconds are
    # the sixth field), at any time of the hour: a stalled job waits 10 + 5 s at most.
    task = next(iter(jobs.app.periodic_registry.periodic_tasks.values()))
    for start in (1_767_279_663.0, 1_767_280_207.5):  # 15:01:03 and 15:10:07.5 UTC
        ticks = [start]
        for _ in range(4):
            ticks.append(task.croniter.get_next(ret_type=float, start_time=ticks[-1]))
        gaps = [b - a for a, b in itertools.pairwise(ticks[1:])]
        assert gaps == [5.0, 5.0, 5.0] and ticks[1] - start <= 5.0, ticks


async def test_the_bot_in_the_scaled_mode_leaves_announcements_to_the_workers(
        tmp_path: Path, pg_url: str) -> None:
    """The real bot (KRENDZU_JOBS=procrastinate) on PostgreSQL: a player's move through the
    panel is stored with its announcement job and the group sees the board only once a job
    worker (another process's services, the same fake Telegram) ran it."""
    import random

    from tests.bot_harness import play_step_with_buttons

    async with bot_duel(tmp_path, pg_url, -77) as (h, group, row):
        fake = h.fake
        store = h.services.store
        timers = await jobs_in(pg_url, "turn_timer")
        assert [j["args"] for j in timers] == [{"match_id": row.match_id, "seq": 1}]
        rng = random.Random(5)
        posts = len(fake.sent(group))
        while (await store.get_match(row.match_id)).move_count == 0:
            stored = await h.services.flow.load(row.match_id)
            user = fake.users[stored.row.seats[stored.game.current_player].user_id or 0]
            assert await play_step_with_buttons(h, user, rng), fake.describe()
            await h.settle()
        assert (await store.get_match(row.match_id)).announced_seq == 0
        assert len(fake.sent(group)) == posts, "the web process does not announce moves"
        await announce(h, group)
        assert len(fake.sent(group)) > posts, fake.describe()
        done = await store.get_match(row.match_id)
        assert done.announced_seq == done.move_count


async def test_a_move_in_the_scaled_mode_is_told_to_its_mover_as_in_the_embedded_mode(
        tmp_path: Path, pg_url: str) -> None:
    """A move typed in the group (``/play@bot CARD CELL``) is answered by its board post,
    as in the embedded mode: the web process, whose move's notices are a job's, posts no
    "✓ …" line of its own in the group (one more message a move would halve a group's
    20-a-minute budget). The job tells the mover as the embedded mode does: a typed move's
    record below in the private chat, a pressed panel turned into the record."""
    import random

    from krendzu import EndTurn, Pass, Place
    from krendzu.coords import frame_for
    from tests.bot_harness import play_step_with_buttons

    async with bot_duel(tmp_path, pg_url, -78) as (h, group, row):
        fake = h.fake
        ann, bob = fake.users[1], fake.users[2]
        store = h.services.store
        stored = await h.services.flow.load(row.match_id)
        game = stored.game
        user = fake.users[stored.row.seats[game.current_player].user_id or 0]
        step = random.Random(3).choice(
            [a for a in game.legal_actions() if isinstance(a, Place)])
        cell = frame_for(game.tour.observation(None).placements).label(step.x, step.y)
        posts = len(fake.sent(group))
        user.send(group, f"/play@{fake.bot_username} {step.card.code()} {cell}")
        await h.settle()
        assert (await store.get_match(row.match_id)).move_count == 1, fake.describe()
        assert len(fake.sent(group)) == posts, "no echo of the move in the group"
        await announce(h, group)
        new = fake.sent(group)[posts:]
        assert [m.kind for m in new] == ["photo"], fake.describe()
        assert step.card.pretty() in (new[0].caption or "")
        # The worker told the mover as the web process would have (the job carries the
        # mover): the record of the typed move below, with the hand, in the private chat.
        record = fake.sent(user)[-1]
        assert step.card.pretty() in (record.text or ""), fake.describe()
        assert not record.buttons()
        # The other player moves with the panel's buttons: the panel itself becomes the
        # record of the move, never "this panel is closed" with nothing below it.
        other = ann if user is bob else bob
        rng = random.Random(4)
        for _ in range(8):
            stored = await h.services.flow.load(row.match_id)
            if stored.row.seats[stored.game.current_player].user_id != other.id:
                break
            assert await play_step_with_buttons(h, other, rng), fake.describe()
            await h.settle()
            await announce(h, group)
        moved = (await h.services.flow.load(row.match_id)).game.history[-1]
        assert isinstance(moved, Place | Pass | EndTurn)
        texts = [m.caption or m.text or "" for m in fake.sent(other)]
        assert not any("panel is closed" in t for t in texts), fake.describe()
        if isinstance(moved, Place):
            assert any(moved.card.pretty() in t for t in texts[-2:]), texts[-2:]


async def test_a_queued_job_waits_for_the_move_whose_own_job_it_replaced(
        scaled: Scaled) -> None:
    """A move committing while the match's announcement job waits defers none (the queueing
    lock); if a worker takes that job before the move commits, the job waits for the
    match's writers, so it announces the move all the same."""
    import asyncio

    s = scaled
    store = s.svc.store
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")
    await s.svc.jobs.announce.configure(
        lock=f"match:{match_id}", queueing_lock=f"announce:{match_id}").defer_async(
        match_id=match_id)
    hook = store.after_append
    assert hook is not None
    deferred, release = asyncio.Event(), asyncio.Event()

    async def slow(conn: Any, mid: int, seq: int) -> None:
        await hook(conn, mid, seq)  # refused: the waiting job holds the queueing lock
        deferred.set()
        await release.wait()  # the move's transaction is still open

    store.after_append = slow
    stored = await store.load_match(match_id)
    appending = asyncio.create_task(
        store.append_move(match_id, stored.next_seq, stored.game.legal_actions()[0]))
    try:
        await deferred.wait()
        working = asyncio.create_task(s.run((ANNOUNCE_QUEUE,)))
        await asyncio.sleep(1.0)  # the worker took the job and waits for the writer
        assert not working.done(), "the job ran before the move it was to announce"
    finally:
        release.set()
        await appending
        store.after_append = hook
    await working
    assert len(await s.jobs("announce")) == 1
    assert (await store.get_match(match_id)).announced_seq == 1


def test_jobs_need_postgresql() -> None:
    from chat.config import ConfigError, jobs_setting

    assert jobs_setting(None, None) is False
    assert jobs_setting("procrastinate", "postgresql://k@db/k") is True
    with pytest.raises(ConfigError, match="KRENDZU_DATABASE_URL"):
        jobs_setting("procrastinate", None)
    with pytest.raises(ConfigError, match="KRENDZU_JOBS"):
        jobs_setting("celery", "postgresql://k@db/k")


async def test_python_m_chat_jobs_worker_announces_and_stops_on_sigterm(
        scaled: Scaled, tmp_path: Path) -> None:
    """The worker as operators run it: a process of its own, over HTTP to the (fake) Bot
    API, announcing a move stored by another process; SIGTERM stops it cleanly."""
    import asyncio
    import os
    import signal
    import subprocess
    import sys

    s = scaled
    match_id = await group_duel(s)
    await move(s, match_id)
    base = s.fake.serve_http()
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "TELEGRAM_BOT_TOKEN": s.fake.token,
           "TELEGRAM_API_BASE_URL": base, "KRENDZU_DATABASE_URL": s.url,
           "KRENDZU_AI_WORKERS": "0", "KRENDZU_DRAW_WORKERS": "0", "LOG_LEVEL": "WARNING"}
    worker = subprocess.Popen([sys.executable, "-m", "chat.jobs", "worker"], cwd=tmp_path,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
    try:
        for _ in range(300):
            if (await s.svc.store.get_match(match_id)).announced_seq == 1:
                break
            assert worker.poll() is None, worker.communicate()[0]
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the worker did not announce the move")
        worker.send_signal(signal.SIGTERM)
        output, _ = worker.communicate(timeout=30)
        assert worker.returncode == 0, output
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.communicate()
        s.fake.stop()


def worker_process(s: Scaled, tmp_path: Path,
                   **settings: str) -> tuple[Callable[[], Any], Path]:
    """``python -m chat.jobs worker`` on the scaled bot's database and fake Bot API (served
    over HTTP), in a process group of its own so that a test can signal the whole group:
    a function that starts one, and the log every one started writes to (``settings``: more
    of its environment)."""
    import os
    import subprocess
    import sys

    base = s.fake.serve_http()
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "TELEGRAM_BOT_TOKEN": s.fake.token,
           "TELEGRAM_API_BASE_URL": base, "KRENDZU_DATABASE_URL": s.url,
           "KRENDZU_AI_WORKERS": "1", "KRENDZU_DRAW_WORKERS": "1", "LOG_LEVEL": "INFO",
           **settings}
    log = tmp_path / "worker.log"

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-m", "chat.jobs", "worker"], cwd=tmp_path,
                                env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT,
                                process_group=0)

    return start, log


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
async def test_python_m_chat_jobs_worker_stops_cleanly_when_its_process_group_is_signalled(
        scaled: Scaled, tmp_path: Path, stop: str) -> None:
    """Ctrl-C (SIGINT) and systemd's stop (SIGTERM to every process of the service) reach
    the worker's drawing and computer processes too, here while a move's announcement is
    being drawn: the worker exits 0 within its limit without a traceback, and the next
    worker announces what it left, once."""
    import asyncio
    import os
    import signal
    import subprocess

    from chat.config import STOP_SECONDS

    s = scaled
    match_id = await group_duel(s)
    await move(s, match_id)
    start, log = worker_process(s, tmp_path)

    async def announced(seq: int, worker: subprocess.Popen[bytes], started: int) -> None:
        """Move ``seq`` announced and the ``started``-th worker taking jobs."""
        for _ in range(300):
            if ((await s.svc.store.get_match(match_id)).announced_seq == seq
                    and log.read_text().count("Starting worker on") == started):
                return
            assert worker.poll() is None, log.read_text()
            await asyncio.sleep(0.1)
        raise AssertionError(f"the worker did not announce move {seq}")

    worker = start()
    try:
        await announced(1, worker, 1)  # its drawing worker is up
        await move(s, match_id)
        await asyncio.sleep(0.05)  # the announcement's job starts drawing
        started = time.monotonic()
        os.killpg(worker.pid, getattr(signal, stop))
        status = await asyncio.to_thread(worker.wait, STOP_SECONDS + 30)
        took = time.monotonic() - started
        text = log.read_text(errors="replace")
        assert status == 0, text[-4000:]
        assert took < STOP_SECONDS, f"stopped after {took:.1f} s"
        assert "Traceback" not in text, text[-4000:]
        worker = start()
        await announced(2, worker, 2)
        os.killpg(worker.pid, getattr(signal, stop))
        assert await asyncio.to_thread(worker.wait, STOP_SECONDS + 30) == 0
    finally:
        if worker.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        s.fake.stop()
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-4000:]
    posts = [m.caption for m in s.fake.sent(s.group) if m.kind == "photo"]
    assert len(posts) == len(set(posts)), f"a board posted twice: {posts}"


async def test_a_stopped_job_worker_hands_back_the_announcement_it_could_not_finish(
        scaled: Scaled, tmp_path: Path) -> None:
    """A stop while an announcement waits (the group paused by a 429 for longer than the
    stop may take): the worker aborts the job after a third of its KRENDZU_STOP_SECONDS
    (4 s here) and exits within that limit without a traceback; the next worker tells the
    move, once."""
    import asyncio
    import os
    import signal

    s = scaled
    match_id = await group_duel(s)
    limit = 4.0
    start, log = worker_process(s, tmp_path, KRENDZU_STOP_SECONDS=str(limit))

    pause = limit + 5
    worker = start()
    try:
        for _ in range(300):
            if "Starting worker on" in log.read_text():
                break
            await asyncio.sleep(0.1)
        s.fake.flood(s.group, pause)
        paused = time.monotonic()
        await move(s, match_id)
        for _ in range(300):  # the board post met the 429: the job waits
            if s.fake.rate_limited(s.group):
                break
            await asyncio.sleep(0.05)
        assert s.fake.rate_limited(s.group)
        started = time.monotonic()
        os.killpg(worker.pid, signal.SIGTERM)
        status = await asyncio.to_thread(worker.wait, limit + 30)
        took = time.monotonic() - started
        text = log.read_text(errors="replace")
        assert status == 0, text[-4000:]
        assert limit / 3 <= took < limit, f"stopped after {took:.1f} s"
        assert "Aborted, to retry" in text and "Traceback" not in text, text[-4000:]
        # The group's board post (its own job since the board job) was handed back unsent.
        assert not [m for m in s.fake.sent(s.group) if m.kind == "photo"], s.fake.describe()
        await asyncio.sleep(max(0.0, pause - (time.monotonic() - paused)))
        worker = start()
        for _ in range(600):
            if [m for m in s.fake.sent(s.group) if m.kind == "photo"]:
                break
            assert worker.poll() is None, log.read_text()
            await asyncio.sleep(0.1)
        assert (await s.svc.store.get_match(match_id)).announced_seq == 1
        await asyncio.sleep(1.0)  # a second post, if one came, would be here by now
        os.killpg(worker.pid, signal.SIGTERM)
        assert await asyncio.to_thread(worker.wait, limit + 30) == 0
    finally:
        if worker.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        s.fake.stop()
    text = log.read_text(errors="replace")
    assert "Traceback" not in text, text[-4000:]
    posts = [m.caption for m in s.fake.sent(s.group) if m.kind == "photo"]
    assert len(posts) == 1, f"the move is told once: {posts}"


@pytest.mark.parametrize("stop", ["SIGTERM", "SIGINT"])
async def test_a_job_worker_stopped_while_it_waits_for_the_bot_api_exits_quietly(
        pg_url: str, tmp_path: Path, stop: str) -> None:
    """A stop while the worker starts (Telegram unreachable, the worker waiting for it, as
    at a boot with the network down) ends the wait: exit 0, no traceback, no SIGTERM death."""
    import asyncio
    import os
    import signal
    import subprocess
    import sys

    from chat.config import STOP_SECONDS
    from tests.webhook_harness import free_port

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root), "TELEGRAM_BOT_TOKEN": "123456:TEST-token",
           "TELEGRAM_API_BASE_URL": f"http://127.0.0.1:{free_port()}",  # nobody listens
           "KRENDZU_DATABASE_URL": pg_url, "LOG_LEVEL": "INFO"}
    log = tmp_path / "worker.log"
    worker = subprocess.Popen([sys.executable, "-m", "chat.jobs", "worker"], cwd=tmp_path,
                              env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT,
                              process_group=0)
    try:
        for _ in range(300):
            if "the Bot API cannot be reached" in log.read_text():
                break
            assert worker.poll() is None, log.read_text()
            await asyncio.sleep(0.1)
        started = time.monotonic()
        os.killpg(worker.pid, getattr(signal, stop))
        status = await asyncio.to_thread(worker.wait, STOP_SECONDS + 30)
        took = time.monotonic() - started
    finally:
        if worker.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    text = log.read_text(errors="replace")
    assert status == 0 and "Traceback" not in text, text[-4000:]
    assert took < STOP_SECONDS, f"stopped after {took:.1f} s"


async def test_a_two_card_defence_is_four_taps_in_the_scaled_mode(
        tmp_path: Path, pg_url: str) -> None:
    """Card, the second card (+), the first one's cell, the second one's cell: after the
    first card's cell the panel the announcement job redraws asks for the second card's
    cell at once, as in the embedded mode (tests/test_fewer_taps.py). Before, the job's
    panel asked for a card again: five taps."""
    from krendzu import Place
    from tests.fakebot import FakeUser, Message
    from tests.test_fewer_taps import Tapper, history, keys, op_of

    async with bot_duel(tmp_path, pg_url, -79) as (h, group, row):

        class JobTapper(Tapper):
            async def tap(self, user: FakeUser, message: Message, button: dict) -> Message:
                self.taps += 1
                user.press(message, data=button["callback_data"])
                await h.settle()
                await announce(h, group)  # a job worker tells the move, if one was made
                return h.fake.message(user, message.message_id)

        t = JobTapper(h, row, [h.fake.users[1], h.fake.users[2]])
        user, live = await t.mover()
        await t.tap(user, live, keys(live, "p")[0])  # the opening
        await t.attack()
        user, live = await t.mover()
        stored = await t.stored()
        defender = stored.game.current_player
        assert defender not in stored.game.tour.roles.attackers
        before = history(stored)
        t.taps = 0
        live = await t.tap(user, live, keys(live, "c")[0])
        plus = keys(live, "c")[0]
        second_name = plus["text"].removeprefix("+")
        live = await t.tap(user, live, plus)
        live = await t.tap(user, live, keys(live, "p")[0])
        mid = await t.stored()
        assert mid.game.tour.step_in_turn == 1 and mid.game.current_player == defender
        user, live = await t.mover()
        text = live.caption or live.text or ""
        assert f"{second_name}: choose a cell" in text, text
        cells = keys(live, "p")
        assert cells and all(":" not in op_of(b) for b in cells), live.buttons()
        await t.tap(user, live, cells[-1])
        after = await t.stored()
        assert t.taps == 4
        added = history(after)[len(before):]
        assert [type(a) for a in added] == [Place, Place], added
        assert after.game.current_player != defender
        assert not h.fake.errors


async def test_a_second_card_named_is_asked_for_when_told_with_the_move_before(
        scaled: Scaled) -> None:
    """The defender's first card is told by the job still waiting for the attacker's move
    (a job already waiting takes no second one: it keeps the attacker as its mover, and
    tells both moves naming none). The second card the defender's key named is noted with
    the move, so the panel asks for that card's cell all the same. Before, it travelled in
    the job's arguments only, was lost with the refused job, and the panel asked for a card
    again: five taps (50 of 76 two-card defences in a chaos run)."""
    from krendzu import Place

    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")
    flow = s.svc.flow
    actors = {ANN.user_id: ANN, BOB.user_id: BOB}
    # Play until an attacker is to move with a defender after them (the opening first).
    for _ in range(6):
        stored = await flow.load(match_id)
        tour = stored.game.tour
        if stored.game.current_player in tour.roles.attackers and tour.placed:
            break
        await move(s, match_id)
        await s.run((ANNOUNCE_QUEUE,))
    await s.sql("DELETE FROM procrastinate_jobs")
    await move(s, match_id)  # the attacker: their announcement waits
    stored = await flow.load(match_id)
    defender = stored.row.seats[stored.game.current_player].user_id or 0
    places = [a for a in stored.game.legal_actions() if isinstance(a, Place)]
    first = places[0]
    hand = stored.game.observation(stored.game.current_player).tour.hand
    second = next(c for c in hand if c != first.card)
    from chat.flow.views import codec

    outcome = await flow.panel_press(match_id, stored.next_seq, codec.place_op(
        first.card, first.x, first.y, then=second), actors[defender])
    assert outcome.announced_later, outcome
    assert len(await s.jobs("announce")) == 1, "one waiting job, the attacker's"
    mark = len(s.fake.calls)
    await s.run((ANNOUNCE_QUEUE,))
    mid = await flow.load(match_id)
    assert mid.game.tour.step_in_turn == 1
    panels = [c for c in s.fake.calls[mark:] if c.chat_id == defender
              and "reply_markup" in c.params]
    assert panels, [(c.method, c.chat_id) for c in s.fake.calls[mark:]]
    text = panels[-1].params.get("caption") or panels[-1].params.get("text") or ""
    assert f"{second.pretty()}: choose a cell" in text, text


async def test_a_turn_is_reminded_once_and_keeps_the_second_card_named(
        scaled: Scaled) -> None:
    """The turn's reminder comes once, also when the defender's first card comes after it
    (the same turn and deadline: before, the first card armed the reminder again, and its
    fresh panel asked for a card anew in the middle of the turn); one that comes after the
    first card asks for the cell of the second card its key named."""
    from chat.flow.views import codec
    from krendzu import Place

    s = scaled
    match_id = await group_duel(s)
    flow, store = s.svc.flow, s.svc.store
    actors = {ANN.user_id: ANN, BOB.user_id: BOB}

    async def to_defence() -> tuple[Any, int]:
        for _ in range(8):
            stored = await flow.load(match_id)
            tour = stored.game.tour
            if stored.game.current_player not in tour.roles.attackers and tour.placed \
                    and not tour.pending:
                return stored, stored.row.seats[stored.game.current_player].user_id or 0
            await move(s, match_id)
        raise AssertionError("no defence")

    async def first_card(stored: Any, defender: int) -> Any:
        first = next(a for a in stored.game.legal_actions() if isinstance(a, Place))
        hand = stored.game.observation(stored.game.current_player).tour.hand
        second = next(c for c in hand if c != first.card)
        await flow.panel_press(match_id, stored.next_seq, codec.place_op(
            first.card, first.x, first.y, then=second), actors[defender])
        return second

    # 1. Reminded, then the first card: no second reminder in the same turn.
    stored, defender = await to_defence()
    seq = stored.next_seq
    assert await flow.ticker.remind(match_id, seq), "the turn's reminder"
    await first_card(stored, defender)
    timer = await store.timer_of(match_id)
    assert timer is not None and timer.seq == seq + 1
    assert timer.reminded, "the first card armed the turn's reminder again"
    assert await flow.ticker.remind(match_id, timer.seq) == []
    # 2. The first card, then the reminder: its panel asks for the second card's cell.
    from krendzu import EndTurn

    await flow.play(match_id, actors[defender], [EndTurn()])
    stored, defender = await to_defence()
    seq = stored.next_seq
    second = await first_card(stored, defender)
    told = await flow.ticker.remind(match_id, seq + 1)
    [panel] = [n for n in told if isinstance(n, Send) and n.chat_id == defender]
    assert f"{second.pretty()}: choose a cell" in panel.text, panel.text
