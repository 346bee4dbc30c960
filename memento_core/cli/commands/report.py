"""`memento report [DIR] [--since 12h | --date YYYY-MM-DD] [--json]` (SPEC §15): the morning report.

The report itself is ``memento_core/report.py``; this module prints it. What
needs a person comes first, then the ticks, the passes with their commits, the
failures by kind, the blocked tasks, time, tokens and cost, and unread notes.
"""

from __future__ import annotations

import argparse

from ..context import with_dir, workspace_of
from ..output import EXIT_ATTENTION, EXIT_OK, safe_json, safe_text


def register(sub, common: argparse.ArgumentParser) -> None:
    p = with_dir(sub.add_parser("report", parents=[common],
                                help="what happened while nobody watched, and what needs you"))
    when = p.add_mutually_exclusive_group()
    when.add_argument("--since", metavar="DURATION", help="the last DURATION, e.g. 12h (default: 24h)")
    when.add_argument("--date", metavar="YYYY-MM-DD", help="that UTC day")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from ...report import build_report, report_lines

    doc = build_report(workspace_of(args), since=args.since, date=args.date)
    if args.json:
        print(safe_json(doc, indent=2))
    else:
        print("\n".join(safe_text(line) if line else "" for line in report_lines(doc)))
    return EXIT_ATTENTION if doc["needs_you"] else EXIT_OK
