"""One announcer tells every stored move from its rows (issue 39), whoever runs it: the
process that stored the move (the embedded mode), a job worker (the scaled mode) or the
restart. Driven through the real python-telegram-bot stack against the fake Bot API."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import psycopg
import pytest

from chat.compose_scaled import open_job_services
from chat.flow import Actor, Flow
from chat.flow.announce import stored_change
from chat.flow.broadcast import Broadcast
from chat.jobs import ANNOUNCE_QUEUE, TIMERS_QUEUE, worker_options
from krendzu import Place, Settings, Table
from krendzu.coords import frame_for
from storage import Door, MovedBy, SeatKind, SeatSpec
from tests.bot_harness import (
    BOT,
    FastClock,
    Harness,
    play_step_with_buttons,
    running_bot,
    start_group_duel,
)
from tests.fakebot import FakeTelegram
from tests.miniapp_harness import app_bot, init_data
from tests.test_engines_e2e import register
from tests.test_engines_protocol import Engine
from tests.test_one_verdict import typed

ANN = Actor(391, "Ann", "en")


class Killed(Exception):
    """Stands for the process dying between the store and the announcement."""


@pytest.mark.parametrize("mode", ["embedded", "scaled"])
async def test_a_move_stored_but_never_announced_is_told_once_after_the_restart(
        tmp_path: Path, monkeypatch: Any, request: pytest.FixtureRequest, mode: str) -> None:
    """A typed move is stored, then the process dies before telling anyone (an exception
    in its place, raised right after the store committed). The restarted bot (in the
    scaled mode, a job worker after it) tells it once, and names the mover as the process
    that stored it would have: the record of the typed move below, in their private chat.
    Before the mover and door were stored with the move, the embedded mode's restart told
    it with no mover (the mover was in the dead process's memory): the player got no
    record of the move they made."""
    config: dict[str, object] = {}
    if mode == "scaled":
        config = {"database": request.getfixturevalue("pg_url"), "jobs": True}
    fake = FakeTelegram(bot_username=BOT)
    ann, bob = fake.user(1, "Ann"), fake.user(2, "Bob")
    group = fake.group(-3901, "Restarted", members=[ann, bob])
    for user in (ann, bob):
        fake.user_starts(user)
    async with running_bot(tmp_path, fake, **config) as h:
        await h.settle()
        row = await start_group_duel(h, group, ann, bob)
        await h.settle()
        stored = await h.services.flow.load(row.match_id)
        game = stored.game
        mover = {1: ann, 2: bob}[stored.row.seats[game.current_player].user_id or 0]
        step = random.Random(3).choice(
            [a for a in game.legal_actions() if isinstance(a, Place)])
        cell = frame_for(game.tour.observation(None).placements).label(step.x, step.y)

        async def die(self: Broadcast, *args: Any, **kwargs: Any) -> Any:
            raise Killed("the process died after the store, before the announcement")

        monkeypatch.setattr(Broadcast, "stored", die)
        posts = len(fake.sent(group))
        records = len(fake.sent(mover))
        mover.send(group, f"/play@{BOT} {step.card.code()} {cell}")
        await h.settle()
        head = await h.services.store.get_match(row.match_id)
        assert head.move_count == 1 and head.announced_seq == 0, fake.describe()
        card = step.card.pretty()
        assert not [m for m in fake.sent(group)[posts:] if card in (m.caption or "")], \
            "the move is not told before the restart"
        monkeypatch.undo()
    async with running_bot(tmp_path, fake, **config) as h:  # the same database: a restart
        await h.settle()
        if config:  # the scaled mode: a job worker announces
            await work(h, (ANNOUNCE_QUEUE,))  # its board job too, deferred meanwhile
            await h.settle()
        loaded = await h.services.store.load_match(row.match_id)
        assert [m.by for m in loaded.moves] == [MovedBy(mover.id, Door.TYPED)]
        assert loaded.row.announced_seq == 1, fake.describe()
    boards = [m for m in fake.sent(group)[posts:] if card in (m.caption or m.text or "")]
    assert len(boards) == 1, fake.describe()  # told once
    told = [m for m in fake.sent(mover)[records:] if card in (m.caption or m.text or "")]
    assert len(told) == 1, fake.describe()
    record = told[0]
    assert not record.buttons(), "the record of the typed move, below in the private chat"


# Every door, both modes ------------------------------------------------------------------

MOVE = "/api/app/v1/match/{}/move"
#: Ann's doors, taken in turn whenever she is to move (Hx's turns are the engine door's).
ANNS_DOORS = ("button", "typed", "miniapp", "timer")
#: The door stored for each (Ann's timer turn is the stand-in's, with no person named).
STORED_DOOR = {"button": Door.BUTTON, "typed": Door.TYPED, "miniapp": Door.MINIAPP,
               "engine": Door.ENGINE, "timer": Door.TIMER}
#: Who the rows name as the mover, by door (the stand-in moves for no one).
WHO = {"button": "ann", "typed": "ann", "miniapp": "ann", "engine": "hx", "timer": None}
#: A stored step: its action, who made it, through which door, the second card named.
Row = tuple[str, str | None, Door, str | None]
#: What a chat was told: (who, Bot API method, text less its clock lines, button labels).
Told = tuple[str, str, str, tuple[str, ...]]


async def test_a_move_through_each_door_is_stored_and_told_alike_in_both_modes(
        tmp_path: Path, pg_url: str, monkeypatch: Any) -> None:
    """Ann plays her engine Hx in a group, through each door in turn (her panel's buttons,
    a typed ``/play``, the Mini App, her turn's timer, and Hx's moves through the engine
    protocol), once in the embedded mode (SQLite, the storing process announces) and once
    in the scaled mode (PostgreSQL, job workers announce). The same deal and the same
    choices give, door by door, the same stored rows (who moved and through which door)
    and the same announcements to the group and to Ann (what each chat was sent and
    edited, its words and buttons). Before the rows said who moved, the door was nowhere
    in the store."""
    # The same deal in both modes.
    monkeypatch.setattr("storage.store_matches.secrets.randbelow", lambda _n: 3939)
    embedded = await play_each_door(tmp_path / "embedded", {})
    scaled = await play_each_door(tmp_path / "scaled", {"database": pg_url, "jobs": True})
    assert set(embedded) == set(scaled) == {*ANNS_DOORS, "engine"}, (embedded, scaled)
    for door in embedded:
        rows, told = embedded[door]
        assert {stored_door for *_, stored_door, _then in rows} == {STORED_DOOR[door]}, rows
        assert {who for _, who, *_ in rows} == {WHO[door]}, (door, rows)
        assert scaled[door][0] == rows, door
        assert scaled[door][1] == told, (door, told, scaled[door][1])
        assert told, door


async def play_each_door(where: Path, mode: dict[str, object]
                         ) -> dict[str, tuple[list[Row], dict[str, list[Told]]]]:
    """Each door's first move in a new bot (``mode``: its configuration): the rows it
    stored (action, who by), and what the group and Ann were told of it."""
    where.mkdir()
    clock = FastClock(speed=1.0)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann = fake.user(391, "Ann")
    group = fake.group(-1003911, "Doors")
    seen: dict[str, tuple[list[Row], dict[str, list[Told]]]] = {}
    async with app_bot(where, fake, timer_tick=0.05, **mode) as a:
        h = a.h
        scaled = bool(mode.get("jobs"))
        ann.start_bot()
        await h.settle()
        token = await register(h, ann, "Hx")
        for command in ("/new@{} duel exchange=0 timer=900", "/add@{} @Hx", "/go@{}"):
            ann.send(group, command.format(BOT))
            await h.settle()
        if scaled:
            await work(h, (ANNOUNCE_QUEUE,))
        store, flow = h.services.store, h.services.flow
        row = await store.active_match(group.id)
        assert row is not None, fake.describe()
        game_id = row.match_id
        hx_seat = 1 - row.seat_of(ann.id)  # type: ignore[operator]
        hx_user = row.seats[hx_seat].user_id
        links = flow.broadcast.app
        assert links is not None
        page = links.token(game_id)
        engine = Engine(int(a.base.rsplit(":", 1)[1]), token)
        rng = random.Random(39)
        turn = anns = 0
        names = {ann.id: "ann", hx_user: "hx", None: None}
        while len(seen) < len(ANNS_DOORS) + 1 and turn < 40:
            flow.begin_request()
            stored = await flow.load(game_id)
            seat = stored.game.current_player
            door = "engine" if seat == hx_seat else ANNS_DOORS[anns % len(ANNS_DOORS)]
            anns += door != "engine"
            turn += 1
            before = stored.next_seq
            mark = len(fake.calls)
            if door == "button":
                assert await play_step_with_buttons(h, ann, rng), fake.describe()
            elif door == "typed":
                ann.send(group, f"/play@{BOT} {typed(stored.game)}")
            elif door == "miniapp":
                legal = stored.game.legal_actions()
                step = next((s for s in legal if isinstance(s, Place)), legal[0])
                answer = await a.post(MOVE.format(page), init_data(fake, ann),
                                      {"seq": before, "actions": [str(step)]})
                assert answer.status_code == 200, answer.text
            elif door == "engine":
                answer = await engine.move(game_id, typed(stored.game), before)
                assert answer.status_code == 200, answer.text
            else:  # the turn's 15 minutes pass: the stand-in moves for Ann
                clock.advance(901)
                if scaled:  # its timer job is due now (scheduled on the real clock)
                    await sql(h.config.database, "UPDATE procrastinate_jobs SET "
                              "scheduled_at = now() WHERE task_name = 'turn_timer' "
                              "AND status = 'todo'")
                    await work(h, (TIMERS_QUEUE,))
            for _ in range(200):
                await h.settle()
                if scaled:
                    await work(h, (ANNOUNCE_QUEUE,))
                head = await store.get_match(game_id)
                if head.move_count >= before and head.announced_seq == head.move_count:
                    break
            await h.settle()
            loaded = await store.load_match(game_id)
            added = loaded.moves[before - 1:]
            assert added, f"{door}: nothing stored\n{fake.describe()}"
            if door not in seen:
                rows = [(m.action, names[m.by.user_id], m.by.door, m.by.then)
                        for m in added]
                seen[door] = (rows, told_since(fake, mark, {"group": group.id, "ann": ann.id}))
        await engine.client.aclose()
    return seen


def told_since(fake: FakeTelegram, mark: int, chats: dict[str, int]
               ) -> dict[str, list[Told]]:
    """What each chat was sent or edited since call ``mark``: the method, the words without
    the clock's line (its seconds differ from run to run) and the buttons' labels."""
    out: dict[str, list[Told]] = {who: [] for who in chats}
    for call in fake.calls[mark:]:
        who = next((w for w, chat in chats.items() if call.chat_id == chat), None)
        if who is None or not call.ok or call.method.startswith(("get", "answer")):
            continue
        media = call.params.get("media")
        if isinstance(media, str):  # an edited photo's caption travels with it
            media = json.loads(media)
        text = str(call.params.get("text") or call.params.get("caption")
                   or (media.get("caption") if isinstance(media, dict) else "") or "")
        words = "\n".join(line for line in text.splitlines() if "⏱" not in line)
        markup = call.params.get("reply_markup")
        if isinstance(markup, str):
            markup = json.loads(markup)
        labels = tuple(str(b.get("text")) for line in (markup or {}).get(
            "inline_keyboard", []) for b in line) if isinstance(markup, dict) else ()
        out[who].append((who, call.method, words, labels))
    return out


async def work(h: Harness, queues: tuple[str, ...]) -> None:
    """A job worker (another process's services on the bot's configuration and clock, the
    same fake Telegram) runs what the queues hold now."""
    async with open_job_services(h.config, request=h.fake.request(),
                                 clock=h.fake.clock) as svc:
        options = worker_options(svc, queues, wait=False)
        options["install_signal_handlers"] = False
        await svc.jobs.app.run_worker_async(**options)


async def sql(url: str, query: str) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(query)


async def test_a_computers_turn_is_stored_as_the_computers_and_names_no_mover(
        flow: Flow) -> None:
    """A computer seat's move is stored with the computer's door and no person; the
    announcer, reading the rows, names no mover (no one gets a record of it)."""
    store = flow.store
    await store.upsert_user(ANN.user_id, ANN.name)
    stored = await store.create_match(-3902, Settings(table=Table.DUEL), [
        SeatSpec.human(ANN.user_id), SeatSpec.computer(level=1)], seed=11)
    match_id = stored.match_id
    for _ in range(12):
        stored = await flow.load(match_id)
        first = stored.next_seq
        if stored.row.seats[stored.game.current_player].kind is SeatKind.COMPUTER:
            outcome = await flow.computer_turn(match_id, first)
            assert outcome.accepted, outcome
            break
        assert (await flow.play(match_id, ANN, [stored.game.legal_actions()[0]])).accepted
    else:
        raise AssertionError("the computer never moved")
    moves = (await store.load_match(match_id)).moves
    computers = [m.by for m in moves[first - 1:]]
    assert computers and set(computers) == {MovedBy(None, Door.COMPUTER)}, computers
    assert {m.by for m in moves[:first - 1]} <= {MovedBy(ANN.user_id, Door.TYPED)}
    change = stored_change(await store.load_match(match_id), first - 1)
    assert change.mover is None and not change.from_panel
