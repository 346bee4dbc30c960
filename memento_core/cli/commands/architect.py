"""`memento architect [DIR] [--dry-run] [--json]`: run the architect once (SPEC §16)."""

from __future__ import annotations

import argparse

from ...errors import MementoError
from ..context import with_dir, workspace_of
from ..output import EXIT_ERROR, ok, safe_block, safe_json, warn


def register(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("architect", parents=[common],
                       help="let the architect agent repair blocked tasks and act on notes (plan changes only)")
    p.add_argument("--dry-run", action="store_true",
                   help="run it and print the diff, then put everything back: nothing changes on disk or in git")
    p.add_argument("--json", action="store_true", help="one JSON document")
    with_dir(p).set_defaults(func=cmd_architect)


def cmd_architect(args: argparse.Namespace) -> int:
    from ...tick.architect.run import REFUSED, run_architect

    ws = workspace_of(args)
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


def report(result) -> None:
    """The last lines: what changed, where it is recorded (or why nothing stays)."""
    from ...tick.architect.run import CHANGED, ROLLED_BACK

    log = f" (log: {result.log})" if result.log else ""
    if result.outcome == CHANGED and result.dry_run:
        ok(f"dry run: the architect would have: {result.message}; everything was put back{log}")
    elif result.outcome == CHANGED:
        sha = f", commit {result.commit[:7]}" if result.commit else ""
        ok(f"architect: {result.message} (🏗 ARCHITECT entry in docs/TICK_STATUS.md{sha}){log}")
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
            "reasons": list(result.reasons), "commit": result.commit, "log": result.log, "diff": result.diff,
            "exit_code": result.exit_code if result.outcome != "refused" else EXIT_ERROR}
