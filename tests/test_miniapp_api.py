"""The Mini App's API (issue 29) against the running bot and the fake Bot API: Telegram's
signed initData (valid, forged, expired, missing), what a seated player, a spectator and a
player of another match see, moves accepted and refused with the catalog's words, the
long poll, and no card of another hand in any answer."""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup, WebAppInfo
from telegram.error import BadRequest

from chat.flow.views.webapp import AppLinks, secret_from_token
from chat.miniapp.initdata import BadInitData, verify
from krendzu import parse_action
from krendzu.viewjson import view_to_json
from storage import MatchStatus, StoredMatch
from tests.bot_harness import BOT, panel, running_bot
from tests.fakebot import FakeTelegram
from tests.miniapp_harness import (
    APP_NAME,
    PUBLIC,
    AppBot,
    app_bot,
    assert_secret,
    group_duel,
    hidden_from,
    init_data,
    new_fake,
    play_token,
)

STATE = "/api/app/v1/match/{}"
MOVE = "/api/app/v1/match/{}/move"
HINT = "/api/app/v1/match/{}/hint"
RESIGN = "/api/app/v1/match/{}/resign"


async def to_move(a: AppBot, match_id: int) -> tuple[StoredMatch, int, int]:
    stored = await a.h.services.flow.load(match_id)
    seat = stored.game.current_player
    user_id = stored.row.seats[seat].user_id
    assert user_id is not None
    return stored, seat, user_id


# initData ---------------------------------------------------------------------------------


def test_init_data_is_checked_as_telegram_signs_it() -> None:
    fake = FakeTelegram(bot_username=BOT)
    ann = fake.user(1, "Ann", language_code="ru")
    good = init_data(fake, ann)
    user = verify(good, fake.token, now=time.time(), max_age=60)
    assert (user.user_id, user.name, user.language_code) == (1, "Ann", "ru")
    refusals = {
        "missing": None,
        "bad hash": init_data(fake, ann, token="123:other-token"),
        "expired": init_data(fake, ann, age=3600),
    }
    tampered = good.replace("Ann", "Bob")
    assert tampered != good
    refusals["bad hash"] = tampered
    for reason, raw in refusals.items():
        with pytest.raises(BadInitData) as caught:
            verify(raw, fake.token, now=time.time(), max_age=60)
        assert caught.value.reason == reason
    with pytest.raises(BadInitData):
        verify(init_data(fake, ann, token="123:other-token"), fake.token, now=time.time(),
               max_age=60)
    with pytest.raises(BadInitData):
        verify(good + "&hash=00", fake.token, now=time.time(), max_age=60)


def test_match_tokens_cannot_be_guessed_or_moved_to_another_match() -> None:
    links = AppLinks(secret_from_token("1:secret"), PUBLIC, BOT, APP_NAME)
    token = links.token(42)
    assert links.match_of(token) == 42
    assert links.match_of(token.replace("42-", "43-", 1)) is None
    assert links.match_of("42-" + "A" * 22) is None
    # Only the token the bot wrote: no leading zero, sign or other digits for the same id.
    for alias in ("0" + token, "00" + token, "+" + token, "\uff14\uff12" + token[2:],
                  token + "\n"):
        assert links.match_of(alias) is None, alias
    assert AppLinks(secret_from_token("2:other"), PUBLIC).match_of(token) is None
    assert links.group_url(42) == f"https://t.me/{BOT}/{APP_NAME}?startapp={token}"
    assert links.page_url(42) == f"{PUBLIC}/app?m={token}"
    assert AppLinks(links.secret, PUBLIC, BOT, None).group_url(42) is None


# The fake Bot API is as strict as Telegram about web_app buttons -------------------------


async def test_the_fake_allows_web_app_buttons_only_in_private_chats() -> None:
    fake = FakeTelegram(bot_username=BOT)
    ann = fake.user(1, "Ann")
    ann.start_bot()
    group = fake.group(-1001, "Friends")
    fake.add_bot(group, by=ann)
    bot = Bot(fake.token, request=fake.request())
    async with bot:
        def keys(url: str) -> InlineKeyboardMarkup:
            return InlineKeyboardMarkup([[InlineKeyboardButton("▶", web_app=WebAppInfo(url))]])

        sent = await bot.send_message(ann.id, "hi", reply_markup=keys(PUBLIC + "/app"))
        assert sent.reply_markup is not None
        with pytest.raises(BadRequest, match=r"(?i)button_type_invalid"):
            await bot.send_message(group.id, "hi", reply_markup=keys(PUBLIC + "/app"))
        with pytest.raises(BadRequest, match=r"(?i)only https"):
            await bot.send_message(ann.id, "hi", reply_markup=keys("http://krendzu.example"))
        # Edits are checked the same way; a group gets a URL button to the Mini App instead.
        posted = await bot.send_message(group.id, "board")
        with pytest.raises(BadRequest, match=r"(?i)button_type_invalid"):
            await bot.edit_message_reply_markup(group.id, posted.message_id,
                                                reply_markup=keys(PUBLIC + "/app"))
        link = InlineKeyboardMarkup([[InlineKeyboardButton(
            "▶", url=f"https://t.me/{BOT}/{APP_NAME}?startapp=1-x")]])
        await bot.edit_message_reply_markup(group.id, posted.message_id, reply_markup=link)


# The buttons that open the Mini App ---------------------------------------------------------


async def test_board_post_links_to_the_mini_app_and_the_panel_opens_it(tmp_path: Path) -> None:
    fake = new_fake()
    ann, bob = fake.user(11, "Ann"), fake.user(12, "Bob")
    group = fake.group(-100111, "Friends")
    async with app_bot(tmp_path, fake) as a:
        row = await group_duel(a.h, group, ann, bob)
        token = play_token(fake.last(group))
        links = a.h.services.flow.broadcast.app
        assert links is not None and links.match_of(token) == row.match_id
        _stored, _seat, user_id = await to_move(a, row.match_id)
        mover = ann if user_id == ann.id else bob
        message = panel(fake, mover)
        assert message is not None
        apps = [b["web_app"]["url"] for b in message.buttons() if "web_app" in b]
        assert apps == [f"{PUBLIC}/app?m={token}"], message.buttons()
        assert not [c for c in fake.calls_to() if not c.ok], fake.describe()
        # The page and its files are served from the bot itself.
        page = await a.http.get(a.base + "/app", params={"m": token})
        assert page.status_code == 200 and "/app/static/app.js" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        for name in ("app.js", "app.css"):
            assert (await a.http.get(f"{a.base}/app/static/{name}")).status_code == 200
        assert (await a.http.get(a.base + "/app/static/..%2Fapi.py")).status_code == 404


async def test_without_a_mini_app_name_only_the_private_button(tmp_path: Path) -> None:
    fake = new_fake()
    ann, bob = fake.user(11, "Ann"), fake.user(12, "Bob")
    group = fake.group(-100112, "Friends")
    async with app_bot(tmp_path, fake, miniapp_name=None) as a:
        row = await group_duel(a.h, group, ann, bob)
        assert not any("t.me/" in b.get("url", "") and "startapp" in b.get("url", "")
                       for b in fake.last(group).buttons())
        _stored, _seat, user_id = await to_move(a, row.match_id)
        message = panel(fake, ann if user_id == ann.id else bob)
        assert message is not None and any("web_app" in b for b in message.buttons())


async def test_without_a_public_url_nothing_changes(tmp_path: Path) -> None:
    fake = new_fake()
    ann, bob = fake.user(11, "Ann"), fake.user(12, "Bob")
    group = fake.group(-100113, "Friends")
    async with running_bot(tmp_path, fake) as h:
        await group_duel(h, group, ann, bob)
        for chat in (group, ann, bob):
            for message in fake.sent(chat):
                for button in message.buttons():
                    assert "web_app" not in button and "startapp" not in button.get("url", "")
        assert h.services.flow.broadcast.app is None


# Who sees what ------------------------------------------------------------------------------


async def test_who_may_call_and_what_each_sees(tmp_path: Path) -> None:
    fake = new_fake()
    ann, bob = fake.user(11, "Ann"), fake.user(12, "Bob")
    carl = fake.user(13, "Carl", language_code="ru")  # watches
    dan, eve = fake.user(14, "Dan"), fake.user(15, "Eve")  # play another match
    group, other = fake.group(-100114, "Friends"), fake.group(-100115, "Others")
    async with app_bot(tmp_path, fake) as a:
        row = await group_duel(a.h, group, ann, bob)
        token = play_token(fake.last(group))
        await group_duel(a.h, other, dan, eve)
        path = STATE.format(token)
        # No initData, a forged one, an expired one: 401 with words, nothing else.
        for init in (None, "", init_data(fake, ann, token="999:forged"),
                     init_data(fake, ann, age=86400 + 120),
                     init_data(fake, ann).replace("Ann", "Bob")):
            answer = await a.get(path, init)
            assert answer.status_code == 401, answer.text
            body = answer.json()
            assert body["code"] == "unauthorized" and "Telegram" in body["message"]
            assert set(body) == {"code", "message"}
        ru = await a.get(path, init_data(fake, carl, age=90000))
        assert ru.status_code == 401 and "Telegram" in ru.json()["message"]
        assert "открыть" in ru.json()["message"].lower(), ru.json()
        # A shorter limit (KRENDZU_MINIAPP_MAX_AGE) is kept too: see the config test.
        # A token the bot did not make: 404, whoever asks.
        bad = await a.get(STATE.format(token[:-1] + ("A" if token[-1] != "A" else "B")),
                          init_data(fake, ann))
        assert bad.status_code == 404 and bad.json()["code"] == "unknown_match"
        # Only the canonical token: "0<id>-<mac>" has the right MAC for the same match id,
        # and is still not a link the bot made (docs/miniapp.md: anything else is 404).
        for alias in ("0" + token, "00" + token):
            refused = await a.get(STATE.format(alias), init_data(fake, ann))
            assert refused.status_code == 404, (alias, refused.text)
            assert refused.json()["code"] == "unknown_match"
            moved = await a.post(MOVE.format(alias), init_data(fake, ann),
                                 {"seq": 1, "actions": ["pass"]})
            assert moved.status_code == 404 and moved.json()["code"] == "unknown_match"

        stored = await a.h.services.flow.load(row.match_id)
        for user in (ann, bob, carl, dan):
            answer = await a.get(path, init_data(fake, user))
            assert answer.status_code == 200, answer.text
            state = answer.json()
            seat = stored.row.seat_of(user.id)
            assert state["seat"] == seat
            view = stored.game.observation(seat)
            assert state["view"]["tour"]["hand"] == [c.code() for c in view.tour.hand]
            assert state["view"]["tour"]["legal"] == [str(x) for x in view.tour.legal]
            assert_secret(state, stored, seat)
            if seat is None:
                assert state["view"]["tour"]["hand"] == [] and state["view"]["tour"]["legal"] == []
            else:
                assert len(state["view"]["tour"]["hand"]) == view.tour.hand_sizes[seat] > 0
        # Carl's words are Russian (his Telegram language); labels are the pictures'.
        state = (await a.get(path, init_data(fake, carl))).json()
        assert state["language"] == "ru" and "Счёт" in state["lines"]["score"], state["lines"]
        assert (dict(state["columns"])[0], dict(state["rows"])[0]) == ("M", "13")
        texts = (await a.get("/api/app/v1/texts", init_data(fake, carl))).json()
        assert texts["language"] == "ru" and texts["texts"]["cancel"] == "Отмена"
        # /lang beats Telegram's language.
        carl.send(carl, "/lang en")
        await a.h.settle()
        texts = (await a.get("/api/app/v1/texts", init_data(fake, carl))).json()
        assert texts["texts"]["cancel"] == "Cancel"


# Moves --------------------------------------------------------------------------------------


async def test_moves_accepted_and_refused_with_clear_words(tmp_path: Path) -> None:
    fake = new_fake()
    ann, bob = fake.user(11, "Ann"), fake.user(12, "Bob")
    carl = fake.user(13, "Carl")
    group = fake.group(-100116, "Friends")
    async with app_bot(tmp_path, fake) as a:
        row = await group_duel(a.h, group, ann, bob)
        token = play_token(fake.last(group))
        path = MOVE.format(token)
        stored, seat, user_id = await to_move(a, row.match_id)
        mover, waiter = (ann, bob) if user_id == ann.id else (bob, ann)
        seq = stored.next_seq
        legal = [str(x) for x in stored.game.observation(seat).tour.legal]
        hand = {c.code() for c in stored.game.observation(seat).tour.hand}
        other_hand = sorted(hidden_from(stored, seat))

        async def refused(user: Any, body: object, status: int, code: str) -> str:
            before = len((await a.h.services.flow.load(row.match_id)).game.history)
            answer = await a.post(path, init_data(fake, user), body)
            assert answer.status_code == status, answer.text
            assert answer.json()["code"] == code, answer.json()
            after = await a.h.services.flow.load(row.match_id)
            assert len(after.game.history) == before  # nothing changed
            assert_secret(answer.json(), after, after.row.seat_of(user.id))
            return str(answer.json()["message"])

        assert "not your turn" in await refused(waiter, {"seq": seq, "actions": [legal[0]]},
                                                409, "not_your_turn")
        assert "not playing" in await refused(carl, {"seq": seq, "actions": [legal[0]]},
                                              403, "not_seated")
        assert "changed meanwhile" in await refused(
            mover, {"seq": seq - 1, "actions": [legal[0]]}, 409, "stale")
        assert "could not be read" in await refused(mover, {"seq": seq, "actions": "QC"},
                                                    400, "malformed")
        assert "could not be read" in await refused(
            mover, {"seq": seq, "actions": ["redeal:QC"]}, 400, "malformed")
        # A card of the other hand, at a legal cell: refused, and the words do not say
        # whose card it is.
        cell = legal[0].split("@")[1]
        message = await refused(mover, {"seq": seq, "actions": [f"{other_hand[0]}@{cell}"]},
                                422, "illegal_move")
        assert message, message
        # An own card at a cell no card may go to.
        card = sorted(hand)[0]
        message = await refused(mover, {"seq": seq, "actions": [f"{card}@5,5"]}, 422,
                                "illegal_move")
        assert message and "5,5" not in message

        live = panel(fake, mover)
        assert live is not None
        mark = fake.mark()
        answer = await a.post(path, init_data(fake, mover), {"seq": seq, "actions": [legal[0]]})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        after = await a.h.services.flow.load(row.match_id)
        assert after.game.history[-1] == parse_action(legal[0])
        assert after.next_seq == seq + 1 == body["state"]["seq"]
        assert_secret(body, after, seat)
        # The same group post as a button's move, and the next player's panel.
        post = await fake.wait_for_message(group, since=mark,
                                           where=lambda m: m.kind == "photo")
        assert mover.first_name in (post.caption or "")
        await a.h.settle()
        assert panel(fake, waiter) is not None
        # The mover's private panel kept in step: edited into the record of the move (the
        # card and its cell), its buttons gone, as after a button's move.
        assert panel(fake, mover) is None
        record = fake.message(mover, live.message_id)
        assert not record.buttons()
        assert parse_action(legal[0]).card.pretty() in (record.caption or record.text or "")
        # The same move again: it answers an older position now.
        assert "changed meanwhile" in await refused(
            mover, {"seq": seq, "actions": [legal[0]]}, 409, "stale")


def suggestions(fake: FakeTelegram, user: Any) -> list[Any]:
    """The /hint messages (their picture and ▶ Play it) the user got privately."""
    return [m for m in fake.sent(user) if "Suggestion" in (m.caption or m.text or "")]


async def test_hint_and_resign_go_through_the_bots_hint_and_resign(tmp_path: Path) -> None:
    """The page's Hint is the bot's /hint (the same suggestion, the same private message,
    only on one's own turn) and its Resign the bot's /resign (the group is told, the match
    ends); both are refused with the catalog's words to anyone else, and change nothing."""
    fake = new_fake()
    ann, bob = fake.user(11, "Ann"), fake.user(12, "Bob")
    carl = fake.user(13, "Carl", language_code="ru")
    group = fake.group(-100119, "Friends")
    async with app_bot(tmp_path, fake) as a:
        row = await group_duel(a.h, group, ann, bob)
        token = play_token(fake.last(group))
        stored, seat, user_id = await to_move(a, row.match_id)
        mover, waiter = (ann, bob) if user_id == ann.id else (bob, ann)
        seq = stored.next_seq
        state = (await a.get(STATE.format(token), init_data(fake, mover))).json()
        assert state["canHint"] and state["canResign"]
        other = (await a.get(STATE.format(token), init_data(fake, waiter))).json()
        assert not other["canHint"] and other["canResign"]
        watcher = (await a.get(STATE.format(token), init_data(fake, carl))).json()
        assert not watcher["canHint"] and not watcher["canResign"]

        async def refused(path: str, user: Any, body: object, status: int, code: str) -> str:
            answer = await a.post(path, init_data(fake, user), body)
            assert answer.status_code == status, answer.text
            assert answer.json()["code"] == code, answer.json()
            return str(answer.json()["message"])

        assert "own turn" in await refused(HINT.format(token), waiter, {"seq": seq}, 409,
                                           "not_your_turn")
        assert "не играете" in await refused(HINT.format(token), carl, {"seq": seq}, 403,
                                             "not_seated")
        assert "changed meanwhile" in await refused(HINT.format(token), mover,
                                                    {"seq": seq - 1}, 409, "stale")
        assert "could not be read" in await refused(HINT.format(token), mover, {}, 400,
                                                    "malformed")
        await a.h.settle()
        assert not suggestions(fake, mover) and not suggestions(fake, waiter)

        answer = await a.post(HINT.format(token), init_data(fake, mover), {"seq": seq})
        assert answer.status_code == 200, answer.text
        hint = answer.json()
        legal = {str(x) for x in stored.game.observation(seat).tour.legal}
        assert hint["seq"] == seq and hint["actions"] and set(hint["actions"]) <= legal | {"end"}
        first = parse_action(hint["actions"][0])
        assert hint["text"].startswith("💡") and first.card.pretty() in hint["text"]
        assert_secret(hint, stored, seat)
        # As /hint: the suggestion privately, its picture and a key that plays it.
        await a.h.settle()
        sent = suggestions(fake, mover)
        assert len(sent) == 1 and sent[0].kind == "photo"
        assert any(b.get("callback_data") for b in sent[0].buttons()), sent[0].buttons()
        assert first.card.pretty() in (sent[0].caption or "")
        # Asked again for the same move: the same suggestion, not sent twice.
        again = await a.post(HINT.format(token), init_data(fake, mover), {"seq": seq})
        assert again.status_code == 200 and again.json() == hint
        await a.h.settle()
        assert len(suggestions(fake, mover)) == 1
        after = await a.h.services.flow.load(row.match_id)
        assert after.next_seq == seq  # a hint plays nothing

        # Resign: not for a watcher; the player's ends the match as /resign does.
        assert "не играете" in await refused(RESIGN.format(token), carl, {}, 403,
                                             "not_seated")
        assert (await a.h.services.flow.load(row.match_id)).row.status is MatchStatus.ACTIVE
        mark = fake.mark()
        answer = await a.post(RESIGN.format(token), init_data(fake, waiter), {})
        assert answer.status_code == 200, answer.text
        ended = answer.json()["state"]
        assert ended["over"] and not ended["canResign"] and not ended["canHint"]
        assert (await a.h.services.flow.load(row.match_id)).row.status is not MatchStatus.ACTIVE
        told = await fake.wait_for_message(
            group, since=mark, where=lambda m: "resigned" in (m.caption or m.text or ""))
        assert waiter.first_name in (told.caption or told.text or "")
        assert "over" in await refused(RESIGN.format(token), waiter, {}, 409, "game_over")
        assert "over" in await refused(HINT.format(token), mover, {"seq": seq}, 409,
                                       "game_over")


async def test_resigning_a_group_trio_from_the_page_hands_the_seat_over_once(
        tmp_path: Path) -> None:
    """In a group's trio the match plays on after a resignation (the computer takes the
    seat): the page then offers neither Resign nor Hint, and a second Resign is refused
    rather than told to the group again."""
    fake = new_fake()
    ann, bob = fake.user(11, "Ann"), fake.user(12, "Bob")
    group = fake.group(-100120, "Trio")
    async with app_bot(tmp_path, fake) as a:
        for user in (ann, bob):
            user.start_bot()
        await a.h.settle()
        for user, text in ((ann, f"/new@{BOT} trio-lone-defender"), (bob, f"/join@{BOT}"),
                           (ann, f"/add@{BOT} easy"), (ann, f"/go@{BOT}")):
            user.send(group, text)
            await a.h.settle()
        row = await a.h.services.store.active_match(group.id)
        assert row is not None
        token = play_token(fake.last(group))
        mark = fake.mark()
        answer = await a.post(RESIGN.format(token), init_data(fake, ann), {})
        assert answer.status_code == 200, answer.text
        state = answer.json()["state"]
        assert not state["over"] and not state["canResign"] and not state["canHint"]
        await a.h.settle()
        told = await fake.wait_for_message(group, "Ann resigned", since=mark)
        assert "computer" in (told.text or ""), told.text
        assert len([m for m in fake.sent(group) if "Ann resigned" in (m.text or "")]) == 1
        assert (await a.h.services.flow.load(row.match_id)).row.status is MatchStatus.ACTIVE
        again = await a.post(RESIGN.format(token), init_data(fake, ann), {})
        assert again.status_code == 409 and again.json()["code"] == "game_over"
        await a.h.settle()
        assert len([m for m in fake.sent(group) if "Ann resigned" in (m.text or "")]) == 1
        bobs = (await a.get(STATE.format(token), init_data(fake, bob))).json()
        assert bobs["canResign"]


async def test_a_move_in_the_scaled_mode_is_accepted_and_announced_by_the_job(
        tmp_path: Path, pg_url: str) -> None:
    """On PostgreSQL with announcement jobs (``KRENDZU_JOBS``) a Mini App move's notices
    are the job's: the move is answered as accepted (not "the position changed"), and the
    group sees its board once a job worker ran."""
    from chat.compose_scaled import open_job_services
    from chat.jobs import ANNOUNCE_QUEUE, worker_options
    from tests.bot_harness import test_config

    fake = new_fake()
    ann, bob = fake.user(21, "Ann"), fake.user(22, "Bob")
    group = fake.group(-100121, "Scaled friends")
    async with app_bot(tmp_path, fake, database=pg_url, jobs=True) as a:
        row = await group_duel(a.h, group, ann, bob)
        token = play_token(fake.last(group))
        stored, seat, user_id = await to_move(a, row.match_id)
        mover = ann if user_id == ann.id else bob
        legal = [str(x) for x in stored.game.observation(seat).tour.legal]
        seq = stored.next_seq
        mark = fake.mark()
        answer = await a.post(MOVE.format(token), init_data(fake, mover),
                              {"seq": seq, "actions": [legal[0]]})
        assert answer.status_code == 200, answer.text
        assert answer.json()["ok"] is True
        assert answer.json()["state"]["seq"] == seq + 1
        after = await a.h.services.flow.load(row.match_id)
        assert after.game.history[-1] == parse_action(legal[0])
        async with open_job_services(test_config(tmp_path, fake, database=pg_url),
                           request=fake.request(), clock=fake.clock) as svc:
            options = worker_options(svc, (ANNOUNCE_QUEUE,), wait=False)
            options["install_signal_handlers"] = False
            await svc.jobs.app.run_worker_async(**options)
        post = await fake.wait_for_message(group, since=mark,
                                           where=lambda m: m.kind == "photo")
        assert mover.first_name in (post.caption or "")


async def test_the_page_follows_a_move_made_with_buttons(tmp_path: Path) -> None:
    fake = new_fake()
    ann, bob = fake.user(11, "Ann"), fake.user(12, "Bob")
    group = fake.group(-100117, "Friends")
    async with app_bot(tmp_path, fake) as a:
        row = await group_duel(a.h, group, ann, bob)
        token = play_token(fake.last(group))
        stored, seat, user_id = await to_move(a, row.match_id)
        mover, waiter = (ann, bob) if user_id == ann.id else (bob, ann)
        seq = stored.next_seq
        started = time.monotonic()
        waiting = asyncio.create_task(a.get(STATE.format(token), init_data(fake, waiter),
                                            after=seq))
        await asyncio.sleep(0.3)
        assert not waiting.done()
        message = panel(fake, mover)
        assert message is not None
        places = [b for b in message.buttons()
                  if b.get("callback_data", "").split(":")[-1].startswith("p")]
        assert places, message.buttons()
        mover.press(message, data=places[0]["callback_data"])
        answer = await asyncio.wait_for(waiting, 10)
        assert answer.status_code == 200
        assert answer.json()["seq"] == seq + 1
        assert time.monotonic() - started < 5
        # Nothing new: the long poll answers the same position after its wait, not at once.
        assert seat is not None


async def test_a_whole_match_with_the_exchange_shows_no_hidden_card(tmp_path: Path) -> None:
    """Two players make every move of a match through the API, the exchange included (a
    count, then the cards given away); after every move each of them, a spectator and a
    player of another match read the match: nobody is ever shown a card of a hand (or a
    discard) that is not theirs, and each seat gets exactly its observation."""
    fake = new_fake(speed=60.0)
    ann, bob, carl = fake.user(11, "Ann"), fake.user(12, "Bob"), fake.user(13, "Carl")
    group = fake.group(-100118, "Friends")
    rng = random.Random(2929)
    async with app_bot(tmp_path, fake) as a:
        row = await group_duel(a.h, group, ann, bob, "duel deal=short exchange=2 timer=off")
        token = play_token(fake.last(group))
        kinds: set[str] = set()
        # The check itself can fail: Bob's view shown to Ann would be caught.
        first = await a.h.services.flow.load(row.match_id)
        with pytest.raises(AssertionError, match="was shown"):
            assert_secret(view_to_json(first.game.observation(first.row.seat_of(bob.id))),
                          first, first.row.seat_of(ann.id))
        for _ in range(400):
            stored = await a.h.services.flow.load(row.match_id)
            if stored.game.is_over:
                break
            for user in (ann, bob, carl):
                answer = await a.get(STATE.format(token), init_data(fake, user))
                assert answer.status_code == 200
                seat = stored.row.seat_of(user.id)
                state = answer.json()
                assert state["seq"] == stored.next_seq, (state["seq"], stored.next_seq)
                assert_secret(state, stored, seat)
                assert state["view"]["tour"]["hand"] == [
                    c.code() for c in stored.game.observation(seat).tour.hand]
            seat = stored.game.current_player
            user = ann if stored.row.seats[seat].user_id == ann.id else bob
            legal = [str(x) for x in stored.game.observation(seat).tour.legal]
            step = rng.choice(legal)
            kinds.add(step.split(":")[0] if ":" in step else "place" if "@" in step else step)
            answer = await a.post(MOVE.format(token), init_data(fake, user),
                                  {"seq": stored.next_seq, "actions": [step]})
            assert answer.status_code == 200, answer.text
            after = await a.h.services.flow.load(row.match_id)
            assert_secret(answer.json(), after, seat)
        else:
            raise AssertionError("the match did not end")
        assert {"ann", "drop", "place"} <= kinds, kinds
        final = (await a.get(STATE.format(token), init_data(fake, ann))).json()
        assert final["over"] and not final["myTurn"] and final["secondsLeft"] is None
        await a.h.settle()


async def test_a_private_duel_against_the_computer(tmp_path: Path) -> None:
    """Alone with the computer: the panel's ▶ Play opens the same match; a move made in the
    Mini App is answered by the computer, and the panel follows."""
    fake = new_fake()
    ann = fake.user(11, "Ann")
    async with app_bot(tmp_path, fake) as a:
        ann.start_bot()
        await a.h.settle()
        ann.send(ann, "/new deal=short")
        await a.h.settle()
        lobby = fake.last(ann)
        assert lobby is not None
        ann.press(lobby, data=lobby.button(text="🤖 Easy")["callback_data"])
        await a.h.settle()
        ann.press(lobby, data=next(b for b in lobby.buttons()
                                   if b["callback_data"].endswith(":go"))["callback_data"])
        await a.h.settle()
        mine = 0
        for _ in range(3):
            message = panel(fake, ann)
            assert message is not None, fake.describe()
            url = next(b["web_app"]["url"] for b in message.buttons() if "web_app" in b)
            token = url.split("m=", 1)[1]
            state = (await a.get(STATE.format(token), init_data(fake, ann))).json()
            assert state["myTurn"], state["lines"]
            place = next(x for x in state["view"]["tour"]["legal"] if "@" in x)
            actions = [place, "end"] if state["pair"] else [place]
            answer = await a.post(MOVE.format(token), init_data(fake, ann),
                                  {"seq": state["seq"], "actions": actions})
            assert answer.status_code == 200, answer.text
            mine += 1
            await a.h.settle()
        rows = await a.h.services.store.matches_of_user(ann.id)
        stored = await a.h.services.flow.load(rows[0].match_id)
        # Each of Ann's turns was answered by the computer's (a duel alternates).
        turns = stored.game.tour.observation(None).turns
        computer = 1 - stored.row.seat_of(ann.id)
        assert len([t for t in turns if t.player == computer]) >= mine, turns
        assert not [c for c in fake.calls_to() if not c.ok], fake.describe()


async def test_in_webhook_mode_the_mini_app_shares_the_web_server(tmp_path: Path) -> None:
    from tests.webhook_harness import running_webhook_bot

    fake = FakeTelegram(bot_username=BOT)
    ann = fake.user(11, "Ann")
    async with running_webhook_bot(tmp_path, fake, public_url=PUBLIC, miniapp_name=APP_NAME,
                                   miniapp_max_age=60.0) as h:
        base = "http://" + h.config.web_listen
        async with httpx.AsyncClient() as http:
            page = await http.get(base + "/app")
            assert page.status_code == 200 and "app.js" in page.text
            texts = await http.get(base + "/api/app/v1/texts",
                                   headers={"X-Telegram-Init-Data": init_data(fake, ann)})
            assert texts.status_code == 200 and texts.json()["texts"]["cancel"] == "Cancel"
            refused = await http.get(base + "/api/app/v1/texts")
            assert refused.status_code == 401
            # KRENDZU_MINIAPP_MAX_AGE=60: two minutes old is too old here.
            old = await http.get(base + "/api/app/v1/texts",
                                 headers={"X-Telegram-Init-Data": init_data(fake, ann, age=120)})
            assert old.status_code == 401


def test_labels_are_the_ones_play_reads_also_at_the_edge() -> None:
    """A tour grown to column A: the page's labels are /play's (krendzu.coords), every card
    and every legal cell has one, and the margin never reaches left of A."""
    from chat.i18n import Catalogs
    from chat.miniapp.state import state_json
    from chat.model import tour_frame
    from krendzu import Match, Place
    from krendzu.tables import Settings, Table

    game = Match(["A", "B"], Settings(Table.DUEL), seed=29)
    for _ in range(40):  # always the leftmost legal cell: the board grows towards A
        places = [x for x in game.legal_actions() if isinstance(x, Place)]
        step = min(places, key=lambda p: (p.x, p.y)) if places else game.legal_actions()[0]
        game.apply(step)
        if tour_frame(game).col_shift:
            break
    frame = tour_frame(game)
    assert frame.col_shift > 0, "the tour never reached column A"

    seat = game.current_player
    stored = SimpleNamespace(game=game, next_seq=len(game.history) + 1,
                             row=SimpleNamespace(status=MatchStatus.ACTIVE))
    state = state_json(stored, seat, ("A", "B"), Catalogs().get("en"),  # type: ignore[arg-type]
                       token="t", seconds_left=None)
    assert state["columns"][0][1] == "A"
    for _code, x, y in state["view"]["tour"]["placements"]:
        assert state["labels"][f"{x},{y}"] == frame.label(x, y)
    for action in game.observation(seat).tour.legal:
        if isinstance(action, Place):
            assert frame.parse(state["labels"][f"{action.x},{action.y}"]) == (action.x, action.y)


def test_a_scored_line_is_said_in_words() -> None:
    """After a turn that scored, the state says so in words, in the reader's language:
    who scores (+1), and which line (its cards, and the labels of its two ends); the
    board alone showed only a stroke over the cards."""
    from chat.i18n import Catalogs
    from chat.miniapp.state import state_json
    from chat.model import tour_frame
    from krendzu import Match, Place
    from krendzu.tables import Settings, Table

    def scored_game(seed: int) -> Match | None:
        """Random cards (never a pass) until one completes a line within its tour."""
        rng = random.Random(seed)
        game = Match(["Ann", "Bob"], Settings(Table.DUEL), seed=seed)
        while not game.is_over:
            index, before = game.tour_index, len(game.tour.combos)
            legal = game.legal_actions()
            game.apply(rng.choice([x for x in legal if isinstance(x, Place)] or legal))
            if game.tour_index == index and len(game.tour.combos) > before:
                return game
        return None

    game = next(g for g in map(scored_game, range(50)) if g is not None)
    tour = game.observation(None).tour
    combo = tour.combos[-1]
    frame = tour_frame(game)
    ends = f"{frame.label(*combo.cells[0])}–{frame.label(*combo.cells[-1])}"
    board = {(x, y): card for card, x, y in tour.placements}
    cards = " ".join(board[cell].pretty() for cell in combo.cells)
    side = " ".join(["Ann", "Bob"][s] for s in tour.roles.attackers)
    stored = SimpleNamespace(game=game, next_seq=len(game.history) + 1,
                             row=SimpleNamespace(status=MatchStatus.ACTIVE))
    for language, words in (("en", "+1 for"), ("ru", "линия")):
        state = state_json(stored, 0, ("Ann", "Bob"),  # type: ignore[arg-type]
                           Catalogs().get(language), token="t", seconds_left=None)
        scored = [line["text"] for line in state["recent"] if line["scored"]]
        assert scored, state["recent"]
        assert words in scored[-1] and side in scored[-1], scored
        assert "+1" in scored[-1] and cards in scored[-1] and ends in scored[-1], scored
        # The turn that scored is said too, before its line.
        texts = [line["text"] for line in state["recent"]]
        mover = ["Ann", "Bob"][tour.turns[-1].player if tour.turns else tour.current_player]
        assert any(t.startswith(mover + ":") for t in texts[:texts.index(scored[-1])]), texts
