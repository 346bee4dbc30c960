"""The tick lock's holder (SPEC §4 step 1): a tick that is stopped (SIGSTOP) is stale like a dead
one (SPEC §13 "Without a sandbox"). __main__.run_locked takes the lock; this says who holds it.

An unconfined agent can find its tick up the parent chain and stop it: the stopped
process still holds `.memento/tick.lock`, and every later tick would only say
"previous tick still running". So while a tick holds the lock it touches the lock
file every :data:`BEACON_SECONDS` (:func:`beacon`; a ctime nothing can set back),
and a tick that finds the lock busy asks the kernel who holds it (``/proc/locks``).
When that process is stopped (state ``T``/``t`` in ``/proc/PID/stat``) and has shown
no sign of life (the beacon, or its start) for longer than the plan's
``stale_lock_timeout``, it is taken over (:func:`take_over`): the stopped process,
its group when it leads one (never ours) and every process below it are killed with
SIGKILL, the lock is taken, and the tick runs as after a kill -9 (recovery.py resets
the task, a retry counted). The takeover is written in the status log, in
`.memento_alert` and in the notifications (``stale_tick``) until `memento ack`.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..agents.reaper import all_processes, descendants, read_proc, start_time
from ..runlog import utc_stamp

BEACON_SECONDS = 1.0
STOPPED = ("T", "t")  # stopped by a signal, stopped by a tracer


@contextmanager
def beacon(fd: int) -> Iterator[None]:
    """Touch the lock file (open as ``fd``) every BEACON_SECONDS while the block runs."""
    done = threading.Event()

    def touch() -> None:
        while not done.wait(BEACON_SECONDS):
            try:
                os.utime(fd)
            except OSError:
                pass

    try:
        os.utime(fd)
    except OSError:
        pass
    thread = threading.Thread(target=touch, name="memento-tick-beacon", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()


def lock_holder(lock_path: Path) -> int | None:
    """The pid holding the flock on ``lock_path``, as the kernel says (``/proc/locks``)."""
    try:
        st = os.stat(lock_path)
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    want = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        fields = line.split()
        if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK":
            continue  # a waiter, or a lock of another kind
        if fields[5] == want and fields[4].isdigit():
            return int(fields[4])
    return None


def _started_at(pid: int) -> float:
    """When ``pid`` started (epoch seconds), 0.0 when unknown."""
    ticks = start_time(pid)
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            boot = next(int(line.split()[1]) for line in fh if line.startswith("btime "))
        return boot + (ticks or 0) / os.sysconf("SC_CLK_TCK") if ticks is not None else 0.0
    except (OSError, StopIteration, ValueError):
        return 0.0


def stopped_holder(lock_path: Path) -> tuple[int, float] | None:
    """(pid, seconds without a sign of life) when the lock's holder is a stopped process, else None."""
    pid = lock_holder(lock_path)
    proc = read_proc(pid) if pid else None
    if proc is None or proc.state not in STOPPED or pid == os.getpid():
        return None
    try:
        touched = os.stat(lock_path).st_ctime
    except OSError:
        touched = 0.0
    return pid, max(0.0, time.time() - max(touched, _started_at(pid)))


def take_over(pid: int, wait: float = 10.0) -> list[int]:
    """Kill the stopped ``pid``, its group when it leads one (never this process's group) and every
    process below it, with SIGKILL; wait until they are gone. The pids signalled."""
    procs = all_processes()
    victims = descendants([pid], procs)
    try:
        if os.getpgid(pid) == pid and pid != os.getpgrp():
            victims |= {p.pid for p in procs if p.pgid == pid}
    except OSError:
        pass
    victims.discard(os.getpid())
    for victim in sorted(victims):
        try:
            os.kill(victim, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        alive = [v for v in victims if (p := read_proc(v)) is not None and p.state not in ("Z", "X")]
        if not alive:
            break
        time.sleep(0.02)
    return sorted(victims)


def taken_over_message(pid: int, quiet: float, killed: list[int]) -> str:
    return (f"the previous tick (pid {pid}) was stopped (SIGSTOP) and silent for {int(quiet)}s, past "
            f"stale_lock_timeout: killed with {len(killed)} process(es) of it, and taken over at {utc_stamp()}")


def lock_busy(ws, said: str) -> tuple[str, bool]:
    """The tick lock is held: (what to say, whether its holder was a stopped tick now taken over)."""
    from ..errors import MementoError
    from ..plan.model import Meta
    from ..plan.scan import parse_plan

    found = stopped_holder(ws.tick_lock_path)
    if found is None:
        return said, False
    pid, quiet = found
    try:
        stale_after = parse_plan(ws.plan_path).meta.stale_lock_timeout
    except (MementoError, OSError):
        stale_after = Meta().stale_lock_timeout
    if quiet <= stale_after:
        return (f"{said} (pid {pid} is stopped, silent for {int(quiet)}s; taken over after "
                f"stale_lock_timeout {int(stale_after)}s)"), False
    return taken_over_message(pid, quiet, take_over(pid)), True


def remember(ws, message: str) -> None:
    """The takeover in state.json and `.memento_alert`, until `memento ack` (under the tick lock)."""
    from ..checkpoint import write_alert
    from ..errors import MementoError
    from ..plan.scan import parse_plan
    from ..state import TickState

    state = TickState.load(ws)
    state.stale_tick = message
    state.save(ws)
    try:
        write_alert(ws, parse_plan(ws.plan_path), state)
    except (MementoError, OSError):
        pass  # a plan that does not parse: the tick reports it (PLAN INVALID); state.json keeps the word
