"""Services: everything the bot's doors use (the Telegram handlers, the webhook, the engine API,
the Mini App), built once in ``post_init`` by the composition root (chat/compose.py), never at
import. A module of its own, below all of them, so that the HTTP doors need not import the
Telegram handlers to reach the flow and delivery."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chat.answers import RecentAnswers
from chat.caches import ByteLru, TtlCache
from chat.computer import Pacer, Thinker
from chat.delivery import Delivery
from chat.flow import Flow
from chat.logs import RecentErrors
from chat.standings import Standings
from chat.throttle import Throttle

if TYPE_CHECKING:  # the handlers reach the store only through the flow
    from storage import MatchRow, Store

#: How long an answer of getChatMember (admin or not) is trusted.
ADMIN_SECONDS = 60.0
#: Exported records kept (a long match's record is some 100 KiB).
EXPORT_BYTES = 4 * 1024 * 1024
#: A person the bot cannot write to privately, told so in a group (with the Start button),
#: is not told again in that group for this long, however many private commands they type.
PRIVATE_NUDGE_SECONDS = 300.0
#: How long the match being played in a topic is trusted when ordering waiting updates.
PLAYING_SECONDS = 1.0
#: How long a group's information answer is recent (``KRENDZU_INFO_REPEAT_MINUTES``).
REPEAT_SECONDS = 300.0


@dataclass
class Services:
    """Everything the doors use, built in ``post_init`` (no singletons at import)."""

    store: Store
    flow: Flow
    delivery: Delivery
    thinker: Thinker
    pacer: Pacer
    #: An untouched match set-up closes after this many seconds.
    lobby_seconds: float = 1800.0
    #: Held while the turn timers' tick runs (one at a time).
    ticking: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Answers asked for again and again, kept briefly (:mod:`chat.caches`): admin checks by
    #: (chat, user) — a refused /cancel /kick /settings asks Telegram once a minute at most;
    #: exported records by (match, finished tours, language).
    admins: TtlCache[tuple[int, int], bool] = field(
        default_factory=lambda: TtlCache(ADMIN_SECONDS, 4096))
    exports: ByteLru[tuple[int, int, str]] = field(
        default_factory=lambda: ByteLru(EXPORT_BYTES, 32))
    #: Per-user and per-chat limits (:mod:`chat.throttle`), checked by :func:`admission`.
    throttle: Throttle = field(default_factory=Throttle)
    #: The application's clock (tests run a faster one).
    clock: Callable[[], float] = time.time
    #: (group, person) told lately that the private chat is closed to the bot
    #: (:meth:`Call.private_chat_closed`). This process's courtesy, as the throttle's
    #: buckets are: lost on a restart, the group may be told once more.
    nudged: TtlCache[tuple[int, int], bool] = field(init=False)
    #: Groups whose admins were told lately that Telegram refused a panel in the group
    #: (chat/handlers/buttons.py ``answer_in_group``): once a day per process.
    refusals_told: TtlCache[int, bool] = field(
        default_factory=lambda: TtlCache(24 * 3600.0, 4096))
    #: Information answers given in groups lately: a repeat is pointed to the answer
    #: (:mod:`chat.answers`, :func:`inform`).
    answers: RecentAnswers = field(default_factory=lambda: RecentAnswers(REPEAT_SECONDS))
    #: The match being played in a (chat, topic), as ``(row or None,)``, kept a second:
    #: which waiting updates go first (chat/handlers/admission.py ``urgent``).
    playing: TtlCache[tuple[int, int | None], tuple[MatchRow | None]] = field(
        default_factory=lambda: TtlCache(PLAYING_SECONDS, 4096))
    #: Background tasks of the handlers (a flooding user told to slow down).
    tasks: set[asyncio.Task[None]] = field(default_factory=set)
    #: The owners (``KRENDZU_ADMIN_IDS``): /admin answers them alone, privately.
    admin_ids: frozenset[int] = frozenset()
    #: The errors this process logged in the last hour (/admin), when counted.
    errors: RecentErrors | None = None
    #: /history, /stats, /top (leaderboard pages kept a minute per scope).
    standings: Standings = field(init=False)

    def __post_init__(self) -> None:
        self.standings = Standings(self.store, self.flow)
        self.nudged = TtlCache(PRIVATE_NUDGE_SECONDS, 4096, clock=self.clock)
