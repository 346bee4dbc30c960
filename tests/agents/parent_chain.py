"""Helper of the hostile agents that look for their tick (imported, not run): up the parent chain."""

import os
import signal
import sys
from pathlib import Path


def find_tick(stop_guards: bool = False) -> int:
    """The first ancestor that was not started under the tick's marker (no MEMENTO_TICK in its
    environment): the tick itself. MEMENTO_TICK names no pid. In the sandbox's PID namespace the
    chain ends inside it: the agent exits, having found no tick. ``stop_guards``: the marked
    ancestors on the way (the run's guard, which would end the run with its tick) are stopped
    with SIGSTOP, so only the next tick can end what the agent leaves."""
    pid = os.getpid()
    while True:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
        pid = int(stat[stat.rfind(b")") + 2:].split()[1])
        if pid <= 1:
            sys.exit("no tick found up the parent chain")
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            sys.exit(f"cannot read the environment of {pid}")
        if not any(item.startswith(b"MEMENTO_TICK=") for item in environ):
            return pid
        if stop_guards:
            os.kill(pid, signal.SIGSTOP)
