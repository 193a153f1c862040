"""Logs never hold secrets: the token is masked everywhere, hands are not logged at DEBUG.

The records pushed through the set-up here have the exact shapes python-telegram-bot,
httpx and aiosqlite log; the last test plays a deal at ``LOG_LEVEL=DEBUG`` through the fake
Bot API and reads everything that was logged.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from telegram.error import InvalidToken

from chat import logs
from krendzu import Card, Pass, Place, export_record
from krendzu.coords import frame_for
from tests.bot_harness import BOT, FastClock, panel, running_bot, start_private_match
from tests.fakebot import FakeTelegram

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "7654321:AAH-very-secret-part_0123456789abcdef"
SECRET = TOKEN.partition(":")[2]
HAND_TEXT = "Your hand (3 cards): Q♣ 10♦ A♠"


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """Put back what :func:`chat.logs.configure` changes (levels, filters, except hooks)."""
    root = logging.getLogger()
    level = root.level
    levels = {name: logging.getLogger(name).level for name in logs.QUIET}
    hooks = sys.excepthook, threading.excepthook
    formatters = {handler: handler.formatter for handler in root.handlers}
    yield
    for handler in root.handlers:
        for found in [f for f in handler.filters
                      if isinstance(f, logs.Redactor | logs.UpdateFields)]:
            handler.removeFilter(found)
        if handler in formatters:
            handler.setFormatter(formatters[handler])
    root.setLevel(level)
    for name, saved in levels.items():
        logging.getLogger(name).setLevel(saved)
    sys.excepthook, threading.excepthook = hooks


@pytest.fixture
def debug_log(restore_logging: None) -> Iterator[io.StringIO]:
    """The bot's logging set-up at DEBUG with a fake token, writing into a string."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter(logs.FORMAT))
    logging.getLogger().addHandler(handler)
    logs.configure("DEBUG", TOKEN)
    yield out
    logging.getLogger().removeHandler(handler)


def test_the_token_is_masked_in_messages_urls_and_tracebacks(debug_log: io.StringIO) -> None:
    log = logging.getLogger("chat.test")
    log.debug("plain debug lines still reach the log")
    log.warning("token %s in an argument", TOKEN)
    log.error(f"token {TOKEN} in the message itself")
    log.info("GET https://api.telegram.org/bot%s/sendMessage?chat_id=1", TOKEN)
    log.info("URL-encoded: token=%s", TOKEN.replace(":", "%3A"))
    log.info("the secret half alone: %s", SECRET)
    try:
        raise InvalidToken(f"The token `{TOKEN}` was rejected by the server.")
    except InvalidToken:
        log.exception("initialising failed")
    text = debug_log.getvalue()
    assert SECRET not in text and TOKEN not in text, text
    assert "plain debug lines still reach the log" in text
    assert text.count(logs.MASK) == 6, text
    assert "The token `<token>` was rejected" in text
    assert "/bot<token>/sendMessage" in text


def test_unhandled_exceptions_are_logged_masked(debug_log: io.StringIO) -> None:
    error = InvalidToken(f"The token `{TOKEN}` was rejected by the server.")
    sys.excepthook(type(error), error, error.__traceback__)
    failed = threading.Thread(target=lambda: (_ for _ in ()).throw(error), name="worker")
    failed.start()
    failed.join()
    text = debug_log.getvalue()
    assert SECRET not in text, text
    assert text.count("was rejected") == 2 and "unhandled InvalidToken" in text


def test_request_and_update_contents_stay_out_even_at_debug(debug_log: io.StringIO) -> None:
    """The lines python-telegram-bot, httpx and aiosqlite write about each request, in their
    own words: none comes out; the bot's own DEBUG lines do."""
    params = {"chat_id": 51, "text": HAND_TEXT,
              "reply_markup": {"inline_keyboard": [[{"text": "Q♣", "callback_data":
                                                     "v1:m:1:4:cQC"}]]}}
    logging.getLogger("telegram.ext.ExtBot").debug(
        "Calling Bot API endpoint `%s` with parameters `%s`", "sendMessage", params)
    logging.getLogger("telegram.ext.ExtBot").debug(
        "Call to Bot API endpoint `%s` finished with return value `%s`", "sendMessage", params)
    logging.getLogger("telegram.Bot").debug(
        "Calling Bot API endpoint `%s` with parameters `%s`", "sendMessage", params)
    logging.getLogger("telegram.ext.Application").debug(
        "Processing update %s", "Update(callback_query=CallbackQuery(data='v1:m:1:4:dQC'))")
    logging.getLogger("telegram.request.BaseRequest").debug("response %s", HAND_TEXT)
    logging.getLogger("httpx").info(
        'HTTP Request: POST https://api.telegram.org/bot%s/sendMessage "HTTP/1.1 200 OK"', TOKEN)
    logging.getLogger("httpcore.http11").debug("send_request_body.started %s", HAND_TEXT)
    logging.getLogger("aiohttp.client").info(
        "POST http://127.0.0.1/bot%s/sendMessage data=%s", TOKEN, HAND_TEXT)
    logging.getLogger("aiosqlite").debug(
        "executing %s", "functools.partial(execute, 'INSERT INTO moves ...', (1, 'drop:QC'))")
    logging.getLogger("chat.flow").debug("the bot's own debug line")
    text = debug_log.getvalue()
    assert "the bot's own debug line" in text
    for secret in ("Q♣", "QC", "Calling Bot API", "Processing update", "HTTP Request",
                   "executing", "POST http", SECRET):
        assert secret not in text, (secret, text)
    # Warnings of those loggers still come through (masked).
    logging.getLogger("httpx").warning("trouble with /bot%s/getUpdates", TOKEN)
    assert "trouble with /bot<token>/getUpdates" in debug_log.getvalue()


def test_quiet_loggers_never_log_below_the_chosen_level(restore_logging: None) -> None:
    logs.configure("ERROR", TOKEN)
    assert logging.getLogger("httpx").getEffectiveLevel() == logging.ERROR
    assert logging.getLogger("telegram.ext.ExtBot").getEffectiveLevel() == logging.ERROR
    logs.configure("DEBUG", TOKEN)
    assert logging.getLogger("telegram.ext.ExtBot").getEffectiveLevel() == logging.INFO
    assert logging.getLogger("telegram.request.HTTPXRequest").getEffectiveLevel() == logging.INFO
    assert logging.getLogger().getEffectiveLevel() == logging.DEBUG


def test_a_rejected_token_is_not_printed(tmp_path: Path) -> None:
    """``python bot.py`` at DEBUG with a token Telegram refuses: a hint, exit code 1, and
    the token nowhere in the output (PTB's InvalidToken quotes it)."""
    fake = FakeTelegram(bot_username=BOT)
    base = fake.serve_http()
    env = {**os.environ, "TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE_URL": base,
           "KRENDZU_DB": str(tmp_path / "k.sqlite3"), "LOG_LEVEL": "DEBUG",
           "KRENDZU_AI_WORKERS": "0", "KRENDZU_DRAW_WORKERS": "0", "PYTHONPATH": str(ROOT)}
    try:
        done = subprocess.run([sys.executable, str(ROOT / "bot.py")], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=60)
    finally:
        fake.stop()
    out = done.stdout + done.stderr
    assert done.returncode == 1, out[-2000:]
    assert "rejected the bot token" in out and "@BotFather" in out
    assert SECRET not in out, out[-2000:]
    assert fake.token != TOKEN  # the fake answered 401 Unauthorized


def card_patterns(cards: set[Card]) -> list[re.Pattern[str]]:
    """Every way a card can be written: QC, TD/10D, Q♣, 10♦ (as a word)."""
    out = []
    for card in cards:
        forms = {card.code(), card.pretty(), card.code().replace("T", "10", 1)
                 if card.code().startswith("T") else card.code()}
        out += [re.compile(rf"(?<![A-Za-z0-9]){re.escape(f)}(?![A-Za-z0-9])") for f in forms]
    return out


async def test_a_deal_at_debug_logs_neither_the_token_nor_a_card(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, restore_logging: None) -> None:
    """The whole bot at DEBUG (the set-up of bot.py installed on pytest's capturing handler
    too): a private match against the computer is played to the end of its first deal; the
    captured log holds many DEBUG lines but neither the token nor any card of any hand."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann = fake.user(61, "Ann")
    caplog.set_level(logging.DEBUG)  # first: caplog puts back the level it finds
    logs.configure("DEBUG", fake.token)
    async with running_bot(tmp_path, fake) as h:
        ann.start_bot()
        match_id = await start_private_match(h, ann)
        flow = h.services.flow
        for _ in range(300):
            stored = await flow.load(match_id)
            game = stored.game
            if game.is_over or game.tour_index > 0:
                break
            if game.current_player != stored.row.seat_of(61):
                await h.settle()
                continue
            # A card button of the hand first (its data names the card), then a typed move.
            live = panel(fake, ann)
            card = next((b["callback_data"] for b in live.buttons()
                         if ":c" in b["callback_data"]), None) if live else None
            if live is not None and card is not None:
                ann.press(live, data=card)
                await h.settle()
            step = next((a for a in game.legal_actions() if isinstance(a, Place)), None)
            if step is not None:
                frame = frame_for(game.tour.observation(None).placements)
                ann.send(ann.chat, f"{step.card.code()} {frame.label(step.x, step.y)}")
            elif any(isinstance(a, Pass) for a in game.legal_actions()):
                ann.send(ann.chat, "pass")
            else:
                ann.send(ann.chat, "end")
            await h.settle()
        stored = await flow.load(match_id)
        assert stored.game.is_over or stored.game.tour_index > 0, fake.describe()
        record = export_record(stored.game)
    hands = {Card.parse(code) for cards in record["tours"][0]["hands"].values()
             for code in cards}
    assert len(hands) >= 20
    assert any("♣" in (m.caption or m.text or "") for m in fake.sent(ann)), "hands were sent"
    text = caplog.text + "\n".join(r.getMessage() for r in caplog.records)
    assert any(r.levelno == logging.DEBUG for r in caplog.records), "DEBUG is on"
    assert fake.token.partition(":")[2] not in text
    for pattern in card_patterns(hands):
        assert not pattern.search(text), (pattern.pattern, text[-3000:])
    assert not any(suit in text for suit in "♠♣♥♦")


async def test_the_json_log_has_one_object_a_line_with_the_update_and_no_secret(
        tmp_path: Path, restore_logging: None) -> None:
    """``LOG_FORMAT=json``: each line parses as an object with time, level, logger and
    message; lines written while an update is handled carry its id and chat kind (never
    the chat's id or a text); a traceback is masked as in the text log; and a deal played
    at DEBUG leaves no card of the hands in it."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        fake = FakeTelegram(bot_username=BOT, clock=FastClock())
        logs.configure("DEBUG", fake.token, log_format="json")
        ann = fake.user(62, "Ann")
        async with running_bot(tmp_path, fake) as h:
            ann.start_bot()
            match_id = await start_private_match(h, ann)
            stored = await h.services.flow.load(match_id)
            game = stored.game
            hands = {card for seat in range(2) for card in game.tour.hand(seat)}
            card = game.tour.hand(stored.row.seat_of(62) or 0)[0]
            # An illegal step (far from the centre): logged at DEBUG while it is handled.
            ann.send(ann.chat, f"/play {card.code()} A1")
            await h.settle()
        try:
            raise InvalidToken(f"The token `{fake.token}` was rejected by the server.")
        except InvalidToken:
            logging.getLogger("chat.test").exception("initialising failed")
    finally:
        root.removeHandler(handler)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) > 20
    for line in lines:
        assert {"time", "level", "logger", "message", "update_id", "chat_kind"} <= set(line)
    handled = [line for line in lines if line["update_id"] is not None]
    assert handled and {line["chat_kind"] for line in handled} == {"private"}, handled[:3]
    assert all(isinstance(line["update_id"], int) for line in handled)
    text = out.getvalue()
    assert fake.token.partition(":")[2] not in text
    failed = lines[-1]
    assert failed["level"] == "ERROR" and "The token `<token>` was rejected" in (
        failed["exc_info"]), failed
    assert hands, "the panel showed the hand"
    for pattern in card_patterns(hands):
        assert not pattern.search(text), pattern.pattern
