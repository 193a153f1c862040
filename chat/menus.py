"""The command menus: which commands each kind of chat lists, and their descriptions in a
reader's language. Set for every chat by language at start (:func:`set_commands`, called by
:mod:`chat.compose`), and for one chat when its language is chosen with ``/lang``
(:mod:`chat.handlers.welcome`)."""

from __future__ import annotations

from telegram import (
    Bot,
    BotCommand,
    BotCommandScopeAllGroupChats,
    BotCommandScopeAllPrivateChats,
)

from chat.i18n import Catalogs, Tr

PRIVATE_COMMANDS = ("new", "playnow", "play", "pass", "hand", "board", "score", "hint", "exchange",
                    "discard", "back", "stats", "top", "history", "moves", "export", "resign",
                    "cancel", "lang", "engine", "rules", "help")
GROUP_COMMANDS = ("new", "arena", "swiss", "join", "leave", "add", "go", "play", "pass", "board",
                  "score", "hand", "hint", "exchange", "discard", "back", "kick", "stats", "top",
                  "history", "moves", "export", "resign", "cancel", "lang", "settings", "rules",
                  "help")
#: The group commands registered as ephemeral (Bot API 10.2's ``BotCommand.is_ephemeral``,
#: issue 42): picked from the menu, they reach the bot unseen by the group, and their answers
#: go back to the sender alone (chat/handlers/ephemeral_answers.py).
EPHEMERAL_COMMANDS = frozenset({"play", "pass", "hand", "hint", "exchange", "discard", "back"})


def command_descriptions(tr: Tr) -> dict[str, str]:
    return {
        "new": tr._("set up a new match"),
        "playnow": tr._("a rated opponent from anywhere (again: leave the queue)"),
        "arena": tr._("an arena: quick duels for everyone, /arena 30m"),
        "swiss": tr._("a Swiss league over days: /swiss rounds=5 days=7"),
        "join": tr._("take a seat"),
        "leave": tr._("leave your seat"),
        "add": tr._("add a computer player: /add easy|normal|hard"),
        "engine": tr._("your outside engines: /engine new NAME"),
        "go": tr._("start the match"),
        "play": tr._("place cards: /play QC M12"),
        "pass": tr._("pass (defender)"),
        "hand": tr._("your cards, seen by you alone"),
        "board": tr._("show the board"),
        "score": tr._("the score"),
        "hint": tr._("a suggestion for your move"),
        "exchange": tr._("announce an exchange: /exchange 2"),
        "discard": tr._("cards to exchange: /discard QC 7H"),
        "moves": tr._("this tour's moves, numbered"),
        "export": tr._("the record and the replays"),
        "resign": tr._("give up the match"),
        "back": tr._("take your seat back from the computer"),
        "stats": tr._("your figures and rating (or a player's: /stats NAME)"),
        "top": tr._("the leaderboard here (/top global: everywhere)"),
        "history": tr._("recent matches and their results"),
        "settings": tr._("this group's settings (admins)"),
        "kick": tr._("let the computer play for an absent player (creator or admin)"),
        "cancel": tr._("cancel the match"),
        "lang": tr._("language: /lang ru or /lang en"),
        "rules": tr._("the rules"),
        "help": tr._("all commands"),
    }


def menu(tr: Tr, *, private: bool) -> list[tuple[str, str]]:
    """(command, description) pairs of the private or the group menu, in ``tr``'s language."""
    text = command_descriptions(tr)
    return [(name, text[name]) for name in (PRIVATE_COMMANDS if private else GROUP_COMMANDS)]


def bot_commands(tr: Tr, *, private: bool) -> list[BotCommand]:
    """The menu as Telegram takes it; in groups the moves and hands are ephemeral commands
    (``is_ephemeral`` through ``api_kwargs``: python-telegram-bot 22.8 predates it)."""
    return [BotCommand(name, text, api_kwargs={"is_ephemeral": True}
                       if not private and name in EPHEMERAL_COMMANDS else None)
            for name, text in menu(tr, private=private)]


async def set_commands(bot: Bot, catalogs: Catalogs) -> None:
    """The command menu per scope (private, groups) and per language, with the bot's
    descriptions, set for every chat at start (chat/compose.py)."""
    for language in catalogs.languages:
        tr = catalogs.get(language)
        code = None if language == "en" else language
        for scope, private in ((BotCommandScopeAllPrivateChats(), True),
                               (BotCommandScopeAllGroupChats(), False)):
            await bot.set_my_commands(bot_commands(tr, private=private), scope=scope,
                                      language_code=code)
        # What a person sees before pressing Start (an invitation link, the bot's profile).
        await bot.set_my_description(bot_description(tr), language_code=code)
        await bot.set_my_short_description(bot_short_description(tr), language_code=code)


def bot_description(tr: Tr) -> str:
    """The bot's description (at most 512 characters): shown in an empty private chat."""
    return tr._("Krendzu («Крэндзю», card renju, «four in a row») with a 36-card deck, for 2 "
                "to 4 players. Add me to a group and send /new to play with friends, or press "
                "Start to play the computer (easy, normal or hard). Your cards are seen by "
                "you alone; the group sees only the board.")


def bot_short_description(tr: Tr) -> str:
    """The short description (at most 120 characters): the bot's profile and shared links."""
    return tr._("Card renju, «four in a row»: play in groups with friends or alone against "
                "the computer.")
