"""Krendzu («Крэндзю», card renju): a pure rules engine, records and computer players.

Standard library only. Typical use::

    import random
    from krendzu import Match, Settings, Table

    match = Match(["ann", "bob"], Settings(table=Table.DUEL), seed=7)
    while not match.is_over:
        match.apply(random.Random(1).choice(match.legal_actions()))
"""

from krendzu.actions import (
    Action,
    Announce,
    Discard,
    EndTurn,
    Pass,
    Place,
    PlayerAction,
    Redeal,
    parse_action,
)
from krendzu.cards import DECK, Card, parse_card, parse_cards
from krendzu.combos import is_combination, is_progression
from krendzu.errors import CardError, IllegalMove, KrendzuError, RecordError, SettingsError
from krendzu.illegal import (
    BadRedeal,
    CannotPass,
    CardNotInHand,
    CellError,
    CellTaken,
    GameOver,
    NotAnAction,
    NotTouching,
    NoTurnToEnd,
    NotYourTurn,
    WrongExchangeCount,
    WrongOpening,
    WrongPhase,
)
from krendzu.match import Match, MatchResult, MatchView
from krendzu.outcome import Outcome, match_outcome
from krendzu.record import RuleViolation, export_record, import_record, replay
from krendzu.tables import DEAL_PRESETS, DealSizes, Settings, Table, TourRoles, tour_roles
from krendzu.tour import CHANCE, TERMINAL, Combination, Tour, TourView, Turn

__all__ = [
    "CHANCE",
    "DEAL_PRESETS",
    "DECK",
    "TERMINAL",
    "Action",
    "Announce",
    "BadRedeal",
    "CannotPass",
    "Card",
    "CardError",
    "CardNotInHand",
    "CellError",
    "CellTaken",
    "Combination",
    "DealSizes",
    "Discard",
    "EndTurn",
    "GameOver",
    "IllegalMove",
    "KrendzuError",
    "Match",
    "MatchResult",
    "MatchView",
    "NoTurnToEnd",
    "NotAnAction",
    "NotTouching",
    "NotYourTurn",
    "Outcome",
    "Pass",
    "Place",
    "PlayerAction",
    "RecordError",
    "Redeal",
    "RuleViolation",
    "Settings",
    "SettingsError",
    "Table",
    "Tour",
    "TourRoles",
    "TourView",
    "Turn",
    "WrongExchangeCount",
    "WrongOpening",
    "WrongPhase",
    "export_record",
    "import_record",
    "is_combination",
    "is_progression",
    "match_outcome",
    "parse_action",
    "parse_card",
    "parse_cards",
    "replay",
    "tour_roles",
]
