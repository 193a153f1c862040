"""Actions: text round trip and the 40-byte limit for button data."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from krendzu import (
    DECK,
    Announce,
    Discard,
    EndTurn,
    IllegalMove,
    KrendzuError,
    Pass,
    Place,
    parse_action,
)
from krendzu.board import REACH

player_actions = st.one_of(
    st.builds(Place, st.sampled_from(DECK), st.integers(-REACH, REACH),
              st.integers(-REACH, REACH)),
    st.just(Pass()),
    st.just(EndTurn()),
    st.builds(Announce, st.integers(0, 36)),
    st.builds(Discard, st.sampled_from(DECK)),
)


@given(player_actions)
def test_round_trip_and_size(action) -> None:
    text = str(action)
    assert len(text.encode()) <= 40
    assert parse_action(text) == action
    assert hash(parse_action(text)) == hash(action)


@given(st.text(max_size=60))
def test_garbage_never_crashes(text: str) -> None:
    with contextlib.suppress(KrendzuError):
        parse_action(text)


@pytest.mark.parametrize("text", ["", "QC@", "QC@1", "ZZ@1,2", "ann:x", "drop:", "pas", "1,2"])
def test_bad_text(text: str) -> None:
    with pytest.raises(ValueError):
        parse_action(text)


def test_examples() -> None:
    assert str(Place(DECK[6 + 9], -3, 12)) == "QC@-3,12"
    assert parse_action(" qc @ -3 , 12 ") == Place(DECK[15], -3, 12)
    with pytest.raises(IllegalMove):
        parse_action("x" * 500)
