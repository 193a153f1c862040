"""The arena post's words and buttons (issue 40): pure, in the group's language.

One post a group sees for a whole arena, edited as it goes: the countdown, the standings with
their fire marks, the games in progress, the latest results (one line a finished game), and
Join / Pause / Start. The arena's logic is :mod:`chat.flow.arenas`; the table's is
:mod:`tournaments.arena`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from chat.flow.views import codec
from chat.i18n import Tr
from chat.model import Button, Keyboard
from storage import ArenaEntry, ArenaGameRow, ArenaRow, ArenaStatus
from tournaments.arena import ArenaGame, ArenaPlayer, Standing, Status, game_points
from tournaments.common import Outcome as GameOutcome

#: Lines of the table the post shows (the full table comes at the end, and with /arena).
TABLE_LINES = 10
#: Latest results the post shows.
RESULT_LINES = 6
#: Games in progress the post links to (a row of buttons each, when the Mini App is public).
WATCH_BUTTONS = 3


def countdown(tr: Tr, arena: ArenaRow, now: float) -> str:
    if arena.status is ArenaStatus.FINISHED:
        return tr._("🏁 The arena is over.")
    if arena.status is ArenaStatus.LOBBY:
        if arena.starts_at is None:
            return tr._("Join now: it starts when its creator presses ▶ Start.")
        minutes = max(1, round((arena.starts_at - now) / 60))
        return tr.n_("Join now: it starts in {n} minute.", "Join now: it starts in {n} minutes.",
                     minutes)
    left = max(0.0, (arena.ends_at or now) - now)
    return tr._("⏳ {time} left.", time=f"{int(left // 60)}:{int(left % 60):02d}")


def standing_line(tr: Tr, row: Standing, name: str) -> str:
    marks = ("🔥" if row.fire else "") + (" ⏸" if row.status is Status.PAUSED else "")
    return tr.n_("{rank}. {name}{marks} — {score} ({n} game)",
                 "{rank}. {name}{marks} — {score} ({n} games)", row.games,
                 rank=row.rank, name=name, marks=(" " + marks.strip()) if marks else "",
                 score=row.score)


def arena_text(tr: Tr, arena: ArenaRow, table: Sequence[Standing], names: Mapping[int, str],
               playing: Sequence[tuple[int, int | None]], results: Sequence[str], now: float,
               *, full: bool = False) -> str:
    """The post: heading, countdown, table (``full``: every line), games, results."""
    lines = [tr._("🏟 Arena · {minutes} min · duels", minutes=arena.minutes)
             + (f" · {arena.match_args}" if arena.match_args else ""),
             countdown(tr, arena, now), ""]
    if not table:
        lines.append(tr._("Nobody has joined yet."))
    shown = table if full else table[:TABLE_LINES]
    lines += [standing_line(tr, row, names.get(row.player, "?")) for row in shown]
    if len(table) > len(shown):
        lines.append(tr._("… and {n} more: /arena shows everyone.", n=len(table) - len(shown)))
    if playing and arena.status is ArenaStatus.RUNNING:
        lines += ["", tr._("⚔ Playing: {games}", games=", ".join(
            f"{names.get(a, '?')} – {names.get(b, '?') if b is not None else tr._('computer')}"
            for a, b in playing))]
    if results:
        lines += ["", *results[-RESULT_LINES:]]
    if arena.status is ArenaStatus.RUNNING:
        lines += ["", tr._("A win is 2, a draw 1; after two wins in a row each win counts "
                           "double (🔥). Your games come to your private chat.")]
    return "\n".join(lines)


def arena_keyboard(tr: Tr, arena: ArenaRow, bot_username: str,
                   watch: Sequence[tuple[str, str]] = ()) -> Keyboard | None:
    """Join / Pause, Start while it waits, the private chat's link (games are played there;
    Start in it joins), and up to :data:`WATCH_BUTTONS` games to watch ((label, url))."""
    if arena.status is ArenaStatus.FINISHED:
        return None
    rows: Keyboard = [[Button(tr._("✋ Join"), codec.arena_data(arena.arena_id, "join")),
                       Button(tr._("⏸ Pause"), codec.arena_data(arena.arena_id, "pause"))]]
    if arena.status is ArenaStatus.LOBBY:
        rows.append([Button(tr._("▶ Start"), codec.arena_data(arena.arena_id, "go"))])
    if bot_username:
        rows.append([Button(tr._("💬 My private chat"),
                            url=f"https://t.me/{bot_username}?start=a{arena.arena_id}")])
    rows += [[Button(tr._("👀 {game}", game=label), url=url)]
             for label, url in watch[:WATCH_BUTTONS]]
    return rows


def result_line(tr: Tr, first: str, second: str, result: str, points: int,
                fire: bool) -> str:
    """One finished game, as the post lists it: who beat whom and what the win brought."""
    if result == "draw":
        return tr._("½ {a} and {b} drew (+1 each)", a=first, b=second)
    winner, loser = (first, second) if result == "first" else (second, first)
    return tr._("✔ {winner} beat {loser} (+{points}{fire})", winner=winner, loser=loser,
                points=points, fire=" 🔥" if fire else "")


def arena_players(entries: Sequence[ArenaEntry], games: Sequence[ArenaGameRow]
            ) -> list[ArenaPlayer]:
    """The arena's players as :mod:`tournaments.arena` sees them: busy while a game of
    theirs has no result, their finished games (void ones left out) in order."""
    rating = {e.user_id: e.rating for e in entries}
    played: dict[int, list[ArenaGame]] = {}
    busy: set[int] = set()
    for game in games:
        for me, other in ((game.first, game.second), (game.second, game.first)):
            if me is None:
                continue
            if game.result is None:
                busy.add(me)
            elif game.result != "void":
                outcome = (GameOutcome.DRAW if game.result == "draw" else GameOutcome.WIN
                           if (game.result == "first") == (me == game.first)
                           else GameOutcome.LOSS)
                played.setdefault(me, []).append(ArenaGame(
                    other, rating.get(other, 1000) if other is not None else 1000,
                    outcome))
    return [ArenaPlayer(e.user_id, e.rating,
                        Status.PLAYING if e.user_id in busy else
                        Status.PAUSED if e.paused else Status.WAITING,
                        tuple(played.get(e.user_id, ())), e.waiting_since)
            for e in entries]


def result_lines(tr: Tr, games: Sequence[ArenaGameRow], names: dict[int, str]
            ) -> list[str]:
    """A line for each finished game, in the order they finished."""
    seen: dict[int, list[ArenaGame]] = {}
    lines = []
    done = sorted((g for g in games if g.result not in (None, "void")),
                  key=lambda g: (g.finished_at or 0.0, g.game_id))
    for game in done:
        a = names.get(game.first, "?")
        b = names.get(game.second, "?") if game.second is not None else tr._("computer")
        winner = game.first if game.result == "first" else game.second
        for me in (game.first, game.second):
            if me is None:
                continue
            outcome = (GameOutcome.DRAW if game.result == "draw" else GameOutcome.WIN
                       if me == winner else GameOutcome.LOSS)
            seen.setdefault(me, []).append(ArenaGame(None, 1000, outcome))
        points = game_points(seen.get(winner, []))[-1] if winner is not None and \
            game.result != "draw" else 1
        fire = winner is not None and points > 2
        lines.append(result_line(tr, a, b, str(game.result), points, fire))
    return lines


def summary_line(tr: Tr, event: ArenaRow, podium: Sequence[tuple[str, str]]) -> str:
    """``/history``'s line of the chat's newest arena or league: its first three (so far)."""
    day = time.strftime("%d.%m", time.gmtime(event.created_at))
    title = (tr._("🏆 Swiss league of {day}", day=day) if event.kind == "swiss"
             else tr._("🏟 Arena of {day}", day=day))
    state = (tr._("over") if event.status is ArenaStatus.FINISHED
             else tr._("waiting for players") if event.status is ArenaStatus.LOBBY
             else tr._("being played"))
    places = " · ".join(f"{medal} {name} {score}" for medal, (name, score)
                        in zip("🥇🥈🥉", podium, strict=False))
    command = "/swiss" if event.kind == "swiss" else "/arena"
    return f"{title} ({state})" + (f": {places}" if places else "") + f" — {command}"
