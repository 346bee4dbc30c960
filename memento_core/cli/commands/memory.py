"""`memento memory …` (SPEC §7, §9): write, show, tree, search, index, gc, log, distill."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, date, datetime

from ...errors import MementoError
from ..context import with_dir, workspace_of
from ..output import EXIT_ATTENTION, EXIT_OK, ok, safe_block, safe_json, safe_text, warn


def register(sub, common: argparse.ArgumentParser) -> None:
    memory = sub.add_parser("memory", help="long-term memory: write, show, tree, search, index, gc, log, distill")
    verbs = memory.add_subparsers(dest="memory_command", metavar="VERB", required=True)
    _register_write(verbs, common)
    _register_reading(verbs, common)
    _register_upkeep(verbs, common)


def _register_write(verbs, common: argparse.ArgumentParser) -> None:
    p = verbs.add_parser("write", parents=[common], help="write an entry (content on stdin), one commit")
    p.add_argument("path", metavar="PATH", help="inside memory/, e.g. knowledge/lessons/flaky-tests.md")
    p.add_argument("--summary", help="one line: the entry's summary and the commit message (required)")
    p.add_argument("--source", metavar="ID", help="where it comes from (default: $MEMENTO_TASK_ID, else source=human)")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--update", action="store_true", help="replaces what the entry said: old text marked ~~Superseded~~")
    how.add_argument("--conflict", action="store_true", help="contradicts the entry: both kept, marked ⚠️ CONFLICT")
    p.add_argument("--tag", action="append", help="a tag (repeatable)")
    p.add_argument("--priority", choices=("core", "normal", "low"))
    p.set_defaults(func=cmd_write)


def _register_reading(verbs, common: argparse.ArgumentParser) -> None:
    """show, tree, search: in the order `memento memory --help` lists them."""
    p = verbs.add_parser("show", parents=[common], help="print an entry")
    p.add_argument("path", metavar="PATH")
    p.set_defaults(func=cmd_show)

    p = with_dir(verbs.add_parser("tree", parents=[common], help="paths and summaries, folded over --max"))
    p.add_argument("--max", type=_positive, default=1000, help="most lines before folders fold (default 1000)")
    p.set_defaults(func=cmd_tree)

    p = verbs.add_parser("search", parents=[common], help="entries containing TEXT (case-insensitive)")
    p.add_argument("text", metavar="TEXT")
    p.add_argument("--max", type=_positive, default=200, help="stop after this many matching lines")
    p.set_defaults(func=cmd_search)


def _register_upkeep(verbs, common: argparse.ArgumentParser) -> None:
    """index, gc, log, distill."""
    p = with_dir(verbs.add_parser("index", parents=[common], help="regenerate MEMORY.md"))
    p.set_defaults(func=cmd_index)

    p = with_dir(verbs.add_parser("gc", parents=[common], help="archive old journal days, mark stale entries"))
    p.add_argument("--retention-days", type=_positive, default=30, help="journal days kept (default 30)")
    p.add_argument("--stale-days", type=_positive, default=30, help="unverified for longer → stale (default 30)")
    p.add_argument("--today", metavar="YYYY-MM-DD", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_gc)

    p = verbs.add_parser("log", parents=[common], help="memory commits, newest first")
    p.add_argument("path", metavar="PATH", nargs="?", help="only the commits of this entry")
    p.add_argument("-n", type=_positive, default=30, help="how many (default 30)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_log)

    p = with_dir(verbs.add_parser("distill", parents=[common], help="digest of a journal day and proposed knowledge"))
    p.add_argument("--date", metavar="YYYY-MM-DD", help="the day (default: today)")
    p.add_argument("--apply", action="store_true", help="write the proposed entries (CRUD-checked)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_distill)


def cmd_write(args: argparse.Namespace) -> int:
    from ...memory.writes import write_entry

    if sys.stdin is None or sys.stdin.isatty():
        raise MementoError("the content of a memory write comes on standard input, "
                           "e.g. `echo 'text' | memento memory write PATH --summary '…'`")
    ws = workspace_of(args)
    content = sys.stdin.buffer.read().decode("utf-8", "replace")
    mode = "update" if args.update else "conflict" if args.conflict else None
    if _queued(ws, args, content, mode):
        return EXIT_OK
    result = write_entry(ws, args.path, content, args.summary or "", source=args.source, mode=mode,
                         tags=tuple(args.tag or ()), priority=args.priority)
    if result.action == "noop":
        ok(f"NOOP: memory/{result.path} already covers this; nothing written")
    else:
        sha = (result.commit or "")[:7]
        ok(f"{result.action}: memory/{result.path}" + (f" — commit {sha}" if sha else "")
           + (f" ({result.detail})" if result.detail else ""))
    return EXIT_OK


def _queued(ws, args: argparse.Namespace, content: str, mode: str | None) -> bool:
    """In the sandbox (memory/ read-only): queue the write for the tick (SPEC §13); True if queued."""
    from ...memory.queue import must_queue, queue_write

    if not must_queue(ws):
        return False
    queue_write(ws, args.path, content, args.summary or "", mode=mode, tags=tuple(args.tag or ()),
                priority=args.priority)
    ok(f"queued: memory/{safe_text(args.path.strip())} — Memento writes it after the agent exits "
       "(the sandbox keeps memory/ read-only)")
    return True


def cmd_show(args: argparse.Namespace) -> int:
    from ...memory import read_entry

    sys.stdout.write(safe_block(read_entry(workspace_of(args), args.path)))
    return EXIT_OK


def cmd_tree(args: argparse.Namespace) -> int:
    from ...memory.tree import render_tree

    ws = workspace_of(args)
    text = render_tree(ws.memory_dir, max_paths=args.max) if ws.memory_dir.is_dir() else ""
    if not text:
        ok("memory/ has no entries yet")
        return EXIT_OK
    print(safe_block(text))
    return EXIT_OK


def cmd_search(args: argparse.Namespace) -> int:
    from ...memory.tree import entry_paths

    ws = workspace_of(args)
    root = ws.memory_dir
    needle = args.text.casefold()
    hits = 0
    for rel in ["PERSONA.md", *entry_paths(root, archive=True)]:
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        for n, line in enumerate(text.split("\n"), 1):
            if needle in line.casefold():
                print(f"{rel}:{n}: {safe_text(line.strip())}")
                hits += 1
                if hits >= args.max:
                    warn(f"stopped after {args.max} matches")
                    return EXIT_OK
    if not hits:  # as grep: no match is exit 1
        warn(f"no match for {safe_text(repr(args.text))} in memory/")
        return EXIT_ATTENTION
    return EXIT_OK


def cmd_index(args: argparse.Namespace) -> int:
    from ...memory.layout import GENERATED
    from ...memory.store import commit, commit_leftovers, locked, write_index

    ws = workspace_of(args)
    with locked(ws) as root:
        commit_leftovers(ws, root)
        changed = write_index(root)
        sha = commit(root, [GENERATED], "memory: regenerate MEMORY.md", source="memento", kind="index") \
            if changed else None
    ok(f"MEMORY.md regenerated — commit {sha[:7]}" if sha else "MEMORY.md is up to date")
    return EXIT_OK


def cmd_gc(args: argparse.Namespace) -> int:
    from ...memory.gc import gc

    ws = workspace_of(args)
    today = _date(args.today) if args.today else None
    report = gc(ws, retention_days=args.retention_days, stale_days=args.stale_days, today=today)
    for rel in report.archived:
        ok(f"archived memory/{rel} → memory/.archive/{rel}")
    for rel in report.kept_core:
        ok(f"kept memory/{rel}: priority core is never archived")
    for rel in report.stale:
        warn(f"memory/{rel} not verified for over {args.stale_days} days: marked status: stale")
    for rel in report.unreadable:
        warn(f"memory/{rel} has no valid front matter; gc left it alone")
    ok(f"gc done — commit {report.commit[:7]}" if report.commit else "gc: nothing to do")
    return EXIT_OK


def cmd_log(args: argparse.Namespace) -> int:
    from ...memory.store import history, jail

    ws = workspace_of(args)
    rel = jail(ws, args.path, writing=False)[0] if args.path else None
    commits = history(ws, rel, args.n)
    if args.json:
        print(safe_json([c.__dict__ for c in commits], indent=2))
        return EXIT_OK
    if not commits:
        print("no memory commits yet")
    for c in commits:
        print(f"{c.sha[:7]} {c.date[:19]} [{c.source or '-'}] {safe_text(c.subject)}")
    return EXIT_OK


def cmd_distill(args: argparse.Namespace) -> int:
    from ...memory.distill import apply, distill

    ws = workspace_of(args)
    day = args.date or datetime.now(UTC).date().isoformat()
    _date(day)
    digest = distill(ws, day)
    if args.json:
        print(safe_json({"day": digest.day, "digest": digest.text,
                          "proposals": [p.__dict__ for p in digest.proposals]}, indent=2))
    else:
        sys.stdout.write(safe_block(digest.text))
    if args.apply:
        for result in apply(ws, digest):
            ok(f"{result.action}: memory/{result.path}")
    return EXIT_OK


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise MementoError(f"a date must be YYYY-MM-DD, not {text!r}") from None


def _positive(text: str) -> int:
    """A whole number of at least 1 (argparse type): 0 or -1 days/lines would mean nothing useful."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value
