"""A job worker's options for procrastinate. The worker's services are built by the composition
root (:func:`chat.compose_scaled.open_job_services`), its program is ``python -m chat.jobs``
(chat/jobs/__main__.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chat.jobs.core import (
    HEARTBEAT_SECONDS,
    POLL_SECONDS,
    SERVICES,
    STALLED_AFTER,
)
from chat.jobs.services import JobServices

#: Jobs a worker of announcements and timers runs at once. They mostly wait (for Telegram,
#: for a group's 20-a-minute window), and a job waiting holds its slot: with 8, a few busy
#: groups' waiting announcements could hold every slot while a turn timer came due.
ANNOUNCE_CONCURRENCY = 16
#: Seconds the jobs running when a stop comes (SIGTERM, SIGINT; to the worker alone or to
#: its whole process group, its drawing and computer processes included) get to finish,
#: unless told (``python -m chat.jobs worker``: a third of ``KRENDZU_STOP_SECONDS``).
#: The rest are aborted, and procrastinate retries a job a stop aborted: the next worker
#: (or a sibling) announces from the stored marker. An announcement waiting for a group's
#: window or a 429 would otherwise hold the stop for a minute and more; so a stop ends
#: within ``KRENDZU_STOP_SECONDS``.
GRACEFUL_SECONDS = 5.0


def worker_options(services: JobServices, queues: Sequence[str], *, concurrency: int = 1,
                   wait: bool = True,
                   graceful_seconds: float = GRACEFUL_SECONDS) -> dict[str, Any]:
    """What :meth:`procrastinate.App.run_worker_async` is given (``graceful_seconds``: how
    long the jobs running when the worker stops get to finish)."""
    return {"queues": list(queues), "concurrency": concurrency, "wait": wait,
            "additional_context": {SERVICES: services},
            "fetch_job_polling_interval": POLL_SECONDS, "name": "+".join(queues),
            "update_heartbeat_interval": HEARTBEAT_SECONDS,
            "stalled_worker_timeout": STALLED_AFTER,
            "shutdown_graceful_timeout": graceful_seconds}
