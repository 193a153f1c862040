"""Headless Chromium for the Mini App's tests and screenshots: Debian's ``/usr/bin/chromium``
driven by Playwright (the pip package only: Playwright's own browser download is never run).

The page is opened as Telegram would open it, with ``window.Telegram.WebApp`` stubbed by an
init script: signed ``initData`` (tests/miniapp_harness.py), a theme, and the methods the page
calls. No script is loaded from anywhere else.

``python -m tests.miniapp_browser`` draws the README's screenshots (docs/img/miniapp-*.png).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from playwright.async_api import Browser, Page, async_playwright

CHROMIUM = os.environ.get("KRENDZU_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]
#: A phone: 360 CSS pixels wide, drawn at twice that for crisp screenshots.
PHONE = {"width": 360, "height": 780}
LIGHT = {"bg_color": "#ffffff", "text_color": "#000000", "hint_color": "#707579",
         "link_color": "#3390ec", "button_color": "#3390ec", "button_text_color": "#ffffff",
         "secondary_bg_color": "#f4f4f5"}
#: Telegram's dark theme (Telegram Web's night mode).
DARK = {"bg_color": "#212121", "text_color": "#ffffff", "hint_color": "#aaaaaa",
        "link_color": "#8774e1", "button_color": "#8774e1", "button_text_color": "#ffffff",
        "secondary_bg_color": "#181818", "destructive_text_color": "#ff595a"}


def stub(init_data: str, theme: dict[str, str] | None = None) -> str:
    """An init script standing in for telegram-web-app.js: what the page reads from it."""
    app = (f"{{initData: {json.dumps(init_data)}, initDataUnsafe: {{}}, "
           f"themeParams: {json.dumps(theme or LIGHT)}, ready() {{ window.__tgReady = true; }}, "
           "expand() {}, onEvent() {}}")
    return f"window.Telegram = {{WebApp: {app}}};"


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    if not shutil.which(CHROMIUM) and not os.path.exists(CHROMIUM):
        raise AssertionError(f"{CHROMIUM} is missing: install Debian's chromium package "
                             "(`make test` does)")
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            yield browser
        finally:
            await browser.close()


async def open_page(browser: Browser, url: str, init_data: str, *,
                    language: str = "en", stubbed: bool = True,
                    theme: dict[str, str] | None = None,
                    ready: str | None = "#app[data-seq]") -> Page:
    """The page at ``url`` as a 360 px phone; ``stubbed``: with ``window.Telegram.WebApp``
    carrying ``init_data`` and ``theme`` (else the URL must carry Telegram's launch
    parameters); ``ready``: what shows the page has drawn (``None``: the network is idle)."""
    context = await browser.new_context(viewport=PHONE, device_scale_factor=2,
                                        locale="ru-RU" if language == "ru" else "en-US")
    page = await context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    if stubbed:
        await context.add_init_script(stub(init_data, theme))
    await page.goto(url)
    if ready is None:
        await page.wait_for_load_state("networkidle")
    else:
        await page.wait_for_selector(ready, state="attached")
    page.errors = errors  # type: ignore[attr-defined]
    return page


async def seq_of(page: Page) -> int:
    return int(await page.get_attribute("#app", "data-seq") or 0)


async def tap_a_move(page: Page, *, second: bool = False) -> str:
    """Tap a playable card, the first highlighted cell, then confirm (a defender's first card
    with "play and end the turn", or with ``second`` "play, then a second card"); the cell's
    label."""
    await page.click("#hand button.card:not([disabled])")
    target = page.locator("#board .target").first
    cell = await target.get_attribute("data-cell") or ""
    await target.click()
    # The confirmation: the primary button first, then "play, then a second card" when a
    # defender may play two, then Cancel.
    await page.locator("#actions button").nth(1 if second else 0).click()
    return cell


def main() -> None:  # pragma: no cover - a tool, run by hand
    """Draw docs/img/miniapp-en.png and miniapp-ru.png from a real bot and match."""
    import asyncio
    import tempfile
    from pathlib import Path

    from tests.miniapp_shots import screenshots

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(screenshots(Path(tmp), Path("docs/img")))


if __name__ == "__main__":
    main()
