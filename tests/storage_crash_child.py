"""Child process of the crash test: plays random legal moves into a real database forever.

Usage: python tests/storage_crash_child.py DB SEED [WRITERS]. Resumes every active match it
finds, then loops: pick a chat, start a match there if none is active, append one random
legal move. Only after ``append_move`` has returned does it write ``committed <match_id>
<seq>`` to stdout (one flushed line, atomic on a pipe). With WRITERS > 1, that many tasks
play different chats at once, so their moves share commits (group commit) and up to WRITERS
moves can be in flight. The parent kills it with SIGKILL at random moments.
"""

from __future__ import annotations

import asyncio
import random
import sys

from krendzu import Match, Settings, Table
from storage import Store, open_store
from storage.base import SeatSpec

CHATS = {
    1: Settings(table=Table.DUEL, tours=2),
    2: Settings(table=Table.TRIO_LONE_ATTACKER, exchange_limit=2),
    3: Settings(table=Table.TEAMS, exchange_limit=1),
    4: Settings(table=Table.TRIO_LONE_DEFENDER),
}


def seats(table: Table) -> list[SeatSpec]:
    return [SeatSpec.human(1), *(SeatSpec.computer(i) for i in range(1, table.players))]


async def main(path: str, seed: int, writers: int) -> None:
    store = await open_store(path)
    try:
        await store.upsert_user(1, "crash test")
        games: dict[int, tuple[int, Match]] = {}
        for row in await store.active_matches():
            games[row.chat_id] = (row.match_id, (await store.load_match(row.match_id)).game)
        print("ready", flush=True)
        chats = list(CHATS)
        if writers == 1:
            await write(store, games, chats, random.Random(seed), seed * 1_000_000)
        else:  # each task owns some chats, so the tasks never race for one match
            await asyncio.gather(
                *(
                    write(
                        store,
                        games,
                        chats[i::writers],
                        random.Random(seed * 10 + i),
                        seed * 1_000_000 + i * 100_000,
                    )
                    for i in range(writers)
                )
            )
    finally:
        await store.close()


async def write(
    store: Store,
    games: dict[int, tuple[int, Match]],
    chats: list[int],
    rng: random.Random,
    update_id: int,
) -> None:
    while True:
        chat = rng.choice(chats)
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


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if sys.argv[3:] else 1))
