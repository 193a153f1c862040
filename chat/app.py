"""Builds the python-telegram-bot Application: one async handler per command, one error handler."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.ext import Application, CommandHandler, ContextTypes

from chat.config import Config
from chat.texts import language_of, text

log = logging.getLogger(__name__)


def _lang(update: Update) -> str:
    user = update.effective_user
    return language_of(user.language_code if user else None)


async def start(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if update.effective_message:
        await update.effective_message.reply_text(text("start", _lang(update)))


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if update.effective_message:
        await update.effective_message.reply_text(text("help", _lang(update)))


async def rules(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    if update.effective_message:
        await update.effective_message.reply_text(text("rules", _lang(update)))


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log the failure (never message contents: they may hold a hand) and apologise."""
    log.error("handler failed: %s", type(context.error).__name__, exc_info=context.error)
    if isinstance(update, Update) and update.effective_message:
        try:
            await update.effective_message.reply_text(text("error", _lang(update)))
        except Exception:  # the apology itself may fail (network); nothing more to do
            log.warning("could not send the error reply")


def build_application(config: Config) -> Application:
    if not config.token:
        raise ValueError("a bot token is required")
    builder = Application.builder().token(config.token)
    if config.api_base_url:
        base = config.api_base_url.rstrip("/")
        builder = builder.base_url(f"{base}/bot").base_file_url(f"{base}/file/bot")
    app = builder.build()
    app.add_handler(CommandHandler("start", start))
    app.add_handler(CommandHandler("help", help_command))
    app.add_handler(CommandHandler("rules", rules))
    app.add_error_handler(on_error)
    return app
