"""Every word the pictures show, in one place, so the chat layer can translate or override.

Pass ``lang="ru"`` to any picture function, or ``texts={...}`` to replace single strings.
"""

from __future__ import annotations

from collections.abc import Mapping

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "tour": "Tour {n}/{total}",
        "tour_only": "Tour",
        "attack": "Attack: {names}",
        "defence": "Defence: {names}",
        "score": "Score {score}",
        "cards_left": "Cards left: {items}",
        "to_move": "▶ To move: {name}",
        "exchange": "▶ Exchange: {name}",
        "tour_over": "Tour over",
        "match_over": "Match over",
        "winner": "{names} won",
        "draw": "a draw",
        "nobody_won": "nobody won",
        "last_move": "Last: {name} {cards}",
        "passed": "Last: {name} passed",
        "player": "Player {n}",
        "team": "{a} & {b}",
        "hand_title": "Your hand · {n} cards",
        "hand_empty": "No cards left",
        # Pictures for the rules (render/illustrations.py).
        "rules_title": "Krendzu — card values and combinations",
        "values_heading": "Card values",
        "values_note": "6 to 10 count as printed. A jack, queen, king or ace counts as "
                       "whichever of its values suits the line, so the values run from 1 to 15 "
                       "with no gap.",
        "combos_heading": "Combinations",
        "combos_note": "Four cards in an unbroken line — across, down or diagonally — make a "
                       "combination when all four are of one suit, or when their values go up "
                       "or down by the same step. Each new combination scores 1 point for the "
                       "attacking side.",
        "ex_suit_title": "One suit",
        "ex_suit_note": "All four are hearts: the ranks do not matter.",
        "ex_run_title": "A progression",
        "ex_run_note": "Each value is 1 more: step +1.",
        "ex_faces_title": "Face cards count too",
        "ex_faces_note": "J = 12 and Q = 3: step −3 (read either way).",
        "ex_aces_title": "Two aces, two values",
        "ex_aces_note": "A = 1 and A = 5: step +4.",
        "ex_ace_low_title": "An ace as 5",
        "ex_ace_low_note": "A = 5, then 6, 7, 8: step +1.",
        "ex_high_title": "High or low",
        "ex_high_note": "Read as 14, 13, 12, 11 or as 4, 3, 2, 1.",
        "ex_both_title": "Suit and progression",
        "ex_both_note": "One suit and a progression at once: still 1 point.",
        "ex_same_rank_title": "Four of one rank",
        "ex_same_rank_note": "Not a combination: a step of 0 does not count.",
        "ex_broken_title": "A broken run",
        "ex_broken_note": "Not a combination: the steps differ.",
        "example_attacker": "Ann",
        "example_defender": "Bob",
        "board_example_title": "A tour: a goal and an own goal",
        "board_goal": "Solid line: {attacker}, attacking, puts {card} on {cell}: {cards} = "
                      "{values}, a combination: 1 point.",
        "board_own_goal": "Dashed line: the attacker has no cards left, so {defender}, "
                          "defending, may not pass and plays the last card, {card}, on {cell}: "
                          "{cards} are all diamonds. An own goal: it still scores 1 point for "
                          "{attacker}.",
        "board_touch": "Every card touches another by a side (a corner is not enough). Columns "
                       "are letters, rows are numbers; the first card of a tour is at M13.",
        "coords_title": "Where a card may go",
        "coords_labels": "The labelled cells are the free cells that touch a card by a side: "
                         "only there may a card go. Type the card and the cell: {example}.",
        "coords_ghost": "/hint draws the suggested card faded in a dashed ring (numbered 1 and "
                        "2 when a defender is advised to play two).",
        # Statistics cards (render/stats.py).
        "stats_scope": "Statistics · {scope}",
        "stats_all_chats": "all chats",
        "stats_no_name": "Player",
        "stats_matches": "Matches",
        "stats_rated_count": "Rated: {n}",
        "stats_results": "Wins / draws / losses",
        "stats_win_rate": "Win rate: {p}%",
        "stats_rating": "Rating",
        "stats_rating_change": "Last match: {delta}",
        "stats_rating_hidden": "Rated matches to go: {n}",
        "stats_no_value": "—",
        "stats_details": "Game figures",
        "stats_points_per_tour": "Points per tour in attack",
        "stats_conceded_per_tour": "Points conceded per tour in defence",
        "stats_best_tour": "Most points in one tour",
        "stats_combos": "Combinations: one suit / progression",
        "stats_own_goals": "Own goals in defence",
        "stats_history": "Rating history",
        "stats_history_axis": "rated matches",
        "stats_history_short": "The plot appears after two rated matches.",
        "stats_history_hidden": "The plot appears with the rating.",
        "stats_leaders": "Leaderboard",
        "stats_rank": "#",
        "stats_player": "Player",
        "stats_wdl_short": "W / D / L",
        "stats_no_players": "No rated players yet",
        "stats_more_players": "… and {n} more",
        "stats_unrated_note": "— : not rated yet (too few rated matches)",
        "stats_decimal_point": ".",
        "stats_group_separator": ",",
    },
    "ru": {
        "tour": "Тур {n}/{total}",
        "tour_only": "Тур",
        "attack": "Атака: {names}",
        "defence": "Защита: {names}",
        "score": "Счёт {score}",
        "cards_left": "Карт на руках: {items}",
        "to_move": "▶ Ход: {name}",
        "exchange": "▶ Обмен: {name}",
        "tour_over": "Тур окончен",
        "match_over": "Матч окончен",
        "winner": "победа: {names}",
        "draw": "ничья",
        "nobody_won": "никто не победил",
        "last_move": "Последний ход: {name} {cards}",
        "passed": "Последний ход: {name} — пас",
        "player": "Игрок {n}",
        "team": "{a} и {b}",
        "hand_title": "Ваши карты · {n}",
        "hand_empty": "Карт не осталось",
        # Картинки к правилам (render/illustrations.py).
        "rules_title": "Крэндзю — значения карт и комбинации",
        "values_heading": "Значения карт",
        "values_note": "От шестёрки до десятки — по номиналу. Валет (J), дама (Q), король (K) "
                       "и туз (A) стоят столько, сколько выгоднее для линии, поэтому значения "
                       "идут от 1 до 15 без пропусков.",
        "combos_heading": "Комбинации",
        "combos_note": "Четыре карты подряд — по горизонтали, вертикали или диагонали — "
                       "составляют комбинацию, если все они одной масти или их значения растут "
                       "или убывают на одно и то же число (арифметическая прогрессия). Каждая "
                       "новая комбинация — 1 очко атакующей стороне.",
        "ex_suit_title": "Одна масть",
        "ex_suit_note": "Все четыре — черви; достоинства не важны.",
        "ex_run_title": "Прогрессия",
        "ex_run_note": "Каждое значение на 1 больше: шаг +1.",
        "ex_faces_title": "Фигуры тоже считаются",
        "ex_faces_note": "Валет = 12, дама = 3: шаг −3 (направление любое).",
        "ex_aces_title": "Два туза — два значения",
        "ex_aces_note": "Туз = 1 и туз = 5: шаг +4.",
        "ex_ace_low_title": "Туз как 5",
        "ex_ace_low_note": "Туз = 5, затем 6, 7, 8: шаг +1.",
        "ex_high_title": "Вверх или вниз",
        "ex_high_note": "Читается как 14, 13, 12, 11 или как 4, 3, 2, 1.",
        "ex_both_title": "Масть и прогрессия",
        "ex_both_note": "Одна масть и прогрессия сразу — всё равно 1 очко.",
        "ex_same_rank_title": "Одно достоинство",
        "ex_same_rank_note": "Не комбинация: шаг 0 не считается.",
        "ex_broken_title": "Разорванный ряд",
        "ex_broken_note": "Не комбинация: шаги разные.",
        "example_attacker": "Анна",
        "example_defender": "Борис",
        "board_example_title": "Тур: гол и автогол",
        "board_goal": "Сплошная линия: {attacker} атакует и кладёт {card} на {cell}: "
                      "{cards} = {values} — комбинация, 1 очко.",
        "board_own_goal": "Пунктир: у атакующего карт больше нет, поэтому {defender} "
                          "(защитник) не может пасовать и кладёт последнюю карту, {card}, на "
                          "{cell}: {cards} — все бубны. Это автогол: очко всё равно получает "
                          "атакующий ({attacker}).",
        "board_touch": "Каждая карта касается другой стороной (уголка мало). Столбцы — буквы, "
                       "строки — числа; первая карта тура всегда на M13.",
        "coords_title": "Куда можно положить карту",
        "coords_labels": "Подписаны свободные клетки, которые касаются карты стороной: класть "
                         "можно только туда. Напишите карту и клетку: {example}.",
        "coords_ghost": "/hint рисует предложенную карту бледной в пунктирной рамке (с номерами "
                        "1 и 2, если защитнику советуют сыграть две).",
        # Statistics cards (render/stats.py).
        "stats_scope": "Статистика · {scope}",
        "stats_all_chats": "все чаты",
        "stats_no_name": "Игрок",
        "stats_matches": "Матчи",
        "stats_rated_count": "Рейтинговых: {n}",
        "stats_results": "Победы / ничьи / поражения",
        "stats_win_rate": "Доля побед: {p}\u00a0%",
        "stats_rating": "Рейтинг",
        "stats_rating_change": "За последний матч: {delta}",
        "stats_rating_hidden": "Осталось рейтинговых матчей: {n}",
        "stats_no_value": "—",
        "stats_details": "Игровые показатели",
        "stats_points_per_tour": "Очки за тур в атаке",
        "stats_conceded_per_tour": "Пропущено очков за тур в защите",
        "stats_best_tour": "Больше всего очков за тур",
        "stats_combos": "Комбинации: одна масть / прогрессия",
        "stats_own_goals": "Автоголы в защите",
        "stats_history": "История рейтинга",
        "stats_history_axis": "рейтинговые матчи",
        "stats_history_short": "График появится после двух рейтинговых матчей.",
        "stats_history_hidden": "График появится вместе с рейтингом.",
        "stats_leaders": "Лучшие игроки",
        "stats_rank": "№",
        "stats_player": "Игрок",
        "stats_wdl_short": "В / Н / П",
        "stats_no_players": "Пока нет игроков с рейтингом",
        "stats_more_players": "… и ещё {n}",
        "stats_unrated_note": "— : рейтинга пока нет (мало рейтинговых матчей)",
        "stats_decimal_point": ",",
        "stats_group_separator": "\u00a0",
    },
}

LANGUAGES = tuple(TEXTS)


def texts_for(lang: str = "en", overrides: Mapping[str, str] | None = None) -> dict[str, str]:
    """The strings of ``lang`` (English for an unknown language) with ``overrides`` applied."""
    out = dict(TEXTS["en"])
    out.update(TEXTS.get(lang, {}))
    if overrides:
        out.update(overrides)
    return out
