"""What one tick carries from step to step, and the few ways it writes things down.

Every step of the tick (run.py, attempt.py, recovery.py, afterwards.py) takes
the :class:`TickContext`: the workspace, the configuration, the state kept
between ticks, this tick's number, its log and what it has done so far. The
writing helpers here (a status entry, an event, a commit of Memento's own
paths) are the only ones the steps use, so every entry is numbered and every
git failure is remembered for the circuit breaker in one place.

And the tick's small file operations, which every step uses: read what may be gone
(:func:`read_or_none`: never a FIFO, never through a link), remove what may be gone, append to
the tick's log, read the log's tail.
"""

from __future__ import annotations

import os
import stat
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .. import status_log
from ..config.model import Config
from ..errors import MementoError
from ..git.commit import HeadMoved, commit_paths
from ..git.commit_fast import commit_here
from ..locks import open_append
from ..plan.edits import edit_plan
from ..plan.model import Plan
from ..plan.scan import parse_plan
from ..runlog import TaskResult, cron_log, utc_stamp
from ..state import TickState
from ..workspace import Workspace

if TYPE_CHECKING:  # Attempt's fields: the snapshot and the heartbeat, named only
    from collections.abc import Callable

    from ..plan.model import Task
    from ..state import Heartbeat
    from .guards import Snapshot


class Interrupted(Exception):
    """SIGTERM arrived: stop at the next safe point."""


@dataclass
class TickContext:
    """One tick's workspace, settings and progress; made and used while holding the tick lock."""

    ws: Workspace
    started: datetime = field(default_factory=lambda: datetime.now(UTC))
    config: Config | None = None
    number: int | None = None
    number_saved: bool = False
    interrupted: bool = False
    attempted: bool = False
    git_failed: str = ""
    rate_limited: bool = False  # an attempt was refused for rate limits: not a failure for the breaker
    results: list[TaskResult] = field(default_factory=list)
    fleet: object = None  # fleet.host.Fleet while [workers] remote is set: the claim this host holds
    stale_ticks: set = field(default_factory=set)  # dead ticks whose failure the breaker counted (recovery)
    tick_commit: str | None = None  # the last commit this tick made that its documents may be folded into
    docs_committed: tuple | None = None  # the documents' stat when last found committed (housekeeping)
    loose_objects: int = 0  # the most loose objects an attempt's snapshot found (housekeeping packs them)
    # (HEAD, the untracked files) as the start's status read them (run.refuse_dirty_tree), for the first
    # attempt's snapshot while HEAD is still that commit: one status read at the tick's start (issue 42).
    untracked_at_start: tuple[str | None, frozenset[str]] | None = None
    # A parallel worker's own processes (crew_judge.py judges by them): ("agent"|"verify", start, end or
    # None while it runs), in time.time(); None elsewhere (a serial attempt has nobody else to tell them from).
    own_runs: list | None = None
    held_said: set = field(default_factory=set)  # held tasks already named in cron.log this tick (memento_core/held.py)
    held_seen: set = field(default_factory=set)  # commits whose history the held list was brought in line with
    # The HEAD the next commit must be made on (a parallel worker's documents: the crew's, crew.py);
    # None: whatever HEAD is then.
    commit_onto: str | None = None
    # A parallel phase's: the main branch put back and the commit to make the next one on (crew.py).
    reclaim: Callable[[], str | None] | None = None
    state: TickState = field(init=False)
    log_path: Path = field(init=False)
    # Held around updates of ``state`` a worker thread makes (limits.py); parallel workers share
    # the tick's state and this lock, which is their crew's (crew.Crew.lock).
    state_lock: threading.RLock = field(default_factory=threading.RLock)

    def __post_init__(self) -> None:
        self.state = TickState.load(self.ws)
        self.log_path = _unique(self.ws.logs_dir / f"tick_{self.started.strftime('%Y-%m-%dT%H%M%SZ')}.log")

    @property
    def root(self) -> Path:
        return self.ws.root

    @property
    def stamp(self) -> str:
        return utc_stamp(self.started)

    def plan(self) -> Plan:
        """The plan as it is on disk now (the file is the source of truth, never a copy; the
        same bytes parse once, plan/scan.py)."""
        return parse_plan(self.ws.plan_path, display=self.ws.rel(self.ws.plan_path))

    def check_interrupt(self) -> None:
        if self.interrupted:
            raise Interrupted()

    def tick_number(self) -> int:
        """This tick's number, written to Meta `total_ticks` the first time it is used."""
        if self.number is None:
            self.number = next_number(self.plan().meta.total_ticks, self.state)
        number = self.number
        if not self.number_saved:
            # A tick that writes an entry is a tick that counts (total_ticks in Meta).
            try:
                edit_plan(self.ws.plan_path, lambda e: e.set_meta("total_ticks", str(number)))
            except MementoError:
                pass  # an unreadable plan (PLAN INVALID) keeps its count
            self.number_saved = True
        return number

    def format_entry(self, fields, continued=None, tail: str | None = None) -> str:
        if self.config is not None and self.config.workers_remote:
            fields = [*fields[:1], ("Host", self.config.host), *fields[1:]]  # who wrote it (SPEC §12)
        return status_log.format_entry(self.stamp, self.tick_number(), fields, continued=continued,
                                       error_tail=tail)

    def entry(self, fields, continued=None, tail: str | None = None) -> None:
        """Append one status entry for this tick."""
        status_log.append_entry(self.ws.status_path, self.format_entry(fields, continued, tail))

    def event(self, event: str, fields, tail: str | None = None) -> None:
        """A pipeline event (STALE, PLAN INVALID, BLOCKED, …) as an entry of its own."""
        self.entry([("Event", event), *fields], tail=tail)

    def commit(self, paths: list[str], message: str, blobs: dict | None = None, *,
               sha_in_entry: bool = False) -> str | None:
        """Commit exactly ``paths`` (those in ``blobs`` as hashed then); None when there was nothing
        to commit or git failed (remembered). ``sha_in_entry``: an entry names this commit by its
        sha (the architect's), so the tick's documents are never folded into it by an amend
        (afterwards.fold_into_tick_commit makes a commit of their own)."""
        for again in (True, False):
            try:
                sha = commit_paths(self.root, paths, message, author=self.config.author, blobs=blobs,
                                   build=commit_here, onto=self.commit_onto)
                self.tick_commit = None if sha_in_entry else sha
                return sha
            except HeadMoved as exc:
                if again and self.reclaim is not None:  # a worker's agent moved main in the instant
                    self.commit_onto = self.reclaim()  # after the crew's look: put back, once more
                    continue
                failure: MementoError = exc
            except MementoError as exc:
                if "nothing to commit" in str(exc):
                    return None
                failure = exc
            self.git_failed = self.git_failed or str(failure)  # the first failure is the one to fix
            cron_log(self.ws, f"git error: {failure}")
            return None
        return None

    def rolled_back(self, result) -> str:
        """What a rollback (rollback.RolledBack) says; its failure is remembered for the breaker
        (after the first: objects the guards could not put back make the rollback fail too)."""
        if result.error:
            self.git_failed = self.git_failed or result.error
            cron_log(self.ws, result.error)
        return result.said

    def rel_log(self) -> str | None:
        return self.ws.rel(self.log_path) if self.log_path.exists() else None


def next_number(total_ticks: int, state: TickState) -> int:
    """The next tick's number: after the plan's ``total_ticks`` and after the last numbered tick.

    A PLAN INVALID tick writes an entry but never edits the plan, so its number
    lives only in state.json (``last_tick``); the next tick must not reuse it.
    """
    return max(total_ticks, state.last_tick) + 1


def _unique(path: Path) -> Path:
    """``path``, or ``name-2.log``, ``name-3.log``… when two ticks start in the same second."""
    n = 1
    candidate = path
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
    return candidate


# ---------------------------------------------------------------- small file operations


def read_or_none(path: Path) -> bytes | None:
    """The file's bytes, or None when it cannot be read (gone, a folder, no permission) or is not
    a regular file: a FIFO, socket or device the agent put there is never opened to block on
    (SPEC §13), a symbolic link never followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None  # looked at before a file object is made: a folder's raised IsADirectoryError
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    except OSError:
        return None
    finally:
        os.close(fd)


def unlink(path: Path) -> None:
    """Remove ``path`` if it is there."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def append_log(path: Path, text: str) -> None:
    """Append Memento's own lines (``[memento] …``) to the tick log: never through a symbolic link
    the agent put there, nor through a hard link (the log is made a file of its own first, SPEC §13)."""
    with open_append(path, split=True) as fh:
        fh.write(text)


def tail(path: Path, start: int, limit: int = 64 * 1024) -> str:
    """What was written to ``path`` after byte ``start`` (at most the last ``limit`` bytes)."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            fh.seek(max(start, size - limit))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


@dataclass
class Attempt:
    """One task's run: the snapshot taken at the claim, and what the tick learns on the way."""

    task: Task
    snap: Snapshot
    continued: tuple[int, int] | None
    began: float
    beat: Heartbeat | None = None
    given_notes: list = field(default_factory=list)
    wrap: tuple[str, ...] = ()  # the sandbox's argv prefix the agent ran in; verify runs in it too
    agent: object = None  # limits.AgentOutcome: usage, rate limit, fallbacks
    blobs: dict = field(default_factory=dict)  # path -> (mode, blob id) verify passed on: what is committed
    review: object = None  # review.Outcome when the acceptance gate ran (SPEC §16)
    modes_reset: list = field(default_factory=list)  # what settle_modes removed, named in the entry
    question: tuple | None = None  # (text, first line, choices) when the worker asked (asking.py, SPEC §18)
    # A parallel worker's own steps (tick/workers.py, tick/crew_result.py); None: the serial ones of this module.
    guards: object = None  # like check_guards
    on_pass: object = None  # like record_pass
    on_fail: object = None  # like record_failure
