"""Lobbies and matches as plain async code over ``storage`` and ``krendzu``: a package of
small modules, each importing only the ones below it (``docs/architecture.md`` maps them).

Every entry point checks its input, takes the chat's lock, changes what is stored and
returns an :class:`~chat.outcomes.Outcome`: a short answer for the actor and the notices for
everyone else. A move is appended to the store before anything about it is announced; the
``announced`` marker in the store says how far announcements got, so a restart can finish
them (:mod:`chat.flow.restart`). No ``telegram`` here: tests call the flow directly.

This module is the facade: callers import :class:`Flow` and the few helpers below from
``chat.flow``.
"""

from chat.describe import cards_text
from chat.flow.base import Actor, Decide, HintRequest
from chat.flow.facade import Flow
from chat.flow.people import person_name, visible
from chat.flow.views.codec import (
    BLOCK_OP,
    LobbyPress,
    MatchPress,
    arena_op,
    is_hint_play,
    is_open_panel,
    lobby_data,
    match_data,
    parse_press,
    pool_data,
    pool_op,
    turn_link,
)
from chat.flow.views.lobby_view import lobby_text
from chat.flow.views.reactions import is_reaction
from chat.flow.views.texts import hand_title
from storage import Door, StoredMatch  # the types the flow hands to and takes from its callers

__all__ = [
    "BLOCK_OP",
    "Actor",
    "Decide",
    "Door",
    "Flow",
    "HintRequest",
    "LobbyPress",
    "MatchPress",
    "StoredMatch",
    "arena_op",
    "cards_text",
    "hand_title",
    "is_hint_play",
    "is_open_panel",
    "is_reaction",
    "lobby_data",
    "lobby_text",
    "match_data",
    "parse_press",
    "person_name",
    "pool_data",
    "pool_op",
    "turn_link",
    "visible",
]
