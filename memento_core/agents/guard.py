"""The run's guard (SPEC §13 "kill -9"): between the tick and a command, it ends the command's
every process when the tick dies, even by SIGKILL, confined or not.

``python -I -S guard.py [--wrapped] FD EXECUTABLE ARGV...`` (standard library only, run by
path: a command's start must not pay for importing Memento). process.py starts it as the
leader of the run's new session and process group (the group the claim records); it runs
``EXECUTABLE`` with ``ARGV`` as its only child, in that group, and exits as the child did
(its code, or the same signal). ``FD`` is its end of a socket pair whose other end only the
tick holds: the guard says there whether the command started (``S``, or ``E<errno> <why>``),
and reads end of file there once the tick is gone.

* It is a **child subreaper** (``PR_SET_CHILD_SUBREAPER``): whatever the command leaves
  behind, a double fork, a ``setsid``, an ``env -i`` that drops Memento's marker, is
  re-parented to the guard when its parent dies, so every process of the run stays below it.
* It learns that the tick died from the socket (end of file) and from a **parent-death
  signal** (``PR_SET_PDEATHSIG``), and believes either only when it is true: the kernel sends
  that signal when the *thread* that started the guard ends, and the dashboard and parallel
  workers start runs from threads, so a signal with the tick still its parent and its end of
  the socket still open is ignored. Then it kills every process below it with SIGKILL, again
  until none is left and none remains to reap, and exits: nothing of the run writes on
  while the next tick recovers. ``--wrapped``: its child is Memento's own sandbox wrapper
  (proxy.py, bwrap): everything below that child is killed first, then the child gets
  SIGTERM so proxy.py can remove its folder (SIGKILL after :data:`WRAPPER_GRACE` seconds).
* SIGTERM, SIGINT and SIGHUP do not stop the guard: they reach the command through the
  group, and the guard exits when the command does. When the command exits, the guard exits
  at once; what the command left running is re-parented to the tick, which stops it
  (reaper.py) as before.

The next tick (tick/orphans.py) still kills what a guard could not (one the agent stopped
with SIGSTOP, or killed together with the tick): the guard carries the run's environment,
Memento's marker with it, and everything below it goes too.
"""

from __future__ import annotations

# The interpreter's own low-level modules (and _ctypes below): `signal` and `ctypes` would import
# enum, functools and struct, most of what this guard costs each command's start.
import _signal as signal
import os
import select
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PARENT_GONE = signal.SIGUSR1  # the parent-death signal: only a wake-up, checked before it is believed
IGNORED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
WRAPPER_GRACE = 5.0
STARTED = b"S"


def _prctl(option: int, value: int) -> bool:
    try:
        import _ctypes

        prctl = _ctypes.dlsym(_ctypes.dlopen(None, os.RTLD_NOW), "prctl")
        return _ctypes.call_function(prctl, (option, value, 0, 0, 0)) == 0
    except (ImportError, OSError, AttributeError, TypeError):
        pass
    try:  # the documented way, dearer to load
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        return False


def _say(fd: int, message: bytes) -> None:
    try:
        os.write(fd, message)
    except OSError:
        pass


class Lifeline:
    """The tick's side of things: alive while the socket is open and the tick is still our parent."""

    def __init__(self, fd: int):
        self.fd = fd
        self.parent = os.getppid()

    def tick_gone(self) -> bool:
        if os.getppid() != self.parent:
            return True
        poller = select.poll()  # (select() cannot take a descriptor above 1023: the dashboard has many)
        poller.register(self.fd, select.POLLIN)
        if not poller.poll(0):
            return False
        try:
            return os.read(self.fd, 64) == b""  # the tick never writes: readable means it is gone
        except OSError:
            return True


def below(pid: int) -> list[int]:
    """Every process below ``pid``, read from every process's parent in /proc (not the kernel's
    lists of children, which a kernel may not have): this runs once, when the tick is gone."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            children.setdefault(int(stat[stat.rfind(b")") + 2:].split()[1]), []).append(int(name))
        except (OSError, ValueError, IndexError):
            continue
    out, todo = [], list(children.get(pid, ()))
    while todo:
        p = todo.pop()
        if p not in out:
            out.append(p)
            todo += children.get(p, ())
    return out


def _reap_all() -> bool:
    """Collect every child that has ended; False once there is no child left at all."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def _kill(pids, sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except OSError:
            pass


def end_everything(child: int, wrapped: bool) -> None:
    """SIGKILL everything below us (below ``child`` first, when it is Memento's wrapper; 0: it has
    ended), until no process is left below us and none remains to reap."""
    me = os.getpid()
    spared = child if wrapped else 0
    deadline = time.monotonic() + WRAPPER_GRACE
    termed = False
    while True:
        found = [p for p in below(me) if p != spared]
        _kill(found, signal.SIGKILL)
        if spared and not found:
            if not termed:
                _kill([spared], signal.SIGTERM)
                termed = True
            elif time.monotonic() > deadline:
                spared = 0
                continue
        if not _reap_all():
            return
        time.sleep(0.005)


def _exit_like(status: int) -> None:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:  # the command's core dump is its own business: the guard leaves none in the project
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        except (ImportError, OSError, ValueError):
            pass
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)
    os._exit(os.waitstatus_to_exitcode(status))


def _spawn(fd: int, executable: str, args: list[str]) -> int:
    try:
        child = os.posix_spawn(executable, args, os.environ,
                               setsigdef=(*IGNORED, PARENT_GONE, signal.SIGPIPE, signal.SIGXFSZ))
    except OSError as exc:
        _say(fd, f"E{exc.errno} {exc.strerror or exc}".encode("utf-8", "replace"))
        os._exit(127)
    _say(fd, STARTED)
    return child


def main(argv: list[str]) -> None:
    wrapped = bool(argv) and argv[0] == "--wrapped"
    fd, executable, args = int(argv[wrapped]), argv[wrapped + 1], argv[wrapped + 2:]
    os.set_inheritable(fd, False)  # the command never holds the tick's lifeline
    line = Lifeline(fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    for sig in (signal.SIGCHLD, PARENT_GONE):
        signal.signal(sig, lambda *_: None)
    for sig in IGNORED:
        signal.signal(sig, signal.SIG_IGN)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, PARENT_GONE)
    if line.tick_gone():  # it died before the signal was set: run nothing
        os._exit(125)
    child = _spawn(fd, executable, args)
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    poller.register(wake_r, select.POLLIN)
    ended = None
    while True:
        while True:  # the command's end; orphans that ended are collected on the way
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                pid = 0
            if pid == child:
                ended = status
            if pid == 0:
                break
        if line.tick_gone():
            end_everything(child if ended is None else 0, wrapped)
            os._exit(137)
        if ended is not None:
            _exit_like(ended)  # what it left running goes to the tick (a subreaper), which stops it
        try:
            poller.poll()
            while os.read(wake_r, 512):
                pass
        except (InterruptedError, BlockingIOError):
            pass


if __name__ == "__main__":
    main(sys.argv[1:])
