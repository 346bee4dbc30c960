"""`memento architect [DIR] [--dry-run] [--json]`: run the architect once (SPEC §16);
`memento architect --ack [TASK]`: a person has checked the verify commands it changed."""

from __future__ import annotations

import argparse
import os

from ...errors import MementoError
from ...plan.model import TASK_ID_RE
from ..context import with_dir, workspace_of
from ..output import EXIT_ERROR, EXIT_OK, ok, safe_block, safe_json, safe_text, warn


def register(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("architect", parents=[common],
                       help="let the architect agent repair blocked tasks and act on notes (plan changes only)")
    p.add_argument("--dry-run", action="store_true",
                   help="run it and print the diff, then put everything back: nothing changes on disk or in git")
    p.add_argument("--json", action="store_true", help="one JSON document")
    p.add_argument("--ack", nargs="?", const="", default=None, metavar="TASK",
                   help="acknowledge the verify commands the architect changed (TASK's, or all): runs no agent")
    with_dir(p).set_defaults(func=cmd_architect)


def cmd_architect(args: argparse.Namespace) -> int:
    from ...tick.architect.run import REFUSED, run_architect

    if args.ack and args.dir is None and not TASK_ID_RE.fullmatch(args.ack.upper()) and os.path.isdir(args.ack):
        args.dir, args.ack = args.ack, ""  # `memento architect --ack DIR`: every change of DIR
    ws = workspace_of(args)
    if args.ack is not None:
        return ack_verify(ws, args.ack, as_json=args.json, dry_run=args.dry_run)
    result = run_architect(ws, dry_run=args.dry_run)
    if args.json:
        print(safe_json(as_json(result), indent=2))
        return result.exit_code
    if result.outcome == REFUSED:
        raise MementoError(f"the architect cannot run: {result.message}")
    if result.diff:
        print(safe_block(result.diff.rstrip("\n")))
    report(result)
    return result.exit_code


def ack_verify(ws, task: str, *, as_json: bool, dry_run: bool) -> int:
    """`memento architect --ack [TASK]`: the verify changes leave "needs you"; none listed is an error."""
    from ...control import acknowledge_verify
    from ...verify_changes import pending

    if dry_run:
        raise MementoError("--ack and --dry-run do not go together: --ack runs no agent")
    listed = pending(ws)
    if task and not any(c.task.upper() == task.upper() for c in listed):
        names = ", ".join(c.task for c in listed) or "none"
        raise MementoError(f"no verify change of {task} to acknowledge (listed: {names})")
    gone = acknowledge_verify(ws, [task] if task else [])
    if as_json:
        print(safe_json({"acknowledged": [c.__dict__ for c in gone]}, indent=2))
        return EXIT_OK
    if not gone:
        ok("nothing to acknowledge: the architect changed no verify command")
    for c in gone:
        ok(safe_text(f"acknowledged {c.describe()}"))
    return EXIT_OK


def report(result) -> None:
    """The last lines: what changed, where it is recorded (or why nothing stays)."""
    from ...tick.architect.run import CHANGED, ROLLED_BACK

    log = f" (log: {result.log})" if result.log else ""
    if result.outcome == CHANGED and result.dry_run:
        ok(f"dry run: the architect would have: {result.message}; everything was put back{log}")
    elif result.outcome == CHANGED:
        sha = f", commit {result.commit[:7]}" if result.commit else ""
        ok(f"architect: {result.message} (🏗 ARCHITECT entry in docs/TICK_STATUS.md{sha}){log}")
        for task, old, new in result.changes.verify:
            was = f"`{old}` → " if old else "(a new task) "
            warn(safe_text(f"{task}'s verify changed: {was}`{new}` — check it, then `memento architect --ack {task}`"))
    elif result.outcome == ROLLED_BACK:
        warn("the architect's changes were rolled back:" + "".join(f"\n  - {r}" for r in result.reasons)
             + (f"\n  log: {result.log}" if result.log else ""))
    else:
        warn(f"the architect changed nothing{log}; blocked tasks wait for a person")


def as_json(result) -> dict:
    ch = result.changes
    return {"outcome": result.outcome, "dry_run": result.dry_run, "message": result.message,
            "edited": list(ch.edited), "added": list(ch.added), "skipped": list(ch.skipped),
            "reset": list(ch.reset), "notes_archived": len(result.notes.acted), "map_changed": result.map_changed,
            "reasons": list(result.reasons),
            "verify_changed": [{"task": t, "old": o, "new": n} for t, o, n in ch.verify], "commit": result.commit, "log": result.log, "diff": result.diff,
            "exit_code": result.exit_code if result.outcome != "refused" else EXIT_ERROR}
