"""`memento tick [DIR]`: run one tick now, as cron does."""

from __future__ import annotations

import argparse

from ..context import with_dir, workspace_of


def register(sub, common: argparse.ArgumentParser) -> None:
    p = with_dir(sub.add_parser("tick", parents=[common], help="run one tick now (what cron runs)"))
    p.set_defaults(func=cmd_tick)


def cmd_tick(args: argparse.Namespace) -> int:
    from ...tick.__main__ import main as tick_main

    ws = workspace_of(args)
    return tick_main(["--project", str(ws.root)])
