"""One move, one check, one verdict, whatever the door (issue 39).

Ann plays her engine "Hx" in a group, through every door a move can come in by: her
panel's buttons, a typed ``/play``, the Mini App, the engine protocol (Hx's turns) and her
turn's timer (the stand-in moves for her). Counted through the real stack against the fake
Bot API: each step is simulated once before it is stored (the copy that checks it is the
position after it), and every door's move ends in the same verdict, ``Accepted`` with the
numbers the store gave its steps. Then the flow called directly: each refusal as its typed
reason, and a store that refuses a later step of a move keeping the steps before."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from chat.computer import Thinker
from chat.flow import Actor, Flow, StoredMatch
from chat.i18n import Catalogs
from chat.model import InputError, tour_frame
from chat.outcomes import Accepted, Refusal, Refused
from krendzu import EndTurn, Match, Pass, Place
from krendzu.tour import PLAY
from storage import SequenceConflict, open_store
from tests.bot_harness import BOT, FastClock, play_step_with_buttons
from tests.fakebot import FakeTelegram
from tests.miniapp_harness import app_bot, init_data
from tests.test_engines_e2e import register
from tests.test_engines_protocol import Engine

MOVE = "/api/app/v1/match/{}/move"
#: Ann's doors, taken in turn whenever she is to move (Hx's turns are the engine door's).
ANNS_DOORS = ("button", "typed", "miniapp", "timer")


async def test_a_move_through_each_door_is_simulated_once_and_gets_the_same_verdict(
        tmp_path: Path, monkeypatch: Any) -> None:
    clock = FastClock(speed=30.0)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann = fake.user(391, "Ann")
    group = fake.group(-1003910, "Doors")
    async with app_bot(tmp_path, fake, timer_tick=0.05) as a:
        h = a.h
        ann.start_bot()
        await h.settle()
        token = await register(h, ann, "Hx")
        # A turn of 15 minutes (half a real minute here): only the timer door lets it run out.
        for command in ("/new@{} duel exchange=0 timer=900", "/add@{} @Hx", "/go@{}"):
            ann.send(group, command.format(BOT))
            await h.settle()
        store, flow = h.services.store, h.services.flow
        row = await store.active_match(group.id)
        assert row is not None, fake.describe()
        game_id = row.match_id
        hx_seat = 1 - row.seat_of(ann.id)  # type: ignore[operator]
        links = flow.broadcast.app
        assert links is not None
        page = links.token(game_id)
        engine = Engine(int(a.base.rsplit(":", 1)[1]), token)

        # What each door's move costs and gets: Match.apply runs of each step before the
        # store takes it, and the verdict of every move stored.
        applied: list[object] = []
        real_apply = Match.apply

        def apply(self: Match, action: Any, *args: Any, **kwargs: Any) -> Any:
            applied.append(action)
            return real_apply(self, action, *args, **kwargs)

        appended: list[tuple[int, str, int]] = []  # (seq, step, its simulations so far)
        depth: list[int] = []  # one append of a backend may call the other

        def counted(real: Any, steps_of: Any) -> Any:
            async def append(match_id: int, *args: Any, **kwargs: Any) -> Any:
                if not depth:
                    appended.extend((seq, str(step), applied.count(step))
                                    for seq, step in steps_of(*args))
                depth.append(1)
                try:
                    return await real(match_id, *args, **kwargs)
                finally:
                    depth.pop()
            return append

        verdicts: list[object] = []
        real_commit = flow.matches.commit

        async def commit(*args: Any, **kwargs: Any) -> Any:
            outcome = await real_commit(*args, **kwargs)
            verdicts.append(getattr(outcome, "verdict", None))
            return outcome

        monkeypatch.setattr(Match, "apply", apply)
        monkeypatch.setattr(store, "append_moves",
                            counted(store.append_moves, lambda moves: moves))
        monkeypatch.setattr(store, "append_move",
                            counted(store.append_move, lambda seq, step: [(seq, step)]))
        monkeypatch.setattr(flow.matches, "commit", commit)

        rng = random.Random(39)
        seen: dict[str, list[tuple[list[tuple[int, str, int]], list[object]]]] = {}
        turn = anns = 0
        while len(seen) < len(ANNS_DOORS) + 1 and turn < 40:
            flow.begin_request()
            stored = await flow.load(game_id)
            seat = stored.game.current_player
            door = "engine" if seat == hx_seat else ANNS_DOORS[anns % len(ANNS_DOORS)]
            anns += door != "engine"
            turn += 1
            applied.clear()
            appended.clear()
            verdicts.clear()
            before = stored.next_seq
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
                assert answer.json()["state"]["seq"] > before
            elif door == "engine":
                words = typed(stored.game)
                answer = await engine.move(game_id, words, before)
                assert answer.status_code == 200, (words, answer.text)
                assert answer.json() == {"ok": True, "seq": (await store.match_head(
                    game_id))[1] + 1}
            else:  # the turn's 15 minutes pass: the next tick's stand-in moves for Ann
                clock.advance(901)
            await h.settle()
            for _ in range(200):
                if (await store.match_head(game_id))[1] >= before:
                    break
                await h.settle()
            await h.settle()
            assert appended, f"{door}: nothing stored\n{fake.describe()}"
            seen.setdefault(door, []).append((list(appended), list(verdicts)))
        monkeypatch.undo()
        await engine.client.aclose()

        assert set(seen) == {*ANNS_DOORS, "engine"}, seen.keys()
        # Each step simulated once before it is stored, through every door (before issue
        # 39: twice through the buttons, a typed move and the timer, three times through
        # the Mini App and the engine protocol, whose doors checked the move first).
        simulations = {door: sorted({n for steps, _ in moves for *_, n in steps})
                       for door, moves in seen.items()}
        assert simulations == {door: [1] for door in seen}, simulations

        stored = await store.load_match(game_id)
        for door, moves in seen.items():
            for steps, got in moves:
                # Every move stored is Accepted with the numbers its steps got, the same
                # shape whatever the door.
                assert got and all(isinstance(v, Accepted) for v in got), (door, got)
                accepted = [v for v in got if isinstance(v, Accepted)]
                assert [s for v in accepted for s in v.seqs] == [s for s, _, _ in steps]
                for verdict in accepted:
                    assert verdict.next_seq == verdict.seqs[-1] + 1, (door, verdict)
                    assert (verdict.echo or "").startswith("✓ "), (door, verdict)
                # The stored rows are the steps the door's move made.
                for seq, step, _ in steps:
                    assert stored.moves[seq - 1].seq == seq
                    assert stored.moves[seq - 1].action == step, (door, seq)


def typed(game: Match) -> str:
    """A legal move of the seat to move, in the words of ``/play`` and the engine protocol:
    a card and a cell, else ``pass`` or ``end``."""
    legal = game.legal_actions()
    place = next((s for s in legal if isinstance(s, Place)), None)
    if place is not None:
        return f"{place.card.code()} {tour_frame(game).label(place.x, place.y)}"
    if any(isinstance(s, Pass) for s in legal):
        return "pass"
    assert any(isinstance(s, EndTurn) for s in legal), legal
    return "end"


# The flow's verdicts, called directly --------------------------------------------------------

ANN, BOB, EVE = Actor(1, "Ann", "en"), Actor(2, "Bob", "en"), Actor(3, "Eve", "ru")


@pytest.fixture
async def flow() -> AsyncIterator[Flow]:
    store = await open_store(":memory:")
    thinker = Thinker(workers=0)
    yield Flow(store, Catalogs(), thinker.decide, bot_username="kbot")
    thinker.close()
    await store.close()


async def duel(flow: Flow) -> StoredMatch:
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(-5, None, ANN, ["exchange=0"])
    await flow.lobby_action(-5, None, BOB, "join")
    await flow.lobby_action(-5, None, ANN, "go")
    stored = await flow.find_match(-5, None, ANN.user_id)
    assert stored is not None
    return stored


async def test_a_refused_move_says_why_in_a_type_each_door_translates(flow: Flow) -> None:
    stored = await duel(flow)
    match_id, seq = stored.match_id, stored.next_seq
    seat = stored.game.current_player
    mover, other = (ANN, BOB) if stored.row.seats[seat].user_id == ANN.user_id else (BOB, ANN)
    step = next(s for s in stored.game.legal_actions() if isinstance(s, Place))

    async def verdict(actor: Actor, steps: Any, **kwargs: Any) -> Refused:
        outcome = await flow.play(match_id, actor, steps, **kwargs)
        assert isinstance(outcome.verdict, Refused), outcome
        assert outcome.reply == outcome.verdict.text and not outcome.accepted
        return outcome.verdict

    # A stranger: refused, and not even remembered (a Mini App caller who plays no seat).
    assert (await verdict(EVE, [step])).reason is Refusal.NOT_SEATED
    assert await flow.store.get_user(EVE.user_id) is None
    assert (await verdict(mover, [step], expected_seq=seq - 1)) == Refused(
        Refusal.STALE, "This panel is out of date: use the newest one.", seq)
    assert (await verdict(other, [step])).reason is Refusal.NOT_YOUR_TURN
    foreign = Place(next(iter(stored.game.observation(1 - seat).tour.hand)), step.x, step.y)
    illegal = await verdict(mover, [foreign])
    assert illegal.reason is Refusal.ILLEGAL and illegal.next_seq == seq

    def unreadable(_stored: StoredMatch, _seat: int) -> list[Any]:
        raise InputError("Write a card and a cell, e.g. /play QC M12.")

    assert (await verdict(mover, unreadable)) == Refused(
        Refusal.ILLEGAL, "Write a card and a cell, e.g. /play QC M12.", seq)
    assert (await flow.store.match_head(match_id))[1] == 0, "nothing was stored"
    accepted = await flow.play(match_id, mover, [step], update_id=77)
    assert accepted.verdict == Accepted((seq,), seq + 1, accepted.reply)
    # The same update again (Telegram delivers it twice): nothing stored, nothing to say.
    assert (await verdict(other, lambda s, _: s.game.legal_actions()[:1],
                          update_id=77)) == Refused(Refusal.REPEATED, None, seq + 1)
    outcome = await flow.play(match_id + 1, mover, [step])
    assert outcome.verdict == Refused(Refusal.GONE, "This match does not exist any more.")
    await flow.cancel(await flow.load(match_id), ANN, True)
    assert (await verdict(mover, [step])) == Refused(Refusal.OVER, "This match is over.",
                                                     seq + 1)


async def test_a_store_that_refuses_a_later_step_keeps_the_steps_before(flow: Flow) -> None:
    """Where the store appends step by step, a step refused after the first keeps the
    move to the steps stored: the verdict names them, the kept position is theirs."""
    stored = await duel(flow)
    match_id, rng = stored.match_id, random.Random(5)
    actors = {ANN.user_id: ANN, BOB.user_id: BOB}
    while True:  # to a defender's turn whose first card leaves it theirs: two steps
        stored = await flow.load(match_id)
        game, seat = stored.game, stored.game.current_player
        two = two_steps(game)
        if two is not None:
            break
        actor = actors[stored.row.seats[seat].user_id]  # type: ignore[index]
        await flow.play(match_id, actor, [rng.choice(game.legal_actions())])
    first = stored.next_seq
    store = flow.store
    real = store.append_move

    async def refuse_the_second(match_id: int, seq: int, step: Any, **kwargs: Any) -> Any:
        if seq > first:
            raise SequenceConflict(match_id, seq, seq + 1)
        return await real(match_id, seq, step, **kwargs)

    store.appends_atomically = False  # type: ignore[misc]
    store.append_move = refuse_the_second  # type: ignore[method-assign]
    outcome = await flow.play(match_id, actors[stored.row.seats[seat].user_id],  # type: ignore[index]
                              two)
    assert outcome.verdict == Accepted((first,), first + 1, outcome.reply)
    kept = await flow.load(match_id)
    assert kept.game.history == (await store.load_match(match_id)).game.history
    assert kept.next_seq == first + 1 and kept.game.current_player == seat


def two_steps(game: Match) -> list[Any] | None:
    """A defender's card and ``end`` where the card leaves the turn theirs, if the seat to
    move is such a defender now."""
    seat = game.current_player
    if not (game.tour.phase == PLAY and seat not in game.tour.roles.attackers
            and game.tour.placed and game.tour.step_in_turn == 0):
        return None
    for step in game.legal_actions():
        if isinstance(step, Place):
            trial = game.clone()
            trial.apply(step)
            if trial.current_player == seat and EndTurn() in trial.legal_actions():
                return [step, EndTurn()]
    return None
