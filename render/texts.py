"""Every word the pictures show, in English, in one place: the source texts of the gettext
catalog.

``render`` is a pure layer and knows no language but English. Each text is marked
``N_("...")`` (a no-op) so that ``make messages`` extracts it into the chat's catalog
(``chat/locales/<lang>/LC_MESSAGES/krendzu.po``), where translators edit it next to every
other text of the bot. The chat layer builds a language's words with
``texts_in(tr._)`` and passes them as ``texts={...}`` to any picture function; without
``texts`` a picture is drawn in English.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence


def N_(text: str) -> str:
    """Mark ``text`` for ``pybabel extract``; translated later by whoever draws."""
    return text


TEXTS: dict[str, str] = {
    "tour": N_("Tour {n}/{total}"),
    "tour_only": N_("Tour"),
    "attack": N_("Attack: {names}"),
    "defence": N_("Defence: {names}"),
    "score": N_("Score {score}"),
    "cards_left": N_("Cards left: {items}"),
    "to_move": N_("▶ To move: {name}"),
    "exchange": N_("▶ Exchange: {name}"),
    "tour_over": N_("Tour over"),
    "match_over": N_("Match over"),
    "winner": N_("{names} won"),
    "draw": N_("a draw"),
    "nobody_won": N_("nobody won"),
    "last_move": N_("Last: {name} {cards}"),
    "passed": N_("Last: {name} passed"),
    "player": N_("Player {n}"),
    "team": N_("{a} and {b}"),
    # Translators: the chat passes its own plural form of this title; {n} is a number.
    "hand_title": N_("Your hand · {n} cards"),
    "hand_empty": N_("No cards left"),
    # Pictures for the rules (render/illustrations.py).
    "rules_title": N_("Krendzu — card values and combinations"),
    "values_heading": N_("Card values"),
    "values_note": N_("6 to 10 count as printed. A jack, queen, king or ace counts as "
                      "whichever of its values suits the line, so the values run from 1 to 15 "
                      "with no gap."),
    "combos_heading": N_("Combinations"),
    "combos_note": N_("Four cards in an unbroken line — across, down or diagonally — make a "
                      "combination when all four are of one suit, or when their values go up "
                      "or down by the same step. Each new combination scores 1 point for the "
                      "attacking side."),
    "ex_suit_title": N_("One suit"),
    "ex_suit_note": N_("All four are hearts: the ranks do not matter."),
    "ex_run_title": N_("A progression"),
    "ex_run_note": N_("Each value is 1 more: step +1."),
    "ex_faces_title": N_("Face cards count too"),
    "ex_faces_note": N_("J = 12 and Q = 3: step −3 (read either way)."),
    "ex_aces_title": N_("Two aces, two values"),
    "ex_aces_note": N_("A = 1 and A = 5: step +4."),
    "ex_ace_low_title": N_("An ace as 5"),
    "ex_ace_low_note": N_("A = 5, then 6, 7, 8: step +1."),
    "ex_high_title": N_("High or low"),
    "ex_high_note": N_("Read as 14, 13, 12, 11 or as 4, 3, 2, 1."),
    "ex_both_title": N_("Suit and progression"),
    "ex_both_note": N_("One suit and a progression at once: still 1 point."),
    "ex_same_rank_title": N_("Four of one rank"),
    "ex_same_rank_note": N_("Not a combination: a step of 0 does not count."),
    "ex_broken_title": N_("A broken run"),
    "ex_broken_note": N_("Not a combination: the steps differ."),
    "example_attacker": N_("Ann"),
    "example_defender": N_("Bob"),
    "board_example_title": N_("A tour: a goal and an own goal"),
    "board_goal": N_("Solid line: {attacker}, attacking, puts {card} on {cell}: {cards} = "
                     "{values}, a combination: 1 point."),
    "board_own_goal": N_("Dashed line: the attacker has no cards left, so {defender}, "
                         "defending, may not pass and plays the last card, {card}, on {cell}: "
                         "{cards} are all diamonds. An own goal: it still scores 1 point for "
                         "{attacker}."),
    "board_touch": N_("Every card touches another by a side (a corner is not enough). Columns "
                      "are letters, rows are numbers; the first card of a tour is at M13."),
    "coords_title": N_("Where a card may go"),
    "coords_labels": N_("The labelled cells are the free cells that touch a card by a side: "
                        "only there may a card go. Type the card and the cell: {example}."),
    "coords_ghost": N_("/hint draws the suggested card faded in a dashed ring (numbered 1 and "
                       "2 when a defender is advised to play two)."),
    # Statistics cards (render/stats.py).
    "stats_scope": N_("Statistics · {scope}"),
    "stats_all_chats": N_("all chats"),
    "stats_no_name": N_("Player"),
    "stats_matches": N_("Matches"),
    "stats_rated_count": N_("Rated: {n}"),
    "stats_results": N_("Wins / draws / losses"),
    "stats_win_rate": N_("Win rate: {p}%"),
    "stats_rating": N_("Rating"),
    "stats_rating_change": N_("Last match: {delta}"),
    "stats_rating_hidden": N_("Rated matches to go: {n}"),
    # Translators: stands for a figure not known yet (a rating still hidden).
    "stats_no_value": N_("—"),
    "stats_details": N_("Game figures"),
    "stats_points_per_tour": N_("Points per tour in attack"),
    "stats_conceded_per_tour": N_("Points conceded per tour in defence"),
    "stats_best_tour": N_("Most points in one tour"),
    "stats_combos": N_("Combinations: one suit / progression"),
    "stats_own_goals": N_("Own goals in defence"),
    "stats_history": N_("Rating history"),
    "stats_history_axis": N_("rated matches"),
    "stats_history_short": N_("The plot appears after two rated matches."),
    "stats_history_hidden": N_("The plot appears with the rating."),
    "stats_leaders": N_("Leaderboard"),
    # Translators: the heading of the leaderboard's place column.
    "stats_rank": N_("#"),
    "stats_player": N_("Player"),
    "stats_wdl_short": N_("W / D / L"),
    "stats_no_players": N_("No rated players yet"),
    "stats_more_players": N_("… and {n} more"),
    "stats_unrated_note": N_("— : not rated yet (too few rated matches)"),
    # Translators: the decimal point of numbers on the statistics card (1.5).
    "stats_decimal_point": N_("."),
    # Translators: the thousands separator of numbers on the statistics card (1,234).
    "stats_group_separator": N_(","),
}

def texts_for(overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The English words with ``overrides`` (a language's translations, or single strings)
    applied: a key missing from ``overrides`` stays English."""
    out = dict(TEXTS)
    if overrides:
        out.update(overrides)
    return out


def texts_in(translate: Callable[[str], str]) -> dict[str, str]:
    """Every word translated by ``translate`` (a gettext function such as ``tr._``): the
    ``texts`` of a language. Placeholders stay unfilled; the pictures fill them."""
    return {key: translate(text) for key, text in TEXTS.items()}


def together(texts: Mapping[str, str], names: Sequence[str]) -> str:
    """``names`` joined by the language's "and" (the ``team`` words, "{a} and {b}"): "Ann",
    "Ann and Bob", "Ann, Bob and Cy"."""
    if len(names) < 2:
        return "".join(names)
    return texts["team"].format(a=", ".join(names[:-1]), b=names[-1])
