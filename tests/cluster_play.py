"""Scripted people for the cluster (tests/cluster.py): they set matches up in groups with
``/new@bot``, ``/join@bot``, ``/add@bot easy`` and ``/go@bot``, then play from what the fake
Bot API shows them, as a person does: their private panel (a photo with buttons) is the only
place they learn their hand and the legal cells. Each step is a tap on the panel or, now and
then, the same step typed as ``/play@bot CARD CELL`` in the group. A *sleepy* player lets
every other turn of theirs run out (matches with a short turn timer).

Every update that should make a move is journalled (:class:`Sent`); the test later compares
the journal with the stored moves. Every request of any kind (a tap, a typed move, a command
such as ``/go`` or ``/export``, which people send now and then while they play) is journalled
too (:class:`Request`), and :func:`unanswered` tells which got no answer. Nothing here reads
the database to decide a move.
"""

from __future__ import annotations

import asyncio
import bisect
import random
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.bot_harness import BOT, panel_op
from tests.fakebot import Chat, FakeTelegram, FakeUser, Message

#: Seconds a player waits for the answer to an update before giving up on it (Telegram's
#: redeliveries with back-off are included).
ANSWER_TIMEOUT = 120.0
#: The start of the bot's answer to ``/export`` while no tour is finished (in English).
NO_RECORD_YET = "No tour is finished yet"
#: The bot's reply to an information command asked again while its answer is recent
#: (chat/answers.py): it points to that answer instead of posting a copy (issue 43).
POINTER = "the answer is just above"
#: How long the bot remembers a group's answers (KRENDZU_INFO_REPEAT_MINUTES' default).
REPEAT_SECONDS = 300.0
POLL = 0.25
CELL = re.compile(r"[A-Z]{1,2}[0-9]{1,2}")


@dataclass
class Table:
    """One group and its match."""

    group: Chat
    humans: list[FakeUser]
    computers: int = 0
    timer: int | None = None
    sleepy: FakeUser | None = None
    #: ``/new`` arguments before the timer: the table and the deal.
    args: str = "duel deal=short"
    match_id: int | None = None
    done: bool = False
    setup_error: str | None = None

    @property
    def kind(self) -> str:
        return ("sleepy" if self.sleepy else self.args.split()[0] + "+computer"
                if self.computers else "people")


@dataclass
class Sent:
    """An update that was meant to make a move."""

    update_id: int
    table: Table
    user: FakeUser
    seq: int  # the move number the panel offered
    typed: bool
    query_id: str | None = None  # a tap's callback query
    delivered: bool = False


@dataclass
class Request:
    """An update a person sent, kept to check that it was answered (:func:`unanswered`)."""

    update_id: int
    kind: str  # "tap", "typed" or "command"
    text: str  # the command word, or the button's data
    table: Table | None
    user: FakeUser
    chat_id: int  # where it was sent: a group, or the person's private chat
    at: float  # time.time() when it was sent (the fake's clock in the cluster)
    query_id: str | None = None  # a tap's callback query
    message_id: int | None = None  # the panel a tap pressed
    delivered: bool = False


@dataclass
class Skip:
    """A turn a sleepy player let run out."""

    table: Table
    user: FakeUser
    seq: int
    seen: float


@dataclass
class Journal:
    sent: list[Sent] = field(default_factory=list)
    requests: list[Request] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)
    taps: int = 0
    typed: int = 0
    undelivered: list[int] = field(default_factory=list)
    #: Taps each two-card defence took (card, the second card under "+", the first one's
    #: cell, the second one's cell: four; a panel that asks for the second card again
    #: after the first one's cell makes it five). Defences with a column step not counted.
    two_card_taps: list[int] = field(default_factory=list)


class People:
    """Drives every human seat of ``tables`` until each table is done or ``deadline``."""

    def __init__(self, fake: FakeTelegram, rng: random.Random, *,
                 typed_share: float = 0.25, export_share: float = 0.0) -> None:
        self.fake = fake
        self.rng = rng
        self.typed_share = typed_share
        #: How often a person asks for the record (``/export@bot``) before a step of theirs.
        self.export_share = export_share
        self.journal = Journal()
        #: A two-card defence under way, by user: (taps so far, the move number the next
        #: tap is for once the first card's cell was tapped, else 0).
        self.two_cards: dict[int, tuple[int, int]] = {}

    async def delivered(self, update_id: int, timeout: float = ANSWER_TIMEOUT) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.fake.webhook_delivered(update_id):
                return True
            await asyncio.sleep(0.05)
        self.journal.undelivered.append(update_id)
        return False

    def last_update(self) -> int:
        return int(self.fake.update_log[-1]["update_id"])

    async def say(self, user: FakeUser, chat: Chat | None, text: str,
                  table: Table | None = None) -> bool:
        at = time.time()
        user.send(chat, text)
        request = Request(self.last_update(), "command", text.split()[0].split("@")[0],
                          table, user, chat.id if chat is not None else user.id, at)
        self.journal.requests.append(request)
        request.delivered = await self.delivered(request.update_id)
        return request.delivered

    async def set_up(self, table: Table, level: str = "easy") -> None:
        """``/new`` by the first person, the others ``/join``, computers ``/add``, ``/go``."""
        creator = table.humans[0]
        args = table.args + (f" timer={table.timer}" if table.timer else "")
        steps: list[tuple[FakeUser, str]] = [(creator, f"/new@{BOT} {args}")]
        steps += [(u, f"/join@{BOT}") for u in table.humans[1:]]
        steps += [(creator, f"/add@{BOT} {level}")] * table.computers
        steps += [(creator, f"/go@{BOT}")]
        for user, text in steps:
            if not await self.say(user, table.group, text, table):
                table.setup_error = f"{text!r} was not answered"
                return

    async def play(self, table: Table, user: FakeUser, deadline: float) -> None:
        """One person's seat: act on each new state of their panel."""
        seen: tuple[int, int] | None = None
        turns: set[int] = set()  # move numbers whose panel this sleepy player saw
        while not table.done and time.time() < deadline:
            message = live_panel(self.fake, user)
            if message is None:
                await asyncio.sleep(POLL)
                continue
            key = (message.message_id, len(message.edits))
            if key == seen:
                await asyncio.sleep(POLL)
                continue
            seen = key
            ops = match_ops(message)
            if not ops:
                continue
            seq = ops[0][1]
            if user is table.sleepy and seq not in turns:
                turns.add(seq)
                if len(turns) % 2 == 1:  # every other turn: let the timer run out
                    self.journal.skips.append(Skip(table, user, seq, time.time()))
                    continue
            if user is table.sleepy and self.journal.skips and any(
                    s.table is table and s.seq == seq for s in self.journal.skips):
                continue
            if self.export_share and self.rng.random() < self.export_share:
                await self.say(user, table.group, f"/export@{BOT}", table)
            await self.step(table, user, message, ops)

    async def step(self, table: Table, user: FakeUser, message: Message,
                   ops: list[tuple[str, int, str]]) -> None:
        """One tap (or typed command) chosen from the panel's buttons."""
        rng = self.rng
        by_kind: dict[str, list[tuple[str, int, str]]] = {}
        for op in ops:
            by_kind.setdefault(op[2][:1], []).append(op)
        places = [o for o in ops if o[2].startswith("p") and o[2] != "pass"]
        finish = [o for o in ops if o[2] in ("pass", "end")]
        seconds = [o for o in by_kind.get("c", []) if ":" in o[2]]  # "+" second cards
        cards = [o for o in by_kind.get("c", []) if ":" not in o[2]]
        choice: tuple[str, int, str] | None = None
        moves = False
        if by_kind.get("a"):
            choice, moves = rng.choice(by_kind["a"]), True
        elif by_kind.get("x"):
            choice, moves = by_kind["x"][0], True
        elif by_kind.get("d"):
            choice = rng.choice(by_kind["d"])
        elif places:
            if seconds and rng.random() < 0.3:
                choice = rng.choice(seconds)
            else:
                choice, moves = rng.choice(places), True
                label = button_text(message, choice[0])
                tail = choice[2].split("@", 1)[1].split(":")
                if (rng.random() < self.typed_share and CELL.fullmatch(label)
                        and tail[1:] in ([], ["end"])):
                    # The same step typed in the group instead of tapped (a defender's one
                    # typed card ends the turn, as the tap with ":end" does).
                    code = choice[2][1:].split("@")[0]
                    at = time.time()
                    user.send(table.group, f"/play@{BOT} {code} {label}")
                    update_id = self.last_update()
                    self.journal.typed += 1
                    record = Sent(update_id, table, user, choice[1], True)
                    self.journal.sent.append(record)
                    request = Request(update_id, "typed", "/play", table, user,
                                      table.group.id, at)
                    self.journal.requests.append(request)
                    record.delivered = request.delivered = await self.delivered(update_id)
                    return
        elif by_kind.get("k"):
            choice = rng.choice(by_kind["k"])
        elif cards or finish:
            if finish and (not cards or rng.random() < 0.15):
                choice, moves = rng.choice(finish), True
            else:
                choice = rng.choice(cards)
        if choice is None:
            return
        self.count_two_cards(user, choice, by_kind)
        at = time.time()
        query = user.press(message, data=choice[0])
        update_id = self.last_update()
        self.journal.taps += 1
        record = Sent(update_id, table, user, choice[1], False, query_id=query.id)
        if moves:
            self.journal.sent.append(record)
        request = Request(update_id, "tap", choice[0], table, user, user.id, at,
                          query_id=query.id, message_id=message.message_id)
        self.journal.requests.append(request)
        record.delivered = request.delivered = await self.delivered(update_id)

    def count_two_cards(self, user: FakeUser, choice: tuple[str, int, str],
                        by_kind: dict[str, list[tuple[str, int, str]]]) -> None:
        """Follow a two-card defence through its taps (:attr:`Journal.two_card_taps`). One
        the turn's timer or a kill cut short (the next panel is for another move than the
        second card's) is not counted."""
        _data, seq, op = choice
        state = self.two_cards.pop(user.id, None)
        if op.startswith("c") and ":" in op:  # the second card, under "+": card and "+"
            self.two_cards[user.id] = (2, 0)
            return
        if state is None:
            return
        taps, next_seq = state
        first_placed = next_seq > 0
        if first_placed and seq != next_seq:
            return  # not the same turn any more
        if op.startswith("k"):  # a column first: not counted
            return
        tail = op.split("@", 1)[1].split(":")[1:] if op.startswith("p") and "@" in op else []
        if not first_placed and op.startswith("p") and tail and tail != ["end"]:
            self.two_cards[user.id] = (taps + 1, seq + 1)
            return
        cells = [o for o in by_kind.get("p", []) if o[2] != "pass"]
        if not first_placed:
            return
        if op.startswith("p") and op != "pass" and not tail:
            self.journal.two_card_taps.append(taps + 1)  # the second card's cell at once
        elif by_kind.get("c") and not cells:
            self.journal.two_card_taps.append(taps + 2)  # asked for a card again


def pointer(call: Any) -> bool:
    """Whether a Bot API call posted the pointer to a recent answer."""
    return call.method.lower() == "sendmessage" and POINTER in str(call.params.get("text", ""))


def unanswered(fake: FakeTelegram, requests: list[Request],
               stored_updates: set[int]) -> list[Request]:
    """The requests that got no answer, as the person sees it:

    - a tap: its answer says something (a refusal), or the pressed panel was edited, or a
      new message reached the person, after it (whether the button's spinner was stopped
      is counted apart, :func:`spinning`: Telegram refuses that answer after ~15 s);
    - a typed move: stored (``stored_updates``: its board tells everyone, which the test
      checks apart), or a text said in the group or to the person after it;
    - ``/export``: the record (a document) in the group after it, the text that no tour is
      finished yet, or the pointer to the group's recent answer (:data:`POINTER`); nothing
      if the group's answer was pointed to within :data:`REPEAT_SECONDS` before it;
    - ``/go`` that started a match: every person of the table got a message after it (the
      deal, at least);
    - another command: the group (its lobby) or the person was written to after it.
    An update that was never answered 2xx is unanswered too."""
    by_chat: dict[int | str | None, list[Any]] = {}
    for call in fake.calls_to(ok=True):
        by_chat.setdefault(call.chat_id, []).append(call)
    for calls in by_chat.values():
        calls.sort(key=lambda c: c.time)
    times = {chat: [c.time for c in calls] for chat, calls in by_chat.items()}

    def since(chat: int, at: float) -> Iterator[Any]:
        """The successful calls to ``chat`` from ``at`` on, oldest first."""
        calls = by_chat.get(chat, [])
        return iter(calls[bisect.bisect_left(times.get(chat, []), at):])

    def wrote(chat: int, at: float, *methods: str) -> bool:
        return any(c.method.lower().startswith(methods) for c in since(chat, at))

    def export_answer(call: Any) -> bool:
        return call.method.lower() == "senddocument" or pointer(call) or (
            call.method.lower() == "sendmessage"
            and str(call.params.get("text", "")).startswith(NO_RECORD_YET))

    missing = []
    for r in requests:
        if not r.delivered:
            missing.append(r)
            continue
        me = r.user.id
        group = r.chat_id if r.chat_id != me else None
        if r.kind == "tap":
            query = fake.callbacks.get(r.query_id or "")
            ok = bool(query is not None and query.text) or wrote(me, r.at, "send") or any(
                c.method.lower().startswith("edit")
                and str(c.params.get("message_id")) == str(r.message_id)
                for c in since(me, r.at))
        elif r.kind == "typed":
            ok = r.update_id in stored_updates or any(
                wrote(chat, r.at, "sendmessage") for chat in (me, group) if chat is not None)
        elif r.text == "/export":
            # The record, the text that no tour is finished, or (asked again while the
            # group's answer is recent) the pointer to it. Later repeats get nothing on
            # purpose once the group's answer was pointed to: then silence is the answer.
            ok = group is not None and (
                any(export_answer(c) for c in since(group, r.at))
                or any(pointer(c) for c in since(group, r.at - REPEAT_SECONDS)
                       if c.time < r.at))
        elif r.text == "/go" and r.table is not None and r.table.match_id is not None:
            ok = all(wrote(u.id, r.at, "send") for u in r.table.humans)
        else:
            ok = any(wrote(chat, r.at, "send", "edit") for chat in (me, group)
                     if chat is not None)
        if not ok:
            missing.append(r)
    return missing




def live_panel(fake: FakeTelegram, user: FakeUser) -> Message | None:
    """The newest picture in the person's private chat, if it carries match buttons: what a
    person acts on (an older panel whose closing edit did not come, its buttons still
    there, is scrolled past, as the bot's "the newest messages are below" asks)."""
    for message in reversed(fake.sent(user, deleted=False)):
        if message.kind == "photo":
            return message if match_ops(message) else None
    return None


def match_ops(message: Message) -> list[tuple[str, int, str]]:
    """(callback data, move number, op) of a panel's match buttons (not Hint, Back, Rematch)."""
    found = []
    for button in message.buttons():
        data = button.get("callback_data", "")
        parts = data.split(":", 4)
        if len(parts) != 5 or parts[:2] != ["v1", "m"]:
            continue
        op = panel_op(data)
        if op in ("h", "b", "rematch") or op.startswith(("h", "b", "rematch")):
            continue
        found.append((data, int(parts[3]), op))
    return found


def button_text(message: Message, data: str) -> str:
    return next(str(b.get("text", "")) for b in message.buttons()
                if b.get("callback_data") == data)


async def run_all(people: People, tables: list[Table], deadline: float,
                  on_tick: Callable[[], None] | None = None) -> None:
    """Every human of every table plays until done or ``deadline``."""
    tasks = [asyncio.create_task(people.play(t, u, deadline)) for t in tables
             if t.match_id is not None for u in t.humans]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()


def spinning(fake: FakeTelegram, requests: list[Request]) -> list[Request]:
    """The taps (answered 2xx) whose button was never answered (its spinner ran on)."""
    return [r for r in requests if r.kind == "tap" and r.delivered and not (
        (query := fake.callbacks.get(r.query_id or "")) is not None and query.answered)]
