"""Headless tick for cron: ``python -m memento_core.tick [--project DIR]`` (SPEC §4).

Exit codes: 0 ran (skips and recorded task failures included), 1 needs
attention (blocked, breaker, dirty tree), 2 could not run.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m memento_core.tick", description=__doc__.splitlines()[0])
    parser.add_argument("--project", metavar="DIR", help="the workspace (default: search upwards from here)")
    parser.add_argument("dir", nargs="?", metavar="DIR", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    from .engine import run_tick
    from .errors import MementoError
    from .workspace import Workspace

    try:
        ws = Workspace.find(args.project or args.dir or os.getcwd())
        outcome = run_tick(ws.root)
    except MementoError as exc:
        print(f"[error] {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # disk full, permissions: one clear line for cron.log
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"[error] {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    stream = sys.stderr if outcome.exit_code == 2 else sys.stdout
    tag = {0: "[ok]", 1: "[warn]", 2: "[error]"}[outcome.exit_code]
    print(f"{tag} {outcome.message}", file=stream)
    return outcome.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
