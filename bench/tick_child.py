"""One tick as cron starts it, with bench/tick_git.py's counting hooks: ``python bench/tick_child.py ROOT OUT``.

Kept apart from tick_git.py so that the process measured imports only what the hooks need
(os, sys, json, resource, subprocess, runpy: the tick imports them too); tick_git.py's own
imports (statistics with its fractions and decimal, the table) were 1–5 ms of CPU
counted as the tick's.
"""

from __future__ import annotations

import atexit
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

# Options git takes before its subcommand, each with a separate value.
_VALUE_OPTS = {"-c", "-C", "--git-dir", "--work-tree", "--namespace", "--exec-path"}


def subcommand(argv: list[str]) -> str:
    """The git subcommand of an argv (``git -c x=y -C dir status …`` → ``status``)."""
    args = iter(argv[1:])
    for arg in args:
        if arg in _VALUE_OPTS:
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return "?"


def child(root: str, out: str) -> None:
    """One tick, as `python -m memento_core.tick --project ROOT`, with the counting hooks."""
    import runpy

    calls: list[dict[str, str]] = []
    spent = [0.0]
    real_init = subprocess.Popen.__init__

    def where() -> str:
        frames, f = [], sys._getframe(2)
        while f is not None and len(frames) < 4:
            name = f.f_code.co_filename
            if "memento_core" in name and f.f_code.co_name not in ("run_git", "output", "git", "_git"):
                short = name.split("memento_core/")[-1]
                frames.append(f"{short}:{f.f_code.co_name}")
            f = f.f_back
        return " <- ".join(frames) or "?"

    def counting_init(self, args, *a, **kw):
        argv = [os.fspath(x) for x in args] if isinstance(args, (list, tuple)) else [str(args)]
        if argv and os.path.basename(argv[0]) == "git":
            calls.append({"cmd": subcommand(argv), "where": where()})
        return real_init(self, args, *a, **kw)

    subprocess.Popen.__init__ = counting_init

    from memento_core import agents
    from memento_core.agents import process as agent_process
    from memento_core.agents import run as agent_run

    real_group = agent_process.run_in_group

    def timed_group(*a, **kw):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            return real_group(*a, **kw)
        finally:
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            spent[0] += (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    agents.run_in_group = agent_process.run_in_group = agent_run.run_in_group = timed_group
    sys.argv = ["memento_core.tick", "--project", root]
    code = [0]

    def write() -> None:
        own = resource.getrusage(resource.RUSAGE_SELF)
        Path(out).write_text(json.dumps({"exit": code[0], "calls": calls, "agent_verify_cpu": spent[0],
                                         "python_cpu": own.ru_utime + own.ru_stime}))

    # The tick ends its process itself after the exit functions (tick/__main__.exit_now): written
    # as one of them, before the interpreter's teardown, as it was when the tick returned here.
    atexit.register(write)
    try:
        runpy.run_module("memento_core.tick", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code[0] = exc.code or 0


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2])
