"""`memento plan draft BRIEF [DIR] [--dry-run] [--strict] [--json]`: the architect drafts the plan (SPEC §17);
`memento plan import github OWNER/REPO [--label L] [--phase T] [DIR]`: issues become tasks (SPEC §19)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ...errors import MementoError
from ...lines import listed
from ..context import person_workspace, with_dir, workspace_of
from ..output import (
    EXIT_ATTENTION,
    EXIT_OK,
    error,
    ok,
    plural,
    safe_block,
    safe_json,
    safe_text,
    warn,
)


def register(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("plan", help="draft the plan from a brief (`memento plan draft BRIEF`), import GitHub issues")
    inner = p.add_subparsers(dest="plan_command", metavar="ACTION", required=True)
    d = inner.add_parser("draft", parents=[common],
                         help="let the architect agent turn a brief into checked, red-first tasks")
    d.add_argument("brief", metavar="BRIEF", help="a file saying what you want built, or - for standard input")
    d.add_argument("--dry-run", action="store_true",
                   help="print the diff and the checks, then put everything back: nothing changes")
    d.add_argument("--strict", action="store_true", help="refuse a draft whose new verify already passes")
    d.add_argument("--json", action="store_true", help="one JSON document")
    with_dir(d).set_defaults(func=cmd_draft)
    forges = inner.add_parser("import", help="add a task per open issue of a forge (`memento plan import github`)")
    where = forges.add_subparsers(dest="forge", metavar="FORGE", required=True)
    i = where.add_parser("github", parents=[common], help="a task GH-<number> per open GitHub issue with a label")
    i.add_argument("repo", metavar="OWNER/REPO", help="the repository, e.g. octo-org/shop-api")
    i.add_argument("--label", default="memento", help="import the issues with this label (default: memento)")
    i.add_argument("--phase", metavar="TITLE",
                   help="the phase new tasks go to, by title or id, made if missing (default: GitHub issues)")
    with_dir(i).set_defaults(func=cmd_import)


def read_brief(spec: str) -> tuple[str, str]:
    """(the brief's text, its name: the file's name or "stdin"); a MementoError says what is wrong."""
    from ...tick.architect.draft import MAX_BRIEF_BYTES

    if spec == "-":
        data, name = sys.stdin.buffer.read(MAX_BRIEF_BYTES + 1), "stdin"
    else:
        path = Path(spec)
        if not path.exists():
            raise MementoError(f"{spec}: no such file (BRIEF is a file, or - for standard input)")
        if not path.is_file():
            raise MementoError(f"{spec}: not a regular file (BRIEF is a file, or - for standard input)")
        with open(path, "rb") as fh:
            data, name = fh.read(MAX_BRIEF_BYTES + 1), path.name
    if len(data) > MAX_BRIEF_BYTES:
        raise MementoError(f"{name}: the brief is over the limit of {MAX_BRIEF_BYTES // 1024} KB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MementoError(f"{name}: the brief is not UTF-8 text (byte {exc.start})") from None
    return text, name


def cmd_draft(args: argparse.Namespace) -> int:
    from ...tick.architect.draft import ERROR, DraftResult, draft_plan

    ws = workspace_of(args)
    try:
        brief, name = read_brief(args.brief)
    except MementoError as exc:
        if not args.json:
            raise
        failed = DraftResult(ERROR, reasons=(str(exc),), brief_name="stdin" if args.brief == "-" else args.brief)
        print(safe_json(failed.to_json(), indent=2))
        return failed.exit_code()

    def progress(message: str) -> None:
        print(f"[..] {safe_text(message)}", file=sys.stderr, flush=True)

    result = draft_plan(ws, brief, brief_name=name, dry_run=args.dry_run, strict=args.strict, on_progress=progress)
    if args.json:
        print(safe_json(result.to_json(), indent=2))
        return result.exit_code()
    if result.diff:
        print(safe_block(result.diff.rstrip("\n")))
    report(result)
    return result.exit_code()


def report(result) -> None:
    """The checks (red first, warnings), then what happened (or why nothing stays)."""
    from ...tick.architect.draft import ERROR, KEPT, PROPOSED

    for check in result.red:
        if not check.passed:
            ok(f"red first: {check.task_id} fails as it should ({check.detail})")
    for line in result.warnings:
        warn(line)
    log = f" (log: {result.log})" if result.log else ""
    added = ", ".join(result.new_ids)
    if result.outcome == KEPT:
        ok(f"plan drafted from {result.brief_name}: added {added}; commit {(result.commit or '')[:7]}, "
           f"📝 PLAN DRAFTED entry in docs/TICK_STATUS.md{log}")
        ok("the plan is paused until you have read it; `memento resume` starts the pipeline")
    elif result.outcome == PROPOSED:
        ok(f"dry run: the draft from {result.brief_name} would add {added}; the checks pass; "
           f"nothing was changed{log}")
    elif result.outcome == ERROR:
        error("the plan could not be drafted:" + "".join(f"\n  - {safe_text(r)}" for r in result.reasons) + log)
    else:
        warn("the draft was refused, everything was put back:" + "".join(f"\n  - {r}" for r in result.reasons)
             + (f"\n  log: {result.log}" if result.log else ""))


def cmd_import(args: argparse.Namespace) -> int:
    from ...forge.importer import import_issues

    ws = person_workspace(args, "plan import")
    result = import_issues(ws, args.repo, label=args.label or None, phase=args.phase)
    where = f" to phase {result.phase!r}" if result.added else ""
    said = [f"{label} {listed(ids)}" for label, ids in (
        ("added", result.added), ("updated", result.updated), ("skipped (closed on GitHub)", result.skipped),
        ("reopened", result.reopened)) if ids]
    if said:
        commit = f"; commit {result.commit[:7]}" if result.commit else ""
        ok(f"{result.repo}: " + "; ".join(said) + where + commit)
    else:
        ok(f"{result.repo}: nothing new ({plural(len(result.kept), 'value')} a person changed kept)"
           if result.kept else f"{result.repo}: nothing new")
    if result.kept:
        ok("kept as a person wrote them: " + listed(result.kept, 10))
    if result.pull_requests:
        ok(f"{plural(result.pull_requests, 'pull request')} with the label left out (pull requests are never imported)")
    for line in result.held:
        warn(f"{line}: its issue is closed, but a worker is on it now; the next import skips it")
    for line in result.invalid:
        warn(f"{line}: invalid until filled (`memento lint`)")
    if result.commit_error:
        warn(result.commit_error)
    return EXIT_ATTENTION if result.invalid or result.commit_error else EXIT_OK
