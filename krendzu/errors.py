"""Typed errors. All subclass ValueError so callers can catch bad input in one place."""

from __future__ import annotations


class KrendzuError(ValueError):
    """Base of every error the engine raises for bad input or an illegal action."""


class CardError(KrendzuError):
    """A card string that is not a card (unknown rank or suit, mixed alphabets, ...)."""


class IllegalMove(KrendzuError):
    """An action the rules do not allow in this state. The message is for a human."""


class SettingsError(KrendzuError):
    """Match settings that cannot be played (deal does not fit the deck, odd tours, ...)."""


class RecordError(KrendzuError):
    """A record that cannot be read as krendzu-record/1 (structure, not rules)."""
