"""Issue 42: the whole match inside the group, each hand seen by its player alone (Telegram's
ephemeral messages), driven through the fake Bot API by people who never pressed Start.

The fake's clock runs 60 times faster than real time (a 60-second flood window lasts one real
second), so its 15-second window for answering a press is widened to 90 of its seconds (1.5
real seconds): the rule itself is pinned by tests/test_fakebot_ephemeral.py.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from chat.model import tour_frame
from krendzu import Card, Place
from tests.bot_harness import (
    BOT,
    FastClock,
    Harness,
    live_panel,
    open_button,
    play_step_with_buttons,
    running_bot,
    start_group_duel,
    start_group_match,
)
from tests.fakebot import Chat, FakeTelegram, FakeUser

WINDOW = 90.0  # the fake's seconds; see the module's docstring


def emulator() -> FakeTelegram:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    fake.ephemeral_window = WINDOW
    return fake


def seq_of(button: dict) -> int:
    return int(button["callback_data"].split(":")[3])


class LeakScan:
    """After each step: no message a person sees in the group (public, or ephemeral to
    them) that arrived since the last look names a card another player still holds."""

    def __init__(self, fake: FakeTelegram, group: Chat, people: list[FakeUser]) -> None:
        self.fake, self.group, self.people = fake, group, people
        self.seen: dict[int, int] = {}
        self.messages = 0

    async def check(self, h: Harness, match_id: int) -> None:
        stored = await h.services.flow.load(match_id)
        game = stored.game
        # Cards an earlier tour put on the board are public: its summary names them, and a
        # new deal may give them to anyone.
        public = {Card(code) for tour in game.tours[:game.tour_index]
                  for code, _cell in tour.placed}
        hands: dict[int, set[Card]] = {}
        for seat in stored.row.seats:
            if seat.user_id is not None and not game.is_over:
                hands[seat.user_id] = set(game.observation(seat.seat).tour.hand) - public
        for person in self.people:
            others = {card for user, cards in hands.items() if user != person.id
                      for card in cards}
            after = self.seen.get(person.id, 0)
            for message in self.fake.visible(self.group, person):
                if message.seq <= after:
                    continue
                self.messages += 1
                words = " ".join([message.text or "", message.caption or "",
                                  *(b.get("text", "") for b in message.buttons())])
                named = [card.pretty() for card in others if card.pretty() in words]
                assert not named, (f"{person} sees {named} of another hand in {words!r} "
                                   f"(ephemeral: {message.ephemeral})")
                self.seen[person.id] = max(self.seen.get(person.id, 0), message.seq)


async def play_in_group(h: Harness, group: Chat, users: dict[int, FakeUser], match_id: int,
                        rng: random.Random, scan: LeakScan, *, typed_every: int = 0) -> int:
    """Play the match out from in-group panels: whoever is to move opens their panel from
    the board post when they have none (or an old one), then taps; every ``typed_every``
    steps the move is typed as an ephemeral ``/play`` instead. Returns the presses made."""
    fake, presses = h.fake, 0
    for step in range(1, 800):
        stored = await h.services.flow.load(match_id)
        if stored.row.status.value != "active":
            return presses
        user = users[stored.row.seats[stored.game.current_player].user_id or 0]
        places = [a for a in stored.game.legal_actions() if isinstance(a, Place)]
        if typed_every and step % typed_every == 0 and places:
            move = rng.choice(places)
            user.send_ephemeral(group, f"/play@{BOT} {move.card.code()} "
                                       f"{tour_frame(stored.game).label(move.x, move.y)}")
            await h.settle()
            await scan.check(h, match_id)
            continue
        panel = live_panel(fake, group, user)
        found = open_button(fake, group)
        if panel is None or (found is not None and all(
                seq_of(b) != stored.next_seq for b in panel.buttons()
                if b.get("callback_data", "").startswith("v1:m:"))):
            assert found is not None, fake.describe()
            board, button = found
            query = user.press(board, data=button["callback_data"])
            presses += 1
            await h.settle()
            panel = live_panel(fake, group, user)
            if panel is None and "busy" in (fake.answer(query).text or ""):
                await asyncio.sleep(0.3)  # the group's minute is spent: press again later
                continue
            assert panel is not None, f"no panel for {user} after the press:\n{fake.describe()}"
        assert await play_step_with_buttons(h, user, rng, message=panel), fake.describe()
        await scan.check(h, match_id)
    raise AssertionError("the match did not end:\n" + fake.describe())


async def test_a_duel_is_played_entirely_in_the_group_by_people_who_never_pressed_start(
        tmp_path: Path) -> None:
    fake = emulator()
    ann, eve = fake.user(4201, "Ann"), fake.user(4203, "Eve")
    bob = fake.user(4202, "Борис", language_code="ru")
    group = fake.group(-1004201, "Friends", members=[ann, bob, eve])
    async with running_bot(tmp_path, fake, panels_in_group=True) as h:
        row = await start_group_duel(h, group, ann, bob, "duel tours=2 deal=short timer=off")
        assert not ann.chat.messages and not bob.chat.messages, "nobody pressed Start"
        users = {ann.id: ann, bob.id: bob}
        scan = LeakScan(fake, group, [ann, bob, eve])
        # A stranger and the player not to move press the board's button: a short answer
        # each, and no panel for either.
        stored = await h.services.flow.load(row.match_id)
        waiting = bob if stored.row.seats[stored.game.current_player].user_id == ann.id else ann
        board, button = open_button(fake, group) or (None, None)
        assert board is not None and button is not None, fake.describe()
        for other in (eve, waiting):
            query = other.press(board, data=button["callback_data"])
            await h.settle()
            answer = fake.answer(query)
            assert answer.text and ("not playing" in answer.text or "Not your turn" in
                                    answer.text or "не ваш" in answer.text.lower()
                                    or "не играете" in answer.text), answer.text
            assert not fake.ephemeral(group, other), "a panel for someone not to move"
        presses = await play_in_group(h, group, users, row.match_id, random.Random(42), scan,
                                      typed_every=5)
        await h.settle()
        final = await h.services.store.get_match(row.match_id)
        assert final.status.value == "finished", fake.describe()
        # Nothing went to a private chat: the whole match was in the group.
        assert not ann.chat.messages and not bob.chat.messages
        assert not [m for m in fake.sent(eve.chat)]
        # Every ephemeral message went to a player, the bystander got none.
        log = [m for m in fake.ephemeral_log(group) if m.from_bot]
        assert log and {m.receiver_id for m in log} <= {ann.id, bob.id}
        assert presses > 0 and scan.messages > 20
        print(f"\nin-group duel: {len(log)} ephemeral messages, {presses} panel opens, "
              f"{scan.messages} messages scanned, 0 leaks")


async def test_typed_ephemeral_commands_answer_their_sender_alone(tmp_path: Path) -> None:
    fake = emulator()
    ann, bob = fake.user(4211, "Ann"), fake.user(4212, "Bob")
    group = fake.group(-1004211, "Friends", members=[ann, bob])
    async with running_bot(tmp_path, fake, panels_in_group=True) as h:
        row = await start_group_duel(h, group, ann, bob, "duel tours=2 deal=short timer=off")
        stored = await h.services.flow.load(row.match_id)
        mover = ann if stored.row.seats[stored.game.current_player].user_id == ann.id else bob
        other = bob if mover is ann else ann
        public_before = len(fake.sent(group))
        # /hand: the hand, to its owner alone.
        mover.send_ephemeral(group, f"/hand@{BOT}")
        await h.settle()
        hand = await fake.wait_for_ephemeral(group, mover)
        seat = stored.row.seat_of(mover.id)
        assert seat is not None
        cards = stored.game.observation(seat).tour.hand
        assert any(str(card) in (hand.caption or hand.text or "") for card in cards) \
            or hand.kind == "photo", hand
        assert not fake.ephemeral(group, other)
        # /hint: a suggestion with its ▶ button, to its sender alone.
        mover.send_ephemeral(group, f"/hint@{BOT}")
        await h.settle()
        hint = await fake.wait_for_ephemeral(group, mover)
        assert hint.buttons() and hint.receiver_id == mover.id, hint
        assert not fake.ephemeral(group, other)
        # A refused move: said to its sender alone, never in public.
        mover.send_ephemeral(group, f"/play@{BOT} QC Z99")
        await h.settle()
        refusal = await fake.wait_for_ephemeral(group, mover)
        assert refusal.text and refusal.receiver_id == mover.id
        # The other player's typed move out of turn: answered to them alone.
        other.send_ephemeral(group, f"/pass@{BOT}")
        await h.settle()
        assert (await fake.wait_for_ephemeral(group, other)).text
        assert len(fake.sent(group)) == public_before, "a public answer to an ephemeral command"
        # A legal typed move: the board post is public, the echo private.
        move = next(a for a in stored.game.legal_actions() if isinstance(a, Place))
        made = len(stored.game.history)  # the flow keeps (and moves on) this very match
        mover.send_ephemeral(group, f"/play@{BOT} {move.card.code()} "
                                    f"{tour_frame(stored.game).label(move.x, move.y)}")
        await h.settle()
        echo = await fake.wait_for_ephemeral(group, mover)
        assert "✓" in (echo.text or "") or str(move.card) in (echo.text or echo.caption or "")
        after = await h.services.flow.load(row.match_id)
        assert len(after.game.history) > made
        assert len(fake.sent(group)) > public_before  # the board post


@pytest.mark.parametrize("admin", [True, False], ids=["admin", "member"])
async def test_a_2v2_with_the_exchange_is_played_in_the_group_pushed_where_the_bot_is_admin(
        tmp_path: Path, admin: bool) -> None:
    """Four people who never pressed Start play a 2 v 2 with the exchange in the group: an
    administrator bot pushes each panel on its turn (no press at all); a member bot's
    players open theirs from the board post and type some moves as ephemeral commands."""
    fake = emulator()
    people = [fake.user(4220 + i, name) for i, name in enumerate(("Ann", "Bob", "Cy", "Dee"))]
    group = fake.group(-1004220, "Four", members=people, bot_admin=admin)
    async with running_bot(tmp_path, fake, panels_in_group=True) as h:
        row = await start_group_match(h, group, people, "teams deal=3/3 exchange=1 timer=off")
        scan = LeakScan(fake, group, people)
        first = row.seats[(await h.services.flow.load(row.match_id)).game.current_player]
        first_panel = live_panel(fake, group, next(p for p in people if p.id == first.user_id))
        assert (first_panel is not None) is admin, "a panel comes unasked only from an admin"
        presses = await play_in_group(h, group, {p.id: p for p in people}, row.match_id,
                                      random.Random(7), scan, typed_every=0 if admin else 6)
        await h.settle()
        assert (await h.services.store.get_match(row.match_id)).status.value == "finished"
        assert (presses == 0) is admin, presses
        assert not any(p.chat.messages for p in people)
        log = [m for m in fake.ephemeral_log(group) if m.from_bot]
        public = list(fake.sent(group))
        print(f"\nin-group 2 v 2 ({'admin' if admin else 'member'}): {len(log)} ephemeral, "
              f"{len(public)} public messages, {presses} presses, {scan.messages} scanned, "
              "0 leaks")


async def test_a_refused_ephemeral_panel_falls_back_to_the_private_chat_or_its_link(
        tmp_path: Path) -> None:
    fake = emulator()
    ann, bob = fake.user(4231, "Ann"), fake.user(4232, "Bob")
    group = fake.group(-1004231, "Friends", members=[ann, bob])
    async with running_bot(tmp_path, fake, panels_in_group=True) as h:
        row = await start_group_duel(h, group, ann, bob, "duel tours=2 deal=short timer=off")
        stored = await h.services.flow.load(row.match_id)
        mover = ann if stored.row.seats[stored.game.current_player].user_id == ann.id else bob
        fake.ephemeral_window = -1.0  # every ephemeral answer comes too late
        found = open_button(fake, group)
        assert found is not None
        # Never pressed Start: the press opens the private chat's Start, which brings it.
        query = mover.press(found[0], data=found[1]["callback_data"])
        await h.settle()
        assert f"start=t{row.match_id}" in (fake.answer(query).url or ""), fake.answer(query)
        assert not fake.ephemeral(group, mover)
        mover.start_bot(f"t{row.match_id}")
        await h.settle()
        private = [m for m in fake.sent(mover.chat) if m.buttons()]
        assert private, "the panel in the private chat after Start"
        # Pressed Start already: the panel goes there at once, with a short note.
        query = mover.press(found[0], data=found[1]["callback_data"])
        await h.settle()
        assert "private chat" in (fake.answer(query).text or ""), fake.answer(query)
        # The admins were told once of the refused presses (and once of the refused pushes
        # of the deal: the bot is no administrator there).
        told = [m.text or "" for m in fake.sent(group) if "Admins:" in (m.text or "")]
        assert len([t for t in told if "did not let me" in t]) == 1, told
        assert len([t for t in told if "🃏 button" in t]) == 1, told
        newest = [m for m in fake.sent(mover.chat) if m.buttons()]
        assert newest and newest[-1].message_id > private[-1].message_id


async def test_after_a_restart_mid_turn_the_board_post_opens_the_panel_again(
        tmp_path: Path) -> None:
    fake = emulator()
    ann, bob = fake.user(4241, "Ann"), fake.user(4242, "Bob")
    group = fake.group(-1004241, "Friends", members=[ann, bob])
    async with running_bot(tmp_path, fake, panels_in_group=True) as h:
        row = await start_group_duel(h, group, ann, bob, "duel tours=2 deal=short timer=off")
        stored = await h.services.flow.load(row.match_id)
        mover = ann if stored.row.seats[stored.game.current_player].user_id == ann.id else bob
        found = open_button(fake, group)
        assert found is not None
        mover.press(found[0], data=found[1]["callback_data"])
        await h.settle()
        old = live_panel(fake, group, mover)
        assert old is not None
    fake.expire_ephemeral(group, mover)  # the app restarted too: the panel vanished
    async with running_bot(tmp_path, fake, panels_in_group=True) as h:
        found = open_button(fake, group)
        assert found is not None
        mover.press(found[0], data=found[1]["callback_data"])
        await h.settle()
        panel = live_panel(fake, group, mover)
        assert panel is not None and panel is not old
        assert await play_step_with_buttons(h, mover, random.Random(3), message=panel)
        await h.settle()
        after = await h.services.flow.load(row.match_id)
        assert len(after.game.history) >= 1
        # The older panel, pressed again (a stale one), changes nothing.
        assert old.ephemeral


async def test_a_press_in_a_group_whose_window_is_full_is_told_to_wait_not_flooded(
        tmp_path: Path) -> None:
    """Ephemeral writes count against the group's ~20 a minute (docs/ephemeral.md): when the
    window stays full longer than a press's answer may wait, the presser is told to press
    again, and nothing meets a 429; once the window has room the press opens the panel."""
    clock = FastClock()
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    fake.ephemeral_window = WINDOW
    ann, bob = fake.user(4251, "Ann"), fake.user(4252, "Bob")
    group = fake.group(-1004251, "Friends", members=[ann, bob])
    async with running_bot(tmp_path, fake, panels_in_group=True) as h:
        row = await start_group_duel(h, group, ann, bob, "duel tours=2 deal=short timer=off")
        stored = await h.services.flow.load(row.match_id)
        mover = ann if stored.row.seats[stored.game.current_player].user_id == ann.id else bob
        found = open_button(fake, group)
        assert found is not None
        # The group's window full for the next 30 seconds, as after Telegram's 429 (what
        # the rate limiter tells delivery then).
        h.services.delivery.flood_wait(group.id, 30.0)
        query = mover.press(found[0], data=found[1]["callback_data"])
        await h.settle()
        assert "busy" in (fake.answer(query).text or ""), fake.answer(query)
        assert not fake.ephemeral(group, mover)
        clock.advance(61)
        mover.press(found[0], data=found[1]["callback_data"])
        await h.settle()
        assert live_panel(fake, group, mover) is not None, fake.describe()
        assert not fake.rate_limited(group), "a 429 in the group"


async def test_an_older_panels_buttons_are_refused_as_private_ones_are(tmp_path: Path) -> None:
    """A press carrying an earlier position (an older ephemeral panel's button) changes
    nothing and says the panel is out of date."""
    fake = emulator()
    ann, bob = fake.user(4261, "Ann"), fake.user(4262, "Bob")
    group = fake.group(-1004261, "Friends", members=[ann, bob])
    async with running_bot(tmp_path, fake, panels_in_group=True) as h:
        row = await start_group_duel(h, group, ann, bob, "duel tours=2 deal=short timer=off")
        users = {ann.id: ann, bob.id: bob}
        rng = random.Random(9)
        old_buttons: list[str] = []
        for _ in range(2):  # two moves, each from a panel opened by its player
            stored = await h.services.flow.load(row.match_id)
            user = users[stored.row.seats[stored.game.current_player].user_id or 0]
            found = open_button(fake, group)
            assert found is not None
            user.press(found[0], data=found[1]["callback_data"])
            await h.settle()
            panel = live_panel(fake, group, user)
            assert panel is not None
            if user is ann and not old_buttons:
                old_buttons = [b["callback_data"] for b in panel.buttons()
                               if b.get("callback_data", "").startswith("v1:m:")]
            before = len(stored.game.history)
            while len((await h.services.flow.load(row.match_id)).game.history) == before:
                assert await play_step_with_buttons(h, user, rng, message=panel)
        stored = await h.services.flow.load(row.match_id)
        user = users[stored.row.seats[stored.game.current_player].user_id or 0]
        found = open_button(fake, group)
        assert found is not None and old_buttons
        user.press(found[0], data=found[1]["callback_data"])
        await h.settle()
        panel = live_panel(fake, group, user)
        assert panel is not None
        made = len(stored.game.history)
        query = user.press(panel, data=old_buttons[0], forged=True)
        await h.settle()
        assert "out of date" in (fake.answer(query).text or "") or "not valid" in (
            fake.answer(query).text or ""), fake.answer(query)
        assert len((await h.services.flow.load(row.match_id)).game.history) == made


async def test_the_exchange_is_typed_as_ephemeral_commands_in_the_group(tmp_path: Path) -> None:
    """``/exchange N`` and ``/discard CARD`` sent as ephemeral commands are played in the
    group (nobody saw the cards named), their answers to their sender alone."""
    fake = emulator()
    people = [fake.user(4270 + i, name) for i, name in enumerate(("Ann", "Bob", "Cy", "Dee"))]
    group = fake.group(-1004270, "Four", members=people)
    async with running_bot(tmp_path, fake, panels_in_group=True) as h:
        row = await start_group_match(h, group, people, "teams deal=3/3 exchange=1 timer=off")
        users = {p.id: p for p in people}
        public = len(fake.sent(group))
        discarded = 0
        for _ in range(12):
            stored = await h.services.flow.load(row.match_id)
            seat = stored.game.current_player
            user = users[stored.row.seats[seat].user_id or 0]
            legal = stored.game.legal_actions()
            names = {type(a).__name__ for a in legal}
            if "Announce" in names:
                user.send_ephemeral(group, f"/exchange@{BOT} 1")
            elif "Discard" in names:
                card = next(a.card for a in legal if type(a).__name__ == "Discard")
                user.send_ephemeral(group, f"/discard@{BOT} {card.code()}")
                discarded += 1
            else:
                break
            await h.settle()
        assert discarded, "nobody gave a card away"
        history = (await h.services.flow.load(row.match_id)).game.history
        assert any(type(a).__name__ == "Discard" for a in history), history
        # The group saw no card: its only new posts are boards and summaries.
        for message in fake.sent(group)[public:]:
            assert "/discard" not in (message.text or ""), message
        assert not any(p.chat.messages for p in people)


async def test_an_in_group_duel_is_played_through_the_webhook(tmp_path: Path) -> None:
    """The webhook worker answers presses and ephemeral commands the same way: the panel is
    sent while the press's update is handled (before it is answered 200), the rest through
    the reply outbox."""
    from tests.webhook_harness import running_webhook_bot

    fake = emulator()
    ann, bob = fake.user(4281, "Ann"), fake.user(4282, "Bob")
    group = fake.group(-1004281, "Hooked", members=[ann, bob])
    async with running_webhook_bot(tmp_path, fake, panels_in_group=True) as h:
        row = await start_group_duel(h, group, ann, bob, "duel tours=2 deal=short timer=off")
        scan = LeakScan(fake, group, [ann, bob])
        presses = await play_in_group(h, group, {ann.id: ann, bob.id: bob}, row.match_id,
                                      random.Random(5), scan, typed_every=4)
        await h.settle()
        assert (await h.services.store.get_match(row.match_id)).status.value == "finished"
        assert presses > 0 and not ann.chat.messages and not bob.chat.messages
        assert not fake.calls_to("getUpdates"), "no polling in webhook mode"
        assert all(a.status == 200 for a in fake.webhook_attempts())
