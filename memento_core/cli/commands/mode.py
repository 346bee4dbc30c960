"""`memento pause | resume | stop [DIR]`: set the plan's tick_mode."""

from __future__ import annotations

import argparse

from ..context import load_plan, person_workspace, with_dir
from ..output import EXIT_OK, ok

# command -> (the tick_mode it sets, its help)
MODES = {
    "pause": ("paused", "pause the pipeline (ticks exit at once)"),
    "resume": ("auto", "resume the pipeline"),
    "stop": ("stopped", "stop the pipeline"),
}


def register(sub, common: argparse.ArgumentParser) -> None:
    for command, (mode, text) in MODES.items():
        p = with_dir(sub.add_parser(command, parents=[common], help=text))
        p.set_defaults(func=cmd_mode, tick_mode=mode)


def cmd_mode(args: argparse.Namespace) -> int:
    from ...control import set_mode, wait_for_senders
    from ...state import TickState

    mode = args.tick_mode
    ws = person_workspace(args, {"auto": "resume", "paused": "pause"}.get(mode, "stop"))
    before = load_plan(ws).meta.tick_mode
    breaker = TickState.load(ws).breaker_reason
    set_mode(ws, mode)
    ok(f"tick_mode: {mode} (was {before})")
    if mode == "auto" and breaker:
        ok(f"circuit breaker reset (it had tripped: {breaker})")
    if mode == "stopped":
        print("The next ticks will exit at once. `memento cron remove` also removes the schedule.")
    wait_for_senders()  # a notification the change made is sent before the process ends
    return EXIT_OK
