"""The Telegram handlers, one module per feature (as python-telegram-bot's rules-bot keeps its
``components/``), registered in one ordered list by :func:`register`.

Every handler reads untrusted input, turns it into an intent for :class:`chat.flow.Flow`, and
hands the outcome's notices to delivery. Before any of them, :mod:`chat.handlers.admission`
applies the per-user and per-chat limits.

====================  ==============================================================
module                handles
====================  ==============================================================
``context``           :class:`Services`, who acted, where, the reply language, answers
``admission``         the limits, before every handler (group -1)
``welcome``           ``/start`` (join links), ``/help``, ``/rules``, ``/lang``
``lobby``             ``/new``, ``/join``, ``/leave``, ``/add``, ``/go``, ``/cancel``
``moves``             ``/play``, ``/pass``, ``/exchange``, ``/discard``, plain-text moves
``match``             ``/hand`` ``/board`` ``/score`` ``/hint`` ``/moves`` ``/export``
                      ``/resign`` ``/kick`` ``/back`` ``/settings``
``pool``              ``/playnow`` (the "Play now" pool: chat/flow/pool.py)
``buttons``           every inline button
``chats``             migration; the bot added, removed or blocked
``errors``            the one error handler
``standings``         ``/stats``, ``/top``, ``/history``
``engines``           ``/engine`` (outside engines: chat/flow/engines.py)
``admin``             ``/admin`` (the owners': figures, a notice, pause and resume)
====================  ==============================================================
"""

from __future__ import annotations

from telegram import Update
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    ChatMemberHandler,
    CommandHandler,
    MessageHandler,
    TypeHandler,
    filters,
)

from chat.handlers import (
    admin,
    admission,
    buttons,
    chats,
    engines,
    errors,
    lobby,
    match,
    moves,
    pool,
    standings,
    welcome,
)
from chat.handlers.admission import CONTEXT_TYPES, BotContext, dropped, services, urgent
from chat.services import Services

__all__ = ["CONTEXT_TYPES", "BotContext", "Services", "dropped", "register", "services",
           "urgent"]


def register(app: Application) -> None:
    """Every handler, in the order PTB tries them."""
    # First, for every update: the per-user and per-chat limits (chat/throttle.py).
    app.add_handler(TypeHandler(Update, admission.admission), group=-1)
    commands = {
        "start": welcome.start, "help": welcome.help_command, "rules": welcome.rules,
        "lang": welcome.lang, "arena": pool.arena, "swiss": pool.swiss,
        "new": lobby.new, "playnow": pool.playnow, "join": lobby.lobby_command("join"),
        "leave": lobby.lobby_command("leave"), "add": lobby.lobby_command("add"),
        "go": lobby.lobby_command("go"), "cancel": lobby.cancel_any,
        "play": moves.play, "pass": moves.pass_command, "exchange": moves.exchange,
        "discard": moves.discard,
        "hand": match.match_command("hand"), "board": match.match_command("board"),
        "score": match.match_command("score"), "hint": match.match_command("hint"),
        "moves": match.match_command("moves"),
        "export": match.match_command("export"), "resign": match.match_command("resign"),
        "back": match.back, "kick": match.kick, "settings": match.settings,
        "stats": standings.stats, "top": standings.top, "history": standings.history,
        "engine": engines.engine, "admin": admin.admin,
    }
    for name, callback in commands.items():
        app.add_handler(CommandHandler(name, callback))
    app.add_handler(CallbackQueryHandler(buttons.button))
    app.add_handler(MessageHandler(filters.StatusUpdate.MIGRATE, chats.migrated))
    app.add_handler(ChatMemberHandler(chats.membership, ChatMemberHandler.MY_CHAT_MEMBER))
    app.add_handler(MessageHandler(filters.ChatType.PRIVATE & filters.TEXT & ~filters.COMMAND,
                                   moves.text_move))
    app.add_error_handler(errors.on_error)
