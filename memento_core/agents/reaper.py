"""The tick as a child subreaper: no process an agent started outlives its run (SPEC §13).

A process group is not enough: a daemon that calls ``setsid`` (or double-forks
into a session of its own) leaves the agent's group, and its parent's death
hands it to init. On Linux :func:`subreaper` makes this process a *child
subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``) for the length of a tick, so
such an orphan is re-parented to us instead, and :func:`kill_strays` finds it
below us (:func:`our_tree`; all of ``/proc`` when we are no subreaper, and
once it has found one): every descendant of a child of ours that is in another
session than ours and is not the leader of a group :mod:`.process` is still
running (the agent, verify). Memento's own git commands run in our session and
are never touched. Strays are stopped (SIGSTOP, so none can fork meanwhile),
then sent SIGTERM, given a grace period, then SIGKILL, and reaped.

Also without a subreaper (not Linux, or prctl refused), every process still in
the finished run's session (``sid``) is found and killed: a process that left
the group with ``setpgid`` but not the session cannot hide.

The subreaper flag belongs to the whole process: the dashboard, which runs a
tick in a thread, is a subreaper for as long as the tick runs (orphans of its
other threads would come to it too; it starts none in another session).

When the tick itself is killed, each run's guard (guard.py, the subreaper of
its own run) ends that run; what a guard could not end, the next tick does with
:func:`kill_marked`: every process that carries the dead tick's marker, the
recorded groups, and everything below them.
"""

from __future__ import annotations

import ctypes
import errno
import os
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
STRAY_GRACE = 1.0
MARKED_WAIT = 10.0  # how long a dead tick's processes may take to die once killed
# Rounds of "find, stop, kill" before giving up on a tree that keeps forking.
MAX_ROUNDS = 20

_libc = None


def _nothing_running() -> list[int]:
    return []


# The leaders of the groups process.py is waiting on (it registers itself: no import cycle).
_running = _nothing_running


def running_from(source) -> None:
    """Where to learn which group leaders are still being waited on (process.py's registry)."""
    global _running
    _running = source


def _prctl():
    global _libc
    if _libc is None:
        # The interpreter's own symbols include the C library's: no `ldconfig -p` run to find it
        # (ctypes.util.find_library starts one, in every tick).
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc.prctl


def is_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        value = ctypes.c_int(0)
        if _prctl()(PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0) != 0:
            return False
        return bool(value.value)
    except (OSError, AttributeError):
        return False


def set_subreaper(on: bool) -> bool:
    """Turn the child-subreaper flag of this process on or off; False where it cannot be."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return _prctl()(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@contextmanager
def subreaper() -> Iterator[bool]:
    """This process is a child subreaper inside the block (as it was before, after it);
    on leaving, every stray found is killed. Yields whether the flag could be set."""
    before = is_subreaper()
    existing = baseline()
    ok = before or set_subreaper(True)
    try:
        yield ok
    finally:
        try:
            kill_strays(exclude=existing)
        finally:
            if ok and not before:
                set_subreaper(False)


# ------------------------------------------------------------------ /proc


@dataclass(frozen=True)
class Proc:
    """A process as /proc/PID/stat shows it: its state letter, parent, group and session."""

    pid: int
    state: str
    ppid: int
    pgid: int
    sid: int


def read_proc(pid: int) -> Proc | None:
    """The process ``pid`` as /proc says; its state ``S`` where /proc says ``Z`` of a process whose
    first thread ended while another runs on (a daemon can do that to look dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    try:
        state = fields[0].decode("ascii", "replace")
        if state == "Z" and _a_thread_runs(pid):
            state = "S"
        return Proc(pid, state, int(fields[1]), int(fields[2]), int(fields[3]))
    except (IndexError, ValueError):
        return None


def _a_thread_runs(pid: int) -> bool:
    """Whether a thread of ``pid`` is alive (its first included: asked of one /proc says is a zombie)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    return any(_task_state(pid, tid) not in (b"Z", b"X", b"") for tid in tasks)


def _task_state(pid: int, tid: str) -> bytes:
    """A thread's state letter from /proc (b"" when it cannot be read: it ended meanwhile)."""
    try:
        with open(f"/proc/{pid}/task/{tid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return b""
    return data[data.rfind(b")") + 2:][:1]


def all_processes() -> list[Proc]:
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for name in entries:
        if name.isdigit():
            proc = read_proc(int(name))
            if proc is not None:
                found.append(proc)
    return found


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return int(stat[stat.rfind(b")") + 2:].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def descendants(roots: Iterable[int], procs: list[Proc]) -> set[int]:
    """``roots`` and every process below them, by ppid."""
    children: dict[int, list[int]] = {}
    for p in procs:
        children.setdefault(p.ppid, []).append(p.pid)
    out, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo.extend(children.get(pid, ()))
    return out


def _listed_children(pid: int | str) -> set[int] | None:
    found: set[int] = set()
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", "rb") as fh:
                found.update(int(child) for child in fh.read().split())
    except (OSError, ValueError):
        return None
    return found


def _children_of(pid: int | str) -> set[int] | None:
    """The children of ``pid`` (``self``: ours), every thread's, as the kernel lists them
    (``/proc/PID/task/*/children``); None where it cannot say. The kernel walks that list a
    child at a time, and a child reaped meanwhile can make it skip the next one: read twice, a
    list is trusted only when both readings agree (the reaped child is in the first, never in
    the second)."""
    first = _listed_children(pid)
    return first if first is not None and _listed_children(pid) == first else None


def our_children() -> list[Proc] | None:
    """Our children as the kernel lists them: a few reads, where :func:`all_processes` reads every
    process of the machine; None where it cannot say."""
    found = _children_of("self")
    if found is None:
        return None
    return [p for p in map(read_proc, sorted(found)) if p is not None]


def our_tree() -> list[Proc] | None:
    """Every process below this one, read down the kernel's lists of children from ours. Where
    this process is a subreaper, that is every process a run of ours left (an orphan comes up to
    us), read in a few files rather than all of /proc. None where a list cannot be read, or a
    process ended while the tree was read (what it started may have moved up past its place)."""
    found: dict[int, Proc] = {}
    todo: list[int | str] = ["self"]
    while todo:
        children = _children_of(todo.pop())
        if children is None:
            return None
        for pid in sorted(children - found.keys()):
            proc = read_proc(pid)
            if proc is None:
                return None
            found[pid] = proc
            todo.append(pid)
    return list(found.values())


def baseline() -> frozenset[tuple[int, int | None]]:
    """Our children in other sessions right now, with their start times: what a later
    :func:`kill_strays` leaves alone (a test's own process groups, a caller's daemons). Asked
    of the kernel's list of our children where it has one: a run starts with it, and on a
    machine of many processes reading them all was most of what the run cost Memento."""
    me, my_sid = os.getpid(), os.getsid(0)
    children = our_children()
    if children is None:
        children = [p for p in all_processes() if p.ppid == me]
    return frozenset((p.pid, start_time(p.pid)) for p in children if p.sid != my_sid)


def find_strays(sessions: Iterable[int] = (), exclude: frozenset = frozenset(),
                procs: list[Proc] | None = None) -> set[int]:
    """Living processes a run left behind: descendants of our children in other sessions
    than ours (not a running group's leader, not in ``exclude``), and every process of
    ``sessions``. ``procs``: every process, as just read (:func:`all_processes`)."""
    me, my_sid = os.getpid(), os.getsid(0)
    keep = set(_running()) | {pid for pid, started in exclude if start_time(pid) == started}
    procs = all_processes() if procs is None else procs
    live = {p.pid: p for p in procs if p.state not in ("Z", "X")}
    roots = [p.pid for p in procs if p.ppid == me and p.sid != my_sid and p.pid not in keep]
    wanted = set(sessions) - {my_sid} - keep
    roots += [p.pid for p in procs if p.sid in wanted and p.pid != me]
    found = descendants(roots, procs)
    found -= descendants(keep, procs)
    return {pid for pid in found if pid in live and pid != me}


def _signal_all(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def reap_zombies(exclude: frozenset = frozenset(), procs: list[Proc] | None = None) -> None:
    """Collect our zombie children that no Popen waits for (orphans re-parented to us).
    ``procs``: every process, as just read (:func:`all_processes`)."""
    me, my_sid = os.getpid(), os.getsid(0)
    keep = set(_running()) | {pid for pid, _ in exclude}
    for p in all_processes() if procs is None else procs:
        if p.ppid == me and p.state == "Z" and p.sid != my_sid and p.pid not in keep:
            try:
                os.waitpid(p.pid, os.WNOHANG)
            except OSError as exc:
                if exc.errno != errno.ECHILD:
                    raise


def kill_strays(sessions: Iterable[int] = (), grace: float = STRAY_GRACE, *,
                exclude: frozenset = frozenset()) -> list[int]:
    """Stop every stray (see :func:`find_strays`): SIGSTOP, SIGTERM, ``grace`` s, SIGKILL; reaped.

    Returns the pids that were found. Without /proc (not Linux) it finds nothing.
    """
    sessions = tuple(sessions)
    # Most runs leave nothing: one reading for both questions, of our tree where we are a
    # subreaper (everything the run left is in it), else of every process.
    procs = our_tree() if is_subreaper() else None
    if procs is None:
        procs = all_processes()
    if not find_strays(sessions, exclude, procs):
        reap_zombies(exclude, procs)
        return []
    killed: set[int] = set()
    for _ in range(MAX_ROUNDS):
        # Freeze first, until the set stops growing: a frozen process cannot fork.
        strays = find_strays(sessions, exclude)
        if not strays:
            break
        while True:
            _signal_all(strays, signal.SIGSTOP)
            more = find_strays(sessions, exclude)
            if more <= strays:
                break
            strays |= more
        killed |= strays
        _signal_all(strays, signal.SIGTERM)
        _signal_all(strays, signal.SIGCONT)
        _wait_gone(strays, sessions, exclude, time.monotonic() + grace)
        _signal_all(find_strays(sessions, exclude) & strays, signal.SIGKILL)
        _wait_gone(strays, sessions, exclude, time.monotonic() + 5.0)
    reap_zombies(exclude)
    return sorted(killed)


def _wait_gone(pids: set[int], sessions: tuple[int, ...], exclude: frozenset, deadline: float) -> None:
    delay = 0.005
    while True:
        reap_zombies(exclude)
        if not (find_strays(sessions, exclude) & pids) or time.monotonic() >= deadline:
            return
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


# ------------------------------------------------------------------ the tick's marker


_IDENTITY: dict[str, str] = {}


def tick_identity() -> str:
    """The ``MEMENTO_TICK`` marker every process this tick starts carries, and its record keeps: a
    random token (128 bits), made once per tick (:func:`new_tick_identity`). It finds the tick's
    processes again but tells the agent nothing: no pid of the tick to stop or kill (SPEC §13)."""
    if "token" not in _IDENTITY:
        new_tick_identity()
    return _IDENTITY["token"]


def new_tick_identity() -> str:
    """A fresh marker for the tick that starts now (a dashboard runs many ticks in one process)."""
    import secrets

    _IDENTITY["token"] = "tick-" + secrets.token_hex(16)
    return _IDENTITY["token"]


def environ_of(pid: int) -> dict[str, str] | None:
    """The environment process ``pid`` started with, or None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    env = {}
    for item in data.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
    return env


def _marked(identity: str, projects: frozenset[str], leaders: frozenset[int]) -> set[int]:
    """The living processes of a dead tick's runs (see :func:`kill_marked`)."""
    me = os.getpid()
    procs = all_processes()
    roots = set(leaders) | {p.pid for p in procs if p.pgid in leaders}
    for p in procs if identity and projects else ():
        if p.pid == me or p.state in ("Z", "X") or p.pid in roots:
            continue
        env = environ_of(p.pid)
        if env and env.get("MEMENTO_TICK") == identity and env.get("MEMENTO_PROJECT") in projects:
            roots.add(p.pid)
    live = {p.pid for p in procs if p.state not in ("Z", "X")}
    return {pid for pid in descendants(roots, procs) if pid in live and pid != me}


def kill_marked(identity: str, projects: str | Iterable[str], leaders: Iterable[int] = (),
                wait: float = MARKED_WAIT) -> list[int]:
    """End what a dead tick's runs left running: every process started under the tick ``identity``
    for one of ``projects`` (its environment says so: the run's guard and the agent carry it; with
    '' or no project none is looked for by its marker), the groups ``leaders`` lead (the caller
    made sure each is ours), and everything below them, which is everything a living guard kept
    (agents/guard.py: it is their subreaper). They are frozen first (SIGSTOP, again until no new
    one appears: a frozen process cannot fork), then killed with SIGKILL, with no grace: the
    attempt is over, and nothing may write once its recovery starts. Returns the pids found,
    once none of them is alive, or after ``wait`` seconds (one stuck in the kernel does not hold
    the tick)."""
    projects = frozenset([projects] if isinstance(projects, str) else projects)
    leaders = frozenset(pid for pid in leaders if pid > 1 and pid != os.getpgrp())
    killed: set[int] = set()
    deadline = time.monotonic() + wait
    for _ in range(MAX_ROUNDS):
        found = _marked(identity, projects, leaders)
        if not found - killed:  # none, or only what would not die in time (a process stuck in the kernel)
            break
        while True:
            _signal_all(found, signal.SIGSTOP)
            more = _marked(identity, projects, leaders)
            if more <= found:
                break
            found |= more
        _signal_all(found, signal.SIGKILL)
        killed |= found
        leaders = frozenset()  # killed: a later round must not meet their pids in new processes
        while any(_alive(pid) for pid in found) and time.monotonic() < deadline:
            reap_zombies()
            time.sleep(0.01)
    reap_zombies()
    return sorted(killed)


def _alive(pid: int) -> bool:
    proc = read_proc(pid)
    return proc is not None and proc.state not in ("Z", "X")
