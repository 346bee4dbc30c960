"""`memento ack [DIR]`: the unsurfaced results have been seen (SPEC §8)."""

from __future__ import annotations

import argparse

from ..context import with_dir, workspace_of
from ..output import EXIT_OK, ok


def register(sub, common: argparse.ArgumentParser) -> None:
    p = with_dir(sub.add_parser("ack", parents=[common], help="mark the unsurfaced results as seen"))
    p.set_defaults(func=run_ack)


def run_ack(args: argparse.Namespace) -> int:
    from ...checkpoint import acknowledge, unsurfaced_results
    from ...state import TickState

    ws = workspace_of(args)
    pending = unsurfaced_results(ws, TickState.load(ws))
    count = acknowledge(ws)
    if not count:
        ok("nothing to acknowledge: no unsurfaced results")
    else:
        ids = ", ".join(u.get("task", "?") for u in pending)
        ok(f"acknowledged {count} result(s): {ids}; {ws.rel(ws.checkpoint_path)} lists them no more")
    return EXIT_OK
