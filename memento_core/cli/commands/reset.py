"""`memento reset ID [DIR]`: a blocked task back to [ ] with retries 0."""

from __future__ import annotations

import argparse

from ...errors import MementoError
from ..context import load_plan, person_workspace, with_dir
from ..output import EXIT_OK, ok, warn


def register(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("reset", parents=[common], help="[!] → [ ] with retries 0")
    p.add_argument("task_id", metavar="ID")
    with_dir(p).set_defaults(func=cmd_reset)


def cmd_reset(args: argparse.Namespace) -> int:
    from ...control import reset_task, still_not_running, wait_for_senders
    from ...state import TickState

    ws = person_workspace(args, "reset")
    task = load_plan(ws).task(args.task_id)
    if task is not None and task.status == "~":
        raise MementoError(f"{args.task_id} is running ([~]); if its worker is gone, the next tick resets it "
                           "(`memento doctor` shows stale claims)")
    plan = reset_task(ws, args.task_id)
    ok(f"{args.task_id} is [ ] again with retries 0 ({plan.task(args.task_id).title})")
    still = still_not_running(plan, TickState.load(ws))
    if still:
        warn(still)
    wait_for_senders()  # a notification the change made is sent before the process ends
    return EXIT_OK
