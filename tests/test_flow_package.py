"""The flow as a package of small modules: the per-chat lock behind its interface, the
panel's button data read back by the module that writes it, and the layering itself."""

from __future__ import annotations

import ast
import asyncio
import random
from pathlib import Path

import pytest

from chat.flow import Actor, Flow, MatchPress, parse_press
from chat.flow.base import MatchLocks
from chat.flow.views import codec
from chat.model import Keyboard
from chat.notices import EditPanel, Notice, Send
from storage import MatchStatus

ANN, BOB = Actor(1, "Ann", "en"), Actor(2, "Боб", "ru")
FLOW_DIR = Path(__file__).resolve().parent.parent / "chat" / "flow"


# The lock -----------------------------------------------------------------------------------


async def test_match_locks_serialize_one_chat_and_forget_quiet_ones() -> None:
    locks = MatchLocks()
    order: list[str] = []
    first_in = asyncio.Event()
    release_first = asyncio.Event()

    async def first() -> None:
        async with locks.hold(-1, None):
            order.append("first in")
            first_in.set()
            await release_first.wait()
            order.append("first out")

    async def second() -> None:
        async with locks.hold(-1, 0):  # no topic and topic 0 are the same chat
            order.append("second in")

    one = asyncio.create_task(first())
    await first_in.wait()
    two = asyncio.create_task(second())
    async with locks.hold(-2, None):  # another chat is not held up meanwhile
        order.append("other chat")
    await asyncio.sleep(0)
    assert order == ["first in", "other chat"]
    assert len(locks) == 1  # the held chat only; the other chat's lock is gone already
    release_first.set()
    await asyncio.gather(one, two)
    assert order == ["first in", "other chat", "first out", "second in"]
    assert len(locks) == 0, "a quiet chat keeps no lock"


async def test_a_cancelled_wait_leaves_no_lock_behind() -> None:
    locks = MatchLocks()
    async with locks.hold(-1, 7):
        waiting = asyncio.create_task(locks.hold(-1, 7).__aenter__())
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert len(locks) == 1
    assert len(locks) == 0
    async with locks.hold(-1, 7):  # and the chat can be locked again
        assert len(locks) == 1


# The panel's buttons ------------------------------------------------------------------------


def newest_panels(notices: list[Notice], panels: dict[int, Keyboard]) -> None:
    for notice in notices:
        if isinstance(notice, Send) and notice.panel_of is not None:
            panels[notice.chat_id] = notice.keyboard or []
        elif isinstance(notice, EditPanel):
            panels[notice.user_id] = notice.keyboard or []


async def test_every_panel_button_is_read_back_as_what_it_shows(flow: Flow) -> None:
    """Two people play a whole duel (with an exchange) only by pressing their panels'
    buttons: each button's data is read back as a press of this match at the newest move,
    naming a legal step, a card of the hand, or a hint; a press never meets "not valid"."""
    for actor in (ANN, BOB):
        await flow.see_user(actor, private=True)
    await flow.new_lobby(-30, None, ANN, ["tours=2", "exchange=1"], title="Buttons")
    await flow.lobby_action(-30, None, BOB, "join")
    started = await flow.lobby_action(-30, None, ANN, "go")
    panels: dict[int, Keyboard] = {}
    newest_panels(started.notices, panels)
    stored = await flow.find_match(-30, None, ANN.user_id)
    assert stored is not None
    match_id, actors, rng = stored.match_id, {1: ANN, 2: BOB}, random.Random(30)
    kinds: set[str] = set()
    for _ in range(2000):
        stored = await flow.load(match_id)
        if stored.row.status is not MatchStatus.ACTIVE:
            break
        seat = stored.game.current_player
        user_id = stored.row.seats[seat].user_id
        assert user_id is not None
        keyboard = panels[user_id]
        hand = stored.game.observation(seat).tour.hand
        legal = stored.game.legal_actions()
        choices = []
        for button in (b for row in keyboard for b in row):
            press = parse_press(button.data)
            assert isinstance(press, MatchPress)
            assert (press.match_id, press.seq) == (match_id, stored.next_seq)
            op = codec.decode_op(press.op)
            if isinstance(op, codec.Step):
                assert op.action in legal, (button, legal)
                choices.append(press)
            elif isinstance(op, codec.Show):
                assert op.card is None or op.card in hand
                if op.card is not None:
                    choices.append(press)
            else:
                assert isinstance(op, codec.AskHint), button
            kinds.add(type(op).__name__)
        assert choices, keyboard
        press = rng.choice(choices)
        outcome = await flow.panel_press(match_id, press.seq, press.op, actors[user_id])
        tr = await flow.user_tr(user_id)
        assert outcome.reply not in (tr._("This button is not valid any more."),
                                     tr._("This panel is out of date: use the newest one.")), \
            outcome.reply
        newest_panels(outcome.notices, panels)
    assert (await flow.load(match_id)).row.status is MatchStatus.FINISHED
    assert kinds == {"Step", "Show", "AskHint"}
    assert len(flow.locks) == 0  # type: ignore[arg-type]


@pytest.mark.parametrize("op", ["", "p", "pQC@x,1", "cZZ", "k", "kQC", "kQC:x", "x", "xZZ",
                                "a", "ab", "hints", "rematch2", "d"])
def test_malformed_panel_ops_read_as_invalid(op: str) -> None:
    assert isinstance(codec.decode_op(op), codec.Invalid)


# The layering -------------------------------------------------------------------------------

#: Each module of chat/flow may import only modules of an earlier line (or its own line's
#: views package): the order the package is built in.
LAYERS: list[set[str]] = [
    {"base", "lobby_state", "signals", "event_words", "views.codec",
     "views.texts", "views.webapp"},
    {"views.reactions"},
    {"views.panel", "views.lobby_view", "views.messages", "views.arena_view",
     "views.league_view"},
    {"people", "deadlines"},
    {"games", "caps", "announce", "engines"},
    {"broadcast", "endings"},
    {"parts"},
    {"lobby_start", "arena_post"},
    {"matches", "reports", "lobbies", "pool", "arenas", "watch", "reactions"},
    {"invites", "presses", "ticker", "restart", "leagues"},
    {"set_up_doors"},
    {"facade"},
    {"__init__"},
]


def flow_modules() -> dict[str, Path]:
    found = {}
    for path in FLOW_DIR.rglob("*.py"):
        name = ".".join(path.relative_to(FLOW_DIR).with_suffix("").parts)
        found[name.removesuffix(".__init__") if name != "__init__" else name] = path
    return found


def test_flow_modules_import_only_downwards_and_stay_small() -> None:
    modules = flow_modules()
    layer_of = {name: i for i, layer in enumerate(LAYERS) for name in layer}
    assert set(modules) - {"views"} == set(layer_of), "every module has a place"
    for name, path in modules.items():
        source = path.read_text()
        assert len(source.splitlines()) <= 400, name
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom):
                targets = [node.module or ""]
                if node.module in ("chat.flow", "chat.flow.views"):
                    targets = [f"{node.module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            for target in targets:
                assert not target.startswith("telegram"), (name, "the flow never imports "
                                                           "telegram")
                assert target not in ("chat.handlers", "chat.delivery"), name
                if not target.startswith("chat.flow.") or name == "views":
                    continue
                imported = target.removeprefix("chat.flow.")
                assert layer_of[imported] < layer_of[name], f"{name} imports {imported}"


def test_no_module_of_the_chat_layer_outgrows_400_lines() -> None:
    """Issue 26's habit: a module that grows past ~400 lines is split by what it does."""
    chat_dir = FLOW_DIR.parent
    long = {str(p.relative_to(chat_dir)): n for p in chat_dir.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 400}
    assert not long, long
