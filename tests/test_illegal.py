"""Typed reasons for illegal steps (krendzu.illegal): each rule broken raises its own
subclass of IllegalMove with the facts to explain it, the message unchanged, nothing moved."""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest

import krendzu.illegal as illegal
from krendzu import (
    TERMINAL,
    BadRedeal,
    CannotPass,
    CardNotInHand,
    CellError,
    CellTaken,
    GameOver,
    IllegalMove,
    KrendzuError,
    Match,
    NotAnAction,
    NotTouching,
    NoTurnToEnd,
    NotYourTurn,
    Pass,
    Place,
    Redeal,
    Settings,
    Table,
    Tour,
    WrongExchangeCount,
    WrongOpening,
    WrongPhase,
    parse_action,
    parse_card,
)
from tests.helpers import make_tour, play

ATT, DEF = 0, 1  # a duel dealt by seat 0: seat 1 defends and opens


def duel() -> Tour:
    return make_tour(Table.DUEL, 0, {ATT: "KH 6C 8D", DEF: "QC 9D 6H 7S"})


def exchange(*steps: str) -> Tour:
    """A duel with an exchange of up to 2 cards: the defender announces first."""
    tour = make_tour(Table.DUEL, 0, {ATT: "6S 7S 8S", DEF: "QH KH AH JH"}, exchange_limit=2,
                     stock="9D TD 6C")
    play(tour, *steps)
    return tour


def card(code: str):
    return parse_card(code)


@dataclass
class Case:
    """``tour`` after ``steps``; applying ``bad`` raises ``kind`` with ``message`` and
    ``facts`` (attribute values)."""

    tour: Callable[[], Tour]
    steps: tuple[str, ...]
    bad: str
    kind: type[IllegalMove]
    message: str
    facts: dict[str, object] = field(default_factory=dict)


TOUCH = " (a card must share an edge with one; corners do not count)"
CASES = {
    "opening elsewhere": Case(duel, (), "QC@1,0", WrongOpening,
                              "the opening card goes at (0, 0)", {"cell": (1, 0)}),
    "opening pass": Case(duel, (), "pass", CannotPass,
                         "the opening move is exactly one card; it cannot be a pass",
                         {"reason": "opening"}),
    "end with nothing": Case(duel, (), "end", NoTurnToEnd,
                             "there is no turn to end: place a card (or pass)"),
    "another's card": Case(duel, (), "KH@0,0", CardNotInHand, "you do not hold K♥",
                           {"card": card("KH")}),
    "the defender's card": Case(duel, ("QC@0,0",), "9D@1,0", CardNotInHand,
                                "you do not hold 9♦", {"card": card("9D")}),
    "taken": Case(duel, ("QC@0,0",), "KH@0,0", CellTaken, "(0, 0) is already taken",
                  {"cell": (0, 0), "x": 0, "y": 0, "card": card("QC")}),
    "corner only": Case(duel, ("QC@0,0",), "KH@1,1", NotTouching,
                        "(1, 1) does not touch any card on the board" + TOUCH,
                        {"cell": (1, 1), "far": False}),
    "far away": Case(duel, ("QC@0,0",), "KH@5,5", NotTouching,
                     "(5, 5) does not touch any card on the board" + TOUCH, {"far": False}),
    "beyond reach": Case(duel, ("QC@0,0",), "KH@99,0", NotTouching,
                         "(99, 0) does not touch any card on the board",
                         {"cell": (99, 0), "far": True}),
    "attacker passes": Case(duel, ("QC@0,0",), "pass", CannotPass,
                            "an attacker must place exactly one card; it cannot pass",
                            {"reason": "attacker"}),
    "pass mid-turn": Case(duel, ("QC@0,0", "KH@1,0", "9D@2,0"), "pass", CannotPass,
                          "you have placed a card this turn: place a second or end the turn",
                          {"reason": "mid-turn"}),
    "pass, attackers out": Case(
        lambda: make_tour(Table.DUEL, 0, {ATT: "KH", DEF: "QC 9D 6H 7S"}),
        ("QC@0,0", "KH@1,0"), "pass", CannotPass,
        "no attacker holds a card any more, so a defender cannot pass: play one or two cards",
        {"reason": "attackers-out"}),
    "announce in play": Case(duel, ("QC@0,0", "KH@1,0"), "ann:1", WrongPhase,
                             "exchange announcements are over (or there is no exchange)",
                             {"phase": "play"}),
    "discard in play": Case(duel, ("QC@0,0", "KH@1,0"), "drop:9D", WrongPhase,
                            "this is not the time to discard", {"phase": "play"}),
    "card in the exchange": Case(exchange, (), "QH@0,0", WrongPhase,
                                 "you cannot place a card during the exchange",
                                 {"phase": "announce"}),
    "unheld card in the exchange": Case(exchange, (), "6S@0,0", CardNotInHand,
                                        "you do not hold 6♠", {"card": card("6S")}),
    "pass in the exchange": Case(exchange, (), "pass", WrongPhase,
                                 "you cannot pass during the exchange", {"phase": "announce"}),
    "end in the exchange": Case(exchange, (), "end", WrongPhase,
                                "you cannot end the turn during the exchange",
                                {"phase": "announce"}),
    "too many to exchange": Case(exchange, (), "ann:3", WrongExchangeCount,
                                 "you may exchange 0 to 2 cards, not 3",
                                 {"count": 3, "most": 2}),
    "discard before announcing": Case(exchange, (), "drop:QH", WrongPhase,
                                      "this is not the time to discard",
                                      {"phase": "announce"}),
    "discard an unheld card": Case(lambda: exchange("ann:2", "ann:1"), (), "drop:6S",
                                   CardNotInHand, "you do not hold 6♠", {"card": card("6S")}),
    "announce while discarding": Case(lambda: exchange("ann:2", "ann:1"), (), "ann:1",
                                      WrongPhase, "exchange announcements are over (or "
                                      "there is no exchange)", {"phase": "discard"}),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_each_rule_raises_its_reason_and_changes_nothing(case: Case) -> None:
    tour = case.tour()
    play(tour, *case.steps)
    before = (tour.hand_sizes(), tour.board(), tour.current_player, tour.step_in_turn,
              len(tour.history), tour.phase)
    with pytest.raises(case.kind) as raised:
        tour.apply(parse_action(case.bad))
    exc = raised.value
    assert type(exc) is case.kind
    assert str(exc) == case.message, "the engine's message stays as it was"
    for name, value in case.facts.items():
        assert getattr(exc, name) == value, name
    assert isinstance(exc, IllegalMove) and isinstance(exc, ValueError)
    after = (tour.hand_sizes(), tour.board(), tour.current_player, tour.step_in_turn,
             len(tour.history), tour.phase)
    assert before == after


def test_a_redeal_that_is_not_due_or_does_not_fit() -> None:
    with pytest.raises(WrongPhase, match="no redeal is due") as raised:
        exchange().apply(Redeal(((), ())))
    assert raised.value.phase == "announce"
    tour = exchange("ann:1", "ann:0", "drop:QH")
    for draws, message in ((((card("6S"),), ()), "6♠ is not in the redeal pool"),
                           (((), ()), "seat 1 must draw 1 cards, not 0"),
                           (((),), "a redeal lists one group of cards per player")):
        with pytest.raises(BadRedeal) as bad:
            tour.apply(Redeal(draws))
        assert str(bad.value) == message


def test_nothing_is_played_in_a_tour_that_is_over_or_with_what_is_no_action() -> None:
    tour = make_tour(Table.DUEL, 0, {ATT: "KH", DEF: "QC"})
    play(tour, "QC@0,0", "KH@1,0")
    assert tour.is_over
    for attempt in (lambda: tour.apply(Pass()), lambda: tour.random_step(random.Random(1))):
        with pytest.raises(GameOver, match="the tour is over"):
            attempt()
    with pytest.raises(NotAnAction, match="not an action: 'QC@0,0'") as raised:
        duel().apply("QC@0,0")  # type: ignore[arg-type]  # text, not an action object
    assert raised.value.given == "QC@0,0"
    for text, message in (("hello", "not an action: 'hello'"),
                          ("ann:x", "bad announcement 'ann:x': expected e.g. 'ann:2'")):
        with pytest.raises(NotAnAction) as unread:
            parse_action(text)
        assert str(unread.value) == message and unread.value.given == text


# The match ------------------------------------------------------------------------------


def test_the_match_refuses_a_step_of_the_wrong_seat() -> None:
    match = Match(["ann", "bob"], Settings(), seed=5)
    opener = match.current_player
    other = 1 - opener
    step = next(a for a in match.legal_actions() if isinstance(a, Place))
    with pytest.raises(NotYourTurn) as raised:
        match.apply(step, seat=other)
    assert (raised.value.seat, raised.value.to_move) == (other, opener)
    assert match.history == []
    # The opening card ends the opener's turn: a second card of the same command is not
    # played for the next seat, even a card that seat holds.
    match.apply(step, seat=opener)
    theirs = next(a for a in match.legal_actions() if isinstance(a, Place))
    with pytest.raises(NotYourTurn) as second:
        match.apply(theirs, seat=opener)
    assert (second.value.seat, second.value.to_move) == (opener, other)
    assert match.history == [step]
    match.apply(theirs, seat=other)  # the right seat may
    assert len(match.history) == 2


def test_the_match_is_over_and_the_redeal_is_chance() -> None:
    match = Match(["ann", "bob"], Settings(), seed=6)
    with pytest.raises(NotAnAction, match="the redeal is dealt by the match"):
        match.apply(Redeal(((), ())))
    with pytest.raises(WrongPhase, match="the current tour is not over") as early:
        match.deal_next_tour()
    assert early.value.phase == "play"
    rng = random.Random(6)
    while not match.is_over:
        match.apply(rng.choice(match.legal_actions()))
    assert match.current_player == TERMINAL
    for attempt in (lambda: match.apply(Pass()), lambda: match.apply(Pass(), seat=0)):
        with pytest.raises(GameOver, match="the match is over"):
            attempt()
    with pytest.raises(GameOver, match="every tour of the match has been played"):
        match.deal_next_tour()
    undealt = Match(["ann", "bob"], Settings(), seed=6, deal_first_tour=False)
    with pytest.raises(WrongPhase, match="no tour has been dealt yet") as none:
        _ = undealt.tour
    assert none.value.phase is None


# Every reason ------------------------------------------------------------------------------


REASONS = [getattr(illegal, name) for name in illegal.__all__
           if isinstance(getattr(illegal, name), type)]


def test_every_reason_is_an_illegal_move_and_tested_here() -> None:
    concrete = {cls for cls in REASONS if cls is not CellError}
    assert all(issubclass(cls, IllegalMove) and issubclass(cls, KrendzuError)
               and issubclass(cls, ValueError) for cls in REASONS)
    assert {WrongOpening, CellTaken, NotTouching} == {
        cls for cls in concrete if issubclass(cls, CellError)}
    raised_here = {case.kind for case in CASES.values()} | {
        BadRedeal, GameOver, NotAnAction, NotYourTurn}  # the tests after the table
    assert concrete == raised_here


@pytest.mark.parametrize("exc", [
    NotAnAction("not an action: 'x'", given="x"), GameOver("the match is over"),
    NotYourTurn(0, 1), WrongPhase("no redeal is due", phase="play"),
    CardNotInHand(card("QC")), WrongOpening(1, 0), CellTaken(0, 0, card("KH")),
    NotTouching(4, 4, far=True), CannotPass("attacker"), NoTurnToEnd(),
    WrongExchangeCount(3, 2), BadRedeal("a card was dealt twice"),
    IllegalMove("plain"),
], ids=lambda e: type(e).__name__)
def test_a_reason_crosses_a_process_boundary_intact(exc: IllegalMove) -> None:
    """The computer players think in worker processes: a reason raised there is pickled."""
    back = pickle.loads(pickle.dumps(exc))
    assert type(back) is type(exc) and str(back) == str(exc) and back.args == exc.args
    assert vars(back) == vars(exc)
