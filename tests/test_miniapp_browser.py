"""The Mini App in a real browser (issue 29): Debian's headless Chromium, driven by
Playwright, opens the page as Telegram would (``window.Telegram.WebApp`` stubbed with signed
initData), and two people play by tapping: an attacker's turn and a defender's, each
answered by the group's board post through the fake Bot API; the other player's page (and a
spectator's) follows by itself; then a defender's turn of two cards, and an attacker's turn
played with the keyboard alone."""

from __future__ import annotations

import asyncio
import json
import struct
import time
from pathlib import Path
from urllib.parse import urlencode

from playwright.async_api import Page

from storage import StoredMatch
from tests.miniapp_browser import chromium, open_page, seq_of, tap_a_move
from tests.miniapp_harness import app_bot, group_duel, init_data, new_fake, play_token


async def until_seq(page: Page, seq: int, seconds: float = 5.0) -> None:
    """Until the page shows the position ``seq`` (polled here: the page's policy allows
    no script but its own, so Playwright's string predicates cannot run in it)."""
    end = time.monotonic() + seconds
    while await seq_of(page) < seq:
        assert time.monotonic() < end, f"the page still shows {await seq_of(page)} < {seq}"
        await asyncio.sleep(0.1)


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


async def test_two_players_tap_their_turns_and_the_group_sees_them(tmp_path: Path) -> None:
    fake = new_fake(speed=2.0)  # the 90 s turn timer runs, slowly enough to play
    ann, bob = fake.user(21, "Ann"), fake.user(22, "Боб", language_code="ru")
    carl = fake.user(25, "Carl")
    group = fake.group(-100221, "Friends")
    async with app_bot(tmp_path, fake) as a, chromium() as browser:
        row = await group_duel(a.h, group, ann, bob, "duel")
        token = play_token(fake.last(group))
        url = f"{a.base}/app?m={token}"
        pages = {ann.id: await open_page(browser, url, init_data(fake, ann)),
                 bob.id: await open_page(browser, url, init_data(fake, bob), language="ru")}
        assert "Ваши карты" in await pages[bob.id].inner_text("#hand-title")
        assert "Your hand" in await pages[ann.id].inner_text("#hand-title")
        # Telegram's theme reaches the page's colours.
        colour = await pages[ann.id].evaluate(
            "getComputedStyle(document.documentElement).getPropertyValue('--tg-theme-button-color')")
        assert colour.strip() == "#3390ec"
        assert await pages[ann.id].evaluate("window.__tgReady === true")  # told Telegram
        roles = []

        async def turn(keyboard: bool = False, two: bool = False) -> StoredMatch:
            stored = await a.h.services.flow.load(row.match_id)
            seq = stored.next_seq  # (the kept match moves on in place)
            seat = stored.game.current_player
            user_id = stored.row.seats[seat].user_id
            page, other = pages[user_id], pages[ann.id if user_id == bob.id else bob.id]
            # The page shows it is their turn (it followed the last move by itself).
            await page.wait_for_selector("#prompt.mine", timeout=8000)
            assert await seq_of(page) == seq
            roles.append("attacker" if seat in stored.game.tour.roles.attackers
                         else "defender")
            mark = fake.mark()
            if keyboard:
                await page.focus("#hand button.card:not([disabled])")
                await page.keyboard.press("Enter")  # the card; the first legal cell focused
                cell = await page.evaluate("document.activeElement.dataset.cell")
                await page.keyboard.press("Enter")  # the cell; the confirmation focused
                await page.keyboard.press("Enter")
            elif two:  # a defender's two cards: the first, then the second one
                first = await tap_a_move(page, second=True)
                await until_seq(page, seq + 1)
                assert await page.locator("#actions button").count() >= 1  # End turn
                cell = await tap_a_move(page)
                assert first in (await fake.wait_for_message(
                    group, since=mark, timeout=10, where=lambda m: m.kind == "photo")
                    ).caption
            else:
                cell = await tap_a_move(page)
            post = await fake.wait_for_message(group, since=mark, timeout=10,
                                               where=lambda m: m.kind == "photo")
            assert cell and cell in (post.caption or ""), (cell, post.caption)
            after = await a.h.services.flow.load(row.match_id)
            assert after.next_seq > seq
            # Both pages show the new position within a few seconds, without a reload.
            for shown in (page, other):
                await until_seq(shown, after.next_seq)
            return after

        # Carl watches, opened by the group's t.me link: no window.Telegram.WebApp here,
        # the launch parameters in the URL's fragment as Telegram passes them, the match
        # named by the signed start_param.
        launch = urlencode({"tgWebAppData": init_data(fake, carl, start_param=token),
                            "tgWebAppVersion": "8.0", "tgWebAppPlatform": "android",
                            "tgWebAppThemeParams": json.dumps({"bg_color": "#212121",
                                                               "text_color": "#ffffff"})})
        watcher = await open_page(browser, f"{a.base}/app#{launch}", "", stubbed=False)
        assert await watcher.is_hidden("#hand-wrap")
        assert "watching" in await watcher.inner_text("#prompt")
        assert await watcher.is_hidden("#help")  # no "tap a card" for someone with none
        background = await watcher.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(33, 33, 33)"  # the dark theme it was opened with
        await turn()
        await turn()
        now = await a.h.services.flow.load(row.match_id)
        await until_seq(watcher, now.next_seq)  # the watcher followed too
        placed = now.game.tour.observation(None).placements
        assert await watcher.locator("#board g.card").count() == len(placed) >= 2
        # Two more turns: the defender's with two cards this time, the attacker's with the
        # keyboard alone (whichever comes first).
        for _ in range(2):
            stored = await a.h.services.flow.load(row.match_id)
            defends = stored.game.current_player not in stored.game.tour.roles.attackers
            await turn(keyboard=not defends, two=defends)
        assert sorted(roles) == ["attacker", "attacker", "defender", "defender"], roles
        # The private panel stayed in step: the player to move has a live one.
        await a.h.settle()
        for page in (*pages.values(), watcher):
            assert not page.errors, page.errors  # type: ignore[attr-defined]
        shot = await pages[ann.id].screenshot(full_page=True)
        assert png_size(shot)[0] == 720  # 360 CSS pixels, drawn at twice
        (tmp_path / "page.png").write_bytes(shot)
        # Nothing horizontal to scroll at 360 px but the board itself.
        overflow = await pages[ann.id].evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0
        assert not [c for c in fake.calls_to() if not c.ok and c.status != 429], fake.describe()


async def test_the_exchange_by_tapping(tmp_path: Path) -> None:
    """The exchange: each player taps how many cards to swap, then the card to give away
    and confirms; the hand shows the drawn card."""
    fake = new_fake(speed=2.0)
    ann, bob = fake.user(23, "Ann"), fake.user(24, "Bob")
    group = fake.group(-100222, "Friends")
    async with app_bot(tmp_path, fake) as a, chromium() as browser:
        row = await group_duel(a.h, group, ann, bob, "duel exchange=2")
        token = play_token(fake.last(group))
        url = f"{a.base}/app?m={token}"
        pages = {user.id: await open_page(browser, url, init_data(fake, user))
                 for user in (ann, bob)}
        gave: dict[int, str] = {}
        for _ in range(4):  # two counts, two discards, in the engine's order
            stored = await a.h.services.flow.load(row.match_id)
            seq = stored.next_seq
            seat = stored.game.current_player
            user_id = stored.row.seats[seat].user_id
            assert user_id is not None
            page = pages[user_id]
            await until_seq(page, seq)
            await page.wait_for_selector("#prompt.mine", timeout=8000)
            swap = page.locator("#actions button", has_text="Swap 1")
            if await swap.count():
                await swap.click()
            else:
                card = page.locator("#hand button.card:not([disabled])").first
                gave[user_id] = await card.get_attribute("data-card") or ""
                await card.click()
                assert "Exchange" in await page.inner_text("#prompt")
                await page.locator("#actions button.primary").click()
            await until_seq(page, seq + 1)
        after = await a.h.services.flow.load(row.match_id)
        assert len(gave) == 2, gave
        for user_id, code in gave.items():
            seat = after.row.seat_of(user_id)
            own = after.game.observation(seat).tour
            assert code in {c.code() for c in own.own_discards}
            await until_seq(pages[user_id], after.next_seq)
            shown = await pages[user_id].locator("#hand button.card").evaluate_all(
                "cards => cards.map(c => c.dataset.card)")
            assert shown == [c.code() for c in own.hand]
        for page in pages.values():
            assert not page.errors, page.errors  # type: ignore[attr-defined]
