"""What an announcement job writes, and in how many transactions (issue 39): its end
(procrastinate's ``finish_job``) goes in the write that moves the match's marker, and
that marker is written once, for the newest move it tells; a board job's end goes in the
write that records its post."""

from __future__ import annotations

import contextlib
from typing import Any

import psycopg
from procrastinate import sql
from procrastinate.jobs import Job, Status
from psycopg.rows import dict_row

from chat.jobs import ANNOUNCE_QUEUE, COMPUTER_QUEUE
from chat.jobs.manager import JobEnd, QuietFetches
from krendzu import Settings
from storage import SeatSpec
from tests.test_jobs import ANN, Scaled, group_duel, move, scaled  # noqa: F401 (fixture)


def worker_ends(s: Scaled) -> list[int]:
    """The ids of the jobs whose end the worker writes itself (procrastinate's
    ``finish_job`` query on its connector), from now on."""
    ended: list[int] = []
    connector: Any = s.svc.jobs.app.connector
    run = connector.execute_query_async

    async def counted(query: str, **arguments: Any) -> Any:
        if query == sql.queries["finish_job"]:
            ended.append(int(arguments["job_id"]))
        return await run(query, **arguments)

    connector.execute_query_async = counted
    return ended


def marker_writes(s: Scaled) -> list[tuple[str, int, int, bool]]:
    """The store's writes that move a match's marker, from now on: the store call, the
    match, the marker, whether the write carried a job's end. The marker moves on its own
    (``set_announced``) or in the record of its last notice (:mod:`chat.markers`)."""
    written: list[tuple[str, int, int, bool]] = []
    store: Any = s.svc.store
    plain = store.set_announced

    async def set_announced(match_id: int, seq: int, *, also: Any = None) -> None:
        written.append(("set_announced", match_id, seq, also is not None))
        await plain(match_id, seq, also=also)

    def record(name: str) -> Any:
        write = getattr(store, name)

        async def counted(match_id: int, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("announced") is not None:
                written.append((name, match_id, kwargs["announced"],
                                kwargs.get("also") is not None))
            return await write(match_id, *args, **kwargs)
        return counted

    store.set_announced = set_announced
    for name in ("set_panel", "note_told", "post_board"):
        setattr(store, name, record(name))
    return written


async def test_an_announcement_ends_in_the_write_of_its_marker(
        scaled: Scaled) -> None:  # noqa: F811 (the fixture)
    s = scaled
    match_id = await group_duel(s)
    await move(s, match_id)
    await move(s, match_id)  # one job tells both
    ended, written = worker_ends(s), marker_writes(s)
    await s.run((ANNOUNCE_QUEUE,))
    jobs = {j["task_name"]: j for j in await s.jobs()}
    assert jobs["announce"]["status"] == "succeeded"
    assert jobs["announce"]["attempts"] == 1
    assert (await s.svc.store.get_match(match_id)).announced_seq == 2
    # The newest marker alone, in the record of the last notice Telegram took, with the
    # job's end (one write: the marker's own and the job's end were one more).
    [(name, marked, seq, with_end)] = written
    assert (marked, seq, with_end) == (match_id, 2, True) and name != "set_announced", written
    # The announcement's end was its marker's write; the board job's, its post's record's.
    assert jobs["announce"]["id"] not in ended
    assert jobs["board"]["id"] not in ended and jobs["board"]["status"] == "succeeded"


def post_records(s: Scaled) -> list[bool]:
    """The store's records of a group's board post, from now on: whether each carried a
    write of the caller's own (a job's end)."""
    recorded: list[bool] = []
    store: Any = s.svc.store
    post_board = store.post_board

    async def counted(*args: Any, **kwargs: Any) -> Any:
        recorded.append(kwargs.get("also") is not None)
        return await post_board(*args, **kwargs)

    store.post_board = counted
    return recorded


async def test_a_board_job_ends_in_the_write_of_its_post(
        scaled: Scaled) -> None:  # noqa: F811 (the fixture)
    """The board job's end (procrastinate's ``finish_job``) commits with the record of the
    post it made, its last write: one transaction where the worker made a second one."""
    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")  # the start's timers: not this test's
    await move(s, match_id)
    ended, recorded = worker_ends(s), post_records(s)
    photos = len([c for c in s.fake.calls_to(chat=s.group, ok=True)
                  if c.method == "sendPhoto"])
    await s.run((ANNOUNCE_QUEUE,))
    [board] = await s.jobs("board")
    assert board["status"] == "succeeded" and board["attempts"] == 1
    assert board["id"] not in ended, "the worker wrote the board job's end itself"
    assert recorded == [True], "the post's record carried the job's end"
    assert len([c for c in s.fake.calls_to(chat=s.group, ok=True)
                if c.method == "sendPhoto"]) == photos + 1
    told = await s.svc.store.told(match_id)
    assert told["board"] == told["group"] == 1


async def swept(s: Scaled, task: str) -> tuple[dict[str, Any], QuietFetches, JobEnd]:
    """The one ``task`` job, closed as the sweeper closes a job it takes for stalled while
    it still runs, the worker's manager, and that job's end (:class:`JobEnd`)."""
    [job] = await s.jobs(task)
    await s.sql("UPDATE procrastinate_jobs SET status = 'failed' WHERE id = %s", (job["id"],))
    manager = s.svc.jobs.app.job_manager
    assert isinstance(manager, QuietFetches)
    return job, manager, manager.ending(job["id"])


async def test_a_board_post_no_longer_running_leaves_its_end_to_the_worker(
        scaled: Scaled) -> None:  # noqa: F811 (the fixture)
    """A board job the sweeper closed meanwhile (taken for stalled) cannot end in its
    post's record: the post is remembered all the same, and its end is the worker's."""
    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")
    await move(s, match_id)
    _job, _manager, end = await swept(s, "board")
    await s.svc.store.post_board(match_id, 99, "a post", notes={"board": 1}, also=end)
    end.committed()
    assert not end.written
    assert await s.svc.store.board_message(match_id) == (99, "a post")
    assert (await s.svc.store.told(match_id))["board"] == 1
    assert [j["status"] for j in await s.jobs("board")] == ["failed"]


async def test_an_announcement_no_longer_running_keeps_its_marker(
        scaled: Scaled) -> None:  # noqa: F811 (the fixture)
    """A job the sweeper closed meanwhile (taken for stalled) cannot end in its write: the
    marker moves all the same, and the end is left to the worker, as before."""
    s = scaled
    match_id = await group_duel(s)
    await move(s, match_id)
    job, manager, end = await swept(s, "announce")
    await s.svc.store.set_announced(match_id, 1, also=end)
    end.committed()
    assert (await s.svc.store.get_match(match_id)).announced_seq == 1
    assert not end.written
    assert [j["status"] for j in await s.jobs("announce")] == ["failed"]
    # The worker's own end is not skipped (it reports the job's state, as before).
    ended = worker_ends(s)
    with contextlib.suppress(Exception):
        await manager.finish_job(Job.from_row(await job_row(s, job["id"])),
                                 status=Status.SUCCEEDED, delete_job=False)
    assert ended == [job["id"]]


async def job_row(s: Scaled, job_id: int) -> dict[str, Any]:
    async with await psycopg.AsyncConnection.connect(s.url, row_factory=dict_row) as c:
        cur = await c.execute("SELECT * FROM procrastinate_jobs WHERE id = %s", (job_id,))
        row = await cur.fetchone()
    assert row is not None
    return row


async def test_a_move_in_a_group_commits_with_its_board_job(
        scaled: Scaled) -> None:  # noqa: F811 (the fixture)
    """The group's board job is deferred in the move's own transaction, beside its
    announcement (the announcement deferred it in a transaction of its own), and the
    announcement defers none: the move's board job tells the group."""
    s = scaled
    match_id = await group_duel(s)
    await s.sql("DELETE FROM procrastinate_jobs")  # the start's timers: not this test's
    await move(s, match_id)
    assert [(j["status"], j["args"], j["lock"], j["queueing_lock"])
            for j in await s.jobs("board")] == [
        ("todo", {"match_id": match_id}, f"board:{match_id}", f"board:{match_id}")]
    await move(s, match_id)
    assert len(await s.jobs("board")) == 1, "one waiting is enough"
    await s.run((ANNOUNCE_QUEUE,))
    assert [j["status"] for j in await s.jobs("board")] == ["succeeded"]
    row = await s.svc.store.get_match(match_id)
    assert (await s.svc.store.told(match_id))["board"] == row.move_count


async def test_a_move_in_a_private_chat_has_no_board_job(
        scaled: Scaled) -> None:  # noqa: F811 (the fixture)
    s = scaled
    await s.svc.flow.see_user(ANN, private=True)
    stored = await s.svc.store.create_match(ANN.user_id, Settings(),
                                            [SeatSpec.human(ANN.user_id),
                                             SeatSpec.computer(1)])
    game = stored.game
    while stored.row.seats[game.current_player].user_id != ANN.user_id:
        await s.run((COMPUTER_QUEUE,))
        stored = await s.svc.store.load_match(stored.match_id)
        game = stored.game
    await s.svc.store.append_move(stored.match_id, stored.next_seq, game.legal_actions()[0])
    assert [j["status"] for j in await s.jobs("announce")][-1] == "todo"
    assert await s.jobs("board") == [], "nothing of a private match is a group's"
