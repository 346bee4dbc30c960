"""`memento report [DIR] [--since 12h | --date YYYY-MM-DD] [--json]` (SPEC §15): the morning report.

The report itself is ``memento_core/report.py``; this module prints it. What
needs a person comes first, then the ticks, the passes with their commits, the
failures by kind, the blocked tasks, time, tokens and cost, and unread notes.
"""

from __future__ import annotations

import argparse

from ..context import with_dir, workspace_of
from ..output import EXIT_ATTENTION, EXIT_OK, plural, safe_json, safe_text


def register(sub, common: argparse.ArgumentParser) -> None:
    p = with_dir(sub.add_parser("report", parents=[common],
                                help="what happened while nobody watched, and what needs you"))
    when = p.add_mutually_exclusive_group()
    when.add_argument("--since", metavar="DURATION", help="the last DURATION, e.g. 12h (default: 24h)")
    when.add_argument("--date", metavar="YYYY-MM-DD", help="that UTC day")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from ...report import build_report

    doc = build_report(workspace_of(args), since=args.since, date=args.date)
    if args.json:
        print(safe_json(doc, indent=2))
    else:
        print("\n".join(safe_text(line) if line else "" for line in render_report(doc)))
    return EXIT_ATTENTION if doc["needs_you"] else EXIT_OK


def render_report(doc: dict) -> list[str]:
    """The human form: plain lines (each made safe by the caller)."""
    lines = [f"Report for {doc['project']}: {doc['since']} to {doc['until']} ({doc['state']})", ""]
    if doc["needs_you"]:
        lines.append(f"[warn] needs you ({len(doc['needs_you'])}):")
        lines += [f"  - {n['text']}" + (f"  → {n['action']}" if n["action"] else "") for n in doc["needs_you"]]
    else:
        lines.append("[ok] nothing needs you")
    usage = doc["usage"]
    lines += ["", f"{plural(doc['ticks'], 'tick')}, {len(doc['passed'])} passed, {doc['failed_count']} failed; "
              f"time {_clock(doc['time_seconds'])}; tokens {usage['tokens_in']:,} in / {usage['tokens_out']:,} out; "
              f"cost ${usage['cost_usd']:.2f}"]
    if doc["passed"]:
        lines += ["", "Passed:"]
        lines += [f"  {p['task']} {p['title'] or ''} ({p['commit'] or 'no commit'})".rstrip() for p in doc["passed"]]
    if doc["failed"]:
        lines += ["", "Failed attempts:"]
        for kind, items in doc["failed"].items():
            lines.append(f"  {kind} ({len(items)}):")
            lines += [f"    {f['task']}: {f['reason'][:160]}" for f in items[-10:]]
            if len(items) > 10:
                lines.append(f"    … and {len(items) - 10} earlier")
    if doc["blocked"]:
        lines += ["", "Blocked:"]
        lines += [f"  {b['id']} {b['title']} (after {b['retries']} retries): {b['last_reason'][:160]}"
                  for b in doc["blocked"]]
    if doc["unread_notes"]:
        lines += ["", f"Unread notes ({len(doc['unread_notes'])}):"]
        lines += [f"  → {n['target']}: {n['text'][:120]}" for n in doc["unread_notes"]]
    return lines


def _clock(seconds: float) -> str:
    from ...durations import format_duration

    return format_duration(seconds) if seconds else "0s"
