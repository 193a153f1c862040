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
