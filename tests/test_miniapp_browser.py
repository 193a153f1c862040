"""The Mini App in a real browser (issue 29): Debian's headless Chromium, driven by
Playwright, opens the page as Telegram would (``window.Telegram.WebApp`` stubbed with signed
initData), and two people play by tapping: an attacker's turn and a defender's, each
answered by the group's board post through the fake Bot API; the other player's page (and a
spectator's) follows by itself; then a defender's turn of two cards, and an attacker's turn
played with the keyboard alone."""

from __future__ import annotations

import asyncio
import json
import random
import struct
import time
from pathlib import Path
from urllib.parse import urlencode

from playwright.async_api import Page

from chat.model import tour_frame
from storage import MatchStatus, StoredMatch
from tests.miniapp_browser import DARK, LIGHT, chromium, open_page, seq_of, tap_a_move
from tests.miniapp_harness import (
    POOL,
    app_bot,
    group_duel,
    init_data,
    new_fake,
    play_token,
    pool_duel,
    start_message,
    watch_token,
)


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
                # Asked once (the prompt), every answer alike: keeping the cards is not
                # offered as the default, nor called "Swap 0".
                question = await page.inner_text("#prompt")
                assert "how many" in question, question
                assert (await page.inner_text("#app")).count(question) == 1
                labels = await page.locator("#actions button").all_inner_texts()
                assert "Swap 0" not in labels and "Keep my cards" in labels, labels
                assert not await page.locator("#actions button.primary").count()
                await swap.click()
            else:
                card = page.locator("#hand button.card:not([disabled])").first
                gave[user_id] = await card.get_attribute("data-card") or ""
                await card.click()
                # "Exchange 10♠?" asked once, in the prompt; the buttons answer it.
                code = gave[user_id]
                shown = ("10" if code[0] == "T" else code[0]) + {"S": "♠", "C": "♣",
                                                                "D": "♦", "H": "♥"}[code[1]]
                assert f"Exchange {shown}?" in await page.inner_text("#prompt")
                assert (await page.inner_text("#app")).count(f"Exchange {shown}") == 1
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


# What a player reads: contrast, the lifted card, words for what happened, errors ----------


def _rgba(css: str) -> tuple[float, float, float, float]:
    """``rgb(r, g, b)`` or ``rgba(r, g, b, a)`` as numbers (a computed colour)."""
    inside = css[css.index("(") + 1:css.rindex(")")].replace("/", " ").replace(",", " ")
    parts = [float(p) for p in inside.split()]
    return (parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else 1.0)


def _over(top: tuple[float, float, float], bottom: tuple[float, float, float],
          alpha: float) -> tuple[float, float, float]:
    return tuple(alpha * a + (1 - alpha) * b for a, b in zip(top, bottom, strict=True))  # type: ignore[return-value]


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """WCAG 2's contrast ratio of two sRGB colours."""
    def luminance(rgb: tuple[float, float, float]) -> float:
        lin = [(c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4)
               for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


async def hand_contrasts(page: Page) -> list[tuple[str, bool, float]]:
    """Each hand card's (code, disabled, the lowest contrast of its rank and suit on its
    face), from the computed styles as drawn: the face over the page's background, the
    text over the face, then the opacity of the card and every ancestor."""
    cards = await page.locator("#hand button.card").evaluate_all("""cards => cards.map(c => {
        const chain = [];
        for (let n = c; n; n = n.parentElement) {
          const s = getComputedStyle(n);
          chain.push({bg: s.backgroundColor, opacity: s.opacity, filter: s.filter,
                      blend: s.mixBlendMode});
        }
        return {card: c.dataset.card, disabled: c.disabled, chain: chain,
                texts: [...c.children].map(x => getComputedStyle(x).color)};
      })""")
    out = []
    for card in cards:
        chain = card["chain"]  # the card first, the document last
        assert all(link["filter"] == "none" and link["blend"] == "normal"
                   for link in chain), chain  # else the sum below would not be the picture
        backdrop = (255.0, 255.0, 255.0)  # the canvas under the document
        for link in reversed(chain[1:]):
            r, g, b, a = _rgba(link["bg"])
            backdrop = _over((r, g, b), backdrop, a)
        alpha = 1.0
        for link in chain:
            alpha *= float(link["opacity"])
        r, g, b, a = _rgba(chain[0]["bg"])
        face = _over((r, g, b), backdrop, a)
        worst = 99.0
        for colour in card["texts"]:
            r, g, b, a = _rgba(colour)
            text = _over((r, g, b), face, a)
            worst = min(worst, contrast(_over(text, backdrop, alpha), _over(face, backdrop, alpha)))
        out.append((card["card"], card["disabled"], worst))
    return out


async def lifted_is_clear(page: Page) -> None:
    """The lifted card, its ring included, covers neither the title nor another card."""
    lifted = page.locator('#hand button.card[aria-pressed="true"]')
    await lifted.wait_for()
    boxes = await page.evaluate("""() => {
        const box = (n) => { const r = n.getBoundingClientRect();
          return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; };
        const up = document.querySelector('#hand button.card[aria-pressed="true"]');
        const s = getComputedStyle(up);
        const ring = parseFloat(s.outlineWidth) + Math.max(0, parseFloat(s.outlineOffset));
        const b = box(up);
        return {lifted: {left: b.left - ring, top: b.top - ring, right: b.right + ring,
                         bottom: b.bottom + ring},
                others: [document.getElementById("hand-title"),
                         ...document.querySelectorAll('#hand button.card[aria-pressed="false"]')
                        ].map(box)}; }""")
    up = boxes["lifted"]
    for other in boxes["others"]:
        overlap = (up["left"] < other["right"] and other["left"] < up["right"]
                   and up["top"] < other["bottom"] and other["top"] < up["bottom"])
        assert not overlap, (up, other)


async def test_the_hand_reads_well_and_a_lifted_card_stays_clear(tmp_path: Path) -> None:
    """Every card of the hand, red suits on the dimmed hand of the player who waits
    included, has a contrast of at least 4.5:1 in a light and a dark theme; the card a
    player lifts (chosen) keeps clear of the "Your hand" title above it."""
    fake = new_fake(speed=1.0)
    ann, bob = fake.user(26, "Ann"), fake.user(27, "Bob")
    group = fake.group(-100226, "Friends")
    async with app_bot(tmp_path, fake) as a, chromium() as browser:
        row = await group_duel(a.h, group, ann, bob, "duel")
        token = play_token(fake.last(group))
        stored = await a.h.services.flow.load(row.match_id)
        mover_id = stored.row.seats[stored.game.current_player].user_id
        mover, waiter = (ann, bob) if mover_id == ann.id else (bob, ann)
        for theme in (LIGHT, DARK):
            for user in (waiter, mover):
                page = await open_page(browser, f"{a.base}/app?m={token}",
                                       init_data(fake, user), theme=theme)
                found = await hand_contrasts(page)
                assert any(code[1] in "DH" for code, _, _ in found), found  # a red suit
                if user is waiter:
                    assert all(disabled for _, disabled, _ in found)  # the dimmed hand
                low = [(code, round(ratio, 2)) for code, _, ratio in found if ratio < 4.5]
                assert not low, (theme["bg_color"], user.first_name, low)
                if user is mover:  # the first card (under the title), then the last one
                    for which in ("first", "last"):
                        await getattr(page.locator("#hand button.card:not([disabled])"),
                                      which).click()
                        await lifted_is_clear(page)
                    assert not page.errors, page.errors  # type: ignore[attr-defined]
                await page.context.close()


async def test_after_the_computer_scores_the_page_says_so(tmp_path: Path) -> None:
    """Alone against the computer: once the computer's card completes a line, the page says
    in words who scored, +1, and which line (its ends' labels), in the reader's language;
    the board alone showed only a stroke over the cards."""
    from tests.bot_harness import panel

    fake = new_fake(speed=1.0)
    cara = fake.user(28, "Кара", language_code="ru")
    dan = fake.user(29, "Dan")  # watches, in English
    rng = random.Random(28)
    async with app_bot(tmp_path, fake) as a, chromium() as browser:
        cara.start_bot()
        await a.h.settle()
        found = None
        for _attempt in range(30):
            cara.send(cara, "/new deal=short")
            await a.h.settle()
            lobby = fake.last(cara)
            assert lobby is not None
            cara.press(lobby, data=next(b for b in lobby.buttons()
                                        if "🤖" in b["text"])["callback_data"])
            await a.h.settle()
            cara.press(lobby, data=next(b for b in lobby.buttons()
                                        if b["callback_data"].endswith(":go"))["callback_data"])
            await a.h.settle()
            message = panel(fake, cara)
            assert message is not None, fake.describe()
            url = next(b["web_app"]["url"] for b in message.buttons() if "web_app" in b)
            token = url.split("m=", 1)[1]
            match_id = int(token.split("-", 1)[0])
            for _ in range(200):
                stored = await a.h.services.flow.load(match_id)
                if stored.game.is_over:
                    break
                tour = stored.game.observation(None).tour
                computer = 1 - (stored.row.seat_of(cara.id) or 0)
                if (tour.turns and tour.turns[-1].player == computer
                        and any(c.move == len(tour.turns) - 1 for c in tour.combos)):
                    found = (token, stored, tour)
                    break
                seat = stored.game.current_player
                legal = [str(x) for x in stored.game.observation(seat).tour.legal]
                step = rng.choice([x for x in legal if "@" in x] or legal)
                answer = await a.post(f"/api/app/v1/match/{token}/move",
                                      init_data(fake, cara),
                                      {"seq": stored.next_seq, "actions": [step]})
                assert answer.status_code == 200, answer.text
                await a.h.settle()
            if found:
                break
            cara.send(cara, "/resign")
            await a.h.settle()
        assert found, "the computer never scored"
        token, stored, tour = found
        combo = next(c for c in tour.combos if c.move == len(tour.turns) - 1)
        frame = tour_frame(stored.game)
        ends = f"{frame.label(*combo.cells[0])}–{frame.label(*combo.cells[-1])}"
        for user, words in ((cara, "линия"), (dan, "the line")):
            page = await open_page(browser, f"{a.base}/app?m={token}", init_data(fake, user),
                                   language=user.language_code or "en")
            names = await page.locator("#players li").evaluate_all(
                "items => items.map(i => i.firstChild.textContent.trim())")
            said = await page.locator("#recent li.scored").all_inner_texts()
            assert said, await page.inner_text("#app")
            line = said[-1]
            assert "+1" in line and words in line and ends in line, line
            assert names[computer] in line, (names, line)  # who scored: the computer
            assert await page.locator("#recent li.scored").last.is_visible()
            await page.context.close()


async def test_error_pages_say_only_what_went_wrong(tmp_path: Path) -> None:
    """An expired or forged initData, a link that names no match, no initData at all: the
    page shows the error and what to do, and no empty board, hand or "Tap a card" help. A
    stranger watching a pool match whose player turns the watch link off: the open page
    drops the board and says only that (its long poll meets ``watch_off``)."""
    fake = new_fake(speed=1.0)
    ann, bob = fake.user(30, "Ann"), fake.user(31, "Bob")
    group = fake.group(-100230, "Friends")
    async with app_bot(tmp_path, fake, **POOL) as a, chromium() as browser:
        await group_duel(a.h, group, ann, bob, "duel")
        token = play_token(fake.last(group))
        url = f"{a.base}/app?m={token}"
        cases = [(url, init_data(fake, ann, age=3 * 86400), "open it again"),
                 (url, init_data(fake, ann, token="1:forged"), "open it again"),
                 (f"{a.base}/app?m=99-{'A' * 22}", init_data(fake, ann), "/new"),
                 (url, "", "Play")]
        for theme in (LIGHT, DARK):
            for where, init, next_step in cases:
                page = await open_page(browser, where, init, theme=theme, ready=None)
                text = await page.inner_text("#fatal")
                assert await page.is_visible("#fatal") and next_step in text, text
                for part in ("#board-wrap", "#hand-wrap", "#help", "#actions", "#tools",
                             "#top", "#prompt"):
                    assert await page.is_hidden(part), (where, part)
                await page.context.close()
        dan, eve, carl = fake.user(34, "Dan"), fake.user(35, "Eve"), fake.user(36, "Carl")
        await pool_duel(a, dan, eve)
        offer = start_message(fake, dan)
        page = await open_page(browser, f"{a.base}/app?m={watch_token(offer)}",
                               init_data(fake, carl))
        assert await page.is_visible("#board-wrap") and await page.is_hidden("#fatal")
        dan.press(offer, text="🙈 Turn the watch link off")
        await a.h.settle()
        await page.wait_for_selector("#fatal", state="visible", timeout=10_000)
        assert "watch link off" in await page.inner_text("#fatal")
        for part in ("#board-wrap", "#hand-wrap", "#top", "#prompt", "#recent"):
            assert await page.is_hidden(part), part
        await page.context.close()


async def test_hint_and_resign_from_the_page(tmp_path: Path) -> None:
    """Hint (the bot's /hint) lifts the suggested card at its cell, ready to confirm, and
    the suggestion comes privately too; Resign asks first, Cancel keeps playing, and
    the confirmed resignation ends the match as /resign does, told in the group."""
    fake = new_fake(speed=1.0)
    ann, bob = fake.user(32, "Ann"), fake.user(33, "Bob")
    group = fake.group(-100232, "Friends")
    async with app_bot(tmp_path, fake) as a, chromium() as browser:
        row = await group_duel(a.h, group, ann, bob, "duel")
        token = play_token(fake.last(group))
        url = f"{a.base}/app?m={token}"
        stored = await a.h.services.flow.load(row.match_id)
        seq = stored.next_seq
        mover_id = stored.row.seats[stored.game.current_player].user_id
        mover, waiter = (ann, bob) if mover_id == ann.id else (bob, ann)
        page = await open_page(browser, url, init_data(fake, mover))
        other = await open_page(browser, url, init_data(fake, waiter))
        assert await other.is_hidden("#hint-button")  # not their turn
        await page.click("#hint-button")
        await page.wait_for_selector("#hint:not([hidden])")
        said = await page.inner_text("#hint")
        assert "Suggestion" in said, said
        lifted = await page.get_attribute('#hand button.card[aria-pressed="true"]', "data-card")
        assert lifted and lifted in {c.code() for c in stored.game.observation(
            stored.game.current_player).tour.hand}
        await a.h.settle()
        assert any("Suggestion" in (m.caption or "") for m in fake.sent(mover))  # as /hint
        mark = fake.mark()
        await page.locator("#actions button.primary").click()  # the suggestion, confirmed
        await until_seq(page, seq + 1)
        after = await a.h.services.flow.load(row.match_id)
        assert str(after.game.history[-1]).startswith(lifted), (after.game.history[-1], lifted)
        await fake.wait_for_message(group, since=mark, where=lambda m: m.kind == "photo")
        # Resign: asked first; Cancel keeps the match going.
        await until_seq(other, seq + 1)
        await other.click("#resign-button")
        assert "Resign this match?" in await other.inner_text("#tools")
        await other.locator("#tools button", has_text="Cancel").click()
        await other.wait_for_selector("#resign-button")
        assert (await a.h.services.flow.load(row.match_id)).row.status is MatchStatus.ACTIVE
        mark = fake.mark()
        await other.click("#resign-button")
        await other.click("#tools button.danger")
        await fake.wait_for_message(group, since=mark, timeout=10,
                                    where=lambda m: "resigned" in (m.caption or m.text or ""))
        await other.wait_for_selector("#tools", state="hidden")
        assert (await a.h.services.flow.load(row.match_id)).row.status is not MatchStatus.ACTIVE
        for shown in (page, other):
            assert not shown.errors, shown.errors  # type: ignore[attr-defined]
