"""Labels that never change silently (issue 27, item 6).

When a tour grows left of column A or above row 1, every cell label moves
(:mod:`krendzu.coords`). The group's board post and every player's private panel say so in
plain words, naming the opening card's cell as the example ("M13 is now N13"), and no
caption mixes two labellings: a change is described in the frame after it, a defender's
two-card turn in the frame after the whole turn, and a board post queued behind the flood
gate is never merged with a newer one labelled otherwise.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from pathlib import Path

from chat.describe import describe_moves, label_shift, shift_text
from chat.i18n import Catalogs
from chat.model import tour_frame
from chat.notices import BoardPicture, BoardPost
from krendzu import Action, DealSizes, EndTurn, Match, Place, Settings, Table
from krendzu.coords import LabelFrame, frame_for
from tests.bot_harness import BOT, FastClock, Harness, panel, running_bot, start_group_duel
from tests.fakebot import FakeTelegram, FakeUser

CATALOGS = Catalogs()
EN, RU = CATALOGS.get("en"), CATALOGS.get("ru")
NAMES = ("Ann", "Bob")
#: A card as captions write it, then the label of its cell: ``Q♣ M12``, ``10♦ B13``.
NAMED_CELL = re.compile(r"((?:10|[2-9JQKA])[♠♥♦♣]) ([A-Z]{1,3})([0-9]{1,4})\b")


def line_duel() -> Match:
    """A duel with hands big enough for a line of cards from M13 leftwards past A."""
    return Match(list(NAMES), Settings(table=Table.DUEL, deal=DealSizes(18, 18)), seed=11)


def leftmost(game: Match) -> int:
    """The x of the leftmost card on the tour's board (1 on an empty board)."""
    return min((x for _, x, _ in game.tour.observation(None).placements), default=1)


def next_left(game: Match) -> Place:
    """The mover's first card on the cell left of the row's leftmost card (row 13)."""
    tour = game.tour
    return Place(tour.hand(tour.current_player)[0], leftmost(game) - 1, 0)


def turn_left(game: Match) -> list[Action]:
    """A whole one-card turn growing the line left (a defender ends it)."""
    game = game.clone()
    place = next_left(game)
    game.apply(place)
    return [place, EndTurn()] if game.tour.step_in_turn else [place]


def grow(game: Match, until: int) -> None:
    """One-card turns until the line's leftmost card is at ``x = until``."""
    while leftmost(game) > until:
        for action in turn_left(game):
            game.apply(action)


def assert_one_labelling(text: str, game: Match) -> None:
    """Every "card cell" in ``text`` is labelled in one frame: the tour's frame just after
    the newest card the text names (the picture a caption sits under), never an older one."""
    placed = list(game.tour.observation(None).placements)
    where = {card.pretty(): (i, x, y) for i, (card, x, y) in enumerate(placed)}
    named = [(m.group(1), m.group(2) + m.group(3)) for m in NAMED_CELL.finditer(text)]
    named = [(card, label) for card, label in named if card in where]
    if not named:
        return
    newest = max(where[card][0] for card, _ in named)
    frame = frame_for(placed[:newest + 1])
    for card, label in named:
        _, x, y = where[card]
        assert label == frame.label(x, y), (
            f"{card} {label} is not in the caption's labelling ({card} "
            f"{frame.label(x, y)}):\n{text}")


# The words -----------------------------------------------------------------------------


def test_the_words_say_which_way_how_far_and_where_the_opening_card_is_now() -> None:
    assert shift_text(EN, LabelFrame(), LabelFrame(1, 0)) == (
        "The board grew: the labels moved one column right (M13 is now N13).")
    assert shift_text(EN, LabelFrame(1, 0), LabelFrame(3, 0)) == (
        "The board grew: the labels moved 2 columns right (N13 is now P13).")
    assert shift_text(EN, LabelFrame(), LabelFrame(0, 1)) == (
        "The board grew: the labels moved one row down (M13 is now M14).")
    assert shift_text(EN, LabelFrame(), LabelFrame(2, 1)) == (
        "The board grew: the labels moved 2 columns right and one row down "
        "(M13 is now O14).")
    assert shift_text(RU, LabelFrame(), LabelFrame(1, 0)) == (
        "Поле выросло: подписи сдвинулись на один столбец вправо (M13 теперь N13).")
    assert shift_text(RU, LabelFrame(), LabelFrame(5, 2)) == (
        "Поле выросло: подписи сдвинулись на 5 столбцов вправо и на 2 строки вниз "
        "(M13 теперь R15).")
    assert "на 3 строки вниз" in shift_text(RU, LabelFrame(), LabelFrame(0, 3))
    assert "на 21 столбец вправо" in shift_text(RU, LabelFrame(), LabelFrame(21, 0))


def test_a_shift_is_found_from_the_frames_before_and_after() -> None:
    game = line_duel()
    grow(game, -11)  # a card at B13: its empty neighbour is A13, everything fits
    assert tour_frame(game) == LabelFrame()
    before = game.clone()
    for action in turn_left(game):  # the card at A13: a column left of it is needed
        game.apply(action)
    assert label_shift(before, game) == (LabelFrame(), LabelFrame(1, 0))
    assert label_shift(game, game) is None
    assert label_shift(None, game) is None
    # A turn that grows nothing says nothing.
    later = game.clone()
    later.apply(Place(later.tour.hand(later.tour.current_player)[0], 0, 1))
    assert label_shift(game, later) is None


def test_a_change_is_described_in_the_frame_after_it_with_the_shift_said_first() -> None:
    """Several turns in one change (a restart's backlog, a computer's moves): the turn
    before the shift is labelled as the picture after all of them, not as it was typed."""
    game = line_duel()
    grow(game, -10)
    before = game.clone()
    actions: list[Action] = []
    for _ in range(3):  # cards at -11 (B13 then), -12 (A13 then), -13
        turn = turn_left(game)
        for action in turn:
            game.apply(action)
        actions += turn
    assert tour_frame(game) == LabelFrame(2, 0)
    for tr, words in ((EN, "The board grew: the labels moved 2 columns right (M13 is now "
                           "O13)."),
                      (RU, "Поле выросло: подписи сдвинулись на 2 столбца вправо (M13 "
                           "теперь O13).")):
        lines, after = describe_moves(tr, before, actions, NAMES)
        assert lines[0] == words
        cards = [a.card for a in actions if isinstance(a, Place)]
        told = "\n".join(lines)
        assert [f"{c.pretty()} {tour_frame(after).label(x, 0)}" in told
                for c, x in zip(cards, (-11, -12, -13), strict=True)] == [True] * 3
        assert f"{cards[0].pretty()} D13" in told  # was B13 when it was played
        assert_one_labelling(told, after)
    # Without a shift the lines are as ever: no extra words.
    step = Place(game.tour.hand(game.tour.current_player)[0], 0, 1)  # below M13
    lines, _ = describe_moves(EN, game, [step], NAMES)
    assert not any("grew" in line for line in lines) and len(lines) == 1, lines


def test_a_defenders_two_cards_are_told_in_the_frame_of_the_whole_turn() -> None:
    """The first card grows the board, the second grows it again: the defender's panel
    hears of the first shift at once; the group, which sees the turn only when it is
    whole, hears of both in one line, with both cards labelled in the final frame."""
    game = line_duel()
    grow(game, -11)
    defender = game.tour.current_player
    assert defender in game.tour.roles.defenders
    start = game.clone()
    first = next_left(game)
    game.apply(first)  # A13 in the old frame: the board grows one column
    assert game.tour.pending and game.tour.current_player == defender
    lines, _ = describe_moves(EN, start, [first], NAMES)
    assert lines[0] == ("The board grew: the labels moved one column right (M13 is now "
                        "N13).")
    assert lines[-1] == (f"{NAMES[defender]}: {first.card.pretty()} B13 (may place a "
                         "second card)")
    middle = game.clone()
    second = next_left(game)
    game.apply(second)
    assert not game.tour.pending  # two cards: the turn is over
    lines, _ = describe_moves(EN, middle, [second], NAMES)
    assert lines[0] == ("The board grew: the labels moved 2 columns right (M13 is now "
                        "O13).")
    assert lines[-1] == (f"{NAMES[defender]}: {first.card.pretty()} C13 + "
                         f"{second.card.pretty()} B13")


def test_board_posts_in_two_labellings_are_never_merged() -> None:
    game = line_duel()
    picture = BoardPicture(game.observation(None), NAMES, "en")
    old = BoardPost(1, -5, None, ("Ann: 6♠ B13",), "", picture)
    same = BoardPost(1, -5, None, ("Bob: 8♠ A13",), "", picture)
    grown = BoardPost(1, -5, None, ("The board grew…", "Bob: 8♠ B13"), "", picture,
                      frame=LabelFrame(1, 0))
    assert old.merged(same) == BoardPost(1, -5, None, ("Ann: 6♠ B13", "Bob: 8♠ A13"), "",
                                         picture)
    assert old.merged(grown) is None  # "B13" would name two cells in one caption
    assert old.merged(BoardPost(2, -5, None, (), "", picture)) is None  # another match


# Through the bot ------------------------------------------------------------------------


class HeldClock(FastClock):
    """A :class:`FastClock` that can stand still: while held, the group's flood gate never
    opens, so board posts wait in the queue and coalesce, as in a busy group."""

    def __init__(self, speed: float = 60.0) -> None:
        super().__init__(speed)
        self.held: float | None = None

    def __call__(self) -> float:
        return self.held if self.held is not None else super().__call__()

    def hold(self) -> None:
        self.held = super().__call__()

    def release(self) -> None:
        self.held = None


def texts(fake: FakeTelegram, chat: object) -> list[str]:
    return [m.caption or m.text or "" for m in fake.sent(chat)]  # type: ignore[arg-type]


async def stored_game(h: Harness, match_id: int) -> Match:
    return (await h.services.flow.load(match_id)).game


async def moved(h: Harness, match_id: int, count: int) -> None:
    """Wait until the match has more than ``count`` moves stored (no delivery awaited)."""
    store = h.services.store
    for _ in range(500):
        if (await store.get_match(match_id)).move_count > count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(h.fake.describe())


async def type_left(h: Harness, match_id: int, users: Sequence[FakeUser]) -> None:
    """The player to move types the next card of the line in the private chat (and ``end``
    if a defender's turn stays open); waits until it is stored, not until it is posted."""
    stored = await h.services.flow.load(match_id)
    game = stored.game
    user = next(u for u in users if u.id == stored.row.seats[game.current_player].user_id)
    place = next_left(game)
    user.send(None, f"{place.card.code()} {tour_frame(game).label(place.x, place.y)}")
    await moved(h, match_id, stored.row.move_count)
    after = await h.services.flow.load(match_id)
    if after.game.tour.pending:
        user.send(None, "end")
        await moved(h, match_id, after.row.move_count)


async def press_on_panel(h: Harness, user: FakeUser, text: str, *, seq: int | None = None,
                         without: str | None = None) -> None:
    """Press the key labelled ``text`` on the user's newest panel once it shows one (for
    the move ``seq``, and no key starting with ``without``: the panel was redrawn)."""
    fake = h.fake

    def ready() -> object:
        message = panel(fake, user)
        if message is None:
            return None
        keys = message.buttons()
        if without is not None and any(b.get("text", "").startswith(without) for b in keys):
            return None
        return message if any(b.get("text") == text and (
            seq is None or b.get("callback_data", "").split(":")[3] == str(seq))
            for b in keys) else None

    message = await fake.wait_for(ready, timeout=10, message=f"no {text!r} key")
    user.press(message, text=text)


async def test_a_label_shift_is_announced_to_all_and_no_caption_mixes_labellings(
        tmp_path: Path) -> None:
    """A group duel plays a line of cards leftwards from M13; the defender's two-card turn
    goes past column A (A13, then the new A13 left of it), all while the group's flood
    gate is shut, so the queued board posts coalesce. The group's post and both players'
    private messages say the labels moved; every caption in the group and in the private
    chats labels its cells in one frame, the one of its picture."""
    clock = HeldClock()
    # The clock stands still for a while: only the group's own limit may count.
    fake = FakeTelegram(bot_username=BOT, clock=clock, global_limit=None)
    ann = fake.user(2701, "Ann", language_code="en")
    bob = fake.user(2702, "Bob", language_code="ru")
    group = fake.group(-1002701, "Growing")
    async with running_bot(tmp_path, fake, group_limit=3) as h:
        ann.start_bot()
        bob.start_bot()
        await h.settle()
        row = await start_group_duel(h, group, ann, bob, "duel timer=off")
        users = (ann, bob)
        while leftmost(await stored_game(h, row.match_id)) > -5:
            await type_left(h, row.match_id, users)
            await h.settle()
        posts_before = len([m for m in fake.sent(group) if m.kind == "photo"])
        clock.hold()  # the gate lets at most 3 more posts out; the rest wait and coalesce
        while leftmost(await stored_game(h, row.match_id)) > -11:
            await type_left(h, row.match_id, users)
        game = await stored_game(h, row.match_id)
        assert tour_frame(game) == LabelFrame()
        seat = game.tour.current_player
        assert seat in game.tour.roles.defenders  # the defender's turn goes past A
        defender = ann if row.seats[seat].user_id == ann.id else bob
        attacker = bob if defender is ann else ann
        first, second = sorted(game.tour.hand(seat))[:2]
        count = (await h.services.store.get_match(row.match_id)).move_count
        # Two cards with the panel's keys: the first, "+" the second, the first's cell
        # (A13, x = -12: the board grows), then the second's (x = -13, the new A13).
        await press_on_panel(h, defender, first.pretty())
        await press_on_panel(h, defender, "+" + second.pretty())
        await press_on_panel(h, defender, "A13", without="+")
        await moved(h, row.match_id, count)
        mid = await h.services.flow.load(row.match_id)
        assert mid.game.tour.pending and tour_frame(mid.game) == LabelFrame(1, 0)
        await press_on_panel(h, defender, "A13", seq=mid.next_seq)
        await moved(h, row.match_id, count + 1)
        await asyncio.sleep(0.3)  # the last post reaches the queue
        clock.release()
        await h.settle()
        game = await stored_game(h, row.match_id)
        assert tour_frame(game) == LabelFrame(2, 0)
        assert game.tour.board()[(-12, 0)] == first and game.tour.board()[(-13, 0)] == second

        group_words = "The board grew: the labels moved 2 columns right (M13 is now O13)."
        posts = [m for m in fake.sent(group) if m.kind == "photo"][posts_before:]
        told = [m for m in posts if group_words in (m.caption or "")]
        assert len(told) == 1, [m.caption for m in posts]
        turn = f"{first.pretty()} C13 + {second.pretty()} B13"
        assert turn in (told[0].caption or "")
        # The posts queued before it coalesced among themselves, not with it.
        earlier = posts[posts.index(told[0]) - 1].caption or ""
        assert len(NAMED_CELL.findall(earlier)) >= 2, earlier
        assert "grew" not in earlier
        for caption in texts(fake, group):
            assert_one_labelling(caption, game)

        # Both players, privately: the defender at the first card and with the whole turn,
        # the attacker with the panel of their next move; each in their own language.
        words = {ann: "The board grew: the labels moved", bob: "Поле выросло: подписи сдвинулись"}
        mover_told = [t for t in texts(fake, defender) if words[defender] in t]
        assert mover_told and any(turn in t for t in mover_told), texts(fake, defender)[-3:]
        attacker_panel = panel(fake, attacker)
        assert attacker_panel is not None
        caption = attacker_panel.caption or attacker_panel.text or ""
        assert words[attacker] in caption and turn in caption, caption
        for user in users:
            for text in texts(fake, user):
                assert_one_labelling(text, game)
