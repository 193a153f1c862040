"""A Swiss league's words (issue 40): pure, in the group's or the player's language.

The group sees a few posts a round, never a board: the league's post (edited: who joined,
then the table), each round's pairings, each round's results, and the final table. The
league's logic is :mod:`chat.flow.leagues`; the pairing and the table are
:mod:`tournaments.swiss`'s.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from chat.flow.views import codec
from chat.i18n import Tr
from chat.model import Button, Keyboard
from storage import ArenaGameRow, ArenaRow, ArenaStatus
from tournaments.swiss import SwissStanding


def when(seconds: float) -> str:
    """A deadline as every reader reads it: the day and the time in UTC."""
    return time.strftime("%d.%m %H:%M UTC", time.gmtime(seconds))


#: The fractions a table shows (Sonneborn–Berger halves a half: quarters).
FRACTIONS = {0.25: "¼", 0.5: "½", 0.75: "¾"}


def points_text(points: float) -> str:
    """2, 2½, 4¼: as a table is written by hand (½ alone for a half)."""
    whole = int(points)
    part = FRACTIONS.get(round(points - whole, 2))
    if part is None:
        return f"{points:g}"
    return f"{whole or ''}{part}"


def table_lines(tr: Tr, table: Sequence[SwissStanding], names: Mapping[int, str]) -> list[str]:
    """The table: points, then Buchholz and Sonneborn–Berger (docs/tournaments.md)."""
    return [tr._("{rank}. {name} — {points} (Buchholz {bh}, SB {sb})", rank=row.rank,
                 name=names.get(row.player, "?") + ("" if row.active else " ⏸"),
                 points=points_text(row.points), bh=points_text(row.buchholz),
                 sb=points_text(row.sonneborn_berger)) for row in table]


def league_text(tr: Tr, league: ArenaRow, table: Sequence[SwissStanding],
                names: Mapping[int, str]) -> str:
    hours = round(league.minutes / 60)
    lines = [tr.n_("🏆 Swiss league · {n} round · a round every {hours} h",
                   "🏆 Swiss league · {n} rounds · a round every {hours} h", league.rounds,
                   hours=hours) + (f" · {league.match_args}" if league.match_args else "")]
    if league.status is ArenaStatus.LOBBY:
        lines.append(tr._("Join now: the first round is paired when its creator presses "
                          "▶ Start. Games are played in my private chat."))
        lines += ["", tr.n_("{n} player so far: {names}", "{n} players so far: {names}",
                            len(names), names=", ".join(names.values()) or "—")]
        return "\n".join(lines)
    if league.status is ArenaStatus.RUNNING:
        lines.append(tr._("Round {round} of {rounds}, due {deadline}.", round=league.round,
                          rounds=league.rounds, deadline=when(league.round_ends_at or 0.0)))
    else:
        lines.append(tr._("🏁 The league is over."))
    return "\n".join([*lines, "", *table_lines(tr, table, names)])


def league_keyboard(tr: Tr, league: ArenaRow, bot_username: str) -> Keyboard | None:
    """Join while it waits (and Start for its creator), Withdraw while it runs."""
    if league.status is ArenaStatus.FINISHED:
        return None
    if league.status is ArenaStatus.RUNNING:
        return [[Button(tr._("🏳 Withdraw"), codec.arena_data(league.arena_id, "pause"))]]
    rows: Keyboard = [[Button(tr._("✋ Join"), codec.arena_data(league.arena_id, "join")),
                       Button(tr._("▶ Start"), codec.arena_data(league.arena_id, "go"))]]
    if bot_username:
        rows.append([Button(tr._("💬 My private chat"),
                            url=f"https://t.me/{bot_username}?start=a{league.arena_id}")])
    return rows


def pairings_text(tr: Tr, league: ArenaRow, games: Sequence[ArenaGameRow],
                  names: Mapping[int, str]) -> str:
    """A round's one post of pairings, with its bye and its deadline."""
    lines = [tr._("🏆 Round {round} of {rounds}: the pairings (due {deadline})",
                  round=league.round, rounds=league.rounds,
                  deadline=when(league.round_ends_at or 0.0))]
    for game in games:
        if game.result == "bye":
            lines.append(tr._("{name}: the bye (1 point)", name=names.get(game.first, "?")))
        else:
            lines.append(f"{names.get(game.first, '?')} – {names.get(game.second or 0, '?')}")
    lines.append(tr._("Each game is played in the players' private chats."))
    return "\n".join(lines)


def results_text(tr: Tr, league: ArenaRow, round: int, games: Sequence[ArenaGameRow],
                 names: Mapping[int, str], adjudicated: Sequence[int]) -> str:
    """A round's one post of results (``adjudicated``: games the computer finished)."""
    lines = [tr._("🏆 Round {round} of {rounds}: the results", round=round,
                  rounds=league.rounds)]
    for game in games:
        a, b = names.get(game.first, "?"), names.get(game.second or 0, "?")
        mark = " " + tr._("(finished by the computer)") if game.game_id in adjudicated else ""
        if game.result == "bye":
            lines.append(tr._("{name}: the bye (1 point)", name=a))
        elif game.result == "first":
            lines.append(f"{a} 1–0 {b}{mark}")
        elif game.result == "second":
            lines.append(f"{a} 0–1 {b}{mark}")
        elif game.result == "draw":
            lines.append(f"{a} ½–½ {b}{mark}")
        else:
            lines.append(tr._("{a} – {b}: no result (both absent)", a=a, b=b))
    return "\n".join(lines)
