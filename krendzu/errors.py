"""Typed errors. All subclass ValueError so callers can catch bad input in one place."""

from __future__ import annotations


class KrendzuError(ValueError):
    """Base of every error the engine raises for bad input or an illegal action."""


class CardError(KrendzuError):
    """A card string that is not a card (unknown rank or suit, mixed alphabets, ...)."""


class IllegalMove(KrendzuError):
    """An action the rules do not allow in this state. The message is for a human.

    The engine raises the typed reasons of :mod:`krendzu.illegal` (``CellTaken``,
    ``CardNotInHand``, ...), all subclasses of this one, carrying the card, cell or seat."""

    def __reduce__(self) -> tuple[object, ...]:
        # Subclasses take their facts, not the message, as arguments: rebuild from the
        # message and the attributes, so a reason crosses a process pool intact.
        return _restore, (type(self), self.args, dict(self.__dict__))


class SettingsError(KrendzuError):
    """Match settings that cannot be played (deal does not fit the deck, odd tours, ...)."""


class RecordError(KrendzuError):
    """A record that cannot be read as krendzu-record/1 (structure, not rules)."""


def _restore(cls: type[IllegalMove], args: tuple[object, ...],
             state: dict[str, object]) -> IllegalMove:
    """Unpickle an :class:`IllegalMove` (see its ``__reduce__``) without calling
    ``__init__``."""
    exc = cls.__new__(cls)
    exc.args = args
    exc.__dict__.update(state)
    return exc
