"""The entry point and configuration: without a token the bot explains how to get one."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from chat.config import ConfigError, load_config, read_env_file
from chat.i18n import Catalogs, language_of

ROOT = Path(__file__).resolve().parent.parent


def test_env_file_parsing(tmp_path: Path, monkeypatch) -> None:
    env = tmp_path / ".env"
    env.write_text(
        "# comment\nTELEGRAM_BOT_TOKEN='123:abc'\nexport KRENDZU_DB=x.db\nnonsense line\n=\n",
        encoding="utf-8",
    )
    assert read_env_file(env) == {"TELEGRAM_BOT_TOKEN": "123:abc", "KRENDZU_DB": "x.db"}
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    monkeypatch.setenv("KRENDZU_DB", "from-env.db")
    config = load_config(env)
    assert config.token == "123:abc"
    assert config.database == "from-env.db"  # the environment wins
    assert read_env_file(tmp_path / "missing") == {}


def test_bot_without_token_says_how_to_get_one(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TELEGRAM_BOT_TOKEN"}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, str(ROOT / "bot.py")], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 78  # bot.NO_TOKEN: `make run` stops there without an error
    assert "@BotFather" in done.stderr and "TELEGRAM_BOT_TOKEN" in done.stderr


def test_languages_from_telegram_codes() -> None:
    assert set(Catalogs().languages) >= {"en", "ru"}
    # Russian only for Russian-language users: a Ukrainian one gets English (issue 27).
    assert language_of("ru") == "ru" and language_of("uk-UA") == "en"
    assert language_of("en-GB") == "en" and language_of(None) == "en"


def test_a_database_url_selects_postgresql(tmp_path: Path, monkeypatch) -> None:
    """KRENDZU_DATABASE_URL wins over KRENDZU_DB: the store then is PostgreSQL
    (storage.open_store picks the backend from what it is given)."""
    env = tmp_path / ".env"
    env.write_text("KRENDZU_DATABASE_URL=postgresql://bot:pw@db/krendzu\n", encoding="utf-8")
    monkeypatch.delenv("KRENDZU_DATABASE_URL", raising=False)
    monkeypatch.setenv("KRENDZU_DB", "x.sqlite3")
    assert load_config(env).database == "postgresql://bot:pw@db/krendzu"
    monkeypatch.setenv("KRENDZU_DATABASE_URL", "postgres:///krendzu?host=/run/pg")
    assert load_config(env).database == "postgres:///krendzu?host=/run/pg"
    assert load_config(None).database == "postgres:///krendzu?host=/run/pg"
    monkeypatch.delenv("KRENDZU_DATABASE_URL")
    assert load_config(None).database == "x.sqlite3"


def test_prepared_statements_are_on_unless_switched_off(tmp_path: Path, monkeypatch) -> None:
    """KRENDZU_PG_PREPARE: on by default; off (behind an old transaction-mode pgbouncer);
    anything else is refused rather than guessed."""
    monkeypatch.delenv("KRENDZU_PG_PREPARE", raising=False)
    assert load_config(None).pg_prepare is True
    for value, expected in (("off", False), ("0", False), ("No", False), ("on", True),
                            ("true", True), ("", True)):
        monkeypatch.setenv("KRENDZU_PG_PREPARE", value)
        assert load_config(None).pg_prepare is expected, value
    monkeypatch.setenv("KRENDZU_PG_PREPARE", "sometimes")
    with pytest.raises(ConfigError, match="KRENDZU_PG_PREPARE must be on or off"):
        load_config(None)


def test_mini_app_settings(tmp_path: Path, monkeypatch) -> None:
    """KRENDZU_MINIAPP_NAME is checked as @BotFather's short names are; the initData age
    limit defaults to a day and stays within bounds."""
    import pytest

    from chat.config import ConfigError

    for name in ("KRENDZU_MINIAPP_NAME", "KRENDZU_MINIAPP_MAX_AGE", "KRENDZU_PUBLIC_URL"):
        monkeypatch.delenv(name, raising=False)
    config = load_config(None)
    assert config.miniapp_name is None and config.miniapp_max_age == 86400
    monkeypatch.setenv("KRENDZU_MINIAPP_NAME", "play")
    monkeypatch.setenv("KRENDZU_MINIAPP_MAX_AGE", "3600")
    config = load_config(None)
    assert (config.miniapp_name, config.miniapp_max_age) == ("play", 3600)
    monkeypatch.setenv("KRENDZU_MINIAPP_MAX_AGE", "1")
    assert load_config(None).miniapp_max_age == 60  # not less than a minute
    monkeypatch.setenv("KRENDZU_MINIAPP_NAME", "t.me/bot/play")
    with pytest.raises(ConfigError, match="KRENDZU_MINIAPP_NAME"):
        load_config(None)


def test_mini_app_links_need_an_https_public_url() -> None:
    """Telegram opens Mini Apps from https:// only (and refuses a message whose web_app
    button has another URL): an http:// public URL serves the engine protocol but offers
    no Mini App."""
    from chat.config import Config
    from chat.miniapp import app_links

    base = Config(token="1:abc", database="x", log_level="INFO")
    assert app_links(base, "bot") is None
    assert app_links(replace(base, public_url="http://127.0.0.1:8080"), "bot") is None
    links = app_links(replace(base, public_url="https://k.example/", miniapp_name="play"),
                      "bot")
    assert links is not None and links.page_url(7).startswith("https://k.example/app?m=7-")
    assert (links.group_url(7) or "").startswith("https://t.me/bot/play?startapp=7-")


def test_the_log_format_is_text_or_json(monkeypatch) -> None:
    """LOG_FORMAT: readable text by default, json on request; anything else is refused."""
    monkeypatch.delenv("LOG_FORMAT", raising=False)
    assert load_config(None).log_format == "text"
    for value, expected in (("json", "json"), ("JSON", "json"), ("text", "text"), ("", "text")):
        monkeypatch.setenv("LOG_FORMAT", value)
        assert load_config(None).log_format == expected, value
    monkeypatch.setenv("LOG_FORMAT", "xml")
    with pytest.raises(ConfigError, match="LOG_FORMAT must be text or json"):
        load_config(None)


def test_the_stop_limit_is_configured_within_bounds(monkeypatch) -> None:
    """KRENDZU_STOP_SECONDS: 15 s unless set, kept between 2 s and 10 minutes; each of a
    stop's waits (requests or jobs in progress, queued messages, the web server's end) gets
    a third of it."""
    from chat.config import STOP_SECONDS

    monkeypatch.delenv("KRENDZU_STOP_SECONDS", raising=False)
    config = load_config(None)
    assert config.stop_seconds == STOP_SECONDS == 15.0
    assert config.stop_share == 5.0
    for value, expected in (("6", 6.0), ("0.5", 2.0), ("100000", 600.0), ("soon", 15.0)):
        monkeypatch.setenv("KRENDZU_STOP_SECONDS", value)
        assert load_config(None).stop_seconds == expected, value
