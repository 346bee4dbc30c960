"""Headless tick for cron: ``python -m memento_core.tick [--project DIR]`` (SPEC §4).

Exit codes: 0 ran (skips and recorded task failures included), 1 needs
attention (blocked, breaker, dirty tree), 2 could not run.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse


@functools.cache
def preload() -> None:
    """Import every module of memento_core (its command line aside) here and now, in this thread.

    A tick imports most of its modules lazily. The dashboard runs it in a thread while other
    threads read the workspace, and two threads importing one package at the same moment can
    each meet the other's half-initialized module: a tick started as the dashboard opened
    failed with "cannot import name 'DEFAULT_GRACE' from partially initialized module". So the
    dashboard calls this, in its own thread, before a tick or the doctor runs; once done, a
    call costs nothing (the package is not walked again at every tick)."""
    import importlib
    import pkgutil

    import memento_core

    for found in pkgutil.walk_packages(memento_core.__path__, "memento_core."):
        if not found.name.endswith(".__main__") and not found.name.startswith("memento_core.cli."):
            importlib.import_module(found.name)


def run_tick(root):
    """Run one tick in the workspace at ``root`` (cron's entry, ``memento tick``, the dashboard)."""
    from pathlib import Path

    from ..errors import EXIT_ERROR
    from ..runlog import Outcome
    from ..workspace import Workspace

    ws = Workspace(Path(root).resolve())
    if not ws.plan_path.exists():
        return Outcome(EXIT_ERROR, f"{ws.root}: no docs/MASTER_PLAN.md (run `memento init`)")
    return run_locked(ws)


def run_locked(ws, taken_over: str = ""):
    """Step 1: take the tick lock without waiting; answer a paused or stopped plan from here,
    else run steps 2–16 (run.tick). A lock held by a tick stopped past `stale_lock_timeout`
    is taken over (lock.py); ``taken_over`` then says so, and the lock is waited for briefly.

    The skip path imports only the plan scanner and tomllib (memento.toml is read
    as a Config only when it sets [chat] or a remote: _config_and_chat): cron
    wakes a paused project every few minutes and that must cost next to nothing
    (SPEC §11: a paused tick within 3x a bare interpreter start; issue 42: 2x in
    CPU time). tests/core/test_import_hygiene.py holds the list.
    """
    from ..errors import MementoError
    from ..locks import LockBusy, file_lock
    from ..plan.scan import parse_plan
    from ..runlog import Outcome, cron_log
    from ..workspace import mend_own_folders

    moved = mend_own_folders(ws.root)  # a file or link where logs/ or .memento/ belongs
    if moved:
        cron_log(ws, "moved aside what stood where Memento's folders belong: " + ", ".join(moved))
    try:
        with file_lock(ws.tick_lock_path, blocking=bool(taken_over), timeout=10.0) as fd:
            if taken_over:
                from .lock import remember

                remember(ws, taken_over)  # the alert outlives a paused plan's skip below
            from .orphans import end_dead_attempts

            # A killed tick's processes end before anything is read or judged, paused or not (SPEC §13).
            ended = end_dead_attempts(ws)
            if ended:
                cron_log(ws, f"ended {len(ended)} process(es) a killed tick had left running: "
                             + ", ".join(map(str, ended)))
            config = _config_and_chat(ws)
            try:
                plan = parse_plan(ws.plan_path, display=ws.rel(ws.plan_path))
                fleet = config.workers_remote if config is not None else ""
            except MementoError:
                plan = None  # run.tick reports it properly (PLAN INVALID)
            # With a remote, a paused plan is looked up there first (run.tick, fleet/sync.py).
            if plan is not None and not plan.plan_errors and plan.meta.tick_mode != "auto" and not fleet:
                message = f"tick skipped: tick_mode is {plan.meta.tick_mode}"
                cron_log(ws, message)
                return Outcome(0, message)
            from ..agents.reaper import new_tick_identity, subreaper
            from .lock import beacon
            from .own import state_after_tick as own_state_after_tick
            from .receipts import listening
            from .run import tick

            new_tick_identity()  # the marker this tick's processes carry: a token, never its pid
            # Orphans of the agent come to us, and none outlives the tick (agents/reaper.py); a later
            # tick can tell a stopped tick by its beacon (lock.py); a person's receipts are heard
            # meanwhile, the agent's refused (tick/receipts.py).
            with beacon(fd), subreaper(), listening(ws):
                outcome = tick(ws, taken_over=taken_over)
                # Memento's state as it left it, whatever an agent wrote (SPEC §13); still listening,
                # so a person's receipted change made during the tick (an ack) is kept.
                own_state_after_tick(ws)
            _tell(ws, config)
            return outcome
    except LockBusy:
        said = "tick skipped: previous tick still running"
        if not taken_over:
            from .lock import lock_busy

            said, stale = lock_busy(ws, said)
            if stale:
                cron_log(ws, said)
                return run_locked(ws, taken_over=said)
        cron_log(ws, said)
        return Outcome(0, said)


def _config_and_chat(ws):
    """memento.toml (None when it is invalid: run.tick says why); with ``[chat]``, its replies and
    commands first, before anything is read or picked, paused or not (a /resume must reach a
    paused plan), within 3 s (SPEC §18).

    Also None when it sets neither ``[chat]`` nor a ``[workers] remote``: nothing before run.tick
    reads anything else of it (run.tick loads it itself), so a paused tick does not pay for
    validating it into a Config (SPEC §11: the config reader was a quarter of a paused tick's imports)."""
    if not _chat_or_remote(ws.config_path):
        return None
    from ..config.load import load_config
    from ..errors import MementoError

    try:
        config = load_config(ws.config_path)
    except MementoError:
        return None
    if config.chat_telegram or config.chat_matrix:
        from ..chat.poll import before_pick

        before_pick(ws, config)
    return config


def _chat_or_remote(path) -> bool:
    """Whether memento.toml may set ``[chat]`` or ``[workers] remote`` (config/sections.py's and config/chat.py's keys): False
    only when the file is missing, or is TOML that sets neither, where load_config gives a
    Config with no chat and no remote, or none at all. Any doubt (unreadable, not UTF-8, not
    TOML) answers True, and load_config decides as it always did."""
    import tomllib

    try:
        raw = tomllib.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError):  # UnicodeDecodeError and TOMLDecodeError are ValueErrors
        return True
    workers = raw.get("workers")
    return "chat" in raw or (isinstance(workers, dict) and "remote" in workers)


def _tell(ws, config) -> None:
    """After a tick that ran: what changed, sent once through [notify] (SPEC §15) and posted in the
    [chat] rooms (SPEC §18); never on the paused path."""
    from ..notify import after_tick

    after_tick(ws)
    if config is not None and (config.chat_telegram or config.chat_matrix):
        from ..chat.poll import after_tick as chat_after_tick

        chat_after_tick(ws)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m memento_core.tick",
                                     description="Run one tick of the workspace, as cron does: one task, verified, "
                                                 "committed or rolled back.",
                                     epilog="Exit codes: 0 ran (skips and recorded task failures included), "
                                            "1 needs attention (blocked, breaker, dirty tree), 2 could not run.")
    parser.add_argument("--project", metavar="DIR", help="the workspace (default: search upwards from here)")
    parser.add_argument("dir", nargs="?", metavar="DIR", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def _plain_project(argv: Sequence[str]) -> str | None:
    """The workspace of the command lines cron and people write (``--project DIR``, ``DIR``,
    nothing), read without argparse: building its parser is a tenth of a paused tick's own
    cost (SPEC §11). None for any other shape (an option, ``--project=DIR``, a DIR that starts
    with ``-``): argparse reads those, its errors and ``--help`` included."""
    if len(argv) == 2 and argv[0] == "--project" and not argv[1].startswith("-"):
        return argv[1]
    if len(argv) == 1 and not argv[0].startswith("-"):
        return argv[0]
    return "" if not argv else None


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    project = _plain_project(argv)
    if project is None:
        args = parse_args(argv)
        project = args.project or args.dir
    from ..errors import MementoError
    from ..lines import safe_text
    from ..workspace import Workspace

    # Messages name files and carry what agents wrote: no control character reaches the terminal.
    try:
        ws = Workspace.find(project or os.getcwd())
        outcome = run_locked(ws)
    except MementoError as exc:
        print(f"[error] {safe_text(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:  # disk full, permissions: one clear line for cron.log
        where = f"{exc.filename}: " if exc.filename else ""
        print(safe_text(f"[error] {where}{exc.strerror or exc}"), file=sys.stderr)
        return 2
    stream = sys.stderr if outcome.exit_code == 2 else sys.stdout
    print(f"{outcome_tag(outcome)} {safe_text(outcome.message)}", file=stream)
    if outcome.warning:
        print(f"[error] {safe_text(outcome.warning)}", file=stream)
    return outcome.exit_code


def outcome_tag(outcome) -> str:
    """``[error]`` when the tick could not run, ``[warn]`` when it needs attention or a task
    failed (a recorded failure still exits 0: the tick itself ran), else ``[ok]``."""
    if outcome.exit_code == 2:
        return "[error]"
    if outcome.exit_code == 1 or outcome.warning or any(not r.passed for r in outcome.results):
        return "[warn]"
    return "[ok]"


def exit_now(code: int) -> None:
    """End cron's tick process with ``code`` without taking the interpreter apart: its teardown freed
    every object of a hundred modules, one by one, for a process whose memory the system frees
    whole (about 15 ms of CPU, a twentieth of a tick's: issue 42). What a normal exit does that
    matters is done first: the exit functions run (atexit: the dataclass code's file, a temporary
    folder's finalizer), stdout and stderr are flushed. While a thread that is not a daemon still
    runs, it is a normal exit, which waits for it."""
    import atexit

    threading = sys.modules.get("threading")  # never imported: no other thread was started with it
    if threading is not None and any(not t.daemon for t in threading.enumerate()
                                     if t is not threading.main_thread()):
        raise SystemExit(code)
    atexit._run_exitfuncs()  # and forgotten: a normal exit below does not run them twice
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # cron closed the pipe, a stream set to None:
        raise SystemExit(code) from None  # a normal exit says so and exits 120, as it always did
    os._exit(code)


def collect_seldom(young: int = 20_000) -> None:
    """Let cron's tick process run the cyclic garbage collector seldom: its young generation every
    ``young`` new containers rather than every 700. The tick's garbage is freed as it goes (reference
    counts); the collector found a few hundred objects in cycles a tick and ran about 40 times,
    mostly over the objects the imports had just made (issue 42). Memory stays bounded: a long tick
    still collects, every ``young`` containers."""
    import gc

    first, *older = gc.get_threshold()
    gc.set_threshold(max(first, young), *older)


if __name__ == "__main__":
    collect_seldom()
    exit_now(main())
