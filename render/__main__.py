"""``python -m render RECORD.json --out board.png [--tour T] [--move M] [--gif]``.

Draws the position of a ``krendzu-record/1`` record after move M (0-based index in the
tour's ``moves``; -1 = before the first move; default: the end) of tour T (0-based; default:
the last tour with a move), or with ``--gif`` the replay of that tour. The format follows
the ``--out`` suffix: .png, .jpg/.jpeg or .gif. Exit 0 on success, 2 for unreadable input.
"""

from __future__ import annotations

import argparse
import json
import sys

from krendzu.errors import KrendzuError
from krendzu.record import read_json
from render.board import board_jpeg, board_png, photo_options
from render.records import position
from render.replay import replay_gif


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m render", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("record", help="record file (JSON), or - for standard input")
    parser.add_argument("--out", required=True, help="picture to write (.png, .jpg, .gif)")
    parser.add_argument("--tour", type=int, default=None, help="tour index, 0-based")
    parser.add_argument("--move", type=int, default=None,
                        help="draw after this move (0-based; -1 = before the first move)")
    parser.add_argument("--gif", action="store_true", help="write the tour's replay GIF")
    parser.add_argument("--cell", type=int, default=None, help="pixels per board cell")
    parser.add_argument("--viewport", choices=["full", "last-move"], default="full")
    parser.add_argument("--photo", action="store_true",
                        help="size it as a chat photo (long side about 1280 px)")
    args = parser.parse_args(argv)
    try:
        record = read_json(args.record)
        if args.gif or args.out.lower().endswith(".gif"):
            data = replay_gif(record, tour=args.tour, cell=args.cell or 48)
        else:
            view = position(record, tour=args.tour, move=args.move)
            options: dict = {"viewport": args.viewport}
            if args.cell:
                options["cell"] = args.cell
            if args.photo:
                options = photo_options(view, **options)
            if args.out.lower().endswith((".jpg", ".jpeg")):
                data = board_jpeg(view, **options)
            else:
                data = board_png(view, **options)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KrendzuError, IndexError,
            KeyError, TypeError) as exc:
        print(f"cannot draw {args.record}: {exc}".replace("\n", " "), file=sys.stderr)
        return 2
    with open(args.out, "wb") as handle:
        handle.write(data)
    print(f"wrote {args.out} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
