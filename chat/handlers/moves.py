"""Moves typed as commands or plain text: ``/play``, ``/pass``, ``/exchange``, ``/discard``."""

from __future__ import annotations

from chat.flow import StoredMatch
from chat.handlers.context import Call, handler
from chat.model import (
    END_WORDS,
    MAX_INPUT,
    PASS_WORDS,
    InputError,
    ascii_number,
    looks_like_move,
    words_to_steps,
)
from chat.notices import Send
from chat.outcomes import Outcome
from krendzu import Action, Announce, Discard, parse_card


async def target_match(call: Call) -> StoredMatch | None:
    """The match a move command means; says why when there is none or it is ambiguous."""
    tr, user_id = call.tr, call.actor.user_id
    if not call.private:
        stored = await call.flow.find_match(call.chat.id, call.thread, user_id)
        if stored is None:
            await call.say(tr._("No match is being played here. /new sets one up."))
        return stored
    matches = await call.flow.my_matches(user_id)
    if not matches:
        await call.say(tr._("You are not in a match. /new starts one against the computer; in "
                            "a group, /new sets one up for friends."))
        return None
    own = [m for m in matches if m.game.current_player == m.row.seat_of(user_id)]
    if len(own) == 1:
        return own[0]
    if not own:
        if len(matches) == 1:
            return matches[0]
        await call.say(tr._("It is not your turn in any of your matches."))
        return None
    await call.say(tr.n_("It is your turn in {n} match: use the buttons on its panel.",
                         "It is your turn in {n} matches: use the buttons on the panel of the "
                         "one you mean.", len(own)))
    return None


async def play_words(call: Call, words: list[str]) -> None:
    """A move in words (``QC M12``, ``pass``, ``9D L12 QS M14``) on the match it means.

    In a group the match is the chat's, located by one read of its row; the words are read
    as steps under the chat's lock, from the position the move is checked on, so the match
    is not loaded before the lock as well (issue 39: a typed move located its match four
    times). Words that are not a move are refused after the seat's and turn's checks.

    A move typed in a chat is told by its board post: the flow composes no echo of it
    ("✓ Q♣ → M12"), except for an ephemeral command, whose sender alone is answered."""
    if not call.private:
        row = await call.flow.match_here(call.chat.id, call.thread)
        if row is None:
            await call.say(call.tr._("No match is being played here. /new sets one up."))
            return

        def read_steps(stored: StoredMatch, seat: int) -> list[Action]:
            return words_to_steps(stored.game, seat, words)

        outcome = await call.flow.play(row.match_id, call.actor, read_steps,
                                       update_id=call.update.update_id, row=row,
                                       echo=call.unseen)
        await call.answer(outcome)
        return
    stored = await target_match(call)
    if stored is None:
        return
    try:
        steps = words_to_steps(stored.game, stored.row.seat_of(call.actor.user_id), words)
    except InputError as exc:
        await call.answer(Outcome(call.tr._(exc.key, **exc.values), private_reply=True))
        return
    await play_steps(call, stored, steps)


async def play_steps(call: Call, stored: StoredMatch, steps: list[Action], *,
                     private_reply: bool = False) -> None:
    outcome = await call.flow.play(stored.match_id, call.actor, steps,
                                   update_id=call.update.update_id, echo=call.unseen)
    outcome.private_reply = outcome.private_reply or private_reply
    await call.answer(outcome)


@handler
async def play(call: Call) -> None:
    await play_words(call, call.args)


@handler
async def pass_command(call: Call) -> None:
    await play_words(call, ["pass"])


@handler
async def exchange(call: Call) -> None:
    if await call.private_chat_closed():
        return  # the cards given away are chosen in the private chat: it must be open
    args = call.args
    if len(args) != 1 or not ascii_number(args[0]) or len(args[0]) > 2:
        await call.say(call.tr._("Write how many cards you exchange, e.g. /exchange 2."))
        return
    stored = await target_match(call)
    if stored is not None:
        await play_steps(call, stored, [Announce(int(args[0]))])


@handler
async def discard(call: Call) -> None:
    if not call.private and not call.unseen:
        # Typed publicly in a group, the command shows everyone the card given away: the
        # exchange is made in the private chat only (an ephemeral command shows nobody: it
        # is played). The answer goes there too; the group hears nothing (and no card is
        # named), unless that chat is closed to the bot: then one line.
        if await call.private_chat_closed():
            return
        utr = await call.flow.user_tr(call.actor.user_id)
        call.deliver([Send(call.actor.user_id, utr._(
            "Cards to exchange are named here, in our private chat, not in the group (everyone "
            "there would see them): /discard CARD … or the buttons of your panel."))])
        return
    args = call.args[:8]
    try:
        if not args:
            raise InputError("Name the cards you give away, e.g. /discard QC 7H.")
        cards = [parse_card(a) for a in args]
    except ValueError:
        await call.answer(Outcome(call.tr._("Name the cards you give away, e.g. "
                                            "/discard QC 7H."), private_reply=True))
        return
    stored = await target_match(call)
    if stored is not None:
        await play_steps(call, stored, [Discard(c) for c in cards], private_reply=True)


@handler
async def text_move(call: Call) -> None:
    """Plain text in a private chat: ``QC M12``, ``pass``/``пас``, ``end``/``конец``/
    ``готово`` (a defender's turn after one card); anything else gets a hint."""
    message = call.update.effective_message
    if message is None or not message.text:
        return
    text = message.text
    if len(text) > MAX_INPUT:
        await call.say(call.tr._("That message is too long for me. Moves look like QC M12."))
        return
    if text.strip().lower() in PASS_WORDS | END_WORDS or looks_like_move(text):
        await play_words(call, text.split())
        return
    await call.say(call.tr._("Moves look like QC M12 (a card and a cell). /help lists the "
                             "commands."))
