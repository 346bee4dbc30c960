"""`memento note [--task ID] TEXT [DIR]`: leave a note for the worker in HUMAN_NOTES.md."""

from __future__ import annotations

import argparse

from ...errors import MementoError
from ..context import load_plan, with_dir, workspace_of
from ..output import EXIT_OK, ok, warn


def register(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("note", parents=[common], help="leave a note for the worker")
    p.add_argument("--task", metavar="ID", help="the task the note is for (default: global)")
    p.add_argument("text", metavar="TEXT")
    with_dir(p).set_defaults(func=cmd_note)


def cmd_note(args: argparse.Namespace) -> int:
    from ...notes import add_note

    ws = workspace_of(args)
    target = args.task or "global"
    task = load_plan(ws).task(args.task) if args.task else None
    if args.task and task is None:
        raise MementoError(f"task {args.task} is not in {ws.rel(ws.plan_path)}")
    note = add_note(ws.notes_path, args.text, target=target)
    who = "global note" if note.is_global else f"note for {note.target}"
    ok(f"{who} added to {ws.rel(ws.notes_path)} at line {note.line}")
    if task is not None and task.status in ("x", "-"):
        warn(f"{task.id} is already {task.state}: no worker will read this note unless the task is reset")
    return EXIT_OK
