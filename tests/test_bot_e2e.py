"""End to end: the real python-telegram-bot application against the fake Bot API."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
from pathlib import Path

from chat.model import tour_frame
from krendzu import EndTurn, Pass, Place, replay
from krendzu.coords import frame_for
from storage import MatchStatus
from tests.bot_harness import BOT, FastClock, panel, play_step_with_buttons, running_bot
from tests.fakebot import FakeTelegram


async def test_group_match_played_with_buttons(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(11, "Ann", language_code="en")
    bob = fake.user(12, "Bob", language_code="ru")
    group = fake.group(-100500, "Friends")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        assert "Krendzu" in (fake.last(ann).text or "")
        ann.send(group, f"/new@{BOT} deal=short")
        await h.settle()
        lobby = fake.last(group)
        assert lobby is not None and "Friends" not in (lobby.text or "")
        bob.press(lobby, data=lobby.button(text="Join")["callback_data"])
        await h.settle()
        assert "Bob" in (fake.message(group, lobby.message_id).text or "")
        ann.press(lobby, data=next(b for b in lobby.buttons() if b.get("callback_data", "")
                               .endswith(":go"))["callback_data"])
        await h.settle()
        for user in (ann, bob):  # hands privately, with suit symbols
            assert any("♠" in (m.caption or m.text or "") or "♣" in (m.caption or m.text or "")
                       for m in fake.sent(user))
        rng = random.Random(1)
        for _ in range(400):
            over = [m for m in fake.sent(group) if "🏁" in (m.text or "")]
            if over:
                break
            moved = False
            for user in (ann, bob):
                if panel(fake, user) is not None:
                    moved = await play_step_with_buttons(h, user, rng)
                    break
            assert moved, fake.describe()
        assert over, "the match ended"
        assert fake.max_sends_in_window(group, 60) <= 20
        ann.send(group, f"/export@{BOT}")
        await h.settle()
        docs = [m for m in fake.sent(group) if m.kind == "document"]
        assert docs, fake.describe()
        record = json.loads(docs[-1].data or b"")
        result = replay(record)
        row = (await h.services.store.active_matches())
        assert row == []
        stored = await h.services.store.matches_of_user(11, status=MatchStatus.FINISHED)
        totals = tuple(result["totals"][p] for p in record["players"])
        assert totals == stored[0].totals
        board_posts = [m for m in fake.sent(group) if m.kind == "photo"]
        assert board_posts and all(m.disable_notification for m in board_posts)


def newest_text(fake: FakeTelegram, chat: object) -> str:
    message = fake.last(chat)  # type: ignore[arg-type]
    return (message.text or message.caption or "") if message else ""


async def test_group_match_played_with_typed_commands(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(21, "Ann")
    bob = fake.user(22, "Bob")
    group = fake.group(-100600, "Typists")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        ann.send(group, f"/new@{BOT} duel deal=short")
        await h.settle()
        bob.send(group, f"/join@{BOT}")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        rng = random.Random(2)
        store = h.services.store
        for _ in range(200):
            row = await store.active_match(group.id)
            if row is None:
                break
            stored = await h.services.flow.load(row.match_id)
            game = stored.game
            seat = game.current_player
            user = ann if row.seats[seat].user_id == 21 else bob
            step = rng.choice(game.legal_actions())
            if isinstance(step, Place):
                frame = frame_for(game.tour.observation(None).placements)
                cell = frame.label(step.x, step.y)
                text = f"/play@{BOT} {step.card.code()} {cell}"
                before = row.move_count
                user.send(group, text)
                await h.settle()
                after = await store.get_match(row.match_id)
                assert after.move_count > before, fake.describe()
                caption = [m for m in fake.sent(group) if m.kind == "photo"][-1].caption or ""
                assert f"{step.card.pretty()} {cell}" in caption
            elif isinstance(step, Pass):
                user.send(group, f"/pass@{BOT}")
                await h.settle()
            else:
                assert isinstance(step, EndTurn)
                user.send(user.chat, "end")  # plain text in the private chat
                await h.settle()
        assert await store.active_match(group.id) is None
        assert any("🏁" in (m.text or "") for m in fake.sent(group))
        assert fake.max_sends_in_window(group, 60) <= 20


async def test_bad_input_gets_polite_answers_and_changes_nothing(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(31, "Ann")
    bob = fake.user(32, "Bob", language_code="ru")
    eve = fake.user(33, "Eve")
    group = fake.group(-100700, "Errors")
    async with running_bot(tmp_path, fake) as h:
        for user in (ann, bob, eve):
            user.start_bot()
        ann.send(group, f"/play@{BOT} QC M13")
        await h.settle()
        assert "No match" in newest_text(fake, group)
        ann.send(group, f"/new@{BOT} tours=3")
        await h.settle()
        assert "cannot be played" in newest_text(fake, group)
        ann.send(group, f"/new@{BOT}")
        await h.settle()
        bob.send(group, f"/join@{BOT}")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        store = h.services.store
        row = await store.active_match(group.id)
        assert row is not None
        stored = await h.services.flow.load(row.match_id)
        mover_id = row.seats[stored.game.current_player].user_id
        mover, other = (ann, bob) if mover_id == 31 else (bob, ann)
        other.send(group, f"/play@{BOT} QC M13")
        await h.settle()
        assert "turn" in newest_text(fake, group) or "ход" in newest_text(fake, group).lower()
        own = stored.game.observation(stored.game.current_player).tour.hand
        foreign = next(c for c in stored.game.observation(1 - stored.game.current_player)
                       .tour.hand if c not in own)
        before_group = len(fake.sent(group))
        mover.send(group, f"/play@{BOT} {foreign.code()} M13")
        await h.settle()
        assert len(fake.sent(group)) == before_group, "a card error is answered privately"
        assert foreign.pretty() in newest_text(fake, mover)
        for text in (f"/play@{BOT} ZZ M13", f"/play@{BOT} QC", f"/play@{BOT} QC M99999",
                     f"/play@{BOT}", f"/exchange@{BOT} lots", f"/discard@{BOT}",
                     f"/play@{BOT} " + "QC " * 2000):
            mover.send(group, text[:4000])
            await h.settle()
        eve.send(group, f"/hand@{BOT}")
        await h.settle()
        assert "not playing" in newest_text(fake, group)
        mover.send(mover.chat, "x" * 4000)
        await h.settle()
        assert "too long" in newest_text(fake, mover) or "длинн" in newest_text(fake, mover)
        mover.send(mover.chat, "hello there")
        await h.settle()
        live = panel(fake, mover)
        assert live is not None
        seq = (await store.get_match(row.match_id)).move_count + 1
        forged = [f"v1:m:{row.match_id}:{seq}:pQC@40,40", f"v1:m:{row.match_id}:{seq}:cZZ",
                  f"v1:m:{row.match_id}:{seq + 5}:pass", "v2:m:1:1:pass", "v1:l:999:go",
                  f"v1:m:{row.match_id}:{seq}:p{foreign.code()}@0,0", "v1:m:x:y:z"]
        keyboard = {"inline_keyboard": [[{"text": str(i), "callback_data": d}]
                                        for i, d in enumerate(forged)]}
        trap = fake.inline_message("forged", reply_markup=keyboard)
        for data in forged:
            query = mover.press(trap, data=data)
            await h.settle()
            assert fake.answer(query).answered and fake.answer(query).text
        # A double press of one cell button applies once; the second gets a toast. (At the
        # tour's opening a card key carries its one cell, M13.)
        cell = next(b for b in live.buttons() if ":p" in b["callback_data"])
        first = mover.press(live, data=cell["callback_data"])
        second = mover.press(live, data=cell["callback_data"])
        await h.settle()
        assert (await store.get_match(row.match_id)).move_count == 1
        answers = {fake.answer(first).text, fake.answer(second).text}
        assert any("out of date" in (a or "") or "устарел" in (a or "") for a in answers), answers
        assert not fake.errors


async def export_matches_the_referee(h: object, user: object, group: object) -> None:
    """/export in the group: the referee's replay of the record gives the stored totals."""
    fake = h.fake  # type: ignore[attr-defined]
    user.send(group, f"/export@{BOT}")  # type: ignore[attr-defined]
    await h.settle()  # type: ignore[attr-defined]
    docs = [m for m in fake.sent(group) if m.kind == "document"]
    assert docs, fake.describe()
    record = json.loads(docs[-1].data or b"")
    result = replay(record)
    row = next(r for r in await h.services.store.matches_of_user(  # type: ignore[attr-defined]
        user.id, status=MatchStatus.FINISHED) if r.chat_id == group.id)  # type: ignore[attr-defined]
    assert tuple(result["totals"][p] for p in record["players"]) == row.totals
    assert len(record["tours"]) == row.settings.tour_count


async def play_until_over(h: object, users: list, chat: object, rng: random.Random,
                          limit: int = 600) -> None:
    fake = h.fake  # type: ignore[attr-defined]
    for _ in range(limit):
        if any("🏁" in (m.text or "") for m in fake.sent(chat)):
            return
        moved = False
        for user in users:
            if panel(fake, user) is not None:
                moved = await play_step_with_buttons(h, user, rng)  # type: ignore[arg-type]
                if moved:
                    break
        if not moved:
            await h.settle()  # type: ignore[attr-defined]
    raise AssertionError("the match did not end:\n" + fake.describe())


async def test_trios_and_teams_with_computer_seats(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(41, "Ann")
    bob = fake.user(42, "Bob", language_code="ru")
    groups = [fake.group(-100800 - i, f"Table {i}") for i in range(3)]
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        for group, args in zip(groups, ("trio-lone-attacker deal=6/4",
                                        "trio-lone-defender exchange=1 deal=4/7",
                                        "teams deal=4/5"), strict=True):
            ann.send(group, f"/new@{BOT} {args}")
            await h.settle()
            bob.send(group, f"/join@{BOT}")
            await h.settle()
            while True:
                lobby = await h.services.store.open_lobby(group.id)
                assert lobby is not None
                if len(lobby.state["seats"]) == (4 if "teams" in args else 3):
                    break
                ann.send(group, f"/add@{BOT} easy")
                await h.settle()
            assert "🤖" in (fake.sent(group)[0].text or "")
            ann.send(group, f"/go@{BOT}")
            await h.settle()
            await play_until_over(h, [ann, bob], group, random.Random(args))
            assert fake.max_sends_in_window(group, 60) <= 20
            await export_matches_the_referee(h, ann, group)
            final = [m for m in fake.sent(group) if m.kind == "photo"][-1]
            assert "over" in (final.caption or "") or "окончен" in (final.caption or "")


async def test_private_duel_against_the_computer_with_plain_text(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(51, "Ann", language_code="ru")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        ann.send(ann.chat, "/new deal=short")
        await h.settle()
        lobby = fake.last(ann)
        assert lobby is not None and "🤖" in (lobby.text or "")
        ann.press(lobby, data=lobby.button(text="🤖 Лёгкий")["callback_data"])
        await h.settle()
        assert "✓ 🤖 Лёгкий" in fake.message(ann, lobby.message_id).button_texts()
        ann.press(lobby, data=next(b for b in lobby.buttons()
                                   if b["callback_data"].endswith(":go"))["callback_data"])
        await h.settle()
        rng = random.Random(7)
        store = h.services.store
        for _ in range(300):
            rows = await store.matches_of_user(51)
            if not rows:
                break
            stored = await h.services.flow.load(rows[0].match_id)
            if stored.game.current_player != stored.row.seat_of(51):
                await h.settle()
                continue
            step = rng.choice(stored.game.legal_actions())
            if isinstance(step, Place):
                frame = frame_for(stored.game.tour.observation(None).placements)
                ann.send(ann.chat, f"{step.card.code()} {frame.label(step.x, step.y)}")
            elif isinstance(step, Pass):
                ann.send(ann.chat, "пас")
            else:
                ann.send(ann.chat, "/pass" if isinstance(step, Pass) else "end")
            await h.settle()
        finished = await store.matches_of_user(51, status=MatchStatus.FINISHED)
        assert finished, fake.describe()
        assert any("🏁" in (m.text or "") for m in fake.sent(ann))
        assert all(m.chat_id == 51 for m in fake.sent(ann))
        # Once Ann is out of cards the computer plays on alone: one board message follows
        # its moves (edited in place), not a photo per move.
        followed = [m for m in fake.sent(ann) if m.kind == "photo" and not m.buttons()
                    and "Счёт" in (m.caption or "") and "На руке" not in (m.caption or "")]
        assert followed
        assert any(m.edits for m in followed), [m.caption for m in followed]
        for earlier, later in itertools.pairwise(followed):
            between = [m for m in fake.messages(ann)
                       if earlier.message_id < m.message_id < later.message_id]
            assert between, "two followed boards in a row: the second should have edited"


async def test_exchange_and_a_player_in_two_matches(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(61, "Ann")
    bob = fake.user(62, "Bob")
    one, two = fake.group(-100901, "One"), fake.group(-100902, "Two")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        for group in (one, two):
            ann.send(group, f"/new@{BOT} exchange=2 deal=short")
            await h.settle()
            bob.send(group, f"/join@{BOT}")
            await h.settle()
            ann.send(group, f"/go@{BOT}")
            await h.settle()
        # Panels name their group, so two live matches are told apart.
        titles = {t for m in fake.sent(ann) for t in ("“One”", "“Two”")
                  if t in (m.caption or m.text or "")}
        assert titles == {"“One”", "“Two”"}
        # Announcements are public: the groups see "... will exchange N cards".
        store = h.services.store
        rows = [await store.active_match(g.id) for g in (one, two)]
        assert all(rows)
        # Plain text in the private chat is ambiguous when it is Ann's turn in both.
        ann_turn = [r for r in rows if r is not None
                    and (await h.services.flow.load(r.match_id)).game.current_player
                    == r.seat_of(61)]
        ann.send(ann.chat, "/exchange 1")
        await h.settle()
        if len(ann_turn) == 2:
            assert "2 matches" in (fake.last(ann).text or "")
        rng = random.Random(11)
        await play_until_over(h, [ann, bob], one, rng)
        await play_until_over(h, [ann, bob], two, rng)
        for group in (one, two):
            lines = " ".join(m.caption or m.text or "" for m in fake.sent(group))
            assert "exchange" in lines


async def test_command_menus_per_scope_and_language(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    async with running_bot(tmp_path, fake) as h:
        await h.settle()
        private = fake.commands("all_private_chats")
        groups = fake.commands("all_group_chats")
        russian = fake.commands("all_group_chats", "ru")
        assert private and groups and russian
        assert {"new", "play", "hint", "hand"} <= {c["command"] for c in private}
        assert {"join", "go", "add"} <= {c["command"] for c in groups}
        assert "join" not in {c["command"] for c in private}
        descriptions = {c["command"]: c["description"] for c in russian}
        assert descriptions["join"] != {c["command"]: c["description"] for c in groups}["join"]


async def test_joining_before_starting_the_bot_goes_through_a_deep_link(tmp_path: Path) -> None:
    import re

    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(91, "Ann")
    bob = fake.user(92, "Bob", language_code="ru")
    cid = fake.user(93, "Cid")
    group = fake.group(-100970, "Links")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        ann.send(group, f"/new@{BOT} trio-lone-defender")
        await h.settle()
        lobby = fake.sent(group)[-1]
        # Bob never wrote to the bot: Join opens the bot's private chat with a payload.
        query = bob.press(lobby, data=lobby.button(text="Join")["callback_data"])
        await h.settle()
        answered = fake.callbacks[query.id]
        assert answered.url is not None, answered
        payload = answered.url.split("?start=", 1)[1]
        assert answered.url.startswith(f"https://t.me/{BOT}?start=")
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", payload)
        assert "Bob" in lobby.text and "Bob" not in lobby.text.split("\n\n")[2]  # waiting
        bob.start_bot(payload)
        await h.settle()
        assert "Bob" in lobby.text.split("\n\n")[2], lobby.text  # seated
        assert "«Links»" in fake.sent(bob)[-1].text or "Links" in fake.sent(bob)[-1].text
        # Cid types /join; the reply carries the link; he opens the bot without it (found
        # it by name) and is seated all the same.
        cid.send(group, f"/join@{BOT}")
        await h.settle()
        assert f"t.me/{BOT}?start=" in fake.sent(group)[-1].text
        cid.start_bot()
        await h.settle()
        assert "Cid" in lobby.text.split("\n\n")[2], lobby.text
        row = await h.services.store.open_lobby(group.id, None)
        assert row is not None and row.state["invited"] == []
        ann.press(lobby, data=lobby.button(text="▶ Start")["callback_data"])
        await h.settle()
        assert await h.services.store.active_match(group.id) is not None
        for user in (ann, bob, cid):
            assert any("♠" in (m.content or "") or "♣" in (m.content or "")
                       or "♦" in (m.content or "") or "♥" in (m.content or "")
                       for m in fake.sent(user)), f"{user.first_name} got no hand"


async def test_rules_come_with_pictures_in_the_readers_language(tmp_path: Path) -> None:
    from chat.i18n import Catalogs, picture_texts
    from render import illustrations

    russian = picture_texts(Catalogs().get("ru"))  # the pictures' words come from the catalog
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(81, "Анна", language_code="ru")
    bob = fake.user(82, "Bob")
    group = fake.group(-100960, "Rules")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        await h.settle()
        before = len(fake.sent(ann))
        ann.send(None, "/rules")
        await h.settle()
        private = fake.sent(ann)[before:]
        assert [m.kind for m in private] == ["text", "photo", "photo", "photo"], private
        assert "комбинац" in (private[0].text or "").lower()
        assert all(m.caption and not m.caption.isascii() for m in private[1:])
        assert private[1].data == illustrations.rules_picture(texts=russian)
        assert private[3].data == illustrations.rules_coordinates_example(texts=russian)
        assert private[1].data != illustrations.rules_picture()
        # In a group: the text and two pictures (how to place a card is for the private chat).
        bob.send(group, f"/rules@{BOT}")
        await h.settle()
        public = fake.sent(group)
        assert [m.kind for m in public] == ["text", "photo", "photo"], public
        assert "combination" in (public[0].text or "")
        assert public[2].data == illustrations.rules_board_example()


async def test_chat_changes_removed_migrated_no_photos_and_unreachable_player(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(71, "Ann")
    bob = fake.user(72, "Bob")
    group = fake.group(-100950, "Changes")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        ann.send(group, f"/new@{BOT}")
        await h.settle()
        bob.send(group, f"/join@{BOT}")
        await h.settle()
        fake.forbid_media(group)
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        # Without photo rights the board comes as text.
        posts = [m for m in fake.sent(group) if "Next:" in (m.text or "")]
        assert posts, fake.describe()
        fake.allow_media(group)
        store = h.services.store
        row = await store.active_match(group.id)
        assert row is not None
        # The player to move blocked the bot: the group is told, no card is named.
        mover_id = row.seats[(await h.services.flow.load(row.match_id)).game.current_player] \
            .user_id
        mover, other = (ann, bob) if mover_id == 71 else (bob, ann)
        hand_cards = set()
        stored = await h.services.flow.load(row.match_id)
        for seat in range(2):
            hand_cards |= {c.pretty() for c in stored.game.observation(seat).tour.hand}
        mover.block_bot()
        await h.settle()
        other_panel = panel(fake, other)
        del other_panel
        # Make the blocked player's panel be sent again: /board in the private chat fails.
        mover.send(group, f"/hand@{BOT}")
        await h.settle()
        warning = [m for m in fake.sent(group) if "cannot write" in (m.text or "")]
        assert warning, fake.describe()
        assert not any(card in (warning[-1].text or "") for card in hand_cards)
        # Migration to a supergroup: the match follows the chat.
        new = fake.migrate(group)
        await h.settle()
        assert (await store.active_match(new.id)) is not None
        assert await store.active_match(group.id) is None
        # Removed from the group: its match is closed.
        fake.remove_bot(new)
        await h.settle()
        assert await store.active_match(new.id) is None
        assert not fake.errors


async def test_busy_computer_table_does_not_delay_help_elsewhere(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT)
    ann = fake.user(81, "Ann")
    bob = fake.user(82, "Bob")
    async with running_bot(tmp_path, fake, ai_workers=1, hard_budget_ms=1500.0) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        ann.send(ann.chat, "/new teams level=hard")
        await h.settle()
        lobby = fake.last(ann)
        assert lobby is not None
        ann.press(lobby, data=next(b for b in lobby.buttons()
                                   if b["callback_data"].endswith(":go"))["callback_data"])
        # Three hard computers think in turn, 1.5 s each, whenever it is not Ann's turn.
        await fake.wait_for(lambda: any(c.method == "sendPhoto" and c.chat_id == 81
                                        for c in fake.calls), timeout=30)
        delays = []
        for _ in range(5):
            since = fake.mark()
            started = asyncio.get_running_loop().time()
            bob.send(bob.chat, "/help")
            await fake.wait_for_message(bob, "/play", since=since, timeout=10)
            delays.append(asyncio.get_running_loop().time() - started)
            await asyncio.sleep(0.3)
        assert max(delays) < 0.75, delays


async def test_flood_rule_coalesces_posts_and_the_last_shows_the_end(tmp_path: Path) -> None:
    """Computer seats move faster than a group may be written to: no 60 s window holds more
    than 20 new messages, posts merge their move lines, and the last shows the final board."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=4))  # 60 s = 15 real s
    ann = fake.user(96, "Ann")
    group = fake.group(-100990, "Fast table")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        ann.send(group, f"/new@{BOT} teams deal=3/3")
        await h.settle()
        for _ in range(3):
            ann.send(group, f"/add@{BOT} easy")
            await h.settle()
        ann.send(group, f"/go@{BOT}")
        rng = random.Random(7)
        store, flow = h.services.store, h.services.flow
        for _ in range(3000):
            row = await store.active_match(group.id)
            if row is None:
                if await store.matches_of_user(ann.id, status=MatchStatus.FINISHED):
                    break
                await asyncio.sleep(0.02)
                continue
            game = (await flow.load(row.match_id)).game
            if row.seats[game.current_player].user_id != ann.id:
                await asyncio.sleep(0.02)
                continue
            places = [a for a in game.legal_actions() if isinstance(a, Place)]
            if places:
                step = rng.choice(places)
                ann.send(None, f"{step.card.code()} {tour_frame(game).label(step.x, step.y)}")
            else:
                ann.send(None, "pass" if Pass() in game.legal_actions() else "end")
            before = len(game.history)
            for _ in range(500):
                await asyncio.sleep(0.01)
                if len((await flow.load(row.match_id)).game.history) > before:
                    break
        await h.settle(timeout=120)
        assert fake.max_sends_in_window(group, 60) <= 20
        photos = [m for m in fake.sent(group) if m.kind == "photo"]
        merged = [m for m in photos if sum(": " in line and not line.startswith(("Score",
                  "Tour", "Next")) for line in (m.caption or "").split("\n")) > 1]
        assert merged, "posts were merged while the group limit held them back"
        assert not any("(may place a second card)" in line
                       for m in photos for line in (m.caption or "").split("\n")[:-3]), \
            "a merged post keeps only the whole turn of a defender"
        final = photos[-1]
        assert "over" in (final.caption or "")
        ann.send(group, f"/board@{BOT}")
        await h.settle(timeout=120)
        shown = [m for m in fake.sent(group) if m.kind == "photo"][-1]
        assert shown is not final and shown.data == final.data  # the final position


async def test_forum_topics_hold_separate_matches(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(97, "Ann")
    bob = fake.user(98, "Bob")
    forum = fake.group(-1001000000097, "Card club", forum=True)
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        ann.send(forum, f"/new@{BOT}", thread_id=5)
        bob.send(forum, f"/new@{BOT}", thread_id=7)
        await h.settle()
        lobbies = {m.message_thread_id: m for m in fake.sent(forum) if m.buttons()}
        assert set(lobbies) == {5, 7}, fake.describe()
        ann.press(lobbies[5], text="🤖 Add computer")  # the levels show on a press
        await h.settle()
        ann.press(lobbies[5], text="+ 🤖 Easy")
        await h.settle()
        ann.press(lobbies[5], text="▶ Start")
        await h.settle()
        posts = [m for m in fake.sent(forum) if m.kind == "photo"]
        assert posts and all(m.message_thread_id == 5 for m in posts)
        # The topic-7 lobby is untouched and still open; /board in topic 7 has no match.
        assert await h.services.store.open_lobby(forum.id, 7) is not None
        assert await h.services.store.active_match(forum.id, 5) is not None
        assert await h.services.store.active_match(forum.id, 7) is None
        bob.send(forum, f"/board@{BOT}", thread_id=7)
        await h.settle()
        reply = fake.sent(forum)[-1]
        assert reply.message_thread_id == 7 and reply.kind == "text"


async def type_a_move(h: object, user: object, group: object) -> int:
    """The user types a legal one-card move (or a pass) in the group; returns the move count
    it waits for."""
    store, flow = h.services.store, h.services.flow  # type: ignore[attr-defined]
    row = await store.active_match(group.id)  # type: ignore[attr-defined]
    game = (await flow.load(row.match_id)).game
    places = [a for a in game.legal_actions() if isinstance(a, Place)]
    if places:
        step = places[0]
        text = f"/play@{BOT} {step.card.code()} {tour_frame(game).label(step.x, step.y)}"
    else:
        text = f"/pass@{BOT}"
    user.send(group, text)  # type: ignore[attr-defined]
    return len(game.history) + 1


async def test_turn_timer_reminds_times_out_hands_over_and_back(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=60))
    ann = fake.user(61, "Ann")
    bob = fake.user(62, "Bob")
    group = fake.group(-100661, "Timers")
    async with running_bot(tmp_path, fake, timer_tick=0.05) as h:
        store, flow = h.services.store, h.services.flow
        ann.start_bot()
        bob.start_bot()
        ann.send(group, f"/new@{BOT} timer=60 deal=short")
        await h.settle()
        assert "60" in (fake.sent(group)[-1].text or "")
        bob.send(group, f"/join@{BOT}")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        row = await store.active_match(group.id)
        assert row is not None
        game = (await flow.load(row.match_id)).game
        idle_user = ann if row.seats[game.current_player].user_id == ann.id else bob
        active = bob if idle_user is ann else ann
        # The player to move does nothing: reminded privately, then the computer moves.
        await fake.wait_for_message(idle_user, "⏰", timeout=10)
        await fake.wait_for_message(group, "ran out of time", timeout=10)
        assert len((await flow.load(row.match_id)).game.history) == 1
        assert not any("keeps the seat" in (m.text or "") for m in fake.sent(group))
        # The other player answers in time; the idle one times out again: handed over.
        await fake.wait_for(lambda: fake.last(active) is not None, timeout=5)
        want = await type_a_move(h, active, group)
        await fake.wait_for_message(group, "keeps the seat", timeout=10)
        assert len((await flow.load(row.match_id)).game.history) >= want + 1
        # From now on the computer moves for them at once, with no more timeouts.
        told = len([m for m in fake.sent(group) if "ran out of time" in (m.text or "")])
        for _ in range(2):
            await h.settle()
            if (await store.active_match(group.id)) is None:
                break
            want = await type_a_move(h, active, group)
            for _ in range(100):  # the stand-in answers at once, well before a deadline
                await asyncio.sleep(0.01)
                if len((await flow.load(row.match_id)).game.history) > want:
                    break
            else:
                raise AssertionError("the computer did not move for the absent player")
        assert len([m for m in fake.sent(group) if "ran out of time" in (m.text or "")]) == told
        # /back: the seat is theirs again (and timed again).
        idle_user.send(group, f"/back@{BOT}")
        await h.settle()
        assert any("is back" in (m.text or "") for m in fake.sent(group))
        assert "Welcome back" in (fake.sent(group)[-1].text or "") or any(
            "Welcome back" in (m.text or "") for m in fake.sent(group))
        assert (await store.stand_ins(row.match_id))[
            row.seat_of(idle_user.id)].computer is False  # type: ignore[index]
        assert fake.max_sends_in_window(group, 60) <= 20


async def test_a_restart_keeps_the_deadline_with_a_grace_period(tmp_path: Path) -> None:
    clock = FastClock(speed=60)
    fake = FakeTelegram(bot_username=BOT, clock=clock)
    ann = fake.user(63, "Ann")
    group = fake.group(-100663, "Restart timers")
    async with running_bot(tmp_path, fake, timer_tick=0.05) as h:
        ann.start_bot()
        ann.send(group, f"/new@{BOT} timer=600")
        await h.settle()
        ann.send(group, f"/add@{BOT} easy")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        row = await h.services.store.active_match(group.id)
        assert row is not None
        game = (await h.services.flow.load(row.match_id)).game
        if row.seats[game.current_player].user_id != ann.id:
            await h.settle()
        timer = await h.services.store.timer_of(row.match_id)
        assert timer is not None and timer.deadline is not None
        deadline = timer.deadline
    clock.advance(3600)  # the bot was down for an hour: the deadline passed meanwhile
    async with running_bot(tmp_path, fake, timer_tick=0.05, timer_grace=120.0) as h:
        now = clock()
        timer = await h.services.store.timer_of(row.match_id)
        assert timer is not None and timer.deadline is not None
        assert deadline < now <= timer.deadline <= now + 120.0 + 1.0
        assert not any("ran out of time" in (m.text or "") for m in fake.sent(group))
        await fake.wait_for_message(group, "ran out of time", timeout=10)  # after the grace


async def test_leave_kick_and_resign_hand_seats_to_the_computer(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob, cid = fake.user(71, "Ann"), fake.user(72, "Bob"), fake.user(73, "Cid")
    group = fake.group(-100671, "Walkouts")
    async with running_bot(tmp_path, fake) as h:
        store = h.services.store
        for user in (ann, bob, cid):
            user.start_bot()
        ann.send(group, f"/new@{BOT} trio-lone-defender deal=2/4")
        await h.settle()
        for user in (bob, cid):
            user.send(group, f"/join@{BOT}")
            await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        row = await store.active_match(group.id)
        assert row is not None
        bob.send(group, f"/leave@{BOT}")
        await h.settle()
        assert any("Bob left the table" in (m.text or "") for m in fake.sent(group))
        bob.send(group, f"/kick@{BOT} Ann")
        await h.settle()
        assert "Only the creator" in (fake.sent(group)[-1].text or "")
        ann.send(group, f"/kick@{BOT} 3")
        await h.settle()
        assert any("Cid was taken off" in (m.text or "") for m in fake.sent(group))
        stand_ins = await store.stand_ins(row.match_id)
        assert stand_ins[row.seat_of(bob.id)].computer  # type: ignore[index]
        assert stand_ins[row.seat_of(cid.id)].computer  # type: ignore[index]
        # In a trio a resignation hands the seat over too: the computers finish the match.
        ann.send(group, f"/resign@{BOT}")
        await h.settle()
        assert any("Ann resigned" in (m.text or "") and "rank" in (m.text or "")
                   for m in fake.sent(group))
        await fake.wait_for_message(group, "🏁", timeout=30, since=0)
        assert (await store.get_match(row.match_id)).status is MatchStatus.FINISHED
        # A duel's resignation concedes it.
        ann.send(group, f"/new@{BOT}")
        await h.settle()
        bob.send(group, f"/join@{BOT}")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        bob.send(group, f"/resign@{BOT}")
        await h.settle()
        assert any("Bob resigned: the match goes to Ann" in (m.text or "")
                   for m in fake.sent(group))
        assert await store.active_match(group.id) is None


async def test_an_idle_set_up_expires_with_a_message(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock(speed=60))
    ann = fake.user(74, "Ann")
    group = fake.group(-100674, "Sleepy")
    async with running_bot(tmp_path, fake, timer_tick=0.05, lobby_minutes=2.0) as h:
        ann.send(group, f"/new@{BOT}")
        await h.settle()
        lobby = fake.sent(group)[-1]
        assert lobby.buttons()
        await fake.wait_for(lambda: "Nobody started" in (lobby.text or ""), timeout=10)
        assert not lobby.buttons()
        assert await h.services.store.open_lobby(group.id) is None
        ann.send(group, f"/new@{BOT}")  # and a new one can be set up
        await h.settle()
        assert await h.services.store.open_lobby(group.id) is not None


async def test_history_stats_top_and_export_by_number(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(81, "Ann")
    group = fake.group(-100681, "League")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        ann.send(group, f"/new@{BOT} deal=short")
        await h.settle()
        ann.send(group, f"/add@{BOT} easy")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        await play_until_over(h, [ann], group, random.Random(3))
        row = (await h.services.store.recent_matches(group.id))[0]
        assert row.status is MatchStatus.FINISHED
        rating = (await h.services.store.ratings_of([ann.id]))[ann.id]
        assert rating.rated_matches == 1
        ann.send(group, f"/history@{BOT}")
        await h.settle()
        listing = fake.sent(group)[-1].text or ""
        assert f"#{row.match_id}" in listing and "Ann" in listing and "/export" in listing
        ann.send(group, f"/export@{BOT} {row.match_id}")
        await h.settle()
        # The record, then a replay of each of the two tours.
        assert [m.kind for m in fake.sent(group)[-3:]] == ["document", "animation", "animation"]
        ann.send(group, f"/export@{BOT} 999")
        await h.settle()
        assert "/history" in (fake.sent(group)[-1].text or "")
        ann.send(group, f"/stats@{BOT}")
        await h.settle()
        card = fake.sent(group)[-1]
        assert card.kind == "photo" and "Ann" in (card.caption or "")
        ann.send(group, f"/stats@{BOT} Nobody")
        await h.settle()
        assert "Nobody" in (fake.sent(group)[-1].text or "")
        for command in (f"/top@{BOT}", f"/top@{BOT} global"):
            ann.send(group, command)
            await h.settle()
            assert fake.sent(group)[-1].kind == "photo"
        ann.send(None, "/stats")  # privately: over all chats
        await h.settle()
        assert fake.sent(ann)[-1].kind == "photo"
        assert not fake.errors


async def test_a_group_keeps_one_live_board_unless_an_admin_turns_it_off(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(85, "Ann"), fake.user(86, "Bob")
    group = fake.group(-100685, "Tidy", members=(ann, bob))
    fake.set_admin(group, ann)
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        # By default: each board post replaces the previous one.
        ann.send(group, f"/settings@{BOT}")
        await h.settle()
        assert "newest board post: on" in (fake.sent(group)[-1].text or "")
        for text in (f"/new@{BOT} deal=short", f"/add@{BOT} easy", f"/go@{BOT}"):
            ann.send(group, text)
            await h.settle()
        await play_until_over(h, [ann], group, random.Random(5))
        boards = [m for m in fake.sent(group, deleted=True) if m.kind == "photo"]
        kept = [m for m in boards if not m.deleted]
        assert len(boards) > 3 and len(kept) == 1, (len(boards), len(kept))
        assert "over" in (kept[0].caption or "")
        assert any("🏁" in (m.text or "") and not m.deleted for m in fake.sent(group))
        # Only an admin turns it off; then every board post stays.
        other = fake.group(-100686, "Keep them all", members=(ann, bob))
        fake.set_admin(other, ann)
        bob.send(other, f"/settings@{BOT} tidy=off")
        await h.settle()
        assert "admin" in (fake.sent(other)[-1].text or "")
        ann.send(other, f"/settings@{BOT} tidy=off")
        await h.settle()
        assert "off" in (fake.sent(other)[-1].text or "")
        assert not (await h.services.store.get_chat(other.id)).tidy  # type: ignore[union-attr]
        for text in (f"/new@{BOT} deal=short", f"/add@{BOT} easy", f"/go@{BOT}"):
            ann.send(other, text)
            await h.settle()
        await play_until_over(h, [ann], other, random.Random(6))
        boards = [m for m in fake.sent(other, deleted=True) if m.kind == "photo"]
        assert len(boards) > 3 and not any(m.deleted for m in boards)


async def test_rematch_after_the_summary_and_cancel(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(87, "Ann"), fake.user(88, "Bob")
    group = fake.group(-100687, "Again and again", members=(ann, bob))
    async with running_bot(tmp_path, fake) as h:
        store = h.services.store
        ann.start_bot()
        bob.start_bot()
        ann.send(group, f"/new@{BOT} deal=short")
        await h.settle()
        ann.send(group, f"/add@{BOT} easy")
        await h.settle()
        ann.send(group, f"/go@{BOT}")
        await h.settle()
        await play_until_over(h, [ann], group, random.Random(8))
        old = (await store.recent_matches(group.id))[0]
        summary = next(m for m in reversed(fake.sent(group)) if "🏁" in (m.text or ""))
        bob.press(summary, text="🔁 Rematch")  # not his match: refused
        await h.settle()
        assert await store.active_match(group.id) is None
        ann.press(summary, text="🔁 Rematch")  # the only person: one press starts it
        await h.settle()
        new = await store.active_match(group.id)
        assert new is not None and new.match_id != old.match_id
        assert [s.user_id for s in new.seats] == [s.user_id for s in old.seats][::-1]
        assert new.settings == old.settings
        # /cancel: only the creator or an admin.
        bob.send(group, f"/cancel@{BOT}")
        await h.settle()
        assert await store.active_match(group.id) is not None
        ann.send(group, f"/cancel@{BOT}")
        await h.settle()
        assert await store.active_match(group.id) is None
        assert any("cancelled" in (m.text or "") for m in fake.sent(group))
