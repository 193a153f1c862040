"""Results over time: ``/history``, ``/stats [name]``, ``/top [global]``.

Figures come from the store (statistics added up as matches finish, ratings from
:mod:`chat.ratings`); the cards and tables are pictures from :mod:`render.stats`, drawn off the
event loop when the reply's turn to be sent comes. Each reads only what it shows: a page of
the leaderboard and a count (kept a minute), one player found by name through an index.
"""

from __future__ import annotations

from babel.dates import format_date
from telegram import Update
from telegram.constants import ChatType
from telegram.ext import ContextTypes

from chat.describe import table_label
from chat.flow import Flow
from chat.handlers.context import (
    Services,
    actor_of,
    reply_kind,
    reply_tr,
    say,
    services,
    thread_of,
)
from chat.i18n import Tr
from chat.notices import Drawing, Send
from chat.ratings import SHOW_AFTER, display_rating, shown
from chat.results import stored_outcome
from render.stats import MAX_LEADERS, LeaderRow, StatsCard, leaderboard_png, stats_card_png
from storage import MatchRow, MatchStatus, RatingRow, StatsRow

HISTORY_LENGTH = 10


async def history(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/history``: the chat's recent matches with their results."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None:
        return
    rows = await svc.store.recent_matches(chat.id, thread_of(update), HISTORY_LENGTH)
    if not rows:
        await say(svc, update, tr._("No matches here yet. /new sets one up."))
        return
    lines = [tr._("Recent matches here:")]
    for row in rows:
        lines.append(await history_line(svc.flow, tr, row))
    lines += ["", tr._("/export N sends the record and replay of finished match N.")]
    await say(svc, update, "\n".join(lines))


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
        return early + " — " + tr._("won by {names}", names=" & ".join(
            names[s] for s in outcome.winners))
    score = " · ".join(f"{name} {total}" for name, total in zip(names, row.totals,
                                                                  strict=False))
    if outcome.draw:
        result = tr._("a draw")
    elif outcome.winners:
        result = tr._("won by {names}", names=" & ".join(names[s] for s in outcome.winners))
    else:
        result = tr._("nobody won: every player resigned")
    return f"{head}: {score} — {result}"


async def stats(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/stats [name]``: a card with a player's figures and rating plot (yours by default;
    in a group the figures of that group, in private over all chats)."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None:
        return
    group = chat.type != ChatType.PRIVATE
    scope = chat.id if group else None
    actor = actor_of(update)
    user_id = actor.user_id
    message = update.effective_message
    replied = message.reply_to_message if message is not None else None
    found: StatsRow | None = None
    if replied is not None and replied.from_user is not None and not replied.from_user.is_bot:
        user_id = replied.from_user.id
    elif context.args:
        typed = " ".join(context.args).strip().lstrip("@")[:64]
        found = await svc.store.stats_by_name(typed, scope)
        if found is None:
            await say(svc, update, tr._("I know no player “{name}” here.", name=typed[:32]))
            return
        user_id = found.user_id
    row = found or await svc.store.user_stats(user_id, scope)
    if row is None:
        await say(svc, update, tr._("No finished matches yet: the figures come after the "
                                    "first one."))
        return
    rating = (await svc.store.ratings_of([user_id])).get(user_id)
    history_rows = await svc.store.rating_history(user_id)
    card = stats_card(row, rating, [display_rating(mu, sigma) for mu, sigma in history_rows],
                      scope=chat.title or "" if group else "")
    # The card names everything it shows: the same card asked again is drawn once.
    picture = Drawing(stats_card_png, (card,), {"lang": tr.language},
                      key=("stats", card, tr.language))
    svc.delivery.run([Send(chat.id, tr._("Statistics of {name}.", name=row.display_name),
                           thread_id=thread_of(update), photo=picture, group=group,
                           info=reply_kind(svc, update))])


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


async def top(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """``/top``: the chat's leaderboard; ``/top global``: over all chats."""
    svc = services(context)
    tr = await reply_tr(svc, update)
    chat = update.effective_chat
    if chat is None:
        return
    overall = bool(context.args) and context.args[0].lower() in ("global", "all", "все")
    group = chat.type != ChatType.PRIVATE
    scope = None if overall or not group else chat.id
    rows, total = await leaders(svc, scope)
    title = (tr._("Krendzu: the best players everywhere") if scope is None
             else tr._("Krendzu: the best players in “{title}”", title=chat.title or "?"))
    picture = Drawing(leaderboard_png, (rows,), {"title": title, "lang": tr.language,
                                                 "total": total},
                      key=("top", scope, tr.language, title, rows, total))
    caption = tr._("Ratings show after {n} rated matches; the rest follow by wins.",
                   n=SHOW_AFTER)
    svc.delivery.run([Send(chat.id, caption, thread_id=thread_of(update), photo=picture,
                           group=group, info=reply_kind(svc, update))])


async def leaders(svc: Services, scope: int | None) -> tuple[tuple[LeaderRow, ...], int]:
    """The page of the leaderboard the picture shows and how many players it has in all,
    read at most once a minute per scope (a chat, or None: everywhere)."""
    known = svc.leaders.get(scope)
    if known is None:
        players, total = await svc.store.top_players(scope, MAX_LEADERS,
                                                     rated_after=SHOW_AFTER)
        known = (tuple(leaderboard(players)), total)
        svc.leaders.put(scope, known)
    return known


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
