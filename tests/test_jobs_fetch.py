"""How often a job worker asks PostgreSQL for a job (chat/jobs/core.py
:class:`~chat.jobs.core.QuietFetches`): once for each job its insert's notification
announced, not once more after it to find nothing; jobs notified together are each fetched
at once, and the worker's poll still drains what is waiting."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import psycopg
from procrastinate import sql

from chat.jobs import ANNOUNCE_QUEUE, Jobs, build_jobs, migrate

#: Long enough that no poll comes within a test: what is fetched is what notifications woke.
NO_POLL = 60.0
#: procrastinate's trigger that notifies a job's insert.
NOTIFY = "procrastinate_jobs_notify_queue_job_inserted_v1"


class Fetches:
    """The worker's fetches of a job (procrastinate's ``fetch_job`` query) and the jobs
    run, counted on the app's connector."""

    def __init__(self, jobs: Jobs) -> None:
        self.made = 0
        self.ran: list[int] = []
        #: When each job ran (the loop's clock).
        self.at: list[float] = []
        connector: Any = jobs.app.connector
        run = connector.execute_query_one_async

        async def counted(query: str, **arguments: Any) -> Any:
            if query == sql.queries["fetch_job"]:
                self.made += 1
            return await run(query, **arguments)

        connector.execute_query_one_async = counted

    async def until(self, ran: int, timeout: float = 5.0) -> None:
        async with asyncio.timeout(timeout):
            while len(self.ran) < ran:
                await asyncio.sleep(0.01)


@asynccontextmanager
async def worker(url: str, poll: float = NO_POLL) -> AsyncIterator[tuple[Any, Fetches]]:
    """A worker of the announcements' queue (four jobs at once, as the tests' and the
    deployment's) on an app with one task, ``noop(n)``, that notes ``n``; yields the task
    and the counts, once the worker's first look (at its start) is done."""
    await migrate(url)
    jobs = build_jobs(url)
    fetches = Fetches(jobs)

    async def noop(n: int) -> None:
        fetches.ran.append(n)
        fetches.at.append(asyncio.get_running_loop().time())

    task = jobs.app.task(name="noop", queue=ANNOUNCE_QUEUE)(noop)
    async with jobs.app.open_async():
        run = asyncio.create_task(jobs.app.run_worker_async(
            queues=[ANNOUNCE_QUEUE], concurrency=4, install_signal_handlers=False,
            fetch_job_polling_interval=poll, abort_job_polling_interval=NO_POLL,
            update_heartbeat_interval=NO_POLL))
        try:
            async with asyncio.timeout(5):
                while fetches.made == 0:
                    if run.done():
                        await run  # the worker failed to start: its error
                    await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)  # its listener is up
            yield task, fetches
        finally:
            run.cancel()
            await asyncio.gather(run, return_exceptions=True)


async def test_a_notified_job_costs_one_fetch(pg_url: str) -> None:
    async with worker(pg_url) as (task, fetches):
        before = fetches.made
        for n in range(5):
            await task.defer_async(n=n)
            await fetches.until(n + 1)
        await asyncio.sleep(0.3)  # any fetch after the last job's is made by now
        assert fetches.ran == [0, 1, 2, 3, 4]
        # procrastinate's own loop fetched once more after each job, to find nothing: 10.
        assert fetches.made - before == 5


async def test_jobs_notified_together_are_each_fetched_at_once(pg_url: str) -> None:
    async with worker(pg_url) as (task, fetches):
        await task.batch_defer_async({"n": 1}, {"n": 2}, {"n": 3})
        await fetches.until(3, timeout=2.0)  # long before a poll
        assert sorted(fetches.ran) == [1, 2, 3]


async def test_the_poll_still_drains_every_job_waiting(pg_url: str) -> None:
    async with worker(pg_url, poll=1.0) as (task, fetches), \
            await psycopg.AsyncConnection.connect(pg_url, autocommit=True) as conn:
        # Deferred without a notification (as a job its lock held back, or one scheduled
        # for now): the poll finds them, every one in the same round, not one a poll.
        await conn.execute(f"ALTER TABLE procrastinate_jobs DISABLE TRIGGER {NOTIFY}")
        try:
            await task.batch_defer_async({"n": 1}, {"n": 2}, {"n": 3})
        finally:
            await conn.execute(f"ALTER TABLE procrastinate_jobs ENABLE TRIGGER {NOTIFY}")
        await fetches.until(3)
        assert max(fetches.at) - min(fetches.at) < 0.5, fetches.at
