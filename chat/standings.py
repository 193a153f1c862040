"""Results over time, without Telegram: the lines of ``/history``, the card of ``/stats``,
the page of ``/top``. The handlers in :mod:`chat.handlers.standings` parse the commands and
deliver what these return.

Figures come from the store (statistics added up as matches finish, ratings from
:mod:`chat.ratings`); the cards and tables are pictures from :mod:`render.stats`, drawn by
delivery only when their reply is about to be sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from babel.dates import format_date

from chat.caches import TtlCache
from chat.describe import table_label, together
from chat.flow import Flow
from chat.i18n import Tr, picture_texts
from chat.notices import Drawing
from chat.ratings import SHOW_AFTER, display_rating, shown
from chat.results import stored_outcome
from render.stats import MAX_LEADERS, LeaderRow, StatsCard, leaderboard_png, stats_card_png
from storage import MatchRow, MatchStatus, RatingRow, StatsRow, Store, pool_chat_id

HISTORY_LENGTH = 10
#: How long a leaderboard page is shown as it was read.
LEADERS_SECONDS = 60.0
#: Words after ``/top`` that ask for everyone everywhere.
EVERYWHERE = ("global", "all", "все")
#: ``/top pool``: the players of "Play now" matches (issue 40), every pool match's chat
#: together (storage.pool_chat_id(0) stands for them all: Store.top_players).
POOL_WORDS = ("pool", "playnow", "пул")
POOL_SCOPE = pool_chat_id(0)


@dataclass(frozen=True, slots=True)
class Card:
    """A picture to send with its caption."""

    caption: str
    picture: Drawing


class Standings:
    """``/history``, ``/stats`` and ``/top`` over the store; leaderboards read once a minute."""

    def __init__(self, store: Store, flow: Flow) -> None:
        self.store = store
        self.flow = flow
        #: Leaderboard pages by scope (a chat, or None: everywhere).
        self.leaders: TtlCache[int | None, tuple[tuple[LeaderRow, ...], int]] = TtlCache(
            LEADERS_SECONDS, 256)

    async def history(self, chat_id: int, thread_id: int | None, tr: Tr) -> str:
        """The chat's recent matches with their results."""
        rows = await self.store.recent_matches(chat_id, thread_id, HISTORY_LENGTH)
        event = await self.store.latest_arena(chat_id) if chat_id < 0 else None
        if not rows and event is None:
            return tr._("No matches here yet. /new sets one up.")
        lines = [tr._("Recent matches here:")]
        for row in rows:
            lines.append(await history_line(self.flow, tr, row))
        if event is not None:  # the newest arena or league (issue 40): its podium
            room = self.flow.leagues if event.kind == self.flow.leagues.kind else \
                self.flow.arenas
            lines += ["", await room.summary(event, tr)]
        lines += ["", tr._("/export N sends the record and replay of finished match N.")]
        return "\n".join(lines)

    async def stats(self, user_id: int, tr: Tr, *, scope: int | None, scope_title: str,
                    typed_name: str | None = None) -> Card | str:
        """A player's card (``user_id``'s, or the one named ``typed_name``), in ``scope``
        (a group) or over all chats; a text when there is nothing to show."""
        found: StatsRow | None = None
        if typed_name:
            found = await self.store.stats_by_name(typed_name, scope)
            if found is None:  # an outside engine by its name (shown as "🤖 NAME")
                engine = await self.store.engine_by_name(typed_name.removeprefix("🤖").strip())
                if engine is not None:
                    found = await self.store.user_stats(engine.user_id, scope)
            if found is None:
                return tr._("I know no player “{name}” here.", name=typed_name[:32])
            user_id = found.user_id
        row = found or await self.store.user_stats(user_id, scope)
        if row is None:
            return tr._("No finished matches yet: the figures come after the first one.")
        rating = (await self.store.ratings_of([user_id])).get(user_id)
        history_rows = await self.store.rating_history(user_id)
        card = stats_card(row, rating, [display_rating(mu, sigma) for mu, sigma in history_rows],
                          scope=scope_title)
        # The card names everything it shows: the same card asked again is drawn once.
        picture = Drawing(stats_card_png, (card,), {"texts": picture_texts(tr)},
                          key=("stats", card, tr.language))
        return Card(tr._("Statistics of {name}.", name=row.display_name), picture)

    async def top(self, tr: Tr, *, scope: int | None, scope_title: str) -> Card:
        """The leaderboard of ``scope`` (a chat; None: everywhere)."""
        rows, total = await self.leaders_of(scope)
        title = (tr._("Krendzu: the best players everywhere") if scope is None
                 else tr._("Krendzu: the best players of Play now") if scope == POOL_SCOPE
                 else tr._("Krendzu: the best players in “{title}”", title=scope_title or "?"))
        picture = Drawing(leaderboard_png, (rows,), {"title": title, "texts": picture_texts(tr),
                                                     "total": total},
                          key=("top", scope, tr.language, title, rows, total))
        return Card(tr._("Ratings show after {n} rated matches; the rest follow by wins.",
                         n=SHOW_AFTER), picture)

    async def leaders_of(self, scope: int | None) -> tuple[tuple[LeaderRow, ...], int]:
        """The page of the leaderboard the picture shows and how many players it has in all,
        read at most once a minute per scope."""
        known = self.leaders.get(scope)
        if known is None:
            players, total = await self.store.top_players(scope, MAX_LEADERS,
                                                          rated_after=SHOW_AFTER)
            known = (tuple(leaderboard(players)), total)
            self.leaders.put(scope, known)
        return known


async def history_line(flow: Flow, tr: Tr, row: MatchRow) -> str:
    names = await flow.seat_names(row, tr)
    day = format_date((row.finished_at or row.created_at).date(), format="medium",
                      locale=tr.language)
    head = f"#{row.match_id} · {day} · {table_label(tr, row.table)}"
    if row.status is MatchStatus.ACTIVE:
        return f"{head}: " + tr._("being played ({names})", names=", ".join(names))
    # The engine's outcome, as the summary, statistics and ratings have it (a trio player
    # who resigned ranks last; a side that conceded lost).
    outcome = await stored_outcome(flow.store, row)
    early = f"{head}: " + tr._("ended early ({names})", names=", ".join(names))
    if outcome is None or row.totals is None:  # cancelled (or conceded: no final totals)
        if outcome is None or not outcome.winners:
            return early
        return early + " — " + tr._("won by {names}", names=together(
            tr, [names[s] for s in outcome.winners]))
    score = " · ".join(f"{name} {total}" for name, total in zip(names, row.totals,
                                                                  strict=False))
    if outcome.draw:
        result = tr._("a draw")
    elif outcome.winners:
        result = tr._("won by {names}",
                      names=together(tr, [names[s] for s in outcome.winners]))
    else:
        result = tr._("nobody won: every player resigned")
    return f"{head}: {score} — {result}"


def stats_card(row: StatsRow, rating: RatingRow | None, history: list[float], *,
               scope: str) -> StatsCard:
    return StatsCard(
        name=row.display_name, scope=scope, matches=row.matches, wins=row.wins,
        draws=row.draws, losses=row.losses, rating=shown(rating),
        rated_matches=rating.rated_matches if rating else 0, rated_needed=SHOW_AFTER,
        attack_points_per_tour=(row.points_scored / row.tours_attacked
                                if row.tours_attacked else None),
        conceded_per_tour=(row.points_conceded / row.tours_defended
                           if row.tours_defended else None),
        best_tour=row.best_tour, suit_combos=row.suit_combos,
        progression_combos=row.progression_combos,
        own_goals_conceded=row.own_goals_conceded,
        rating_history=tuple(history),
    )


def leaderboard(players: list[tuple[StatsRow, RatingRow | None]]) -> list[LeaderRow]:
    """Rated players by display rating, then everyone else by wins."""
    def key(item: tuple[StatsRow, RatingRow | None]) -> tuple[int, float, int, int]:
        stats, rating = item
        value = shown(rating)
        return (0 if value is not None else 1, -(value or 0.0), -stats.wins, stats.user_id)

    ordered = sorted(players, key=key)
    return [LeaderRow(rank=i + 1, name=s.display_name, rating=shown(r), matches=s.matches,
                      wins=s.wins, draws=s.draws, losses=s.losses)
            for i, (s, r) in enumerate(ordered)]
