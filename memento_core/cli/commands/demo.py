"""`memento demo DIR`: a demo project whose plan the script agent can run."""

from __future__ import annotations

import argparse

from ..output import EXIT_OK, ok


def register(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("demo", help="create a demo project whose plan the script agent can run")
    p.add_argument("dir", metavar="DIR", help="a new or empty folder")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    from ...demo import create_demo

    root = create_demo(args.dir)
    ok(f"demo project created in {root}")
    print(f"Next: `memento status {root}`, then `memento tick {root}` a few times, "
          f"or `memento-tui {root}` and press `o` to let the dashboard tick it.")
    return EXIT_OK
