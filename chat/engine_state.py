"""What an engine is shown and how its words are read (the engine protocol, issue 31):
the state of a game as its seat may see it (``gameFull``/``gameState``), and a move's words
(``/play``'s, plus ``exchange N`` and ``discard ...``) as steps. Split from
:mod:`chat.engines_api`, which serves them over HTTP."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from chat.flow.reports import record_ids
from chat.model import InputError, ascii_number, tour_frame, words_to_steps
from krendzu import Action, Announce, Discard, EndTurn, Pass, Place, parse_card
from krendzu.tour import PLAY
from krendzu.viewjson import view_to_json
from storage import MatchStatus, StoredMatch


def step_text(step: Action, frame: Any) -> str | None:
    """A legal step in the words of ``/play`` (``None`` for a cell no label names yet)."""
    if isinstance(step, Place):
        return f"{step.card.code()} {frame.label(step.x, step.y)}" if frame.fits(
            step.x, step.y) else None
    if isinstance(step, Pass):
        return "pass"
    if isinstance(step, EndTurn):
        return "end"
    if isinstance(step, Announce):
        return f"exchange {step.count}"
    if isinstance(step, Discard):
        return f"discard {step.card.code()}"
    return None


def observation_json(stored: StoredMatch, seat: int, names: tuple[str, ...],
                     deadline: float | None) -> dict[str, Any]:
    """What the engine's seat may see, and nothing more: built from
    ``game.observation(seat)`` (the engine's own view, which hides every other hand and
    every other seat's discards), never from the match itself."""
    game = stored.game
    view = game.observation(seat)
    tour = view.tour
    frame = tour_frame(game)
    over = stored.row.status is not MatchStatus.ACTIVE or view.match_over

    def cell(x: int, y: int) -> str:
        return frame.fit(x, y).label(x, y) if not frame.fits(x, y) else frame.label(x, y)

    legal = [] if over else [t for t in (step_text(a, frame) for a in tour.legal) if t]
    role = "attacker" if seat in tour.roles.attackers else "defender"
    return {
        "id": stored.match_id,
        "status": stored.row.status.value,
        "table": stored.row.settings.table.value,
        "tours": game.tour_count,
        "tour": view.tour_index + 1,
        "players": list(names),
        "seat": seat,
        "role": role,
        "attackers": list(tour.roles.attackers),
        "phase": tour.phase,
        "hand": [c.code() for c in tour.hand],
        "handSizes": list(tour.hand_sizes),
        "board": [{"card": c.code(), "cell": cell(x, y)} for c, x, y in tour.placements],
        "pending": [{"card": c.code(), "cell": cell(x, y)} for c, x, y in tour.pending],
        "played": [c.code() for c, _x, _y in tour.placements],
        "exchange": {"limit": tour.exchange_limit,
                     "announced": [list(a) for a in tour.announcements],
                     "discardsDone": list(tour.discards_done),
                     "myDiscards": [c.code() for c in tour.own_discards],
                     "myDraws": [c.code() for c in tour.own_draws]},
        "tourPoints": tour.points,
        "totals": list(view.totals),
        "turn": None if over else tour.current_player,
        "myTurn": not over and tour.current_player == seat,
        "defenderSecondCard": (not over and tour.phase == PLAY and tour.current_player == seat
                               and role == "defender" and tour.step_in_turn == 1),
        "legal": legal,
        "moves": len(game.history),
        "seq": stored.next_seq,
        "deadline": deadline,
        # The same view in the engine's coordinates, complete (krendzu.viewjson): what the
        # built-in players decide from. Its players are the record's seats p1..p4 (those of
        # /export), never the match's own ids: a person's is "u<Telegram id>", which an
        # outside program must not learn (the names are in "players" above).
        "view": view_to_json(replace(view, players=record_ids(len(view.players)),
                                     tour=replace(tour, legal=()) if over else tour)),
    }


def parse_move(stored: StoredMatch, seat: int, text: str) -> list[Action]:
    """The engine's words as steps, as ``/play``, ``/exchange`` and ``/discard`` read them;
    :class:`InputError` for words that are no move."""
    words = text.split()
    if not words or len(text) > 120:
        raise InputError("Write a card and a cell, e.g. /play QC M12.")
    verb = words[0].lower()
    if verb == "exchange":
        if len(words) != 2 or not ascii_number(words[1]) or len(words[1]) > 2:
            raise InputError("Write how many cards you exchange, e.g. /exchange 2.")
        return [Announce(int(words[1]))]
    if verb == "discard":
        try:
            cards = [parse_card(w) for w in words[1:9]]
        except ValueError as exc:
            raise InputError("Name the cards you give away, e.g. /discard QC 7H.") from exc
        if not cards:
            raise InputError("Name the cards you give away, e.g. /discard QC 7H.")
        return [Discard(c) for c in cards]
    return words_to_steps(stored.game, seat, words)
