"""`memento skip ID --reason TEXT [DIR]`: mark a task [-] with a reason."""

from __future__ import annotations

import argparse

from ..context import person_workspace, with_dir
from ..output import EXIT_OK, ok, warn


def register(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("skip", parents=[common], help="mark a task [-] with a reason")
    p.add_argument("task_id", metavar="ID")
    p.add_argument("--reason", required=True, help="why the task is not needed")
    with_dir(p).set_defaults(func=cmd_skip)


def cmd_skip(args: argparse.Namespace) -> int:
    from ...control import skip_task, still_not_running, wait_for_senders
    from ...state import TickState

    ws = person_workspace(args, "skip")
    plan = skip_task(ws, args.task_id, args.reason)
    ok(f"{args.task_id} skipped [-]: {' '.join(args.reason.split())}")
    still = still_not_running(plan, TickState.load(ws))
    if still:
        warn(still)
    wait_for_senders()  # a notification the change made is sent before the process ends
    return EXIT_OK
