"""The moves of a tour in words, and replays that work (issue 27, items 4 and 5).

``/moves`` answers the tour's numbered moves as text and names no card that is still in a
hand; a tour that ends leaves its moves in the group in a summary of their own; ``/export``
sends the record and one replay GIF per finished tour, drawn with the players' display names
in the chat's language, and the record names players by display name and an opaque id,
never by a Telegram user id. Moves are typed, as a player may (``/play``, ``/pass``, ``end``,
``/exchange``, ``/discard``), so every step is the one the test chose.
"""

from __future__ import annotations

import io
import json
import random
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

import chat.painter
from chat.flow.views.messages import moves_text, utf16_length
from chat.i18n import Catalogs, picture_texts
from krendzu import (
    Announce,
    Discard,
    EndTurn,
    Match,
    Pass,
    Place,
    Settings,
    Table,
    import_record,
    replay,
)
from krendzu.coords import frame_for
from storage import MatchStatus
from tests.bot_harness import BOT, FastClock, Harness, running_bot, start_group_duel
from tests.fakebot import Chat, FakeTelegram, FakeUser

#: A card as the texts write it (``10♥``, ``Q♣``).
CARD = re.compile(r"(?:10|[6-9JQKA])[♠♣♦♥]")


async def step_typed(h: Harness, group: Chat, users: dict[int, FakeUser],
                     rng: random.Random) -> bool:
    """One step of the running match in ``group``, typed by the player to move; False when
    no match runs there any more."""
    store = h.services.store
    row = await store.active_match(group.id)
    if row is None:
        return False
    game = (await h.services.flow.load(row.match_id)).game
    user = users[row.seats[game.current_player].user_id or 0]
    step = rng.choice(game.legal_actions())
    if isinstance(step, Place):
        cell = frame_for(game.tour.observation(None).placements).label(step.x, step.y)
        user.send(group, f"/play@{BOT} {step.card.code()} {cell}")
    elif isinstance(step, Pass):
        user.send(group, f"/pass@{BOT}")
    elif isinstance(step, EndTurn):
        user.send(user.chat, "end")
    elif isinstance(step, Announce):
        user.send(user.chat, f"/exchange {step.count}")
    else:
        assert isinstance(step, Discard)
        user.send(user.chat, f"/discard {step.card.code()}")
    before = row.move_count
    await h.settle()
    after = await store.get_match(row.match_id)
    assert after.move_count > before or after.status is not MatchStatus.ACTIVE, \
        h.fake.describe()
    return True


def record_drawings(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What each replay GIF was drawn with (the painter's threads call
    ``chat.painter.replay_gif``): the tour, the players' names, the words."""
    drawn: list[dict[str, Any]] = []
    real = chat.painter.replay_gif
    lock = threading.Lock()

    def recording(record: Any, **options: Any) -> bytes:
        with lock:
            drawn.append(options)
        return real(record, **options)

    monkeypatch.setattr(chat.painter, "replay_gif", recording)
    return drawn


async def test_a_two_tour_match_exports_both_replays_with_display_names(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    drawn = record_drawings(monkeypatch)
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(7340011, "Ann")
    bob = fake.user(7340012, "Bob", language_code="ru")
    group = fake.group(-100734, "Replays", creator=ann)
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        ann.send(group, f"/lang@{BOT} ru")  # the group reads Russian; Ann herself English
        await h.settle()
        row = await start_group_duel(h, group, ann, bob, "duel tours=2 deal=short timer=off")
        rng = random.Random(27)
        for _ in range(200):
            if not await step_typed(h, group, {ann.id: ann, bob.id: bob}, rng):
                break
        stored = await h.services.flow.load(row.match_id)
        assert stored.row.status is MatchStatus.FINISHED and len(stored.game.tours) == 2
        already = len(fake.sent(group))
        ann.send(group, f"/export@{BOT}")
        await h.settle()
        answer = fake.sent(group)[already:]
        assert [m.kind for m in answer] == ["document", "animation", "animation"], \
            fake.describe()
        data = answer[0].data or b""
        # The record: opaque ids and display names, never a Telegram user id.
        for user in (ann, bob):
            assert str(user.id).encode() not in data
        record = json.loads(data)
        assert record["players"] == ["p1", "p2"]
        seats = {s.user_id: f"p{s.seat + 1}" for s in stored.row.seats}
        assert record["names"] == {seats[ann.id]: "Ann", seats[bob.id]: "Bob"}
        # Still a record the referee and the importer read, with the stored totals.
        result = replay(record)
        assert result["valid"]
        assert tuple(result["totals"][p] for p in record["players"]) == stored.row.totals
        assert import_record(record).totals() == stored.game.totals()
        for index, tour in enumerate(record["tours"]):  # the moves in words, in Russian
            numbered = [line for line in tour["log"] if re.match(r"\d+\. ", line)]
            assert len(numbered) == len(tour["moves"])
            assert tour["log"][-1].startswith(f"Тур {index + 1} окончен")
        # One replay per tour, in order, each as long as its tour, drawn with the names
        # and in the group's language.
        assert [m.caption for m in answer[1:]] == ["Повтор тура 1.", "Повтор тура 2."]
        for index, message in enumerate(answer[1:]):
            gif = Image.open(io.BytesIO(message.data or b""))
            placed = len(stored.game.tours[index].observation(None).placements)
            assert gif.n_frames == placed + 1
        names = [record["names"][p] for p in record["players"]]
        group_words = picture_texts(Catalogs().get("ru"))
        assert sorted(d["tour"] for d in drawn) == [0, 1]
        assert all(d["players"] == names and d["texts"] == group_words for d in drawn)
        assert not fake.errors


async def test_moves_lists_the_tour_numbered_and_shows_no_hand(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(7340021, "Ann")
    bob = fake.user(7340022, "Bob")
    group = fake.group(-100735, "Lists")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        row = await start_group_duel(h, group, ann, bob,
                                     "duel tours=2 deal=short exchange=2 timer=off")
        rng = random.Random(4)
        users = {ann.id: ann, bob.id: bob}
        while True:  # the exchange, then a few turns (a pass among them, when one comes)
            stored = await h.services.flow.load(row.match_id)
            if len(stored.game.tour.turns_raw) >= 6 and not stored.game.tour.pending:
                break
            assert await step_typed(h, group, users, rng)
        game = stored.game
        names = {ann.id: "Ann", bob.id: "Bob"}
        seat_names = [names[s.user_id or 0] for s in stored.row.seats]
        ann.send(group, f"/moves@{BOT}")
        await h.settle()
        text = fake.last(group).text or ""
        lines = text.split("\n")
        assert lines[0] == "Moves of tour 1/2:"
        numbered = [line for line in lines if re.match(r"\d+\. ", line)]
        turns = game.tour.turns
        assert [int(line.split(".")[0]) for line in numbered] == list(range(1, len(turns) + 1))
        frame = frame_for(game.tour.observation(None).placements)
        for number, (line, turn) in enumerate(zip(numbered, turns, strict=True), start=1):
            said = " + ".join(f"{c.pretty()} {frame.label(x, y)}" for c, x, y in turn.cards)
            assert line == f"{number}. {seat_names[turn.player]}: {said or 'pass'}"
        # The exchange is told as counts; no card off the board is ever named.
        announced = dict(game.tour.announcements)
        assert any(announced.values()), "the test wants a real exchange"
        for seat, count in announced.items():
            if count:
                assert f"{seat_names[seat]} exchanged {count} card" in text
        on_board = {card.pretty() for card in game.tour.board().values()}
        assert set(CARD.findall(text)) == on_board
        # Privately the same list, in the reader's language, for the match they play.
        bob.send(bob.chat, "/moves")
        await h.settle()
        private = fake.last(bob).text or ""
        assert numbered[-1] in private.split("\n")
        bob.send(bob.chat, "/moves 2")
        await h.settle()
        assert "Tour 2 has not been dealt yet" in (fake.last(bob).text or "")
        assert not fake.errors


async def test_a_finished_tour_leaves_its_moves_in_the_group(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(7340031, "Ann")
    bob = fake.user(7340032, "Bob")
    group = fake.group(-100736, "Summaries")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        row = await start_group_duel(h, group, ann, bob, "duel tours=2 deal=short timer=off")
        rng = random.Random(8)
        while (await h.services.flow.load(row.match_id)).game.tour_index == 0:
            assert await step_typed(h, group, {ann.id: ann, bob.id: bob}, rng)
        game = (await h.services.flow.load(row.match_id)).game
        summaries = [m for m in fake.sent(group) if "📋" in (m.text or "")]
        assert len(summaries) == 1 and summaries[0].kind == "text", fake.describe()
        lines = (summaries[0].text or "").split("\n")
        assert lines[0] == "📋 Tour 1/2: the moves"
        numbered = [line for line in lines if re.match(r"\d+\. ", line)]
        assert len(numbered) == len(game.tours[0].turns)
        assert any(line.startswith("Tour 1 is over:") for line in lines)
        assert lines[-1].startswith("Score:")
        # It is written below the board post that ended the tour, and stays.
        photos = [m for m in fake.sent(group) if m.kind == "photo"
                  and "Tour 1 is over" in (m.caption or "")]
        assert photos and photos[-1].seq < summaries[0].seq
        assert not summaries[0].deleted


def test_a_long_list_keeps_its_newest_moves_within_the_limit() -> None:
    """Past the limit (Telegram's 4096 for /moves and a summary; smaller here, for a whole
    teams tour) the newest moves are kept, and a line says how many earlier ones are not."""
    tr = Catalogs().get("en")
    game = Match(["a", "b", "c", "d"], Settings(Table.TEAMS), seed=5)
    rng = random.Random(5)
    while game.tour_index == 0:
        game.apply(rng.choice(game.legal_actions()))
    names = ["Ann", "Bob", "Cy", "Di"]
    whole = moves_text(tr, game, 0, names)
    assert "earlier" not in whole and utf16_length(whole) > 300
    text = moves_text(tr, game, 0, names, head=["Head"], limit=300)
    assert utf16_length(text) <= 300
    last = len(game.tours[0].turns)
    shown = [int(m) for m in re.findall(r"^(\d+)\. ", text, flags=re.M)]
    assert shown == list(range(last - len(shown) + 1, last + 1)) and 1 not in shown
    lines = text.split("\n")
    assert lines[0] == "Head"
    assert lines[1] == f"… {last - len(shown)} earlier moves are not shown."
    assert lines[-1].startswith("Tour 1 is over:")
