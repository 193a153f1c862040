"""Issue 40, "Play now": a rated opponent from anywhere, driven through the fake Bot API as
strangers would use it: each in their own private chat, paired by the pool, playing the duel
out with the panel's buttons, never seeing the other's cards, name handle or link; the
computer offered after the wait; a block that keeps two people apart; one entry a person;
and /playnow within the per-person limits."""

from __future__ import annotations

import random
import re
from pathlib import Path

from chat.standings import POOL_SCOPE
from krendzu import Card
from storage import is_pool_chat
from tests.bot_harness import (
    BOT,
    FastClock,
    panel,
    play_out_with_buttons,
    play_step_with_buttons,
    running_bot,
)
from tests.fakebot import FakeTelegram
from tests.fakebot.model import FakeUser, Message

#: Quick pool matches: two short tours, no exchange, no turn timer (the fast clock would
#: time the players out), no computer offer unless a test waits for it; groups open their
#: panels in the group, as the bot's default does (a pool match's panels stay private).
POOL = {"pool_match": "tours=2 deal=3/3 exchange=0 timer=off",
        "pool_computer_seconds": 3600.0, "panels_in_group": True}
HAND = re.compile(r"Your hand \(\d+ cards?\): (.+)")


def texts(fake: FakeTelegram, user: FakeUser) -> list[str]:
    """Everything the bot showed ``user`` in their private chat: texts, captions, buttons."""
    out = []
    for message in fake.sent(user):
        out.append(message.text or message.caption or "")
        out += [str(b.get("text", "")) + " " + str(b.get("url", "")) for b in message.buttons()]
    return out


def pool_button(message: Message, marker: str) -> dict:
    return next(b for b in message.buttons()
                if b.get("callback_data", "").startswith("v1:l:0:pool") and marker in b["text"])


async def test_two_strangers_are_paired_and_play_the_duel_out_each_in_private(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(4001, "Ann", username="ann_handle")
    bob = fake.user(4002, "Bob", username="bob_handle")
    async with running_bot(tmp_path, fake, **POOL) as h:
        store = h.services.store
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        # The greeting's button queues Ann; Bob types /playnow: the pool pairs them at once.
        greeting = fake.last(ann)
        assert greeting is not None
        ann.press(greeting, data=pool_button(greeting, "Play now")["callback_data"])
        await h.settle()
        assert [e.user_id for e in await store.pool_entries()] == [ann.id]
        assert "Looking for an opponent" in (fake.last(ann).text or "")  # type: ignore[union-attr]
        bob.send(bob.chat, "/playnow")
        await h.settle()
        assert await store.pool_entries() == []
        rows = await store.matches_of_user(ann.id)
        assert len(rows) == 1 and is_pool_chat(rows[0].chat_id)
        row = rows[0]
        assert {s.user_id for s in row.seats} == {ann.id, bob.id}
        assert any("Opponent found: Bob (rating 1000)" in t for t in texts(fake, ann))
        assert any("Opponent found: Ann (rating 1000)" in t for t in texts(fake, bob))
        assert panel(fake, ann) or panel(fake, bob), "the player to move has a panel"
        await play_out_with_buttons(h, [ann, bob], row.match_id, random.Random(3))
        await h.settle()
        finished = await store.get_match(row.match_id)
        assert finished.status.value == "finished"
        game = (await h.services.flow.games.load(row.match_id)).game
        # Each player's summary comes privately, with 🚫 Block under it.
        for user in (ann, bob):
            final = [m for m in fake.sent(user) if "The match is over" in (m.text or "")
                     or "Your Play now match" in (m.text or "")]
            assert final and any(b["text"] == "🚫 Block" for b in final[-1].buttons())
        # Never a username or a link to the other; nothing sent to the pool's own chat.
        assert not any("bob_handle" in t or "tg://" in t for t in texts(fake, ann))
        assert not any("ann_handle" in t or "tg://" in t for t in texts(fake, bob))
        assert not [c for c in fake.calls if c.chat_id == row.chat_id]
        # Neither saw the other's cards: every hand shown is within that player's own hand
        # of one tour (no exchange: a hand only shrinks).
        for user in (ann, bob):
            seat = row.seat_of(user.id)
            assert seat is not None
            dealt = [{Card(c) for c in tour.initial_hands[seat]} for tour in game.tours]
            shown = [HAND.search(t) for t in texts(fake, user)]
            hands = [{Card.parse(c) for c in m.group(1).split()} for m in shown if m]
            assert hands, f"no hand shown to {user.first_name}"
            for hand in hands:
                assert any(hand <= mine for mine in dealt), (user.first_name, hand)
        # The match counts in both players' statistics and ratings.
        for user in (ann, bob):
            stats = await store.user_stats(user.id)
            assert stats is not None and stats.matches == 1
        assert set(await store.ratings_of([ann.id, bob.id])) == {ann.id, bob.id}


async def test_one_person_waits_once_and_playnow_again_leaves_the_queue(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(4011, "Ann")
    async with running_bot(tmp_path, fake, **POOL) as h:
        store = h.services.store
        ann.start_bot()
        await h.settle()
        ann.send(ann.chat, "/playnow")
        await h.settle()
        waiting = fake.last(ann)
        assert waiting is not None
        greeting = next(m for m in fake.sent(ann) if "Play now" in str(m.buttons()))
        # The greeting's button pressed while waiting: still one entry (it toggles, as
        # /playnow again does), and the "Leave the queue" button takes her out.
        ann.press(greeting, data=pool_button(greeting, "Play now")["callback_data"])
        await h.settle()
        assert await store.pool_entries() == []
        ann.send(ann.chat, "/playnow")
        await h.settle()
        assert len(await store.pool_entries()) == 1
        leave = fake.last(ann)
        assert leave is not None
        ann.press(leave, data=pool_button(leave, "Leave the queue")["callback_data"])
        await h.settle()
        assert await store.pool_entries() == []
        ann.send(ann.chat, "/playnow")
        await h.settle()
        ann.send(ann.chat, "/playnow")
        await h.settle()
        assert await store.pool_entries() == []
        assert "You left the queue." in texts(fake, ann)
        # In a group, /playnow points to the private chat and queues nobody.
        group = fake.group(-1004011, "Friends")
        ann.send(group, f"/playnow@{BOT}")
        await h.settle()
        assert "private chat" in (fake.last(group).text or "")  # type: ignore[union-attr]
        assert await store.pool_entries() == []


async def test_a_long_wait_is_offered_a_computer_of_similar_strength(tmp_path: Path) -> None:
    clock = FastClock()
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann = fake.user(4021, "Ann")
    async with running_bot(tmp_path, fake, timer_tick=0.05,
                           **{**POOL, "pool_computer_seconds": 30.0}) as h:
        store = h.services.store
        ann.start_bot()
        await h.settle()
        ann.send(ann.chat, "/playnow")
        await h.settle()
        assert not any("Play the computer" in t for t in texts(fake, ann))
        clock.advance(31)
        for _ in range(100):
            await h.settle()
            if any("Play the computer" in t for t in texts(fake, ann)):
                break
        offer = next(m for m in fake.sent(ann) if "Nobody of your strength" in (m.text or ""))
        # A newcomer (1000 on the pool's scale) is offered the normal level (1000).
        assert "🤖 Normal, rating 1000" in (offer.text or ""), offer.text
        entry = await store.pool_entry(ann.id)
        assert entry is not None and entry.offered == "normal"
        for _ in range(5):  # one offer a wait, however many ticks pass
            await h.settle()
        assert len([m for m in fake.sent(ann) if "Nobody of your strength" in (m.text or "")
                    ]) == 1
        ann.press(offer, data=pool_button(offer, "Play the computer")["callback_data"])
        await h.settle()
        assert await store.pool_entries() == []
        row = await store.active_match(ann.id)
        assert row is not None
        assert [s.kind.value for s in row.seats] == ["human", "computer"]
        assert row.seats[1].level == 2
        # The offer pressed again starts nothing more.
        ann.press(offer, data=pool_button(offer, "Play the computer")["callback_data"])
        await h.settle()
        assert len(await store.matches_of_user(ann.id)) == 1


async def test_a_block_after_the_game_keeps_the_two_apart(tmp_path: Path) -> None:
    clock = FastClock()
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann, bob = fake.user(4031, "Ann"), fake.user(4032, "Bob")
    cy = fake.user(4033, "Cy")
    async with running_bot(tmp_path, fake, **POOL) as h:
        store = h.services.store
        for user in (ann, bob, cy):
            user.start_bot()
        await h.settle()
        ann.send(ann.chat, "/playnow")
        await h.settle()
        bob.send(bob.chat, "/playnow")
        await h.settle()
        row = (await store.matches_of_user(ann.id))[0]
        await play_out_with_buttons(h, [ann, bob], row.match_id, random.Random(8))
        await h.settle()
        summary = next(m for m in reversed(fake.sent(bob))
                       if any(b["text"] == "🚫 Block" for b in m.buttons()))
        block = next(b for b in summary.buttons() if b["text"] == "🚫 Block")
        # A stranger's forged press changes nothing.
        cy.press(summary, data=block["callback_data"])
        await h.settle()
        assert await store.blocks_among([cy.id]) == {}
        bob.press(summary, data=block["callback_data"])
        await h.settle()
        assert await store.blocks_among([bob.id]) == {bob.id: {ann.id}, ann.id: {bob.id}}
        # Both queue again: never paired, however long they wait; Cy comes and meets one.
        ann.send(ann.chat, "/playnow")
        await h.settle()
        bob.send(bob.chat, "/playnow")
        await h.settle()
        clock.advance(200)  # their windows now take in any rating: the block alone parts them
        h.services.delivery.run(await h.services.flow.pool.tick())
        await h.settle()
        assert {e.user_id for e in await store.pool_entries()} == {ann.id, bob.id}
        assert len(await store.matches_of_user(ann.id, status=None)) == 1
        cy.send(cy.chat, "/playnow")
        await h.settle()
        for _ in range(20):  # the game moved their ratings: Cy's window widens until one fits
            if not await store.pool_entry(cy.id):
                break
            clock.advance(5)
            h.services.delivery.run(await h.services.flow.pool.tick())
            await h.settle()
        assert len(await store.pool_entries()) == 1
        assert len(await store.matches_of_user(cy.id)) == 1


async def test_playnow_has_the_per_person_limits(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=1.0))
    ann = fake.user(4041, "Ann")
    async with running_bot(tmp_path, fake, info_per_user=3.0, **POOL) as h:
        ann.start_bot()
        await h.settle()
        before = len(fake.sent(ann))
        for _ in range(8):
            ann.send(ann.chat, "/playnow")
        await h.settle()
        answers = fake.sent(ann)[before:]
        # Three toggles go through (in, out, in); the rest are dropped, with one warning.
        assert sum("Looking for an opponent" in (m.text or "") for m in answers) == 2
        assert sum((m.text or "") == "You left the queue." for m in answers) == 1
        assert len(answers) == 4, [m.text for m in answers]
        assert len(await h.services.store.pool_entries()) == 1


async def test_abandoning_a_pool_match_costs_timeouts_and_counts_in_the_statistics(
        tmp_path: Path) -> None:
    clock = FastClock(speed=1.0)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann, bob = fake.user(4051, "Ann"), fake.user(4052, "Bob")
    async with running_bot(tmp_path, fake, timer_tick=0.05,
                           **{**POOL, "pool_match": "tours=2 deal=short exchange=0 timer=30"}
                           ) as h:
        store, flow = h.services.store, h.services.flow
        for user in (ann, bob):
            user.start_bot()
        await h.settle()
        ann.send(ann.chat, "/playnow")
        await h.settle()
        bob.send(bob.chat, "/playnow")
        await h.settle()
        row = (await store.matches_of_user(ann.id))[0]
        ann_seat = row.seat_of(ann.id)
        rng = random.Random(4)
        for _ in range(600):
            if (await store.get_match(row.match_id)).status.value != "active":
                break
            stored = await flow.games.load(row.match_id)
            if stored.game.current_player == ann_seat:
                clock.advance(31)  # Ann walked away: her turn times out
                await h.settle()
            elif not await play_step_with_buttons(h, bob, rng):
                await h.settle()
        else:
            raise AssertionError("the match did not end:\n" + fake.describe())
        await h.settle()
        assert (await store.get_match(row.match_id)).status.value == "finished"
        # Each player is told privately (a pool match has no group): the timeouts, then
        # that the computer keeps Ann's seat.
        for user in (ann, bob):
            told = [t for t in texts(fake, user) if "Ann ran out of time" in t]
            assert len(told) == 2 and "keeps the seat" in told[-1], told
        for user in (ann, bob):
            stats = await store.user_stats(user.id)
            assert stats is not None and stats.matches == 1
        # /top pool: the leaderboard of pool matches (asked for that scope, not the chat's).
        bob.send(bob.chat, "/top pool")
        await h.settle()
        assert fake.last(bob).kind == "photo"  # type: ignore[union-attr]
        leaders, total = h.services.standings.leaders.get(POOL_SCOPE)  # type: ignore[misc]
        assert total == 2 and {r.name for r in leaders} == {"Ann", "Bob"}


async def test_who_leaves_or_comes_back_is_told_to_the_other_player_in_their_language(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(4061, "Аня", language_code="ru")
    bob = fake.user(4062, "Боря", language_code="ru")
    async with running_bot(tmp_path, fake, **POOL) as h:
        for user in (ann, bob):
            user.start_bot()
        await h.settle()
        ann.send(ann.chat, "/playnow")
        await h.settle()
        bob.send(bob.chat, "/playnow")
        await h.settle()
        ann.send(ann.chat, "/leave")
        await h.settle()
        assert any(t.startswith("Аня выходит из-за стола") for t in texts(fake, bob)), \
            texts(fake, bob)[-5:]
        ann.send(ann.chat, "/back")
        await h.settle()
        assert "Аня снова в игре." in texts(fake, bob)


async def test_three_strangers_play_a_trio_and_the_third_follows_the_others_turns(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    users = [fake.user(4071 + i, name) for i, name in enumerate(("Ann", "Bob", "Cy"))]
    async with running_bot(tmp_path, fake, **POOL) as h:  # a trio's own 6 tours
        store = h.services.store
        for user in users:
            user.start_bot()
        await h.settle()
        for user in users:
            user.send(user.chat, "/playnow trio")
            await h.settle()
        assert await store.pool_entries() == []
        row = (await store.matches_of_user(users[0].id))[0]
        assert is_pool_chat(row.chat_id) and row.table.value == "trio-lone-attacker"
        assert any("Your table: " in t for t in texts(fake, users[0]))
        await play_out_with_buttons(h, users, row.match_id, random.Random(2))
        await h.settle()
        assert (await store.get_match(row.match_id)).status.value == "finished"
        assert not [c for c in fake.calls if c.chat_id == row.chat_id]
        game = (await h.services.flow.games.load(row.match_id)).game
        for user in users:
            # Followed boards: the public board with the others' moves, no hand, no buttons.
            follows = [m for m in fake.sent(user) if m.kind == "photo" and not m.buttons()
                       and "Your hand" not in (m.caption or "")]
            assert follows, f"{user.first_name} never saw the others' turns"
            seat = row.seat_of(user.id)
            assert seat is not None
            dealt = [{Card(c) for c in tour.initial_hands[seat]} for tour in game.tours]
            hands = [{Card.parse(c) for c in m.group(1).split()}
                     for m in (HAND.search(t) for t in texts(fake, user)) if m]
            assert hands and all(any(hand <= mine for mine in dealt) for hand in hands)
            assert (await store.user_stats(user.id)).matches == 1  # type: ignore[union-attr]


async def test_four_strangers_sit_at_a_teams_table_strongest_with_weakest(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    users = [fake.user(4081 + i, name) for i, name in enumerate(("Ann", "Bob", "Cy", "Dee"))]
    async with running_bot(tmp_path, fake, **POOL) as h:
        store = h.services.store
        for user, mu in zip(users, (26.0, 25.5, 25.0, 24.5), strict=True):
            user.start_bot()
            await h.settle()
            await store._modify(  # four known strengths, 20 pool points apart
                "INSERT INTO ratings (user_id, mu, sigma, rated_matches, updated_at) "
                "VALUES (?, ?, 3.0, 5, 0)", (user.id, mu))
        for user in users:
            user.send(user.chat, "/playnow teams")
            await h.settle()
        assert await store.pool_entries() == []
        row = (await store.matches_of_user(users[0].id))[0]
        assert row.table.value == "teams"
        # Seats 1 and 3 against 2 and 4: Ann (1040) with Dee (980) against Bob and Cy.
        sides = {frozenset(row.seats[s].user_id for s in side) for side in row.table.sides}
        assert sides == {frozenset({users[0].id, users[3].id}),
                         frozenset({users[1].id, users[2].id})}
        assert any("Your partner: Dee." in t for t in texts(fake, users[0]))


async def test_a_wait_ends_after_ten_minutes(tmp_path: Path) -> None:
    clock = FastClock(speed=1.0)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann = fake.user(4091, "Ann")
    async with running_bot(tmp_path, fake, timer_tick=0.05, **POOL) as h:
        ann.start_bot()
        await h.settle()
        ann.send(ann.chat, "/playnow")
        await h.settle()
        clock.advance(590)
        await h.settle()
        assert len(await h.services.store.pool_entries()) == 1
        clock.advance(20)
        for _ in range(50):
            await h.settle()
            if not await h.services.store.pool_entries():
                break
        await h.settle()  # the tick that took her out tells her once it has ticked all
        assert await h.services.store.pool_entries() == []
        told = [m for m in fake.sent(ann) if "Nobody was found within 10 minutes" in
                (m.text or "")]
        assert len(told) == 1 and pool_button(told[0], "Play now")
