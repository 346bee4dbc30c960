"""`memento init [DIR] [--name NAME]`: lay out a Memento workspace (idempotent)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..context import with_dir
from ..output import EXIT_OK, ok


def register(sub, common: argparse.ArgumentParser) -> None:
    p = with_dir(sub.add_parser("init", parents=[common], help="lay out a Memento workspace (idempotent)"))
    p.add_argument("--name", help="project name for the plan title (default: the folder name)")
    p.set_defaults(func=cmd_init)


def cmd_init(args: argparse.Namespace) -> int:
    from ...scaffold import init_workspace

    root = Path(args.project or args.dir or os.getcwd())
    report = init_workspace(root, project=args.name)
    if report.made_repo:
        ok(f"made a git repository in {report.root}")
    for rel in report.created:
        ok(f"created {rel}")
    for rel in report.kept:
        ok(f"kept existing {rel}")
    if report.commit:
        ok(f"committed the new files as {report.commit[:7]} \"memento: init workspace\"")
    if not report.created:
        ok(f"{report.root} is already a Memento workspace; nothing to do")
    else:
        print("Next: write the plan in docs/MASTER_PLAN.md, check it with `memento lint`, "
              "then `memento resume` and `memento cron install` (or run `memento-tui`).")
    return EXIT_OK
