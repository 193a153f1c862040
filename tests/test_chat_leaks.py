"""Hands never leak: the same public history with the hidden cards permuted gives
byte-identical group posts, captions and pictures."""

from __future__ import annotations

import copy
import random
from datetime import UTC, datetime

import pytest

from chat.flow import Flow
from chat.flow.announce import Change
from chat.notices import BoardPost, Send
from chat.painter import draw_board
from krendzu import DECK, Match, Settings, Table, export_record, import_record
from storage import MatchRow, MatchStatus, SeatKind, SeatRow, StoredMatch


@pytest.fixture
async def flow(flow: Flow) -> Flow:
    """tests/conftest.py's flow, with the four people these tests seat."""
    for uid, name in ((1, "Ann"), (2, "Bob"), (3, "Cy"), (4, "Dee")):
        await flow.store.upsert_user(uid, name, language="en")
    return flow


def permuted(record: dict, rng: random.Random) -> dict:
    """Every card not played yet (in hands or set aside) dealt anew, hand sizes kept."""
    out = copy.deepcopy(record)
    tour = out["tours"][-1]
    played = {c for move in tour["moves"] for c, _, _ in move["cards"]}
    unplayed = {p: [c for c in cards if c not in played] for p, cards in tour["hands"].items()}
    in_hands = {c for cards in tour["hands"].values() for c in cards}
    pool = [c for cards in unplayed.values() for c in cards]
    pool += [card.code() for card in DECK if card.code() not in in_hands]
    rng.shuffle(pool)
    for player, cards in unplayed.items():
        fresh = [pool.pop() for _ in cards]
        tour["hands"][player] = [c for c in tour["hands"][player] if c in played] + fresh
    return out


def row_for(game: Match) -> MatchRow:
    seats = tuple(SeatRow(i, SeatKind.HUMAN, i + 1, None, name)
                  for i, name in enumerate(game.players))
    return MatchRow(match_id=9, chat_id=-100, thread_id=None, settings=game.settings, seed=0,
                    status=MatchStatus.ACTIVE, seats=seats, move_count=len(game.history),
                    board_message_id=None, created_at=datetime.now(UTC), finished_at=None,
                    totals=None)


async def public_output(flow: Flow, record: dict, cut: int) -> list[object]:
    game = import_record(record)
    before_record = copy.deepcopy(record)
    before_record["tours"][-1]["moves"] = before_record["tours"][-1]["moves"][:-cut]
    before = import_record(before_record)
    actions = game.history[len(before.history):]
    stored = StoredMatch(row_for(game), (), game)
    notices = await flow.broadcast.tell(Change(stored, before, actions))
    out: list[object] = []
    for notice in notices:
        if isinstance(notice, BoardPost):
            out += [notice.lines, notice.footer, draw_board(notice.picture)]
        elif isinstance(notice, Send) and notice.chat_id < 0:
            out += [notice.text, notice.keyboard]
    assert out, "the group gets a post"
    return out


@pytest.mark.parametrize("table", [Table.DUEL, Table.TEAMS, Table.TRIO_LONE_ATTACKER])
async def test_group_output_does_not_depend_on_hidden_cards(flow: Flow, table: Table) -> None:
    rng = random.Random(table.value)
    players = ["u1", "u2", "u3", "u4"][: table.players]
    game = Match(players, Settings(table=table), seed=11)
    for _ in range(9):
        game.apply(rng.choice(game.legal_actions()))
    while game.tour.pending:  # end on a finished turn so the cut below is whole turns
        game.apply(rng.choice(game.legal_actions()))
    record = export_record(game)
    other = permuted(record, random.Random(5))
    assert other["tours"][-1]["hands"] != record["tours"][-1]["hands"]
    first = await public_output(flow, record, 2)
    second = await public_output(flow, other, 2)
    assert first == second
