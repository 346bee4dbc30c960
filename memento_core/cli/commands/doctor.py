"""`memento doctor [DIR…] [--json] [--fail-on warning|critical] [--watch SECONDS [--count N]] [--agent]` (SPEC §8, §20).

The checks are ``memento_core/doctor/``; this module runs them over the
workspaces named on the command line and prints the findings (or one JSON
document), once or every ``--watch`` seconds.
"""

from __future__ import annotations

import argparse
import time

from ...errors import MementoError
from ...runlog import utc_stamp
from ..output import safe_block, safe_json, safe_text


def register(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("doctor", parents=[common],
                       help="check continuity and pipeline health: exit 0 healthy, 1 warnings, 2 critical")
    p.add_argument("dirs", nargs="*", metavar="DIR", help="workspaces to check (default: the current one)")
    p.add_argument("--json", action="store_true", help="print one JSON document")
    p.add_argument("--fail-on", choices=("warning", "critical"), default="warning",
                   help="lowest severity that makes the exit code non-zero (default: warning)")
    p.add_argument("--watch", type=float, metavar="SECONDS",
                   help="check again every SECONDS and print only when the findings change")
    p.add_argument("--count", type=int, metavar="N", help="with --watch: stop after N checks")
    p.add_argument("--agent", action="store_true",
                   help="also run the agent once with a one-line prompt, through the sandbox and its network "
                        "exactly as a tick would: is it logged in, can it reach its model?")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the workspaces once, or watch them."""
    from ...doctor import document, overall_exit, run_workspaces

    dirs = list(args.dirs or [])
    if getattr(args, "project", None):
        dirs.insert(0, args.project)
    fail_on = args.fail_on
    if args.watch is None:
        reports = run_workspaces(dirs, agent=args.agent)
        print(safe_json(document(reports, fail_on), indent=2) if args.json
              else safe_block(render_text(reports)))
        return overall_exit(reports, fail_on)
    if args.agent:
        raise MementoError("--agent runs the agent once: it does not go with --watch")
    if args.watch <= 0:
        raise MementoError("--watch needs a number of seconds greater than zero")
    return watch(dirs, args.json, fail_on, args.watch, args.count)


def render_text(reports: list[dict]) -> str:
    """The findings, one ``[SEVERITY] …`` line each, under the workspace's name when there are several."""
    out = []
    for r in reports:
        if len(reports) > 1:
            out.append(f"{r['workspace']}:")
        out += [safe_text(str(f)) for f in r["findings"]]
    return "\n".join(out)


def watch(dirs: list[str], as_json: bool, fail_on: str, every: float, count: int | None) -> int:
    """Check every ``every`` seconds; print a block only when the findings changed."""
    from ...doctor import document, overall_exit, run_workspaces

    previous = None
    code = 0
    runs = 0
    try:
        while True:
            reports = run_workspaces(dirs)
            code = overall_exit(reports, fail_on)
            shape = [(r["workspace"], r["findings"]) for r in reports]
            if shape != previous:
                stamp = utc_stamp()
                if as_json:
                    print(safe_json(document(reports, fail_on)), flush=True)
                else:
                    print(f"{stamp} doctor (exit {code}):")
                    print(safe_block(render_text(reports)), flush=True)
                previous = shape
            runs += 1
            if count is not None and runs >= count:
                return code
            time.sleep(every)
    except KeyboardInterrupt:
        return code
