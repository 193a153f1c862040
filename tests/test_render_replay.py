"""Replays, hands, record positions and the command line."""

from __future__ import annotations

import io
import json
from functools import cache

import pytest
from PIL import Image

from krendzu import Card, Match
from render import hand_image, position, replay_gif, tour_steps
from render.__main__ import main
from render.faces import card_tile
from render.records import truncate
from render.sheet import scenario_matches


@cache
def record(name: str) -> dict:
    return scenario_matches()[name].to_record()


@pytest.mark.parametrize("name", ["combos", "teams-4", "one-card"])
def test_gif_has_one_frame_per_placement_plus_one(name):
    data = replay_gif(record(name), tour=0 if name == "combos" else None)
    gif = Image.open(io.BytesIO(data))
    view = position(record(name), tour=0 if name == "combos" else None)
    assert gif.format == "GIF"
    assert gif.n_frames == len(view.tour.placements) + 1
    assert gif.info.get("loop") == 0


def test_replay_steps_follow_the_tour_and_flash_scores():
    rec = record("combos")
    views = tour_steps(rec, tour=0)
    final = position(rec, tour=0)
    assert [len(v.tour.placements) for v in views] == list(range(len(final.tour.placements) + 1))
    assert views[-1].tour.placements == final.tour.placements
    assert views[-1].tour.combos == final.tour.combos
    data = replay_gif(rec, tour=0)
    gif = Image.open(io.BytesIO(data))
    durations = []
    for i in range(gif.n_frames):
        gif.seek(i)
        durations.append(gif.info["duration"])
    assert max(durations[1:-1]) > min(durations[1:-1])  # scoring frames stay longer


def test_replay_accepts_a_match():
    match = scenario_matches()["one-card"]
    gif = Image.open(io.BytesIO(replay_gif(match)))
    assert gif.n_frames == 2


def test_position_after_move_and_truncation():
    rec = record("combos")
    moves = rec["tours"][0]["moves"]
    v0 = position(rec, tour=0, move=0)
    assert len(v0.tour.placements) == 1
    before = position(rec, tour=0, move=-1)
    assert before.tour.placements == ()
    end = position(rec, tour=0)
    assert len(end.tour.placements) == sum(len(m["cards"]) for m in moves)
    cut = truncate(rec, 0, 3)
    assert len(cut["tours"]) == 1 and len(cut["tours"][0]["moves"]) == 3
    assert len(rec["tours"][0]["moves"]) == len(moves)  # the original is untouched
    with pytest.raises(IndexError):
        position(rec, tour=0, move=len(moves))


def test_hand_sorted_with_labels():
    cards = [Card.parse(c) for c in ("KH", "6S", "QC", "10D")]
    img = hand_image(cards, {"QC": "3", "KH": "4"}, cell=80, title=False)
    ordered = sorted(cards)
    pad = round(80 * 0.2)
    for i, card in enumerate(ordered):
        region = img.crop((pad + i * 80, pad, pad + (i + 1) * 80, pad + 80))
        assert region.tobytes() == card_tile(card, 80).tobytes()
    with pytest.raises(ValueError):
        hand_image(cards, ["1"])


def test_cli_png_jpeg_and_gif(tmp_path, capsys):
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(record("combos"), ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "board.png"
    assert main([str(path), "--out", str(out), "--tour", "0", "--move", "5"]) == 0
    assert Image.open(out).format == "PNG"
    jpg = tmp_path / "board.jpg"
    assert main([str(path), "--out", str(jpg), "--photo"]) == 0
    assert Image.open(jpg).format == "JPEG"
    gif = tmp_path / "tour.gif"
    assert main([str(path), "--out", str(gif), "--tour", "0", "--gif"]) == 0
    assert Image.open(gif).n_frames == len(position(record("combos"), tour=0).tour.placements) + 1
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main([str(bad), "--out", str(tmp_path / "x.png")]) == 2
    assert "cannot draw" in capsys.readouterr().err


def test_unfinished_match_record_positions():
    match = Match(["ann", "bob"], seed=4)
    import random

    from render.sheet import play_out

    play_out(match, random.Random(4), placements=5)
    v = position(match)
    assert len(v.tour.placements) == 5
