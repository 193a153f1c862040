"""The command menus: which commands each kind of chat lists, and their descriptions in a
reader's language. Set for every chat by language at start (:mod:`chat.app`), and for one chat
when its language is chosen with ``/lang`` (:mod:`chat.handlers.welcome`)."""

from __future__ import annotations

from chat.i18n import Tr

PRIVATE_COMMANDS = ("new", "play", "pass", "hand", "board", "score", "hint", "exchange",
                    "discard", "back", "stats", "top", "history", "moves", "export", "resign",
                    "cancel", "lang", "engine", "rules", "help")
GROUP_COMMANDS = ("new", "join", "leave", "add", "go", "play", "pass", "board", "score", "hand",
                  "back", "kick", "stats", "top", "history", "moves", "export", "resign",
                  "cancel", "lang", "settings", "rules", "help")


def command_descriptions(tr: Tr) -> dict[str, str]:
    return {
        "new": tr._("set up a new match"),
        "join": tr._("take a seat"),
        "leave": tr._("leave your seat"),
        "add": tr._("add a computer player: /add easy|normal|hard"),
        "engine": tr._("your outside engines: /engine new NAME"),
        "go": tr._("start the match"),
        "play": tr._("place cards: /play QC M12"),
        "pass": tr._("pass (defender)"),
        "hand": tr._("your cards, privately"),
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
