"""End to end (issue 27, items 7 and 11): a resignation ends a match as any ending does (the
final board, the summary, a Rematch button that works), and private panels never mislead:
a replaced panel loses its keys and says so, and a panel's photo always shows the position
its caption describes."""

from __future__ import annotations

import random
from pathlib import Path

from chat.flow.views import codec
from chat.notices import BoardPicture
from krendzu import match_outcome
from storage import MatchStatus
from tests.bot_harness import (
    BOT,
    FastClock,
    Harness,
    panel,
    play_step_with_buttons,
    running_bot,
    start_group_duel,
)
from tests.fakebot import FakeTelegram, FakeUser

REPLACED = "⤵ This panel was replaced by the newer one below."


def rematch_data(match_id: int) -> str:
    return codec.match_data(match_id, 0, codec.REMATCH_OP)


def ending(fake: FakeTelegram, chat: object) -> list[tuple[str, ...]]:
    """The shape of how a match ended in ``chat``: its last three visible bot messages as
    (kind, what they hold) — the final board, the last tour's moves, the summary."""
    shape = []
    for message in [m for m in fake.sent(chat, deleted=False)][-3:]:  # type: ignore[arg-type]
        text = message.caption or message.text or ""
        data = [b.get("callback_data", "") for b in message.buttons()]
        shape.append((message.kind, *(mark for mark in ("The match is over.", "📋", "🏁")
                                      if mark in text),
                      *(["rematch"] if any(d.endswith(":rematch") for d in data) else [])))
    return shape


async def play_steps(h: Harness, users: list[FakeUser], steps: int, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(steps):
        mover = next((u for u in users if panel(h.fake, u) is not None), None)
        assert mover is not None, h.fake.describe()
        assert await play_step_with_buttons(h, mover, rng)


async def test_a_resigned_group_duel_ends_like_any_match_and_rematch_works(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(301, "Ann"), fake.user(302, "Bob")
    played, resigned = fake.group(-100301, "Played out"), fake.group(-100302, "Resigned")
    async with running_bot(tmp_path, fake) as h:
        flow, store = h.services.flow, h.services.store
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        # A match played to its end, for comparison: Ann against the computer.
        for text in (f"/new@{BOT} deal=short", f"/add@{BOT} easy", f"/go@{BOT}"):
            ann.send(played, text)
            await h.settle()
        rng = random.Random(11)
        for _ in range(600):
            if any("🏁" in (m.text or "") for m in fake.sent(played)):
                break
            if not (panel(fake, ann) and await play_step_with_buttons(h, ann, rng)):
                await h.settle()
        normal = ending(fake, played)
        assert normal == [("photo", "The match is over."), ("text", "📋"),
                          ("text", "The match is over.", "🏁", "rematch")], normal

        # Bob resigns a duel against Ann midway.
        row = await start_group_duel(h, resigned, ann, bob, "duel deal=short")
        await play_steps(h, [ann, bob], 5, seed=12)
        seen = {user.id: len(fake.sent(user)) for user in (ann, bob)}
        bob.send(resigned, f"/resign@{BOT}")
        await h.settle()
        assert ending(fake, resigned) == normal, [
            (m.kind, m.caption or m.text) for m in fake.sent(resigned, deleted=False)]
        board, tour, summary = fake.sent(resigned, deleted=False)[-3:]
        line = "Bob resigned: the match goes to Ann."
        assert line in (board.caption or "") and line in (summary.text or "")
        assert "Tour 1/2: the moves" in (tour.text or ""), "the broken-off tour's moves stay"
        assert "Score:" in (summary.text or "") and "broken off" in (summary.text or "")
        # One board left in the group, the final one; it shows the result in its picture.
        boards = [m for m in fake.sent(resigned, deleted=False) if m.kind == "photo"]
        assert boards == [board]
        stored = await flow.load(row.match_id)
        assert stored.row.status is MatchStatus.ABANDONED
        group_tr = await flow.chat_tr(resigned.id)
        outcome = match_outcome(stored.game, conceded=row.seat_of(bob.id))
        expected = await h.services.delivery.painter.board(BoardPicture(
            stored.game.observation(None), await flow.seat_names(stored.row, group_tr),
            group_tr.language, outcome=outcome))
        assert board.data == expected, "the final board names the winner in its header"
        for user in (ann, bob):  # told privately; no panel keeps its keys
            assert any(line in (m.text or "") for m in fake.sent(user)[seen[user.id]:])
            assert panel(fake, user) is None
        # Its Rematch button works as under any summary: Bob's seat waits for Ann.
        assert rematch_data(row.match_id) in [b["callback_data"] for b in summary.buttons()]
        bob.press(summary, data=rematch_data(row.match_id))
        await h.settle()
        assert await store.open_lobby(resigned.id) is not None
        ann.press(summary, data=rematch_data(row.match_id))
        await h.settle()
        new = await store.active_match(resigned.id)
        assert new is not None and new.match_id != row.match_id
        assert [s.user_id for s in new.seats] == [bob.id, ann.id]


async def test_a_trio_resignation_plays_on_and_then_ends_normally(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(311, "Ann")
    group = fake.group(-100311, "Trio")
    async with running_bot(tmp_path, fake) as h:
        store = h.services.store
        ann.start_bot()
        for text in (f"/new@{BOT} trio-lone-defender deal=2/4", f"/add@{BOT} easy",
                     f"/add@{BOT} easy", f"/go@{BOT}"):
            ann.send(group, text)
            await h.settle()
        row = await store.active_match(group.id)
        assert row is not None
        ann.send(group, f"/resign@{BOT}")
        await h.settle()
        assert any("Ann resigned" in (m.text or "") and "rank" in (m.text or "")
                   for m in fake.sent(group))
        await fake.wait_for_message(group, "🏁", timeout=30, since=0)
        await h.settle()
        assert (await store.get_match(row.match_id)).status is MatchStatus.FINISHED
        assert ending(fake, group) == [("photo", "The match is over."), ("text", "📋"),
                                       ("text", "The match is over.", "🏁", "rematch")]
        summary = fake.sent(group, deleted=False)[-1]
        ann.press(summary, data=rematch_data(row.match_id))  # the only person: it starts
        await h.settle()
        new = await store.active_match(group.id)
        assert new is not None and new.match_id != row.match_id


async def test_a_private_resignation_against_the_computer(tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(321, "Ann")
    async with running_bot(tmp_path, fake) as h:
        store = h.services.store
        ann.start_bot()
        ann.send(ann.chat, "/new deal=short")
        await h.settle()
        lobby = fake.last(ann)
        assert lobby is not None
        ann.press(lobby, data=lobby.button(text="🤖 Easy")["callback_data"])
        await h.settle()
        ann.press(lobby, data=next(b for b in lobby.buttons()
                                   if b["callback_data"].endswith(":go"))["callback_data"])
        await h.settle()
        row = (await store.matches_of_user(ann.id))[0]
        await play_steps(h, [ann], 2, seed=21)
        ann.send(ann.chat, "/resign")
        await h.settle()
        board, summary = fake.sent(ann)[-2:]
        assert board.kind == "photo" and "Ann resigned" in (board.caption or "")
        assert "The match is over." in (board.caption or "") and not board.buttons()
        assert "🏁" in (summary.text or "") and "Ann resigned" in (summary.text or "")
        assert panel(fake, ann) is None
        ann.press(summary, data=rematch_data(row.match_id))
        await h.settle()
        new = (await store.matches_of_user(ann.id))
        assert new and new[0].match_id != row.match_id
        assert new[0].status is MatchStatus.ACTIVE


async def drawn(h: Harness, match_id: int, user: FakeUser) -> bytes:
    """The picture of the position as the user's seat sees it now (their panel's board)."""
    flow = h.services.flow
    stored = await flow.load(match_id)
    seat = stored.row.seat_of(user.id)
    tr = await flow.user_tr(user.id)
    return await h.services.delivery.painter.board(BoardPicture(
        stored.game.observation(seat), await flow.seat_names(stored.row, tr), tr.language,
        private=True))


async def test_panels_show_the_board_their_caption_describes_and_say_when_replaced(
        tmp_path: Path) -> None:
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(331, "Ann"), fake.user(332, "Bob", language_code="ru")
    group = fake.group(-100331, "Panels")
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        row = await start_group_duel(h, group, ann, bob, "duel deal=short")
        rng = random.Random(31)
        redrawn = 0
        for _ in range(14):
            mover = next(u for u in (ann, bob) if panel(fake, u) is not None)
            pressed = panel(fake, mover)
            assert pressed is not None and pressed.file is not None
            photo = pressed.file.file_id
            assert await play_step_with_buttons(h, mover, rng)
            if (await h.services.store.get_match(row.match_id)).status is not \
                    MatchStatus.ACTIVE:
                break
            # The pressed panel became the record of the move, or stays the panel of the
            # turn's second card: either way its photo is the position its caption tells.
            after = fake.message(mover, pressed.message_id)
            assert after.kind == "photo" and after.data == await drawn(h, row.match_id, mover)
            redrawn += after.file is not None and after.file.file_id != photo
            for user in (ann, bob):
                live = panel(fake, user)
                if live is not None:
                    assert live.data == await drawn(h, row.match_id, user)
        assert redrawn, "moves redraw the pressed panel's photo"
        # A newer panel (/board privately on one's turn) replaces the old one: the old one
        # loses its keys and says so.
        user = next(u for u in (ann, bob) if panel(fake, u) is not None)
        old = panel(fake, user)
        assert old is not None
        user.send(user.chat, "/board")
        await h.settle()
        new = panel(fake, user)
        assert new is not None and new.message_id != old.message_id
        old = fake.message(user, old.message_id)
        assert not old.buttons()
        replaced = REPLACED if user is ann else "⤵ Эту панель сменила новая — она ниже."
        assert old.caption == replaced
        assert new.data == await drawn(h, row.match_id, user)
