"""Process groups: run a command so that nothing of it outlives the call (SPEC §4 step 10).

``run_in_group`` runs any command in a session (and so a process group) of
its own, its output copied into a log file through a pipe (logpipe.py: the
command never holds the log itself), with a timeout. When
it returns, no process of the group is left: on timeout the whole group gets
SIGTERM, a grace period, then SIGKILL, and processes the command left
running after it exited are stopped the same way. The tick uses it for the
agent and for ``verify``.

The pitfalls of SPEC §4 this handles:

* the child inherits no descriptor but stdin, stdout and stderr
  (``close_fds``; its guard also its end of the lifeline, which it never
  passes on), so an agent never holds the tick lock;
* ``subprocess.run(timeout=)`` would kill only the direct child; here the
  whole group is stopped and waited for until it is gone, zombies reaped;
* the tick's SIGTERM handler calls ``terminate_running``: every group being
  waited on is stopped and its run returns with ``interrupted=True``.

A process that leaves the group (its own ``setsid``, a double fork) is out of
reach of a group kill; after the group is gone, reaper.py finds what is left of
the run (its session, and the orphans re-parented to a subreaper tick) and
kills that too.

On Linux the command runs under its guard (guard.py), the leader of the group:
should the tick die, even by SIGKILL, the guard kills every process of the run
(everything that left the group included: the guard is their subreaper) before
the next tick recovers (SPEC §13 "kill -9").
"""

from __future__ import annotations

import errno
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..durations import format_duration
from ..locks import SymlinkRefused, open_append
from . import reaper
from .logcap import LogCap, trim
from .logpipe import LogPipe
from .stream import StreamLog

DEFAULT_GRACE = 3.0
# How long to wait for a group to vanish after SIGKILL before giving up on it.
KILL_WAIT_LIMIT = 10.0

# Process groups started by run_in_group and not yet gone, by pgid: lets a
# SIGTERM handler stop them (terminate_running). Plain dict operations only,
# because a signal handler may run while the main thread is inside them.
_RUNNING: dict[int, subprocess.Popen[bytes]] = {}
_INTERRUPTED: set[int] = set()
# Parallel workers (tick/workers.py) run commands from several threads: a group is started and
# registered in _RUNNING as one step, so another run's stray search never takes it for a stray.
_SPAWNING = threading.RLock()
GUARD = Path(__file__).resolve().with_name("guard.py")
# How long a guard may take to say whether its command started (a Python start, on a busy machine).
GUARD_HELLO_SECONDS = 60.0


@dataclass(frozen=True)
class ProcResult:
    """How a command ended.

    exit_code is None when it did not end by itself (timed out, interrupted)
    or never started (``error`` says why). duration is in seconds.
    """

    exit_code: int | None
    timed_out: bool
    duration: float
    pgid: int | None
    error: str | None = None
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        """It ran to completion and exited 0."""
        return self.exit_code == 0 and not (self.timed_out or self.interrupted or self.error)


def append_to_log(log_path: Path, text: str) -> None:
    """Append Memento's own ``text`` to the log the command writes to."""
    try:
        fh = open_append(log_path, "ab")
    except SymlinkRefused:  # HardLinkRefused too
        return  # the agent put a link there: nothing goes through it (the guards remove it)
    with fh:
        fh.write(text.encode("utf-8", "replace"))


# ------------------------------------------------------------ stopping groups


def _live_member_in_proc(pgid: int) -> bool:
    """Whether /proc lists a process of group ``pgid`` that is not a zombie."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # Fields after the parenthesised command: state ppid pgrp ...
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            return True
    return False


def _group_members_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` is alive (zombies do not count)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # killpg succeeds while only zombies remain (a parent that never reaps,
    # or a PID 1 that does not): look closer where /proc exists.
    if not Path("/proc").is_dir():
        return True
    return _live_member_in_proc(pgid)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _reap(pgid: int) -> None:
    """Collect the group leader if it is our child, so it does not linger as a zombie."""
    proc = _RUNNING.get(pgid)
    if proc is not None:
        proc.poll()
        return
    try:
        os.waitpid(pgid, os.WNOHANG)
    except ChildProcessError:
        pass
    except OSError as exc:
        if exc.errno != errno.ECHILD:
            raise


def _wait_gone(pgid: int, deadline: float) -> bool:
    delay = 0.005
    while True:
        _reap(pgid)
        if not _group_members_alive(pgid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


def _stop_group(pgid: int, grace: float, wait_limit: float) -> bool:
    if pgid <= 1 or pgid == os.getpgrp():
        raise ValueError(f"refusing to kill process group {pgid}: it is not an agent's group")
    _signal_group(pgid, signal.SIGTERM)
    _signal_group(pgid, signal.SIGCONT)  # a stopped process cannot act on SIGTERM
    if _wait_gone(pgid, time.monotonic() + grace):
        return True
    _signal_group(pgid, signal.SIGKILL)
    return _wait_gone(pgid, time.monotonic() + wait_limit)


def kill_group(
    pgid: int, grace: float = DEFAULT_GRACE, *, wait_limit: float = KILL_WAIT_LIMIT
) -> bool:
    """Stop every process of group ``pgid``: SIGTERM, ``grace`` seconds, SIGKILL.

    Returns once the group is gone (True), or False if some member outlived
    ``wait_limit`` seconds after SIGKILL (for example stuck in the kernel or
    owned by another user). Safe from a signal handler. A run_in_group call
    waiting on this group returns with ``interrupted=True``.
    """
    if pgid in _RUNNING:
        _INTERRUPTED.add(pgid)
    return _stop_group(pgid, grace, wait_limit)


def running_groups() -> list[int]:
    """The process groups run_in_group is waiting on now (their leaders are ours)."""
    return list(_RUNNING)


reaper.running_from(running_groups)


def terminate_running(grace: float = DEFAULT_GRACE) -> list[int]:
    """Stop every process group run_in_group is waiting on (for the tick's SIGTERM handler)."""
    stopped = []
    for pgid in list(_RUNNING):
        kill_group(pgid, grace)
        stopped.append(pgid)
    return stopped


# ------------------------------------------------------------ running a command


class _NotStarted(Exception):
    """The command could not be started; the message says why (it becomes ProcResult.error)."""


@dataclass(frozen=True)
class _Command:
    """What Popen runs: the argv and the executable it resolved to; ``wrapped``: under the
    sandbox's prefix, whose first process is Memento's own (guard.py's ``--wrapped``)."""

    args: tuple[str, ...]
    executable: str
    preset: str | None
    wrapped: bool = False

    def not_found(self) -> str:
        return _not_found(self.args[0], self.preset)


def _not_found(name: str, preset: str | None) -> str:
    if preset:
        return f"agent binary '{name}' not found on PATH (preset {preset})"
    return f"'{name}' not found on PATH"


def _resolve_binary(name: str, env: Mapping[str, str], cwd: Path) -> str | None:
    if "/" in name:
        candidate = Path(name) if os.path.isabs(name) else Path(cwd) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate.absolute())
        return None
    # The PATH the command will get, not ours: under cron ours is minimal.
    return shutil.which(name, path=env.get("PATH") or os.defpath)


def _command_line(
    argv: Sequence[str] | str, *, shell: bool, env: Mapping[str, str], cwd: Path, preset: str | None
) -> _Command:
    """The argv to run and its absolute executable; _NotStarted if there is none."""
    if shell:
        command = argv if isinstance(argv, str) else shlex.join(argv)
        return _Command(("/bin/sh", "-c", command), "/bin/sh", preset)
    args = tuple(shlex.split(argv) if isinstance(argv, str) else argv)
    if not args:
        raise _NotStarted("empty command line")
    executable = _resolve_binary(args[0], env, cwd)
    if executable is None:
        raise _NotStarted(_not_found(args[0], preset))
    return _Command(args, executable, preset)


def _wrapped(command: _Command, wrap: Sequence[str]) -> _Command:
    """``command`` run under the prefix ``wrap`` (its binary by the absolute path found for it)."""
    if not wrap:
        return command
    return _Command((*wrap, command.executable, *command.args[1:]), wrap[0], command.preset, wrapped=True)


def _open_stdin(stack: ExitStack, stdin_path: Path | None) -> IO[bytes] | int:
    if stdin_path is None:
        return subprocess.DEVNULL
    try:
        return stack.enter_context(open(stdin_path, "rb"))
    except OSError as exc:
        raise _NotStarted(f"cannot open {stdin_path} for standard input: {exc.strerror}") from None


def _guarded(command: _Command, fd: int) -> _Command:
    """``command`` under its guard (guard.py), which is told its end of the lifeline, ``fd``."""
    python = os.path.realpath(sys.executable)
    flags = ("--wrapped",) if command.wrapped else ()
    return _Command((python, "-I", "-S", str(GUARD), *flags, str(fd), command.executable, *command.args),
                    python, command.preset)


def _can_guard() -> bool:
    return sys.platform.startswith("linux") and bool(sys.executable) and GUARD.is_file()


class _Lifeline:
    """The tick's end of a socket pair with the command's guard: open while the run lasts, so
    the guard reads end of file only when this process is gone."""

    def __init__(self) -> None:
        self.ours, self.theirs = socket.socketpair()  # both close-on-exec: only the guard gets one

    def hello(self, command: _Command, proc: subprocess.Popen[bytes]) -> None:
        """Wait for the guard to start the command; _NotStarted (the guard reaped) if it could not."""
        self.theirs.close()
        self.ours.settimeout(GUARD_HELLO_SECONDS)
        try:
            said = self.ours.recv(512)
        except OSError:
            return  # no word in time: the run goes on, its end says the rest
        if not said.startswith(b"E"):
            return
        proc.wait()
        number, _, why = said[1:].decode("utf-8", "replace").partition(" ")
        if number == str(errno.ENOENT):
            raise _NotStarted(command.not_found())
        raise _NotStarted(f"cannot run {command.args[0]!r}: {why}")

    def close(self) -> None:
        self.theirs.close()
        self.ours.close()


def _spawn(
    command: _Command, *, cwd: Path, log_path: Path, stdin_path: Path | None, env: Mapping[str, str],
    stream: StreamLog | None = None,
) -> tuple[subprocess.Popen[bytes], LogPipe, _Lifeline | None]:
    """Start ``command`` in a new session, stdout and stderr a pipe copied into ``log_path``.

    The log file is never the command's own descriptor (SPEC §13): what it does
    to fd 1 (truncate, seek) reaches the pipe. ``close_fds``: the child gets no
    other descriptor of ours, above all not the tick lock's. Our copies of the
    pipe's write end and of stdin close on return. On Linux the command runs
    under its guard (guard.py), the group's leader, tied to us by the returned
    lifeline (keep it open until the run is over).
    """
    if not cwd.is_dir():
        raise _NotStarted(f"working directory {cwd} does not exist")
    pipe = LogPipe(log_path, stream)
    line = _Lifeline() if _can_guard() else None
    run = _guarded(command, line.theirs.fileno()) if line is not None else command
    try:
        with ExitStack() as stack:
            stdin = _open_stdin(stack, stdin_path)
            try:
                proc = subprocess.Popen(
                    run.args,
                    executable=run.executable,
                    cwd=cwd,
                    stdin=stdin,
                    stdout=pipe.write_fd,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,
                    close_fds=True,
                    pass_fds=(line.theirs.fileno(),) if line is not None else (),
                )
            except FileNotFoundError:
                raise _NotStarted(command.not_found()) from None
            except OSError as exc:
                raise _NotStarted(f"cannot run {command.args[0]!r}: {exc.strerror or exc}") from None
    except BaseException:
        pipe.abandon()
        if line is not None:
            line.close()
        raise
    pipe.started()
    return proc, pipe, line


def _wait_for_exit(proc: subprocess.Popen[bytes], *, timeout: float, started: float,
                   log_path: Path) -> bool:
    """Wait until the command exits or ``timeout`` s after ``started``; True if it timed out.

    A group kill_group stopped meanwhile (the tick's SIGTERM handler) is an
    interruption, not a timeout.
    """
    pgid = proc.pid
    remaining = max(0.0, timeout - (time.monotonic() - started))
    try:
        proc.wait(timeout=remaining)
    except subprocess.TimeoutExpired:
        if pgid in _INTERRUPTED:
            return False
        append_to_log(
            log_path,
            f"\n[memento] timed out after {format_duration(timeout)}; "
            f"stopping process group {pgid}\n",
        )
        return True
    return False


def _leave_nothing_running(proc: subprocess.Popen[bytes], *, timed_out: bool, grace: float,
                           log_path: Path) -> None:
    """Stop what is left of the group (also what an exited command left behind), reap the leader."""
    pgid = proc.pid
    try:
        if _group_members_alive(pgid):
            if not timed_out and proc.poll() is not None and pgid not in _INTERRUPTED:
                append_to_log(
                    log_path, f"\n[memento] stopping processes left running in group {pgid}\n"
                )
            _stop_group(pgid, grace, wait_limit=KILL_WAIT_LIMIT)
        proc.wait()
    finally:
        _RUNNING.pop(pgid, None)


def _kill_strays(pgid: int, existing: frozenset, log_path: Path) -> None:
    """What left the group: its session, and orphans re-parented to us (reaper.py)."""
    with _SPAWNING:
        strays = reaper.kill_strays(sessions=[pgid], exclude=existing)
    if strays:
        append_to_log(log_path, f"\n[memento] stopped {len(strays)} process(es) that had left "
                                f"group {pgid}: {', '.join(map(str, strays))}\n")


def _ended(proc: subprocess.Popen[bytes], *, timed_out: bool, started: float) -> ProcResult:
    """The result of a command whose group is gone."""
    pgid = proc.pid
    interrupted = pgid in _INTERRUPTED
    _INTERRUPTED.discard(pgid)
    duration = time.monotonic() - started
    exit_code = None if (timed_out or interrupted) else proc.returncode
    return ProcResult(exit_code, timed_out, duration, pgid, interrupted=interrupted)


def run_in_group(
    argv: Sequence[str] | str,
    *,
    cwd: Path | str,
    log_path: Path,
    timeout: float,
    stdin_path: Path | None = None,
    env: Mapping[str, str] | None = None,
    shell: bool = False,
    on_start: Callable[[int], None] | None = None,
    preset: str | None = None,
    grace: float = DEFAULT_GRACE,
    wrap: Sequence[str] = (),
    stream: StreamLog | None = None,
) -> ProcResult:
    """Run ``argv`` in a new session, output copied into ``log_path``, killed after ``timeout`` s.

    ``shell=True`` runs a string with /bin/sh. stdin is ``stdin_path`` or
    /dev/null. ``on_start(pgid)`` is called as soon as the process exists.
    ``wrap`` is an argv prefix the command runs under (the sandbox's, ending
    in ``--``); the command's binary is still looked up here first.
    ``stream``: the command prints JSON events, made readable on their way to the log.
    Whatever happens, no process of the group is left when this returns.
    A command that cannot start is a ProcResult with ``error`` set (naming
    the binary and ``preset``), never an exception.
    """
    cwd = Path(cwd)
    log_path = Path(log_path)
    env = dict(os.environ if env is None else env)
    started = time.monotonic()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    existing = reaper.baseline()
    try:
        command = _wrapped(_command_line(argv, shell=shell, env=env, cwd=cwd, preset=preset), wrap)
        with _SPAWNING:
            proc, pipe, line = _spawn(command, cwd=cwd, log_path=log_path, stdin_path=stdin_path, env=env,
                                      stream=stream)
            _RUNNING[proc.pid] = proc
    except _NotStarted as exc:
        return _not_started(exc, log_path, started)

    pgid = proc.pid  # start_new_session: the child leads its own group
    timed_out = False
    refused: _NotStarted | None = None
    try:
        if line is not None:
            try:
                line.hello(command, proc)
            except _NotStarted as exc:  # the guard could not start it, and is reaped: cleaned up below
                refused = exc
        if refused is None:
            if on_start is not None:
                on_start(pgid)
            with LogCap(log_path):  # a flood keeps the log's first and last 10 MB
                timed_out = _wait_for_exit(proc, timeout=timeout, started=started, log_path=log_path)
    finally:
        try:
            _leave_nothing_running(proc, timed_out=timed_out, grace=grace, log_path=log_path)
        finally:
            if line is not None:
                line.close()  # the guard is gone (reaped): its lifeline is no longer needed
            try:
                _kill_strays(pgid, existing, log_path)
            finally:
                pipe.finish()  # the group and its strays are gone: end of file, or a bounded drain
                trim(log_path)
    if refused is not None:
        return _not_started(refused, log_path, started)
    return _ended(proc, timed_out=timed_out, started=started)


def _not_started(exc: _NotStarted, log_path: Path, started: float) -> ProcResult:
    append_to_log(log_path, f"[memento] {exc}\n")
    return ProcResult(None, False, time.monotonic() - started, None, error=str(exc))
