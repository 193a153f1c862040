"""``python -m render.sheet OUT_DIR``: a contact sheet of typical and extreme pictures.

Draws positions a person should look at before a release — an empty and a one-card board,
a 30-card sprawl, a 36-card line that pushes the labels past A (the frame shifts), a
4-player teams board with Cyrillic and emoji names, many combinations including own goals,
a chat-photo viewport, a hand and a replay (and the words of other languages when
:func:`draw_sheet` is given them) — as separate files plus ``sheet.png``, a montage of them
all. The positions come from seeded play, so every run
draws the same pictures.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Mapping
from pathlib import Path

from PIL import Image, ImageDraw

from krendzu import EndTurn, Match, MatchView, Pass, Place, Settings, Table
from krendzu.tables import DealSizes
from render.board import board_image, photo_options
from render.hand import hand_image
from render.records import position
from render.replay import replay_gif
from render.typeface import font


def play_out(match: Match, rng: random.Random, *, placements: int | None = None,
             scoring: float = 0.0, passes: bool = True) -> Match:
    """Play the current tour with random placements (never passing if ``passes`` is off);
    with probability ``scoring`` a player takes a scoring placement when one exists."""
    tour = match.tour
    start = len(tour.placed)
    while not tour.is_over and (placements is None or len(tour.placed) - start < placements):
        actions = tour.legal_actions()
        places = [a for a in actions if isinstance(a, Place)]
        if tour.step_in_turn == 1 and rng.random() < 0.5:
            match.apply(EndTurn())
            continue
        if passes and any(isinstance(a, Pass) for a in actions) and rng.random() < 0.15:
            match.apply(Pass())
            continue
        choice = None
        if scoring and rng.random() < scoring:
            rng.shuffle(places)
            for action in places[:400]:
                trial = tour.clone()
                trial.apply(action)
                if trial.points > tour.points:
                    choice = action
                    break
        match.apply(choice or rng.choice(places))
        if match.tour is not tour:
            break
    return match


def line_match(length: int = 36, direction: int = -1) -> Match:
    """A tour of ``length`` cards in one row growing left (so the labels shift past A)."""
    half = length // 2
    match = Match(["ann", "bob"], Settings(table=Table.DUEL, deal=DealSizes(half, half)),
                  seed=11)
    x = 0
    tour = match.tour
    while not tour.is_over:
        card = tour.hand(tour.current_player)[0]
        match.apply(Place(card, x, 0))
        x += direction
        if tour.step_in_turn == 1:
            match.apply(EndTurn())
    return match


def scenario_matches() -> dict[str, Match]:
    """Seeded matches, each played up to the moment worth drawing."""
    out: dict[str, Match] = {}
    out["one-card"] = play_out(Match(["ann", "bob"], seed=1), random.Random(1), placements=1)
    out["empty"] = Match(["Анна", "Борис"], seed=2)
    out["sprawl-30"] = play_out(
        Match(["ann", "bob"], Settings(table=Table.DUEL, preset="long"), seed=3),
        random.Random(3), passes=False,
    )
    out["line-36"] = line_match()
    teams = Match(["Анна 🌸", "Борис", "Zoë-Élise", "Дмитрий Константинович"],
                  Settings(table=Table.TEAMS), seed=4)
    out["teams-4"] = play_out(teams, random.Random(4), placements=18)
    out["combos"] = play_out(
        Match(["ann", "bob"], Settings(table=Table.DUEL, preset="long"), seed=5),
        random.Random(5), scoring=0.9, passes=False,
    )
    trio = Match(["ann", "李雷", "😀😀"], Settings(table=Table.TRIO_LONE_DEFENDER), seed=6)
    out["trio"] = play_out(trio, random.Random(6), placements=14, scoring=0.5)
    return out


def scenarios() -> dict[str, MatchView]:
    """Public views of :func:`scenario_matches` (a finished tour stays on the board)."""
    return {name: position(match) for name, match in scenario_matches().items()}


def _save(img: Image.Image, path: Path) -> Path:
    img.save(path)
    return path


def draw_sheet(out_dir: Path,
               translations: Mapping[str, Mapping[str, str]] | None = None) -> list[Path]:
    """The sheet's pictures; ``translations`` (language → words, e.g. from the chat's
    catalog) adds the combinations board in each of those languages."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    matches = scenario_matches()
    views = {name: position(match) for name, match in matches.items()}
    for name, view in views.items():
        paths.append(_save(board_image(view), out_dir / f"board-{name}.png"))
    combos = views["combos"]
    for lang, words in (translations or {}).items():
        paths.append(_save(board_image(combos, texts=words), out_dir / f"board-combos-{lang}.png"))
    line = views["line-36"]
    paths.append(_save(board_image(line, **photo_options(line)), out_dir / "photo-line-36.png"))
    sprawl = views["sprawl-30"]
    paths.append(_save(board_image(sprawl, **photo_options(sprawl)),
                       out_dir / "photo-sprawl-30.png"))
    paths.append(_save(board_image(sprawl, viewport="last-move", viewport_cells=(7, 7)),
                       out_dir / "viewport-sprawl-30.png"))
    seat = matches["teams-4"].tour.current_player
    hand = matches["teams-4"].observation(seat).tour.hand
    paths.append(_save(hand_image(hand), out_dir / "hand-teams.png"))
    big = Match(["ann", "bob"], seed=7).observation(1).tour.hand
    labels = [str(i + 1) for i in range(len(big))]
    paths.append(_save(hand_image(big, labels), out_dir / "hand-14-numbered.png"))
    gif = out_dir / "replay-combos.gif"
    gif.write_bytes(replay_gif(matches["combos"], tour=0))
    paths.append(gif)
    paths.append(_montage([p for p in paths if p.suffix == ".png"], out_dir / "sheet.png"))
    return paths


def _montage(paths: list[Path], target: Path, thumb: int = 420) -> Path:
    images = []
    for path in paths:
        img = Image.open(path).convert("RGB")
        img.thumbnail((thumb, thumb))
        images.append((path.stem, img))
    cols = 4
    rows = -(-len(images) // cols)
    caption = 26
    sheet = Image.new("RGB", (cols * (thumb + 16) + 16, rows * (thumb + caption + 16) + 16),
                      (245, 245, 240))
    draw = ImageDraw.Draw(sheet)
    face = font(16, bold=True)
    for i, (name, img) in enumerate(images):
        r, c = divmod(i, cols)
        left, top = 16 + c * (thumb + 16), 16 + r * (thumb + caption + 16)
        draw.text((left, top + 18), name, font=face, fill=(30, 30, 30), anchor="ls")
        sheet.paste(img, (left, top + caption))
    sheet.save(target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m render.sheet", description=__doc__)
    parser.add_argument("out", nargs="?", default="out", help="directory to write into")
    args = parser.parse_args(argv)
    for path in draw_sheet(Path(args.out)):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())

