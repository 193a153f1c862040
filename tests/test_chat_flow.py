"""The chat flow without Telegram: lobbies, whole matches on every table, bad input."""

from __future__ import annotations

import asyncio
import json
import random
import re

import pytest

from chat.flow import Actor, Flow, lobby_text
from chat.flow.base import begin_work
from chat.i18n import Catalogs
from chat.lobby_model import LobbyState
from chat.model import InputError
from chat.notices import BoardPost, ComputerTurn, Send, ShowLobby
from krendzu import Place, Table, replay
from storage import Door, MatchStatus, Store

ANN, BOB, CY, DEE = (Actor(1, "Ann", "en"), Actor(2, "Боб", "ru"), Actor(3, "Cy", "en"),
                     Actor(4, "Dee", "en"))


async def play_out(flow: Flow, match_id: int, humans: dict[int, Actor],
                   rng: random.Random) -> list[str]:
    """Humans play random legal steps through the flow; computers play their turns."""
    group_lines: list[str] = []
    update = 1000
    while True:
        stored = await flow.load(match_id)
        if stored.row.status is not MatchStatus.ACTIVE:
            return group_lines
        seat = stored.game.current_player
        seat_row = stored.row.seats[seat]
        if seat_row.user_id is None:
            outcome = await flow.computer_turn(match_id, stored.next_seq)
        else:
            update += 1
            step = rng.choice(stored.game.legal_actions())
            outcome = await flow.play(match_id, humans[seat_row.user_id], [step],
                                      update_id=update)
            assert outcome.reply and outcome.reply.startswith("✓"), outcome.reply
        posts = [n for n in outcome.notices if isinstance(n, BoardPost)]
        for post in posts:
            group_lines.extend(post.lines)
        assert outcome.notices, "every accepted move is announced"


@pytest.mark.parametrize(("table", "humans", "args"), [
    (Table.DUEL, [ANN, BOB], ["exchange=2"]),
    (Table.TRIO_LONE_ATTACKER, [ANN], []),
    (Table.TRIO_LONE_DEFENDER, [ANN, BOB], ["exchange=1"]),
    (Table.TEAMS, [ANN, BOB, CY], []),
])
async def test_whole_match_on_every_table(flow: Flow, table: Table, humans: list[Actor],
                                          args: list[str]) -> None:
    for actor in humans:
        await flow.see_user(actor, private=True)
    outcome = await flow.new_lobby(-100, None, humans[0], [table.value, *args], title="Friends")
    assert isinstance(outcome.notices[0], ShowLobby)
    for actor in humans[1:]:
        assert (await flow.lobby_action(-100, None, actor, "join")).reply == "You are seated." \
            or actor.language_code == "ru"
    while True:
        lobby = await flow.store.open_lobby(-100)
        assert lobby is not None
        if len(lobby.state["seats"]) == table.players:
            break
        await flow.lobby_action(-100, None, humans[0], "add:easy")
    started = await flow.lobby_action(-100, None, humans[0], "go")
    sends = [n for n in started.notices if isinstance(n, Send)]
    hands = {n.chat_id for n in sends if n.hand}
    assert hands == {a.user_id for a in humans}, "every human gets their hand privately"
    stored = await flow.find_match(-100, None, humans[0].user_id)
    assert stored is not None
    lines = await play_out(flow, stored.match_id, {a.user_id: a for a in humans},
                           random.Random(table.value))
    final = await flow.store.load_match(stored.match_id)
    assert final.row.status is MatchStatus.FINISHED
    # The referee's replay of the exported record gives the stored totals.
    record = json.loads(json.dumps(final.game.to_record()))
    result = replay(record)
    assert result["valid"]
    assert tuple(result["totals"][p] for p in record["players"]) == final.row.totals
    assert any(line.startswith("+1 ") for line in lines) or sum(final.row.totals or ()) == 0


async def test_wrong_turn_foreign_card_and_stale_panel_change_nothing(flow: Flow) -> None:
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(-5, None, ANN, [])
    await flow.lobby_action(-5, None, BOB, "join")
    await flow.lobby_action(-5, None, ANN, "go")
    stored = await flow.find_match(-5, None, 1)
    assert stored is not None
    game = stored.game
    mover = game.current_player
    other = [ANN, BOB][1 - mover]
    me = [ANN, BOB][mover]
    seq = stored.next_seq
    wrong = await flow.play(stored.match_id, other, [game.legal_actions()[0]])
    assert "not your turn" in (wrong.reply or "") or "не ваш" in (wrong.reply or "").lower()
    hand = set(game.observation(mover).tour.hand)
    foreign = next(c for c in game.observation(1 - mover).tour.hand if c not in hand)
    refused = await flow.play(stored.match_id, me, [Place(foreign, 0, 0)])
    assert refused.private_reply and not refused.notices
    far = await flow.play(stored.match_id, me, [Place(sorted(hand)[0], 5, 5)])
    assert "M13" in (far.reply or "") and not far.notices
    stale = await flow.panel_press(stored.match_id, seq + 3, "pass", me)
    assert not stale.notices
    forged = await flow.panel_press(stored.match_id, seq, "pZZ@0,0", me)
    assert not forged.notices
    assert (await flow.store.get_match(stored.match_id)).move_count == 0


async def test_duplicate_update_applies_once(flow: Flow) -> None:
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(-6, None, ANN, [])
    await flow.lobby_action(-6, None, BOB, "join")
    await flow.lobby_action(-6, None, ANN, "go")
    stored = await flow.find_match(-6, None, 1)
    assert stored is not None
    me = [ANN, BOB][stored.game.current_player]
    step = stored.game.legal_actions()[0]
    first = await flow.play(stored.match_id, me, [step], update_id=77)
    assert first.notices
    again = await flow.play(stored.match_id, me, [step], update_id=77)
    assert not again.notices
    assert (await flow.store.get_match(stored.match_id)).move_count == 1


async def test_private_match_against_the_computer(flow: Flow) -> None:
    await flow.see_user(ANN, private=True)
    lobby = await flow.new_lobby(ANN.user_id, None, ANN, ["level=easy"])
    show = lobby.notices[0]
    assert isinstance(show, ShowLobby) and "Easy" in show.text
    started = await flow.lobby_action(ANN.user_id, None, ANN, "go")
    assert not any(isinstance(n, BoardPost) for n in started.notices), "no group here"
    stored = await flow.find_match(ANN.user_id, None, 1) or (await flow.my_matches(1))[0]
    assert any(isinstance(n, ComputerTurn) for n in started.notices) or \
        stored.game.current_player == stored.row.seat_of(1)
    await play_out(flow, stored.match_id, {1: ANN}, random.Random(3))
    assert (await flow.store.get_match(stored.match_id)).status is MatchStatus.FINISHED


async def test_store_only_grows_by_accepted_moves(flow: Flow) -> None:
    store: Store = flow.store
    assert await store.active_matches() == []


async def test_lobby_join_needs_private_chat_then_deep_link_seats(flow: Flow) -> None:
    await flow.see_user(ANN, private=True)
    await flow.see_user(BOB)  # seen in the group only: the bot cannot write to Боб yet
    await flow.new_lobby(-7, None, ANN, [], title="Friends")
    refused = await flow.lobby_action(-7, None, BOB, "join")
    assert refused.alert and "start=j" in (refused.reply or "")
    lobby = await flow.store.open_lobby(-7)
    assert lobby is not None and lobby.state["invited"] == [BOB.user_id]
    assert len(lobby.state["seats"]) == 1
    show = refused.notices[0]
    assert isinstance(show, ShowLobby)
    urls = [b.url for row in show.keyboard or [] for b in row if b.url]
    key = lobby.state["invite_key"]
    assert len(key) >= 22  # 128 random bits
    assert urls == [f"https://t.me/kbot?start=j{lobby.lobby_id}_{key}"]
    payload = urls[0].rsplit("=", 1)[1]
    assert len(payload) <= 64 and re.fullmatch(r"[A-Za-z0-9_-]+", payload)
    other = key[:-1] + ("A" if key[-1] != "A" else "B")
    for guess in (f"j{lobby.lobby_id}", f"j{lobby.lobby_id}_{other}",
                  f"j{lobby.lobby_id + 1}_{key}"):
        wrong = await flow.join_by_link(BOB, guess)
        assert not wrong.notices and "Friends" not in (wrong.reply or "")
    seated = await flow.join_by_link(BOB, payload)
    assert "Friends" in (seated.reply or "")
    lobby = await flow.store.open_lobby(-7)
    assert lobby is not None and [s["user_id"] for s in lobby.state["seats"]] == [1, 2]
    forged = await flow.join_by_link(BOB, "j99999")
    assert not forged.notices


async def test_a_start_run_elsewhere_meanwhile_still_seats_the_person(
        flow: Flow, monkeypatch: pytest.MonkeyPatch) -> None:
    """Webhook workers run a person's /start (private chat) and their /new or /join (group)
    at once. The worst interleaving: /new reads them as never started, then /start is
    stored and looks for tables waiting for them before /new stored its lobby (none), then
    /new stores the lobby with them invited. They pressed Start: they must be seated (the
    lobby must not wait for a Start already pressed, and /go must not say a seat is free)."""
    store = flow.store
    real_get_user = store.get_user
    racing: set[int] = set()

    async def get_user_while_start_runs(user_id: int):  # type: ignore[no-untyped-def]
        row = await real_get_user(user_id)  # the stale read
        if user_id in racing:
            racing.discard(user_id)
            actor = {ANN.user_id: ANN, BOB.user_id: BOB}[user_id]

            async def start_elsewhere() -> None:  # a task of its own: its own unit of work
                await flow.see_user(actor, private=True)  # the other process's /start...
                assert await flow.seat_invited(actor) == []  # ...finds no table yet

            await asyncio.create_task(start_elsewhere())
        return row

    monkeypatch.setattr(store, "get_user", get_user_while_start_runs)
    await flow.see_user(ANN)  # seen in the group only
    await flow.see_user(BOB)
    racing.add(ANN.user_id)
    begin_work()  # each update is a unit of work: a row is read once in it
    await flow.new_lobby(-8, None, ANN, [], title="Race")
    lobby = await store.open_lobby(-8)
    assert lobby is not None and lobby.state["invited"] == []
    assert [s["user_id"] for s in lobby.state["seats"]] == [ANN.user_id]
    racing.add(BOB.user_id)
    begin_work()
    joined = await flow.lobby_action(-8, None, BOB, "join")
    assert joined.reply == "Вы заняли место." and not joined.alert  # Боб reads Russian
    lobby = await store.open_lobby(-8)
    assert lobby is not None and lobby.state["invited"] == []
    assert [s["user_id"] for s in lobby.state["seats"]] == [ANN.user_id, BOB.user_id]
    started = await flow.lobby_action(-8, None, ANN, "go")
    assert await store.active_match(-8) is not None, started.reply


async def test_only_the_creator_changes_settings_and_cancels(flow: Flow) -> None:
    for actor in (ANN, CY):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(-8, None, ANN, [])
    assert not (await flow.lobby_action(-8, None, CY, "table")).notices
    changed = await flow.lobby_action(-8, None, ANN, "table")
    assert changed.notices and "lone attacker" in changed.notices[0].text  # type: ignore[union-attr]
    assert not (await flow.lobby_action(-8, None, CY, "cancel")).notices
    assert (await flow.lobby_action(-8, None, CY, "cancel", is_admin=True)).notices
    assert await flow.store.open_lobby(-8) is None


async def test_bad_new_arguments_are_refused_politely(flow: Flow) -> None:
    await flow.see_user(ANN, private=True)
    for args in (["tours=3"], ["deal=30/30"], ["colour=red"], ["nonsense"], ["deal=huge"]):
        with pytest.raises(InputError):
            await flow.new_lobby(-9, None, ANN, args)
    assert await flow.store.open_lobby(-9) is None


async def test_rematch_after_a_finished_match(flow: Flow) -> None:
    await flow.see_user(ANN, private=True)
    await flow.new_lobby(ANN.user_id, None, ANN, ["level=easy"])
    await flow.lobby_action(ANN.user_id, None, ANN, "go")
    stored = (await flow.my_matches(1))[0]
    await play_out(flow, stored.match_id, {1: ANN}, random.Random(4))
    again = await flow.panel_press(stored.match_id, 0, "rematch", ANN)
    assert again.notices and isinstance(again.notices[0], ShowLobby)
    # Alone with the computer: one press starts it, same settings, seats rotated.
    new = await flow.find_match(ANN.user_id, None, ANN.user_id)
    assert new is not None and new.match_id != stored.match_id
    assert new.row.settings == stored.row.settings
    assert [s.user_id for s in new.row.seats] == [s.user_id for s in stored.row.seats][::-1]
    lobby = await flow.store.lobby_of_match(new.match_id)
    assert lobby is not None and lobby.state["level"] == "easy"


async def test_group_rematch_needs_one_press_per_player(flow: Flow) -> None:
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(-14, None, ANN, ["tours=2", "deal=short"], title="Again")
    await flow.lobby_action(-14, None, BOB, "join")
    await flow.lobby_action(-14, None, ANN, "go")
    stored = await flow.find_match(-14, None, 1)
    assert stored is not None
    await play_out(flow, stored.match_id, {1: ANN, 2: BOB}, random.Random(6))
    first = await flow.panel_press(stored.match_id, 0, "rematch", BOB)
    assert first.reply  # "your seat is ready" (in Russian for Боб)
    lobby = await flow.store.open_lobby(-14)
    assert lobby is not None and lobby.state["waiting"] == [ANN.user_id]
    assert [s["user_id"] for s in lobby.state["seats"]] == [2, 1]  # rotated
    state = LobbyState.from_json(lobby.state)
    assert "⏳" in lobby_text(state, await flow.user_tr(1), await flow.lobbies.names(state))
    again = await flow.panel_press(stored.match_id, 0, "rematch", BOB)  # twice: no change
    assert again.reply and again.reply == first.reply
    assert await flow.store.active_match(-14) is None
    await flow.panel_press(stored.match_id, 0, "rematch", ANN)  # the last press starts it
    new = await flow.store.active_match(-14)
    assert new is not None and [s.user_id for s in new.seats] == [2, 1]
    assert new.settings == stored.row.settings


async def test_restart_announces_a_move_stored_but_not_announced(flow: Flow) -> None:
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(-12, None, ANN, [], title="Crash")
    await flow.lobby_action(-12, None, BOB, "join")
    await flow.lobby_action(-12, None, ANN, "go")
    stored = await flow.find_match(-12, None, 1)
    assert stored is not None
    await flow.store.set_announced(stored.match_id, 0)
    step = next(a for a in stored.game.legal_actions() if isinstance(a, Place))
    # The process died right after the commit: nothing was announced.
    await flow.store.append_move(stored.match_id, 1, step)
    fresh = Flow(flow.store, flow.catalogs, flow.decide, bot_username="kbot")
    notices = await fresh.resume()
    posts = [n for n in notices if isinstance(n, BoardPost)]
    assert posts and any(step.card.pretty() in line for line in posts[0].lines)
    assert any(isinstance(n, Send) and n.panel_of for n in notices), "the next player's panel"
    marker = [n for n in notices if type(n).__name__ == "Announced"]
    assert marker and marker[-1].seq == 1  # type: ignore[attr-defined]


def test_a_point_a_defenders_first_card_scored_is_told_with_the_whole_turn() -> None:
    """A defender's first card of a turn that may take a second is not posted on its own
    (the group sees the whole turn in one post): when that card completed a line, its "+1"
    line comes with the turn's post."""
    from chat.describe import describe_moves
    from krendzu import Match, Place, Settings

    names = ("Ann", "Bob")
    en = Catalogs().get("en")
    rng = random.Random(5)
    for seed in range(3000):
        game = Match(names, Settings(), seed=seed)
        while not game.is_over:
            tour = game.tour
            combos = len(tour.combos)
            step = rng.choice(game.legal_actions())
            before = game.clone()
            game.apply(step)
            if (isinstance(step, Place) and game.tour is tour and tour.pending
                    and len(tour.combos) > combos):
                break
        else:
            continue
        held, _ = describe_moves(en, before, [step], names)
        assert any(line.startswith("+1 ") for line in held), held
        finish = rng.choice(game.legal_actions())
        lines, _ = describe_moves(en, game, [finish], names)
        assert any(line.startswith("+1 ") for line in lines), (seed, lines)
        return
    raise AssertionError("no defender's first card scored in 3,000 random matches")


def test_each_exchange_discard_is_told_without_its_card() -> None:
    """A discard that leaves the exchange open says who picked how many, never the card."""
    from chat.describe import describe_moves
    from krendzu import Announce, Discard, Match, Settings

    names = ("Ann", "Боб")
    game = Match(names, Settings(exchange_limit=2), seed=3)
    game.apply(Announce(2))
    game.apply(Announce(0))
    seat = game.current_player
    first, second = game.tour.hand(seat)[:2]
    catalogs = Catalogs()
    en, ru = catalogs.get("en"), catalogs.get("ru")
    lines, after = describe_moves(en, game, [Discard(first)], names)
    assert lines == [f"{names[seat]} has picked 1 of 2 cards to exchange."]
    assert describe_moves(ru, game, [Discard(first)], names)[0] == [
        f"{names[seat]}: для обмена выбрано 1 из 2 карт."]
    lines, _ = describe_moves(en, after, [Discard(second)], names)
    assert lines == ["The exchange is done: new cards were dealt."]
    told = " ".join(describe_moves(en, game, [Discard(first), Discard(second)], names)[0])
    assert first.pretty() not in told and second.pretty() not in told


async def test_a_defenders_point_is_told_once_in_their_own_record(flow: Flow) -> None:
    """A defender's first card completes a line ("+1 …") and they place a second from
    the panel: the panel, turned into the record of the whole turn, tells that point once.
    Before, the first card's "+1" line stayed in the record above the turn's lines, which
    carry it again (they tell the group the whole turn: the test above)."""
    from krendzu import Match, Settings
    from storage import SeatSpec

    rng = random.Random(7)
    for seed in range(3000):
        game = Match(["p1", "p2"], Settings(), seed=seed)
        steps = []
        while not game.is_over:
            tour = game.tour
            combos = len(tour.combos)
            step = rng.choice(game.legal_actions())
            game.apply(step)
            steps.append(step)
            if (isinstance(step, Place) and game.tour is tour and tour.pending
                    and len(tour.combos) > combos):
                break
        else:
            continue
        second = next((a for a in game.legal_actions() if isinstance(a, Place)), None)
        if second is not None:
            break
    else:
        raise AssertionError("no defender's first card scored in 3,000 random matches")
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    row = await flow.store.create_match(-5151, Settings(), [
        SeatSpec.human(ANN.user_id), SeatSpec.human(BOB.user_id)], seed=seed)
    actors = {ANN.user_id: ANN, BOB.user_id: BOB}
    outcome = None
    for step in [*steps, second]:
        stored = await flow.load(row.match_id)
        user_id = stored.row.seats[stored.game.current_player].user_id
        assert user_id is not None
        outcome = await flow.play(row.match_id, actors[user_id], [step], door=Door.BUTTON)
        assert outcome.reply and outcome.reply.startswith("✓"), outcome.reply
    assert outcome is not None
    from chat.notices import EditPanel

    [record] = [n for n in outcome.notices if isinstance(n, EditPanel)
                and n.user_id == user_id and n.keyboard is None]
    points = [line for line in record.text.split("\n") if line.startswith("+1 ")]
    assert len(points) == len(set(points)) >= 1, record.text


async def test_a_reminder_after_a_defenders_first_card_asks_for_the_second_cards_cell(
        flow: Flow) -> None:
    """The embedded mode's twin of the scaled mode's test (tests/test_jobs.py): a defender
    places a first card from a key naming the second, then the turn's reminder comes; its
    fresh panel asks for the second card's cell. Before, it asked for a card anew in the
    middle of the turn (the second card named was noted only by the scaled mode)."""
    from chat.flow.views import codec

    for actor in (ANN, CY):  # both read English
        await flow.see_user(actor, private=True)
    group = -6161
    await flow.new_lobby(group, None, ANN, ["duel"], title="Club")
    await flow.lobby_action(group, None, CY, "join")
    await flow.lobby_action(group, None, ANN, "go")
    row = await flow.store.active_match(group)
    assert row is not None
    actors = {ANN.user_id: ANN, CY.user_id: CY}
    for _ in range(8):
        stored = await flow.load(row.match_id)
        game = stored.game
        tour = game.tour
        if game.current_player not in tour.roles.attackers and tour.placed and not tour.pending:
            break
        user_id = stored.row.seats[game.current_player].user_id
        assert user_id is not None
        await flow.play(row.match_id, actors[user_id], [game.legal_actions()[0]])
    else:
        raise AssertionError("no defence")
    defender = stored.row.seats[game.current_player].user_id
    assert defender is not None
    first = next(a for a in game.legal_actions() if isinstance(a, Place))
    second = next(c for c in game.observation(game.current_player).tour.hand
                  if c != first.card)
    seq = stored.next_seq
    await flow.panel_press(row.match_id, seq, codec.place_op(
        first.card, first.x, first.y, then=second), actors[defender])
    told = await flow.ticker.remind(row.match_id, seq + 1)
    [panel] = [n for n in told if isinstance(n, Send) and n.chat_id == defender]
    assert f"{second.pretty()}: choose a cell" in (panel.text or ""), panel.text
