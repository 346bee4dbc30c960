"""The workspace files the doctor's checks read, each at most once and only when a check asks."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

from .. import checkpoint as cp
from .. import status_log
from ..config.load import load_config
from ..config.model import Config
from ..errors import MementoError
from ..plan.model import Plan
from ..plan.scan import parse_plan
from ..runlog import utc_stamp
from ..state import TickState
from ..workspace import Workspace


def stamp(ts: float) -> str:
    """A POSIX time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return utc_stamp(datetime.fromtimestamp(ts, UTC))


def parse_stamp(text: str | None) -> float | None:
    """An ISO stamp as a POSIX time (naive means UTC); None when missing or unreadable."""
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()


def mtime(path: Path) -> float | None:
    """When ``path`` was last modified; None when it cannot be stat'ed."""
    try:
        return path.stat().st_mtime
    except OSError:
        return None


class Context:
    """The workspace's files, each read at most once and only when a check asks."""

    def __init__(self, ws: Workspace, now: datetime):
        self.ws = ws
        self.now = now

    def rel(self, path: Path) -> str:
        return self.ws.rel(path)

    @cached_property
    def plan_problem(self) -> MementoError | None:
        return self._plan_and_problem[1]

    @cached_property
    def plan(self) -> Plan | None:
        return self._plan_and_problem[0]

    @cached_property
    def _plan_and_problem(self) -> tuple[Plan | None, MementoError | None]:
        if not self.ws.plan_path.exists():
            return None, MementoError(f"{self.rel(self.ws.plan_path)} does not exist")
        try:
            return parse_plan(self.ws.plan_path, display=self.rel(self.ws.plan_path)), None
        except (MementoError, OSError) as exc:
            return None, exc if isinstance(exc, MementoError) else MementoError(str(exc))

    @cached_property
    def usable_plan(self) -> Plan | None:
        """The plan when it can run (no plan-level errors)."""
        plan = self.plan
        return plan if plan is not None and not plan.plan_errors else None

    @cached_property
    def state(self) -> TickState:
        return TickState.load(self.ws)

    @cached_property
    def config_and_error(self) -> tuple[Config | None, MementoError | None]:
        try:
            return load_config(self.ws.config_path), None
        except MementoError as exc:
            return None, exc

    @cached_property
    def checkpoint_text(self) -> str | None:
        try:
            return self.ws.checkpoint_path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    @cached_property
    def checkpoint(self) -> cp.Checkpoint | None:
        text = self.checkpoint_text
        return cp.parse_checkpoint(text) if text is not None else None

    @cached_property
    def entries(self):
        try:
            return status_log.parse_status(self.ws.status_path)
        except (MementoError, OSError):
            return []

    @cached_property
    def last_task_entry(self):
        return next((e for e in reversed(self.entries) if e.task_id and not e.is_event), None)

    @cached_property
    def newest_log(self) -> tuple[Path, float] | None:
        newest = None
        try:
            logs = list(self.ws.logs_dir.glob("tick_*.log"))
        except OSError:
            logs = []
        for log in logs:
            m = mtime(log)
            if m is not None and (newest is None or m > newest[1]):
                newest = (log, m)
        return newest

    def line_of(self, path: Path, needle: str) -> int | None:
        """The first line of ``path`` containing ``needle`` (for messages only)."""
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, 1):
                    if needle in line:
                        return number
        except OSError:
            pass
        return None
