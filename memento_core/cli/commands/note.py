"""`memento note [--task ID] [TEXT…] [DIR]`: leave a note for the worker in HUMAN_NOTES.md.

The words after the options are the note, the rest of the line (`memento note fix
the bugs` needs no quotes). The last word is the workspace only when it is a
directory holding docs/MASTER_PLAN.md (so `memento note "text" ~/shop` still works
and `memento note fix bugs` never takes a `bugs/` folder for one). Without words
the note is read from stdin, or written in $VISUAL/$EDITOR when stdin is a terminal;
`-` as the text always reads stdin.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ...errors import MementoError
from ...workspace import PLAN_REL
from ..context import load_plan, person_workspace
from ..output import EXIT_OK, ok, warn


def register(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("note", parents=[common], help="leave a note for the worker",
                       description="Leave a note for the worker. TEXT is the rest of the line; without it "
                                   "the note is read from stdin, or from $EDITOR in a terminal.")
    p.add_argument("--task", metavar="ID", help="the task the note is for (default: global)")
    p.add_argument("words", nargs="*", metavar="TEXT",
                   help="the note (the rest of the line; a last word naming a workspace is the DIR; "
                        "- reads it from stdin)")
    p.set_defaults(func=cmd_note)


def split_words(words: list[str]) -> tuple[str, str | None]:
    """(the note's text, the workspace DIR if the last word is one)."""
    if len(words) >= 2 and (Path(words[-1]) / PLAN_REL).is_file():
        return " ".join(words[:-1]), words[-1]
    return " ".join(words), None


def read_text_input() -> str:
    """The note when the command line has none: $VISUAL/$EDITOR on a terminal, else stdin."""
    if not sys.stdin.isatty():
        return sys.stdin.read()
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    if not editor:
        raise MementoError("no note text: give it on the command line, pipe it on stdin, or set $EDITOR")
    import shlex
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memento-note-") as tmp:
        path = Path(tmp) / "NOTE.md"
        path.write_text("", encoding="utf-8")
        done = subprocess.run([*shlex.split(editor), str(path)], check=False)
        if done.returncode != 0:
            raise MementoError(f"the editor ({editor}) exited with code {done.returncode}; no note added")
        return path.read_text(encoding="utf-8", errors="replace")


def cmd_note(args: argparse.Namespace) -> int:
    from ...notes import add_note

    text, args.dir = split_words(args.words)
    ws = person_workspace(args, "note")
    target = args.task or "global"
    task = load_plan(ws).task(args.task) if args.task else None
    if args.task and task is None:
        raise MementoError(f"task {args.task} is not in {ws.rel(ws.plan_path)}")
    if text == "-":  # `memento note - DIR`: standard input, as the command line promises, never a note saying "-"
        text = sys.stdin.read()
    elif not args.words:
        text = read_text_input()
    if not text.strip():
        raise MementoError("the note is empty; nothing added")
    note = add_note(ws.notes_path, text, target=target)
    who = "global note" if note.is_global else f"note for {note.target}"
    ok(f"{who} added to {ws.rel(ws.notes_path)} at line {note.line}")
    if task is not None and task.status in ("x", "-"):
        warn(f"{task.id} is already {task.state}: no worker will read this note unless the task is reset")
    return EXIT_OK
