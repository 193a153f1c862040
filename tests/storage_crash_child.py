"""Child process of the crash test: plays random legal moves into a real database forever.

Usage: python tests/storage_crash_child.py DB SEED. Resumes every active match it finds,
then loops: pick a chat, start a match there if none is active, append one random legal
move (one transaction). Only after ``append_move`` has returned does it write
``committed <match_id> <seq>`` to stdout (one flushed line, atomic on a pipe). The parent
kills it with SIGKILL at random moments.
"""

from __future__ import annotations

import asyncio
import random
import sys

from krendzu import Match, Settings, Table
from storage import open_store
from storage.base import SeatSpec

CHATS = {
    1: Settings(table=Table.DUEL, tours=2),
    2: Settings(table=Table.TRIO_LONE_ATTACKER, exchange_limit=2),
    3: Settings(table=Table.TEAMS, exchange_limit=1),
    4: Settings(table=Table.TRIO_LONE_DEFENDER),
}


def seats(table: Table) -> list[SeatSpec]:
    return [SeatSpec.human(1), *(SeatSpec.computer(i) for i in range(1, table.players))]


async def main(path: str, seed: int) -> None:
    rng = random.Random(seed)
    store = await open_store(path)
    try:
        await store.upsert_user(1, "crash test")
        games: dict[int, tuple[int, Match]] = {}
        for row in await store.active_matches():
            games[row.chat_id] = (row.match_id, (await store.load_match(row.match_id)).game)
        print("ready", flush=True)
        update_id = seed * 1_000_000
        while True:
            chat = rng.choice(list(CHATS))
            if chat not in games:
                settings = CHATS[chat]
                stored = await store.create_match(chat, settings, seats(settings.table))
                games[chat] = (stored.match_id, stored.game)
            match_id, game = games[chat]
            action = rng.choice(game.legal_actions())
            seq = len(game.history) + 1
            game.apply(action)
            update_id += 1
            await store.append_move(
                match_id, seq, action, update_id=update_id, final=game if game.is_over else None
            )
            sys.stdout.write(f"committed {match_id} {seq}\n")
            sys.stdout.flush()
            if game.is_over:
                del games[chat]
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
