"""Fewer taps (issue 27, item 10), counted end to end through the fake Bot API: the tour's
opening is one tap, a defender's single card then "end" two, two cards four; /hint comes with
a Play it key; typed words end a defender's turn or pass; stale and forged keys are refused
politely."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from chat.flow.views import codec
from krendzu import Action, Announce, Card, Discard, EndTurn, Pass, Place
from storage import MatchRow, StoredMatch
from tests.bot_harness import BOT, FastClock, Harness, panel, running_bot, start_group_duel
from tests.fakebot import FakeTelegram, FakeUser, Message


def op_of(button: dict) -> str:
    """The panel op of a key: ``v1:m:<match>:<seq>:<op>`` → ``<op>``."""
    return str(button["callback_data"]).split(":", 4)[4]


def keys(message: Message, prefix: str) -> list[dict]:
    return [b for b in message.buttons() if op_of(b).startswith(prefix)]


class Tapper:
    """Presses panel keys for the players and counts the presses."""

    def __init__(self, h: Harness, row: MatchRow, users: list[FakeUser]) -> None:
        self.h, self.row = h, row
        self.by_id = {u.id: u for u in users}
        self.taps = 0

    async def stored(self) -> StoredMatch:
        return await self.h.services.flow.load(self.row.match_id)

    async def mover(self) -> tuple[FakeUser, Message]:
        """The player to move and their live panel."""
        stored = await self.stored()
        user_id = stored.row.seats[stored.game.current_player].user_id
        assert user_id is not None
        user = self.by_id[user_id]
        live = panel(self.h.fake, user)
        assert live is not None, self.h.fake.describe()
        return user, live

    async def tap(self, user: FakeUser, message: Message, button: dict) -> Message:
        """Press ``button`` of ``message`` as it is now; the message afterwards."""
        self.taps += 1
        user.press(message, data=button["callback_data"])
        await self.h.settle()
        return self.h.fake.message(user, message.message_id)

    async def attack(self) -> None:
        """The attacker's turn: card, cell (two taps)."""
        user, live = await self.mover()
        stored = await self.stored()
        assert stored.game.current_player in stored.game.tour.roles.attackers
        live = await self.tap(user, live, keys(live, "c")[0])
        cells = keys(live, "p")
        assert cells and all(":" not in op_of(b) for b in cells)  # a plain place: no tail
        await self.tap(user, live, cells[0])


def history(stored: StoredMatch) -> list[object]:
    return list(stored.game.tour.history)


async def duel(h: Harness, fake: FakeTelegram, base: int) -> tuple[Tapper, FakeUser, FakeUser]:
    ann = fake.user(base + 1, "Ann")
    bob = fake.user(base + 2, "Bob")
    ann.start_bot()
    bob.start_bot()
    await h.settle()
    row = await start_group_duel(h, fake.group(-100 * base, "Taps"), ann, bob,
                                 "duel deal=short")
    return Tapper(h, row, [ann, bob]), ann, bob


async def test_opening_one_tap_single_card_two_two_cards_four(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    async with running_bot(tmp_path, fake) as h:
        t, _, _ = await duel(h, fake, 7100)
        # The opening: only M13 is legal, every card key carries it.
        user, live = await t.mover()
        stored = await t.stored()
        assert stored.game.current_player not in stored.game.tour.roles.attackers
        assert "Tap a card: it goes to M13." in (live.caption or live.text or "")
        cards = keys(live, "p")
        assert cards and not keys(live, "c")
        assert len(cards) == len(stored.game.observation(stored.game.current_player).tour.hand)
        t.taps = 0
        await t.tap(user, live, cards[0])
        stored = await t.stored()
        assert t.taps == 1 and len(stored.game.tour.placed) == 1
        assert stored.game.current_player in stored.game.tour.roles.attackers
        await t.attack()

        # The defender's single card then "end": card, cell; no End turn to press.
        user, live = await t.mover()
        stored = await t.stored()
        before = history(stored)
        defender = stored.game.current_player
        assert defender not in stored.game.tour.roles.attackers
        t.taps = 0
        live = await t.tap(user, live, keys(live, "c")[0])
        text = live.caption or live.text or ""
        assert "tap a cell to play it alone" in text, text
        cells = [b for b in keys(live, "p") if op_of(b).endswith(":end")]
        assert cells and len(cells) == len(keys(live, "p"))
        assert keys(live, "c")  # the second cards, under "+"
        assert all(b["text"].startswith("+") for b in keys(live, "c"))
        await t.tap(user, live, cells[0])
        after = await t.stored()
        assert t.taps == 2
        added = history(after)[len(before):]
        assert [type(a) for a in added] == [Place, EndTurn], added
        assert after.game.current_player != defender
        # The panel turned into the record of the whole turn, without a "second card" line.
        record = fake.message(user, live.message_id)
        assert "may place a second card" not in (record.caption or record.text or "")
        assert panel(fake, user) is None  # no keys left while the other player moves
        await t.attack()

        # Two cards: card, the second card (+), the first one's cell, the second one's cell.
        user, live = await t.mover()
        before = history(await t.stored())
        t.taps = 0
        first = keys(live, "c")[0]
        live = await t.tap(user, live, first)
        plus = keys(live, "c")[0]
        second_name = plus["text"].removeprefix("+")
        live = await t.tap(user, live, plus)
        text = live.caption or live.text or ""
        assert f"then {second_name}: choose the cell of" in text, text
        cells = keys(live, "p")
        assert cells and all(not op_of(b).endswith(":end") for b in cells)
        live = await t.tap(user, live, cells[0])
        # Mid-turn: the panel asks for the second card's cell straight away.
        mid = await t.stored()
        assert mid.game.tour.step_in_turn == 1 and mid.game.current_player == defender
        text = live.caption or live.text or ""
        assert f"{second_name}: choose a cell" in text, text
        cells = keys(live, "p")
        assert cells and all(":" not in op_of(b) for b in cells)
        await t.tap(user, live, cells[-1])
        after = await t.stored()
        assert t.taps == 4
        added = history(after)[len(before):]
        assert [type(a) for a in added] == [Place, Place], added
        assert added[1].card.pretty() == second_name  # type: ignore[attr-defined]
        assert after.game.current_player != defender
        assert not fake.errors


async def test_hint_play_it_plays_the_suggestion_once(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    async with running_bot(tmp_path, fake) as h:
        t, _, _ = await duel(h, fake, 7200)
        user, live = await t.mover()
        await t.tap(user, live, keys(live, "p")[0])  # the opening
        await t.attack()
        # The defender asks for a hint from the panel: it comes with Play it.
        user, live = await t.mover()
        await t.tap(user, live, keys(live, "hint")[0])
        hint = fake.last(user)
        assert hint is not None and "Suggestion" in (hint.caption or hint.text or "")
        play = hint.button(text="▶ Play it")
        suggested = codec.decode_op(op_of(play))
        assert isinstance(suggested, codec.Step) and suggested.suggested
        stored = await t.stored()
        before, mover = history(stored), stored.game.current_player
        first = user.press(hint, data=play["callback_data"])
        await h.settle()
        after = await t.stored()
        added = history(after)[len(before):]
        assert added == suggested.actions, (added, suggested.actions)
        assert after.game.current_player != mover
        played = len(history(after))
        assert fake.answer(first).answered
        # A second press (a double tap, or a forged one) is refused: the match moved on.
        again = user.press(hint, data=play["callback_data"], forged=True)
        await h.settle()
        text = fake.answer(again).text or ""
        assert "out of date" in text, text
        assert len(history(await t.stored())) == played

        # /hint typed in the private chat works the same, and a hint overtaken by another
        # move is refused.
        await t.attack()
        user, live = await t.mover()
        user.send(user.chat, "/hint")
        await h.settle()
        hint = fake.last(user)
        assert hint is not None
        play = hint.button(text="▶ Play it")
        await t.tap(user, live, keys(live, "c")[0])
        live = fake.message(user, live.message_id)
        await t.tap(user, live, keys(live, "p")[0])  # a move of their own instead
        moved = len(history(await t.stored()))
        stale = user.press(hint, data=play["callback_data"])
        await h.settle()
        assert "out of date" in (fake.answer(stale).text or "")
        assert len(history(await t.stored())) == moved
        assert not fake.errors


async def test_typed_words_end_a_defenders_turn_and_pass(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    async with running_bot(tmp_path, fake) as h:
        t, _, _ = await duel(h, fake, 7300)
        user, live = await t.mover()
        await t.tap(user, live, keys(live, "p")[0])  # the opening
        for word in ("готово", "END", "/play конец"):
            await t.attack()
            user, live = await t.mover()
            stored = await t.stored()
            before, defender = history(stored), stored.game.current_player
            # "end" before any card of the turn is refused politely, nothing changes.
            user.send(user.chat, word)
            await h.settle()
            assert len(history(await t.stored())) == len(before)
            reply = fake.last(user)
            assert reply is not None and "Moves look like" not in (reply.text or "")
            # One card placed from the panel (a second one picked, then left): typed
            # words end the turn.
            live = await t.tap(user, live, keys(live, "c")[0])
            live = await t.tap(user, live, keys(live, "c")[0])
            live = await t.tap(user, live, keys(live, "p")[0])
            assert (await t.stored()).game.tour.step_in_turn == 1
            user.send(user.chat, word)
            await h.settle()
            after = await t.stored()
            added = history(after)[len(before):]
            assert [type(a) for a in added] == [Place, EndTurn], (word, added)
            assert after.game.current_player != defender
        await t.attack()
        user, live = await t.mover()
        before = history(await t.stored())
        user.send(user.chat, "Пас")
        await h.settle()
        added = history(await t.stored())[len(before):]
        assert added == [Pass()]
        await t.attack()
        user, live = await t.mover()
        before = history(await t.stored())
        user.send(user.chat, "pass")
        await h.settle()
        assert history(await t.stored())[len(before):] == [Pass()]
        assert not fake.errors


async def test_stale_and_forged_keys_are_refused_politely(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    async with running_bot(tmp_path, fake) as h:
        t, _, _ = await duel(h, fake, 7400)
        user, live = await t.mover()
        opening = keys(live, "p")[0]
        await t.tap(user, live, opening)
        await t.attack()
        user, live = await t.mover()
        stored = await t.stored()
        seat = stored.game.current_player
        hand = stored.game.observation(seat).tour.hand
        other = stored.game.observation(1 - seat).tour.hand[0]
        mid, seq, start = stored.match_id, stored.next_seq, len(history(stored))
        cell = next(a for a in stored.game.legal_actions() if isinstance(a, Place))
        a, b = hand[0].code(), hand[1].code()
        forged = {
            f"p{a}@{cell.x},{cell.y}:ZZ": "not valid",  # not a second card
            f"c{a}:{a}": "not valid",  # the same card twice
            f"c{a}:{other.code()}": "not valid",  # a second card not in the hand
            f"c{a}:{b}:{b}": "not valid",
            "tpQC@x,1": "not valid",
            "t": "not valid",
            f"p{other.code()}@{cell.x},{cell.y}:end": "",  # a card not in the hand
        }
        for op, answer in forged.items():
            query = user.press(live, data=f"v1:m:{mid}:{seq}:{op}", forged=True)
            await h.settle()
            text = fake.answer(query).text or ""
            assert fake.answer(query).answered and text, op
            assert answer in text, (op, text)
        # The opening's key again, and a Play it of an old move: out of date.
        for data in (opening["callback_data"],
                     f"v1:m:{mid}:{seq - 1}:t{op_of(opening)}"):
            query = user.press(live, data=data, forged=True)
            await h.settle()
            assert "out of date" in (fake.answer(query).text or "")
        assert len(history(await t.stored())) == start
        assert not fake.errors


def test_panel_ops_read_back_and_old_ones_still_do() -> None:
    qc, qs = Card.parse("QC"), Card.parse("QS")
    assert codec.decode_op(codec.place_op(qc, 0, -1)) == codec.Step(Place(qc, 0, -1))
    assert codec.decode_op("pQC@0,-1") == codec.Step(Place(qc, 0, -1))  # an older panel's
    assert codec.decode_op(codec.place_op(qc, 1, 0, end=True)) == codec.Step(
        Place(qc, 1, 0), (EndTurn(),))
    assert codec.decode_op(codec.place_op(qc, 1, 0, then=qs)) == codec.Step(
        Place(qc, 1, 0), then=qs)
    assert codec.decode_op(codec.card_op(qc)) == codec.Show(qc)
    assert codec.decode_op(codec.card_op(qc, qs)) == codec.Show(qc, second=qs)
    assert codec.decode_op(codec.column_op(qc, -2)) == codec.Show(qc, column=-2)
    assert codec.decode_op(codec.column_op(qc, 3, qs)) == codec.Show(qc, column=3, second=qs)
    turn = [Place(qc, 0, 1), Place(qs, 0, 2)]
    op = codec.play_op(turn)
    assert op is not None
    step = codec.decode_op(op)
    assert isinstance(step, codec.Step) and step.actions == turn and step.suggested
    turns: list[list[Action]] = [[Pass()], [Place(qc, 5, -5), EndTurn()], [Announce(2)]]
    for actions in turns:
        op = codec.play_op(actions)
        step = codec.decode_op(op or "")
        assert isinstance(step, codec.Step) and step.actions == actions
    many = [Discard(Card.parse(c + "C")) for c in "6789TJQKA"]
    many += [Discard(Card.parse(c + "D")) for c in "6789"]
    assert codec.play_op(many) is None  # too long for button data: no Play it
    for bad in ("pQC@0,1:", "pQC@0,1:ZZ", "pQC@x,1:end", "t", "tpQC@0,1/", "tzz", "cQC:QS:QD",
                "dQC:QS", "kQC:1:QS:QD"):
        assert isinstance(codec.decode_op(bad), codec.Invalid), bad


async def test_a_press_telegram_will_not_let_us_answer_still_posts_its_move(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Telegram refuses the answer to a press older than a few seconds ("query is too old":
    a slow moment, or an update delivered again after a restart). The move the press made
    is stored, and its board post still goes out: the notices are queued before the answer,
    and the refusal is one quiet line, not an error with a traceback."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    async with running_bot(tmp_path, fake) as h:
        t, _, _ = await duel(h, fake, 7300)
        user, live = await t.mover()
        group = t.row.chat_id
        posts_before = len([m for m in fake.sent(group) if m.photo is not None])
        fake.callback_timeout = -1.0  # every answer from now on comes too late
        await t.tap(user, live, keys(live, "p")[0])  # the opening card, one tap
        stored = await t.stored()
        assert len(stored.game.tour.placed) == 1
        posts = [m for m in fake.sent(group) if m.photo is not None]
        assert len(posts) == posts_before + 1, fake.describe()
        assert "M13" in (posts[-1].caption or "")
        assert [c for c in fake.calls_to("answerCallbackQuery") if not c.ok]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR], caplog.text
