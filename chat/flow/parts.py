"""The parts every room above the broadcast works with, built once by the facade and handed
on as one value, so a room's constructor names only what is its own."""

from __future__ import annotations

from dataclasses import dataclass

from chat.flow.broadcast import Broadcast
from chat.flow.deadlines import Deadlines
from chat.flow.games import Games
from chat.flow.locks import Locks
from chat.flow.people import People
from storage import Store


@dataclass(frozen=True, slots=True)
class Parts:
    store: Store
    locks: Locks
    people: People
    games: Games
    deadlines: Deadlines
    broadcast: Broadcast


class Room:
    """A room of the flow (lobbies, matches, presses, the ticker): its parts as attributes."""

    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.store = parts.store
        self.locks = parts.locks
        self.people = parts.people
        self.games = parts.games
        self.deadlines = parts.deadlines
        self.broadcast = parts.broadcast
