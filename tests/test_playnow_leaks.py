"""Issue 40's leak scan of "Play now" matches, through the fake Bot API: strangers in a pool
duel (with the exchange) and a pool trio play out from their private panels, and after every
step each message that came to a player's private chat since the last look (the start, the
panels and their edits, the followed boards of the others' turns, the summary, the block's
answer) is scanned for a card another player still holds: in its text, caption and buttons,
and in the picture it was drawn from (a board drawn from the public view or the reader's own
seat's, a hand picture of the reader's own cards only)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chat.notices import BoardPicture, BoardPost, EditPanel, Send
from krendzu import Card
from storage import is_pool_chat
from tests.bot_harness import BOT, FastClock, Harness, play_step_with_buttons, running_bot
from tests.fakebot import FakeTelegram
from tests.fakebot.model import FakeUser, Message
from tests.test_playnow import POOL


@dataclass
class Drawn:
    """A picture the bot drew for a chat: the view it was drawn from, or a hand's cards."""

    chat_id: int
    viewer: int | None = None
    hand: tuple[Card, ...] = ()


@dataclass
class PrivateLeakScan:
    """What each player saw in their private chat, looked at after each step against the
    hands as they are then (a card played since is public, so each message is judged when
    it arrives, or when an edit changes it)."""

    fake: FakeTelegram
    people: list[FakeUser]
    seen: set[tuple[int, int, int]] = field(default_factory=set)
    drawn: list[Drawn] = field(default_factory=list)
    looked: int = 0
    messages: int = 0
    pictures: int = 0

    def spy_on(self, h: Harness) -> None:
        """Note every picture the bot's sender draws for a chat, then send it as it would:
        a message's (a panel, a hand), a panel's edit, a followed board's."""
        sender = h.services.delivery.sender
        send, edit, follow = sender.send, sender.edit_panel, sender._follow_board

        async def sending(notice: Send, **options: Any) -> Any:
            self.note(notice.chat_id, notice.picture, notice.hand)
            return await send(notice, **options)

        async def editing(notice: EditPanel, *, answer: bool = False) -> None:
            self.note(notice.user_id, notice.picture, None)
            await edit(notice, answer=answer)

        async def following(notice: BoardPost) -> None:
            self.note(notice.chat_id, notice.picture, None)
            await follow(notice)

        sender.send, sender.edit_panel = sending, editing  # type: ignore[method-assign]
        sender._follow_board = following  # type: ignore[method-assign]

    def note(self, chat_id: int, picture: BoardPicture | None,
             hand: tuple[Card, ...] | None) -> None:
        if picture is not None:
            self.drawn.append(Drawn(chat_id, viewer=picture.view.viewer))
        if hand:
            self.drawn.append(Drawn(chat_id, hand=tuple(hand)))

    async def check(self, h: Harness, match_id: int) -> None:
        stored = await h.services.flow.load(match_id)
        game = stored.game
        public = {Card(code) for tour in game.tours[:game.tour_index]
                  for code, _cell in tour.placed}
        hands: dict[int, set[Card]] = {}
        seats: dict[int, int] = {}
        for seat in stored.row.seats:
            if seat.user_id is not None:
                seats[seat.user_id] = seat.seat
                if not game.is_over:
                    hands[seat.user_id] = set(game.observation(seat.seat).tour.hand) - public
        for person in self.people:
            others = {card for user, cards in hands.items() if user != person.id
                      for card in cards}
            for message in self.fake.sent(person):
                version = (message.chat_id, message.message_id, len(message.edits))
                if version in self.seen:
                    continue
                self.seen.add(version)
                self.messages += 1
                words = words_of(message)
                named = [card.pretty() for card in others if card.pretty() in words]
                assert not named, f"{person} sees {named} of another hand in {words!r}"
        for drawn in self.drawn[self.looked:]:
            reader = next((p for p in self.people if p.id == drawn.chat_id), None)
            assert reader is not None or is_pool_chat(drawn.chat_id), drawn
            self.pictures += 1
            if reader is None:
                continue  # the pool's own chat: delivery drops it (nothing reaches Telegram)
            assert drawn.viewer in (None, seats.get(reader.id)), (
                f"{reader} was drawn seat {drawn.viewer}'s view")
            mine = hands.get(reader.id, set())
            others = {c for user, cards in hands.items() if user != reader.id for c in cards}
            assert not set(drawn.hand) & others - mine, f"{reader} was drawn {drawn.hand}"
        self.looked = len(self.drawn)


def words_of(message: Message) -> str:
    return " ".join([message.text or "", message.caption or "",
                     *(str(b.get("text", "")) for b in message.buttons())])


async def play_scanned(h: Harness, users: list[FakeUser], scan: PrivateLeakScan,
                       rng: random.Random, *, tours: int | None = None) -> int:
    """Play the pool match of ``users`` out from the panels (or its first ``tours`` tours)
    with the scan after every step; the match's id."""
    store = h.services.store
    row = (await store.matches_of_user(users[0].id))[0]
    assert is_pool_chat(row.chat_id)
    await scan.check(h, row.match_id)  # the start and the first panels
    for _ in range(800):
        if (await store.get_match(row.match_id)).status.value != "active":
            break
        if tours is not None and (await h.services.flow.load(row.match_id)
                                  ).game.tour_index >= tours:
            break
        for user in users:
            if await play_step_with_buttons(h, user, rng):
                break
        else:
            await h.settle()
            continue
        await h.settle()
        await scan.check(h, row.match_id)
    else:
        raise AssertionError("the match did not end:\n" + h.fake.describe())
    await h.settle()
    await scan.check(h, row.match_id)  # the summaries
    return row.match_id


async def queued(h: Harness, fake: FakeTelegram, users: list[FakeUser], command: str
                 ) -> PrivateLeakScan:
    """The scan watching, each of ``users`` opens the private chat and sends ``command``:
    the pool seats them."""
    scan = PrivateLeakScan(fake, users)
    scan.spy_on(h)
    for user in users:
        user.start_bot()
    await h.settle()
    for user in users:
        user.send(user.chat, command)
        await h.settle()
    return scan


async def test_no_message_of_a_pool_duel_shows_a_player_the_other_hand(
        tmp_path: Path) -> None:
    """A duel with the exchange, played out: the start, panels, summaries and the block."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    names = ("Ann", "Bob")
    users = [fake.user(4301 + i, name) for i, name in enumerate(names)]
    async with running_bot(tmp_path, fake, **{**POOL, "pool_match": "tours=2 deal=3/3 "
                                              "exchange=1 timer=off"}) as h:
        scan = await queued(h, fake, users, "/playnow")
        match_id = await play_scanned(h, users, scan, random.Random(11))
        assert (await h.services.store.get_match(match_id)).status.value == "finished"
        # The block's answer (a toast over the summary, naming the others only).
        last = users[-1]
        summary = next(m for m in reversed(fake.sent(last))
                       if any(b["text"] == "🚫 Block" for b in m.buttons()))
        query = last.press(summary, data=next(b["callback_data"] for b in summary.buttons()
                                              if b["text"] == "🚫 Block"))
        await h.settle()
        await scan.check(h, match_id)
        assert (fake.answer(query).text or "").startswith("Blocked:")
        # Every kind of message was looked at: the start, panels, the others' turns.
        for user in users:
            seen = [words_of(m) for m in fake.sent(user)]
            assert any("Opponent found" in t for t in seen)
            assert any("Your hand" in t for t in seen)
        assert scan.messages > 20 and scan.pictures > 10, (scan.messages, scan.pictures)
        print(f"\npool duel: {scan.messages} messages and {scan.pictures} pictures "
              "scanned, 0 leaks")


async def test_no_message_of_a_pool_trio_shows_a_player_another_hand(tmp_path: Path) -> None:
    """A trio's first tour and its summary (its six tours would cost the suite half a
    minute): each player follows the other two's turns on boards of the public view."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    users = [fake.user(4311 + i, name) for i, name in enumerate(("Ann", "Bob", "Cy"))]
    async with running_bot(tmp_path, fake, **POOL) as h:
        scan = await queued(h, fake, users, "/playnow trio")
        match_id = await play_scanned(h, users, scan, random.Random(11), tours=1)
        assert (await h.services.flow.load(match_id)).game.tour_index == 1
        for user in users:
            follows = [m for m in fake.sent(user) if m.kind == "photo" and not m.buttons()]
            assert follows, f"{user.first_name} never saw the others' turns"
        assert scan.messages > 20 and scan.pictures > 20, (scan.messages, scan.pictures)
        print(f"\npool trio, first tour: {scan.messages} messages and {scan.pictures} "
              "pictures scanned, 0 leaks")
