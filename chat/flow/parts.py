"""The parts every room above the broadcast works with, built once by the facade and handed
on as one value, so a room's constructor names only what is its own."""

from __future__ import annotations

from dataclasses import dataclass

from chat.flow.base import Locks
from chat.flow.broadcast import Broadcast
from chat.flow.deadlines import Deadlines
from chat.flow.games import Games
from chat.flow.people import People
from storage import Store


@dataclass(frozen=True, slots=True)
class SharedParts:
    """The store, the chats' locks and the lower modules every room above the broadcast
    shares (one of each per flow)."""

    store: Store
    locks: Locks
    people: People
    games: Games
    deadlines: Deadlines
    broadcast: Broadcast


class HoldsSharedParts:
    """The base of a room of the flow (lobbies, matches, presses, the ticker): it holds the
    :class:`SharedParts`, each also as an attribute of its own."""

    def __init__(self, parts: SharedParts) -> None:
        self.parts = parts
        self.store = parts.store
        self.locks = parts.locks
        self.people = parts.people
        self.games = parts.games
        self.deadlines = parts.deadlines
        self.broadcast = parts.broadcast
