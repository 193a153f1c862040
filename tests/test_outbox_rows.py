"""The reply outbox across a deploy: a row pickled by the release before, whose notices had
fewer fields, is read back with the new fields at their defaults (chat.outbox.read_kept)."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from chat.notices import DropPanel, Send
from chat.outbox import read_kept


def pickled_by_an_older_release(notice: Any, newer: int, monkeypatch: pytest.MonkeyPatch
                                ) -> bytes:
    """``notice`` as a release whose class lacked its last ``newer`` fields pickled it: a
    slotted dataclass pickles the values of its fields, in order."""
    kind = type(notice)
    getstate = kind.__getstate__
    monkeypatch.setattr(kind, "__getstate__", lambda self: getstate(self)[:-newer])
    try:
        return pickle.dumps(notice, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        monkeypatch.undo()


def test_a_send_kept_by_the_release_before_reads_back_with_its_new_fields_defaulted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    sent = Send(-100, "Ann: Q♣ M12", picture=None, group=True)
    blob = pickled_by_an_older_release(sent, 2, monkeypatch)
    raw = pickle.loads(blob)
    with pytest.raises(AttributeError):  # what delivery met before: a field never set
        _ = raw.drops_panel
    read = read_kept(blob)
    assert read == sent
    assert (read.lines, read.drops_panel) == (None, False)


def test_a_drop_kept_by_the_release_before_reads_back_and_a_current_row_is_untouched(
        monkeypatch: pytest.MonkeyPatch) -> None:
    dropped = DropPanel(7, 701, note="The match is over.")
    assert read_kept(pickle.dumps(dropped)) == dropped
    old = read_kept(pickled_by_an_older_release(dropped, 1, monkeypatch))
    assert old == dropped and isinstance(old, DropPanel) and old.forget_lines is False
