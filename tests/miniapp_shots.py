"""The README's screenshots of the Mini App (docs/img/miniapp-en.png, miniapp-ru.png): a real
bot and match against the fake Bot API, a few moves made through the API, then each player's
page at 360 px with a card tapped, so the highlighted cells show what to do next.
Run ``python -m tests.miniapp_browser``."""

from __future__ import annotations

import random
from pathlib import Path

from tests.miniapp_browser import chromium, open_page
from tests.miniapp_harness import app_bot, group_duel, init_data, new_fake, play_token


async def screenshots(tmp: Path, out: Path, moves: int = 6) -> list[Path]:
    fake = new_fake(speed=1.0)
    ann, bob = fake.user(31, "Anna"), fake.user(32, "Борис", language_code="ru")
    group = fake.group(-100331, "Friends")
    rng = random.Random(29)
    saved: list[Path] = []
    async with app_bot(tmp, fake) as a, chromium() as browser:
        row = await group_duel(a.h, group, ann, bob, "duel")
        token = play_token(fake.last(group))

        async def move() -> None:
            stored = await a.h.services.flow.load(row.match_id)
            seat = stored.game.current_player
            user = ann if stored.row.seats[seat].user_id == ann.id else bob
            legal = [str(x) for x in stored.game.observation(seat).tour.legal]
            state = (await a.get(f"/api/app/v1/match/{token}", init_data(fake, user))).json()
            actions = [rng.choice(legal)]
            if state["pair"]:
                actions.append("end")
            answer = await a.post(f"/api/app/v1/match/{token}/move", init_data(fake, user),
                                  {"seq": stored.next_seq, "actions": actions})
            assert answer.status_code == 200, answer.text
            await a.h.settle()

        for _ in range(moves):
            await move()
        for _ in range(2):
            stored = await a.h.services.flow.load(row.match_id)
            seat = stored.game.current_player
            user, language = ((ann, "en") if stored.row.seats[seat].user_id == ann.id
                              else (bob, "ru"))
            page = await open_page(browser, f"{a.base}/app?m={token}",
                                   init_data(fake, user), language=language)
            await page.click("#hand button.card:not([disabled])")
            await page.wait_for_selector("#board .target")
            await page.mouse.click(1, 1)  # no hover or focus ring on a cell in the picture
            path = out / f"miniapp-{language}.png"
            path.write_bytes(await page.screenshot(full_page=True))
            saved.append(path)
            await page.context.close()
            await move()
    return saved


async def gallery(tmp: Path, out: Path) -> list[Path]:
    """The page in the states a player meets, at 360 px in a light and a dark theme, for a
    person to look at (``python -m tests.miniapp_shots OUT``): waiting with the hand dimmed,
    the exchange question, a card lifted, after the computer scored, and the error pages
    (an expired and a forged ``initData``, a match the bot never made)."""
    from tests.bot_harness import panel
    from tests.miniapp_browser import DARK, LIGHT

    fake = new_fake(speed=1.0)
    ann, bob = fake.user(41, "Anna"), fake.user(42, "Bob")
    cara = fake.user(43, "Cara")
    group = fake.group(-100441, "Friends")
    rng = random.Random(43)
    saved: list[Path] = []
    async with app_bot(tmp, fake) as a, chromium() as browser:

        async def shoot(name: str, url: str, init: str, tap: bool = False,
                        ready: str | None = "#app[data-seq]", press: str | None = None,
                        then: str | None = None) -> None:
            """``tap``: a card lifted; ``press``: a button pressed, ``then`` awaited."""
            for theme_name, theme in (("light", LIGHT), ("dark", DARK)):
                page = await open_page(browser, url, init, theme=theme, ready=ready)
                if tap:
                    await page.click("#hand button.card:not([disabled])")
                    await page.wait_for_selector("#board .target")
                    await page.mouse.click(1, 1)
                if press:
                    await page.click(press)
                    await page.wait_for_selector(then or press)
                    await page.mouse.click(1, 1)
                path = out / f"gallery-{name}-{theme_name}.png"
                path.write_bytes(await page.screenshot(full_page=True))
                saved.append(path)
                await page.context.close()

        row = await group_duel(a.h, group, ann, bob, "duel exchange=2")
        token = play_token(fake.last(group))
        url = f"{a.base}/app?m={token}"
        stored = await a.h.services.flow.load(row.match_id)
        seat = stored.game.current_player
        mover = ann if stored.row.seats[seat].user_id == ann.id else bob
        waiter = bob if mover is ann else ann
        await shoot("exchange", url, init_data(fake, mover))
        await shoot("waiting", url, init_data(fake, waiter))
        for _ in range(4):  # the exchange: a count and a card each
            stored = await a.h.services.flow.load(row.match_id)
            seat = stored.game.current_player
            user = ann if stored.row.seats[seat].user_id == ann.id else bob
            legal = [str(x) for x in stored.game.observation(seat).tour.legal]
            step = "ann:1" if "ann:1" in legal else legal[0]
            answer = await a.post(f"/api/app/v1/match/{token}/move", init_data(fake, user),
                                  {"seq": stored.next_seq, "actions": [step]})
            assert answer.status_code == 200, answer.text
            await a.h.settle()
        stored = await a.h.services.flow.load(row.match_id)
        seat = stored.game.current_player
        mover = ann if stored.row.seats[seat].user_id == ann.id else bob
        await shoot("lifted", url, init_data(fake, mover), tap=True)
        await shoot("hint", url, init_data(fake, mover), press="#hint-button",
                    then="#hint:not([hidden])")
        await shoot("resign", url, init_data(fake, mover), press="#resign-button",
                    then="#tools .question")
        await shoot("expired", url, ready=None, init=init_data(fake, mover, age=3 * 86400))
        await shoot("forged", url, ready=None, init=init_data(fake, mover, token="1:forged"))
        await shoot("unknown", f"{a.base}/app?m=99-{'A' * 22}", init_data(fake, mover),
                    ready=None)

        # Alone against the computer, until the computer's last turn scored.
        cara.start_bot()
        await a.h.settle()
        for _attempt in range(20):
            cara.send(cara, "/new deal=short")
            await a.h.settle()
            lobby = fake.last(cara)
            assert lobby is not None
            cara.press(lobby, data=lobby.button(text="🤖 Easy")["callback_data"])
            await a.h.settle()
            cara.press(lobby, data=next(b for b in lobby.buttons()
                                        if b["callback_data"].endswith(":go"))["callback_data"])
            await a.h.settle()
            message = panel(fake, cara)
            assert message is not None, fake.describe()
            mine = next(b["web_app"]["url"] for b in message.buttons() if "web_app" in b)
            solo = mine.split("m=", 1)[1]
            match_id = int(solo.split("-", 1)[0])
            scored = False
            for _ in range(200):
                stored = await a.h.services.flow.load(match_id)
                if stored.game.is_over:
                    break
                tour = stored.game.observation(None).tour
                computer = 1 - (stored.row.seat_of(cara.id) or 0)
                if (tour.turns and tour.turns[-1].player == computer
                        and any(c.move == len(tour.turns) - 1 for c in tour.combos)):
                    scored = True
                    break
                seat = stored.game.current_player
                legal = [str(x) for x in stored.game.observation(seat).tour.legal]
                places = [x for x in legal if "@" in x]
                step = rng.choice(places or legal)
                answer = await a.post(f"/api/app/v1/match/{solo}/move", init_data(fake, cara),
                                      {"seq": stored.next_seq, "actions": [step]})
                assert answer.status_code == 200, answer.text
                await a.h.settle()
            if scored:
                await shoot("computer-scored", f"{a.base}/app?m={solo}", init_data(fake, cara))
                break
            cara.send(cara, "/resign")
            await a.h.settle()
    return saved


def main() -> None:  # pragma: no cover - a tool, run by hand
    """``python -m tests.miniapp_shots OUT``: the gallery in OUT."""
    import asyncio
    import sys
    import tempfile

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "miniapp-gallery")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for path in asyncio.run(gallery(Path(tmp), out)):
            print(path)


if __name__ == "__main__":
    main()
