"""`.memento/state.json` and the claim files: the little runtime state a tick keeps.

State is small and bounded (counters, signatures of what was last reported,
the breaker) so a tick's cost does not grow with history. Claims are one JSON
file per in-progress task: who runs it (pid, host), since when, its heartbeat,
the agent's process group, and the snapshot a rollback needs.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import owned
from .errors import MementoError
from .lines import read_text_file
from .locks import atomic_write_text
from .workspace import Workspace

HEARTBEAT_SECONDS = float(os.environ.get("MEMENTO_HEARTBEAT_SECONDS", "30"))


@dataclass
class TickState:
    """What the tick remembers between ticks (never anything a file already says)."""

    consecutive_failed_ticks: int = 0
    breaker_reason: str = ""  # non-empty while tripped (cleared by `memento resume`)
    breaker_at: str = ""
    last_event: str = ""  # signature of the last pipeline event written (complete/blocked/…)
    plan_invalid_signature: str = ""
    dirty_signature: str = ""
    last_tick: int = 0
    last_tick_started: str = ""
    last_tick_finished: str = ""
    last_tick_exit: int = 0
    last_log: str = ""
    unsurfaced: list[dict] = field(default_factory=list)  # results nobody acknowledged (≤ 20)
    # Rate limits (tick/limits.py): ticks skip until rate_limited_until (UTC stamp);
    # preset_limits says until when each preset was refused; the streak doubles the backoff.
    rate_limited_until: str = ""
    rate_limited_preset: str = ""
    preset_limits: dict[str, str] = field(default_factory=dict)
    rate_limit_streak: int = 0
    rate_limited_since: str = ""  # the first refusal of this streak (notified after 2 h, SPEC §14)
    task_limit_streaks: dict[str, int] = field(default_factory=dict)  # rate-limited attempts in a row, by task
    budget_reached_day: str = ""  # the UTC day the BUDGET REACHED entry was written
    # A subscription's usage window at [budget] window_pause_at (SPEC §20): no attempt starts until
    # window_paused_until; what it was ("95% (5-hour)"), whose; the until its entry was written for.
    window_paused_until: str = ""
    window_paused_what: str = ""
    window_paused_preset: str = ""
    window_noted_until: str = ""
    # The architect (tick/architect/, SPEC §16): automatic runs on architect_day (UTC), the
    # blocked state it last ran for (it never runs twice for one), the alert it left, its last run.
    architect_day: str = ""
    architect_runs: int = 0
    architect_signature: str = ""
    architect_alert: str = ""
    architect_last: str = ""
    stale_tick: str = ""  # a stopped tick taken over (tick/lock.py): alerted until `memento ack`

    @classmethod
    def load(cls, ws: Workspace) -> TickState:
        try:
            data = json.loads(read_text_file(ws.state_path))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict):
            return cls()
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        try:
            return cls(**known)
        except TypeError:
            return cls()

    def architect_runs_today(self, today: str | None = None) -> int:
        """The architect's automatic runs on the UTC day ``today`` (default: now), SPEC §16."""
        from datetime import UTC, datetime

        today = today or datetime.now(UTC).strftime("%Y-%m-%d")
        return self.architect_runs if self.architect_day == today else 0

    def save(self, ws: Workspace) -> None:
        self.unsurfaced = self.unsurfaced[-20:]
        atomic_write_text(ws.state_path, json.dumps(asdict(self), indent=2, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------- claims


@dataclass
class Claim:
    """A task this host's tick is working on (state.json): who, since when, its last heartbeat."""

    task: str
    pid: int
    host: str
    started: str
    heartbeat: float  # epoch seconds
    tick: int
    base: str | None  # HEAD at the snapshot
    stage: str = "claimed"  # claimed | running | verifying | committing
    pgid: int | None = None
    untracked: list[str] = field(default_factory=list)  # untracked files at the snapshot
    commit_paths: list[str] = field(default_factory=list)  # set when stage == committing
    commit_message: str = ""
    commit_hashes: dict[str, str] = field(default_factory=dict)  # the verified files' blobs
    entry: str = ""  # the SUCCESS entry, so a crash before it is appended loses nothing
    worktree: str = ""  # a parallel worker's worktree (SPEC §12), relative to the project
    log: str = ""  # the attempt's log, relative to the project (a parallel worker's own)


def claim_path(ws: Workspace, task_id: str) -> Path:
    return ws.claims_dir / f"{task_id}.json"


def write_claim(ws: Workspace, claim: Claim, *, sync: bool = True) -> None:
    """Through owned.py: an agent's edit of a claim is found and put right (SPEC §13).
    ``sync=False`` for a heartbeat's rewrite: the claim itself was made durable when taken, and
    a crash that loses a later beat or stage only makes the claim look older (which is true)."""
    owned.write(claim_path(ws, claim.task), json.dumps(asdict(claim), ensure_ascii=False).encode("utf-8"),
                sync=sync)


def read_claim(ws: Workspace, task_id: str) -> Claim | None:
    """The task's claim, or None when there is none or its file is not a claim (a tick never crashes on one)."""
    try:
        data = json.loads(read_text_file(claim_path(ws, task_id)))
        if not isinstance(data, dict):
            return None  # valid JSON, but not an object: as unreadable as a torn file
        return Claim(**{k: v for k, v in data.items() if k in Claim.__dataclass_fields__})
    except (OSError, ValueError, TypeError):
        return None


def remove_claim(ws: Workspace, task_id: str) -> None:
    owned.remove(claim_path(ws, task_id))


def this_host() -> str:
    return socket.gethostname()


def pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is not a worker: check /proc where there is one.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def claim_is_stale(claim: Claim | None, stale_after: float, now: float | None = None) -> str | None:
    """Why the claim's worker is gone, or None while it is alive and heart-beating."""
    if claim is None:
        return "no claim file"
    now = time.time() if now is None else now
    if claim.host == this_host() and not pid_alive(claim.pid):
        return f"worker pid {claim.pid} is gone"
    if now - claim.heartbeat > stale_after:
        return f"no heartbeat for {int(now - claim.heartbeat)}s"
    return None


class Heartbeat:
    """A daemon thread that refreshes a claim's heartbeat until stopped."""

    def __init__(self, ws: Workspace, claim: Claim, every: float = HEARTBEAT_SECONDS):
        self.ws, self.claim, self.every = ws, claim, every
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{claim.task}", daemon=True)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def update(self, **changes) -> None:
        """Change claim fields and write it at once (the main thread's progress marks). A beat or
        a new stage alone is not made durable (a crash that loses it only makes the claim look
        older); what the commit of a passed attempt is made of (its paths, hashes, entry) is."""
        with self._lock:
            if self._stop.is_set():
                return  # the claim is being removed: never write it back
            for key, value in changes.items():
                setattr(self.claim, key, value)
            self.claim.heartbeat = time.time()
            write_claim(self.ws, self.claim, sync=bool(changes.keys() - {"stage"}))

    def stop(self) -> None:
        """No more writes of the claim (call before removing it)."""
        with self._lock:
            self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.update()
            except (OSError, MementoError):
                pass  # a full disk (or a claim made a symlink) must not kill the tick from a side thread
