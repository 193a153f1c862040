"""The replies to refused steps, chosen by the engine's typed reason (krendzu.illegal), and a
command that tries to play on after the player's turn ended."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from chat.flow import Actor, Flow
from chat.model import tour_frame
from krendzu import Action, Announce, Card, Discard, EndTurn, Pass, Place
from tests.bot_harness import BOT, FastClock, running_bot, start_group_duel
from tests.fakebot import FakeTelegram

ANN, BOB = Actor(1, "Ann", "en"), Actor(2, "Bob", "en")

Steps = Callable[[list[Card], list[Card]], Sequence[Action]]


async def test_every_reason_gets_its_reply_and_changes_nothing(flow: Flow) -> None:
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(-5, None, ANN, ["exchange=1"])
    await flow.lobby_action(-5, None, BOB, "join")
    await flow.lobby_action(-5, None, ANN, "go")
    found = await flow.find_match(-5, None, ANN.user_id)
    assert found is not None
    match_id = found.match_id

    async def reply(steps: Steps, *, accepted: bool = False) -> tuple[str, list[Card]]:
        """The mover's reply to ``steps`` (of their own hand and the other's), and their
        hand; a refused step stores nothing."""
        stored = await flow.load(match_id)
        game = stored.game
        mover = game.current_player
        mine = sorted(game.observation(mover).tour.hand)
        theirs = sorted(game.observation(1 - mover).tour.hand)
        before = len(game.history)
        outcome = await flow.play(match_id, [ANN, BOB][mover], steps(mine, theirs))
        moved = (await flow.store.get_match(match_id)).move_count - before
        assert (moved > 0) == accepted, (outcome.reply, moved)
        if not accepted:
            assert outcome.private_reply and not outcome.notices
        return outcome.reply or "", mine

    # The exchange: announcements.
    text, mine = await reply(lambda m, t: [Place(m[0], 0, 0)])
    assert text == "Cards are placed after the exchange."
    text, _ = await reply(lambda m, t: [Place(t[0], 0, 0)])
    assert text.startswith("You do not hold ") and text.endswith(".")
    assert await reply(lambda m, t: [Pass()]) == ("You cannot pass now.", mine)
    assert await reply(lambda m, t: [EndTurn()]) == ("That move is not allowed now.", mine)
    assert (await reply(lambda m, t: [Announce(5)]))[0] == (
        "You cannot exchange that many cards now.")
    assert (await reply(lambda m, t: [Discard(m[0])]))[0] == (
        f"You cannot exchange {mine[0].pretty()} now.")
    for _ in range(2):
        await reply(lambda m, t: [Announce(1)], accepted=True)
    # The exchange: discards.
    text, mine = await reply(lambda m, t: [Discard(t[0])])
    assert text.startswith("You cannot exchange ") and text.endswith(" now.")
    assert (await reply(lambda m, t: [Announce(1)]))[0] == (
        "You cannot exchange that many cards now.")
    assert (await reply(lambda m, t: [Place(m[0], 0, 0)]))[0] == (
        "Cards are placed after the exchange.")
    for _ in range(2):
        await reply(lambda m, t: [Discard(m[0])], accepted=True)
    # The opening card.
    assert (await reply(lambda m, t: [Place(m[0], 1, 0)]))[0] == "The first card goes to M13."
    assert (await reply(lambda m, t: [Pass()]))[0] == "You cannot pass now."
    assert (await reply(lambda m, t: [EndTurn()]))[0] == "That move is not allowed now."
    text, mine = await reply(lambda m, t: [Discard(m[0])])
    assert text == f"You cannot exchange {mine[0].pretty()} now."
    text, mine = await reply(lambda m, t: [Place(m[0], 0, 0), Place(m[1], 1, 0)])
    assert text == (f"Your turn ends before {mine[1].pretty()}: play it in a turn of its "
                    "own."), "the opening is one card"
    await reply(lambda m, t: [Place(m[0], 0, 0)], accepted=True)
    # The attacker, next to the opening card.
    frame = tour_frame((await flow.load(match_id)).game)
    text, mine = await reply(lambda m, t: [Place(m[0], 0, 0)])
    assert text == f"{frame.label(0, 0)} is taken. Choose a free cell next to a card."
    for x, y in ((5, 5), (1, 1)):
        text, mine = await reply(lambda m, t, x=x, y=y: [Place(m[0], x, y)])
        assert text == (f"{mine[0].pretty()} cannot go to {frame.label(x, y)}: a card must "
                        "touch another card edge to edge.")
    assert (await reply(lambda m, t: [Pass()]))[0] == "You cannot pass now."
    text, mine = await reply(lambda m, t: [Place(m[0], 1, 0), Place(m[1], 2, 0)])
    assert text == (f"Your turn ends before {mine[1].pretty()}: play it in a turn of its "
                    "own."), "an attacker places one card"


async def test_a_command_cannot_play_the_next_players_card(tmp_path) -> None:
    """The opening card ends the turn; a second card in the same /play — one the other
    player holds — is refused, not played for them (nor does the reply tell whose it is)."""
    fake = FakeTelegram(bot_username=BOT, clock=FastClock())
    ann, bob = fake.user(501, "Ann"), fake.user(502, "Bob")
    group = fake.group(-100950, "Sneaky")
    async with running_bot(tmp_path, fake) as h:
        for user in (ann, bob):
            user.start_bot()
        row = await start_group_duel(h, group, ann, bob, "")
        game = (await h.services.flow.load(row.match_id)).game
        opener = game.current_player
        mover = ann if row.seats[opener].user_id == ann.id else bob
        own = game.observation(opener).tour.hand[0]
        foreign = game.observation(1 - opener).tour.hand[0]
        mover.send(group, f"/play@{BOT} {own.code()} M13 {foreign.code()} N13")
        await h.settle()
        assert (await h.services.store.get_match(row.match_id)).move_count == 0
        assert fake.last(mover) is not None
        assert (fake.last(mover).text or "").startswith(  # type: ignore[union-attr]
            f"Your turn ends before {foreign.pretty()}")
