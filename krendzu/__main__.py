"""``python -m krendzu replay FILE``: the referee.

Prints one JSON object. Exit 0 for a valid record, 1 for a record that breaks a rule,
2 for input that is not a readable record (a one-line message on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys

from krendzu.errors import RecordError
from krendzu.record import read_json, replay


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m krendzu", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("replay", help="check a krendzu-record/1 file and report the scores")
    rep.add_argument("file", help="record file (JSON), or - for standard input")
    args = parser.parse_args(argv)
    try:
        data = read_json(args.file)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        print(f"cannot read {args.file}: {exc}".replace("\n", " "), file=sys.stderr)
        return 2
    try:
        report = replay(data)
    except RecordError as exc:
        print(f"not a valid krendzu-record/1: {exc}".replace("\n", " "), file=sys.stderr)
        return 2
    except RecursionError:
        print("not a valid krendzu-record/1: nested too deeply", file=sys.stderr)
        return 2
    print(json.dumps(report, ensure_ascii=False))
    return 0 if report["valid"] else 1


if __name__ == "__main__":
    sys.exit(main())
