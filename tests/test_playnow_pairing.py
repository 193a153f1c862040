"""Issue 40's proof of the "Play now" pool's pairing, through the fake Bot API: ten people of
ten different ratings queue from their private chats one after another, and the pool seats
exactly the pairs the window rule of tournaments/pool.py gives by hand, nobody twice, and
nobody outside a window before that window has widened.

The pool's clock is held still here (and moved by hand), so that every wait, and so every
window, is known: ``window = 100 + 50 × ⌊waited / 5 s⌋``, and two people meet only when the
rating gap is within **both** windows (the smaller one), the longest-waiting person choosing
first, the nearest rating in their window.
"""

from __future__ import annotations

import re
from pathlib import Path

from storage import is_pool_chat
from tests.bot_harness import BOT, FastClock, Harness, running_bot
from tests.fakebot import FakeTelegram
from tests.fakebot.model import FakeUser
from tests.test_playnow import POOL, texts

#: Ten people and their ratings on the pool's scale (mu × 40: tests set mu = rating / 40).
RATINGS = {"Ann": 1000, "Bob": 1300, "Cy": 1060, "Dee": 1380, "Eve": 700, "Hal": 850,
           "Fay": 1700, "Ivy": 790, "Jo": 990, "Kim": 1950}
#: Who queues when, in seconds of the pool's clock after the start (all before anyone has
#: waited 5 s into a wider window, except where the comments say).
JOINS = [("Ann", 0.0), ("Bob", 1.0), ("Cy", 2.0), ("Dee", 3.0), ("Eve", 4.0), ("Hal", 4.5),
         ("Fay", 5.0), ("Ivy", 6.0), ("Jo", 7.0), ("Kim", 8.0)]
START = 1_000_000.0


class StillClock:
    """The pool's clock, moved only by the test (the bot's other clocks run as usual)."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


async def seated(h: Harness, people: dict[str, FakeUser]) -> list[frozenset[str]]:
    """Every pool match started so far, as the set of its players' names (one entry a
    match, however many of its players list it)."""
    names = {user.id: name for name, user in people.items()}
    matches = {}
    for user in people.values():
        for row in await h.services.store.matches_of_user(user.id, status=None):
            assert is_pool_chat(row.chat_id)
            matches[row.match_id] = frozenset(names[s.user_id] for s in row.seats
                                              if s.user_id is not None)
    return list(matches.values())


async def tick_at(h: Harness, clock: StillClock, seconds: float) -> None:
    """The pool's tick (the job queue's, here called by hand) at ``seconds`` after the start."""
    clock.now = START + seconds
    h.services.delivery.run(await h.services.flow.pool.tick())
    await h.settle()


async def test_ten_people_are_paired_within_their_rating_windows(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    people = {name: fake.user(4101 + i, name) for i, name in enumerate(RATINGS)}
    clock = StillClock()
    async with running_bot(tmp_path, fake, **POOL) as h:
        store = h.services.store
        h.services.flow.pool.clock = clock
        for name, user in people.items():
            user.start_bot()
            await h.settle()
            await store._modify(
                "INSERT INTO ratings (user_id, mu, sigma, rated_matches, updated_at) "
                "VALUES (?, ?, 3.0, 5, 0)", (user.id, RATINGS[name] / 40))
        waiting: list[set[str]] = []
        for name, at in JOINS:
            clock.now = START + at
            people[name].send(people[name].chat, "/playnow")
            await h.settle()
            waiting.append({e_name for e_name, user in people.items()
                            if await store.pool_entry(user.id) is not None})
        # By hand, every window 100 (nobody has waited 5 s yet when someone joins):
        # 0 s Ann 1000 waits; 1 s Bob 1300 (300 from Ann) waits;
        # 2 s Cy 1060: 60 from Ann → Ann + Cy;  3 s Dee 1380: 80 from Bob → Bob + Dee;
        # 4 s Eve 700 waits; 4.5 s Hal 850 (150 from Eve) waits; 5 s Fay 1700 waits;
        # 6 s Ivy 790: 90 from Eve, 60 from Hal: Eve has waited longest and chooses first,
        #   and Ivy is in her window → Eve + Ivy, though Hal is nearer;
        # 7 s Jo 990: 140 from Hal → waits;  8 s Kim 1950: 250 from Fay → waits.
        assert waiting == [{"Ann"}, {"Ann", "Bob"}, {"Bob"}, set(), {"Eve"}, {"Eve", "Hal"},
                           {"Eve", "Hal", "Fay"}, {"Hal", "Fay"}, {"Hal", "Fay", "Jo"},
                           {"Hal", "Fay", "Jo", "Kim"}]
        assert set(await seated(h, people)) == {
            frozenset({"Ann", "Cy"}), frozenset({"Bob", "Dee"}), frozenset({"Eve", "Ivy"})}
        # Each is told whom they meet, by name and pool rating only.
        assert any("Opponent found: Cy (rating 1060)." in t for t in texts(fake, people["Ann"]))
        assert any("Opponent found: Ivy (rating 790)." in t for t in texts(fake, people["Eve"]))
        # The windows widen. At 11.9 s Hal (waited 7.4 s) accepts 150 and Jo (4.9 s) still
        # 100: 140 apart, they wait. At 12 s Jo's window is 150 too → Hal + Jo.
        await tick_at(h, clock, 11.9)
        assert len(await seated(h, people)) == 3
        await tick_at(h, clock, 12.0)
        assert set(await seated(h, people)) == {
            frozenset({"Ann", "Cy"}), frozenset({"Bob", "Dee"}), frozenset({"Eve", "Ivy"}),
            frozenset({"Hal", "Jo"})}
        # Fay and Kim, 250 apart, need three widenings each: Kim (joined at 8 s) has them at
        # 23 s; at 22.9 s her window is 200 while Fay's is already 250.
        await tick_at(h, clock, 22.9)
        assert len(await seated(h, people)) == 4
        assert {e.user_id for e in await store.pool_entries()} == {people["Fay"].id,
                                                                 people["Kim"].id}
        await tick_at(h, clock, 23.0)
        final = await seated(h, people)
        assert set(final) == {
            frozenset({"Ann", "Cy"}), frozenset({"Bob", "Dee"}), frozenset({"Eve", "Ivy"}),
            frozenset({"Hal", "Jo"}), frozenset({"Fay", "Kim"})}
        # Nobody sat twice: five duels, ten seats, ten different people; the pool is empty.
        assert len(final) == 5 and sorted(n for m in final for n in m) == sorted(RATINGS)
        assert await store.pool_entries() == []
        for name, user in people.items():
            found = [t for t in texts(fake, user) if re.match(r"⚡ Opponent found", t)]
            assert len(found) == 1, (name, found)
