"""The entry point and configuration: without a token the bot explains how to get one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from chat.config import load_config, read_env_file
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
