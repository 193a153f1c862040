"""Spectators (issue 40, section 4): the "👀 Watch" link of group and pool matches, a pool
match's players turning it off, and what a stranger holding the link gets from the Mini
App's API: the public board and never an unplayed card, then, once a player turned the link
off, nothing of the match at all."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from chat.flow.views.codec import watch_off_data
from krendzu import Settings, Table
from storage import MatchRow, SeatSpec, Store, pool_chat_id
from tests.bot_harness import play_out_with_buttons, play_step_with_buttons
from tests.fakebot import FakeTelegram, FakeUser, Message
from tests.miniapp_harness import (
    CARD,
    POOL,
    AppBot,
    app_bot,
    assert_secret,
    group_duel,
    hidden_from,
    init_data,
    new_fake,
    play_token,
    pool_duel,
    start_message,
    watch_token,
)


async def test_a_match_closed_to_spectators_stays_closed(store: Store) -> None:
    """The first player who turns the link off is kept; a second press changes nothing, and
    the other matches stay open (both backends)."""
    for user_id, name in ((1, "Ann"), (2, "Bob")):
        await store.upsert_user(user_id, name)
    first, second = [await store.create_match(pool_chat_id(n), Settings(table=Table.DUEL),
                                              [SeatSpec.human(1), SeatSpec.human(2)], seed=n)
                     for n in (1, 2)]
    assert not await store.watch_is_off(first.match_id)
    assert await store.turn_watch_off(first.match_id, 2)
    assert not await store.turn_watch_off(first.match_id, 1)
    assert await store.watch_is_off(first.match_id)
    assert not await store.watch_is_off(second.match_id)
    found = await store._query("SELECT user_id FROM watch_off", (), lambda r: r["user_id"])
    assert found == [2]


# The links and the Mini App ------------------------------------------------------------------

STATE = "/api/app/v1/match/{}"
ACTIONS = ("/api/app/v1/match/{}/move", "/api/app/v1/match/{}/hint",
           "/api/app/v1/match/{}/resign")


async def stranger_sees(a: AppBot, token: str, stranger: FakeUser, match_id: int) -> None:
    """Every answer the Mini App gives a stranger holding the link: the public board, no
    unplayed card of any player (checked against the game state at that moment), and each
    action refused."""
    init = init_data(a.h.fake, stranger)
    answer = await a.get(STATE.format(token), init)
    stored = await a.h.services.flow.load(match_id)
    assert answer.status_code == 200, answer.text
    state = answer.json()
    assert state["seat"] is None and state["view"]["tour"]["hand"] == []
    assert_secret(state, stored, None)
    unplayed = hidden_from(stored, None)
    for path in ACTIONS:
        refused = await a.post(path.format(token), init, {"seq": stored.next_seq,
                                                          "actions": ["pass"]})
        assert refused.status_code == 403 and refused.json()["code"] == "not_seated"
        assert not set(CARD.findall(refused.text)) & unplayed, refused.text


async def test_a_group_board_post_offers_play_and_watch_in_one_button(tmp_path: Path) -> None:
    """The group's post keeps one link button: players open their hand with it, anyone else
    the public board; a group match has no 🙈 (the group's business), forged or not."""
    fake = new_fake()
    ann, bob, carl = fake.user(21, "Ann"), fake.user(22, "Bob"), fake.user(23, "Carl")
    group = fake.group(-100121, "Friends")
    async with app_bot(tmp_path, fake) as a:
        row = await group_duel(a.h, group, ann, bob)
        post = fake.last(group)
        assert post is not None
        links = [b for b in post.buttons() if "startapp=" in b.get("url", "")]
        assert [b["text"] for b in links] == ["▶ Play · 👀 Watch"], post.buttons()
        token = play_token(post)
        assert a.h.services.flow.broadcast.app.match_of(token) == row.match_id  # type: ignore[union-attr]
        await stranger_sees(a, token, carl, row.match_id)
        refused = await a.get(STATE.format(token[:-1] + ("A" if token[-1] != "A" else "B")),
                              init_data(fake, carl))
        assert refused.status_code == 404 and refused.json()["code"] == "unknown_match"
        carl.start_bot()
        await a.h.settle()
        ann.press(fake.last(ann) or post, data=watch_off_data(row.match_id), forged=True)
        await a.h.settle()
        assert not await a.h.services.store.watch_is_off(row.match_id)
        await stranger_sees(a, token, carl, row.match_id)


async def test_a_stranger_with_a_pool_matchs_link_sees_no_hand_and_nothing_once_closed(
        tmp_path: Path) -> None:
    """Each pool player gets the watch link; a stranger holding it sees the public board
    after every move and never an unplayed card; 🙈 by one player closes the match to
    spectators for good: the stranger (a waiting long poll too) then gets a polite refusal
    and nothing of the match, a guessed token the unknown-match answer, the players their
    own view as before; the link is offered nowhere after, and a restart keeps it closed."""
    fake = new_fake()
    ann, bob = fake.user(4101, "Ann"), fake.user(4102, "Bob")
    carl = fake.user(4103, "Carl")  # a friend of nobody here: holds the link
    async with app_bot(tmp_path, fake, **POOL) as a:
        row = await pool_duel(a, ann, bob)
        tokens = {watch_token(start_message(fake, user)) for user in (ann, bob)}
        assert len(tokens) == 1
        token = tokens.pop()
        assert a.h.services.flow.broadcast.app.match_of(token) == row.match_id  # type: ignore[union-attr]
        assert all("Friends may watch" in (start_message(fake, u).text or "") for u in (ann, bob))
        rng = random.Random(40)
        await stranger_sees(a, token, carl, row.match_id)
        for _ in range(4):  # part of a match, the stranger looking after every step
            for user in (ann, bob):
                if await play_step_with_buttons(a.h, user, rng):
                    break
            await a.h.settle()
            await stranger_sees(a, token, carl, row.match_id)
        # Carl waits for the next move (the page's long poll) while Ann turns the link off.
        stored = await a.h.services.flow.load(row.match_id)
        waiting = asyncio.create_task(a.get(STATE.format(token), init_data(fake, carl),
                                            after=stored.next_seq))
        await asyncio.sleep(0.5)
        assert not waiting.done()
        offer = start_message(fake, ann)
        sent_before = {u.id: len(fake.sent(u)) for u in (ann, bob)}
        query = ann.press(offer, text="🙈 Turn the watch link off")
        await a.h.settle()
        answer = fake.answer(query)
        assert answer.text and "watch link is off" in answer.text and answer.show_alert
        assert await a.h.services.store.watch_is_off(row.match_id)
        assert any("Ann turned the watch link off" in (m.text or "")
                   for m in fake.sent(bob)[sent_before[bob.id]:])
        woken = await asyncio.wait_for(waiting, 5)
        assert woken.status_code == 403 and woken.json()["code"] == "watch_off", woken.text
        # Nothing of the match for the stranger: no board, score, names or cards.
        await refused_everything(a, token, carl, row)
        # A guessed token: the unknown match's answer, as before.
        forged = token[:-1] + ("A" if token[-1] != "A" else "B")
        guessed = await a.get(STATE.format(forged), init_data(fake, carl))
        assert guessed.status_code == 404 and guessed.json()["code"] == "unknown_match"
        # The players' own view still works: each their own hand, nothing of the other's.
        await players_see_their_hands(a, token, row, (ann, bob))
        # A second 🙈, and a stranger's forged one, change nothing.
        again = bob.press(start_message(fake, bob), text="🙈 Turn the watch link off")
        carl.start_bot()
        await a.h.settle()
        assert "off already" in (fake.answer(again).text or "")
        stranger_press = carl.press(fake.last(carl), forged=True,  # type: ignore[arg-type]
                                    data=watch_off_data(row.match_id))
        await a.h.settle()
        assert fake.answer(stranger_press).text == "This button is not valid any more."
        await play_out_with_buttons(a.h, [ann, bob], row.match_id, rng)
        await a.h.settle()
        await refused_everything(a, token, carl, row)
        # The link is offered nowhere after it was turned off.
        for user in (ann, bob):
            for message in fake.sent(user)[sent_before[user.id]:]:
                shown = (message.text or "") + (message.caption or "") + str(message.buttons())
                assert token not in shown and "watch link" not in shown.replace(
                    "turned the watch link off", ""), shown
    # After a restart the match is still closed to spectators.
    async with app_bot(tmp_path, fake, **POOL) as a:
        await refused_everything(a, token, carl, row)
        await players_see_their_hands(a, token, row, (ann, bob))


async def refused_everything(a: AppBot, token: str, stranger: FakeUser, row: MatchRow) -> None:
    init = init_data(a.h.fake, stranger)
    names = [await a.h.services.flow.people.name_of(s.user_id) for s in row.seats
             if s.user_id is not None]
    answers = [await a.get(STATE.format(token), init),
               await a.get(STATE.format(token), init, after=0),
               *[await a.post(path.format(token), init, {"seq": 1, "actions": ["pass"]})
                 for path in ACTIONS]]
    for answer in answers:
        assert answer.status_code == 403, answer.text
        body = answer.json()
        assert set(body) == {"code", "message"} and body["code"] == "watch_off"
        assert "watch link" in body["message"]
        assert not CARD.findall(answer.text) and not any(n in answer.text for n in names)


async def players_see_their_hands(a: AppBot, token: str, row: MatchRow,
                                  players: tuple[FakeUser, ...]) -> None:
    stored = await a.h.services.flow.load(row.match_id)
    for user in players:
        answer = await a.get(STATE.format(token), init_data(a.h.fake, user))
        assert answer.status_code == 200, answer.text
        seat = row.seat_of(user.id)
        state = answer.json()
        assert state["seat"] == seat
        assert state["view"]["tour"]["hand"] == [
            c.code() for c in stored.game.observation(seat).tour.hand]
        assert_secret(state, stored, seat)


async def test_without_a_mini_app_name_a_pool_match_offers_no_watch_link(
        tmp_path: Path) -> None:
    """No short name, no direct link a friend could open: the start message says nothing
    of watching and carries no button of it (the reaction faces stay)."""
    fake = new_fake()
    ann, bob = fake.user(4111, "Ann"), fake.user(4112, "Bob")
    async with app_bot(tmp_path, fake, miniapp_name=None, **POOL) as a:
        await pool_duel(a, ann, bob)
        for user in (ann, bob):
            message = start_message(fake, user)
            assert "watch" not in (message.text or "")
            assert not [b for b in message.buttons() if "react" not in
                        b.get("callback_data", "")], message.buttons()


async def test_the_watch_link_speaks_the_players_language(tmp_path: Path) -> None:
    """A Russian player's start message, their 🙈 answer and a Russian stranger's refusal."""
    fake = new_fake()
    ann = fake.user(4121, "Аня", language_code="ru")
    bob = fake.user(4122, "Боб", language_code="ru")
    carl = fake.user(4123, "Карл", language_code="ru")
    async with app_bot(tmp_path, fake, **POOL) as a:
        row = await pool_duel(a, ann, bob)
        message = start_message_ru(fake, ann)
        assert "Друзья могут смотреть" in (message.text or "")
        labels = [b["text"] for b in message.buttons()]
        assert labels[:2] == ["📤 Поделиться ссылкой для зрителей",
                              "🙈 Выключить ссылку для зрителей"]
        share = parse_qs(urlsplit(message.buttons()[0]["url"]).query)
        assert share["text"] == ["👀 Посмотри мой матч в Крэндзю"]
        token = share["url"][0].rsplit("=", 1)[1]
        query = ann.press(message, text=labels[1])
        await a.h.settle()
        assert (fake.answer(query).text or "").startswith("🙈 Ссылка для зрителей выключена")
        assert any("Аня выключает ссылку" in (m.text or "") for m in fake.sent(bob))
        answer = await a.get(STATE.format(token), init_data(fake, carl))
        assert answer.status_code == 403 and "Игроки этого матча" in answer.json()["message"]
        assert await a.h.services.store.watch_is_off(row.match_id)


def start_message_ru(fake: FakeTelegram, user: FakeUser) -> Message:
    return next(m for m in fake.sent(user) if "Соперник найден" in (m.text or ""))


async def test_settings_watch_off_in_the_private_chat(tmp_path: Path) -> None:
    """``/settings watch=off`` in the private chat closes the pool match being played, as
    🙈 does; said by someone with no pool match, it explains and changes nothing."""
    fake = new_fake()
    ann, bob, carl = fake.user(4131, "Ann"), fake.user(4132, "Bob"), fake.user(4133, "Carl")
    async with app_bot(tmp_path, fake, **POOL) as a:
        row = await pool_duel(a, ann, bob)
        carl.start_bot()
        await a.h.settle()
        carl.send(carl.chat, "/settings watch=off")
        await a.h.settle()
        assert "not playing a Play now match" in (fake.last(carl).text or "")  # type: ignore[union-attr]
        assert not await a.h.services.store.watch_is_off(row.match_id)
        bob.send(bob.chat, "/settings watch=off")
        await a.h.settle()
        assert any("watch link is off" in (m.text or "") for m in fake.sent(bob)), [
            m.text for m in fake.sent(bob)]
        assert "Bob turned the watch link off" in (fake.last(ann).text or "")  # type: ignore[union-attr]
        assert await a.h.services.store.watch_is_off(row.match_id)
        token = watch_token(start_message(fake, ann))
        refused = await a.get(STATE.format(token), init_data(fake, carl))
        assert refused.status_code == 403 and refused.json()["code"] == "watch_off"
