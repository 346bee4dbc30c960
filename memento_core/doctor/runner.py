"""The doctor's runner: every check in a fixed order, and the report over several workspaces."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from ..errors import EXIT_ERROR, EXIT_OK, MementoError
from ..runlog import utc_stamp
from ..workspace import Workspace
from .checks.agent_call import check_agent_call
from .checks.chat import check_chat
from .checks.config import check_agent, check_config
from .checks.continuity import (
    check_active_work,
    check_alignment,
    check_archive,
    check_exists,
    check_fresh,
    check_recovery_priority,
    check_template,
    check_unsurfaced,
)
from .checks.fleet import check_fleet_workers, check_remote
from .checks.forge import check_forge
from .checks.memory import check_memory_writes
from .checks.notify import check_notify
from .checks.pipeline import check_alert, check_breaker, check_tick_lock, check_work_tree
from .checks.plan import check_claims, check_meta_keys, check_notes, check_plan
from .checks.project_map import check_project_map
from .checks.sandbox import check_sandbox
from .checks.workers import check_worktrees
from .context import Context
from .findings import CRITICAL, OK, WARNING, CheckResult, Finding, exit_code

SCHEMA = "memento-doctor/1"

CHECKS: tuple[tuple[str, Callable[[Context], CheckResult]], ...] = (
    ("checkpoint-exists", check_exists),
    ("checkpoint-fresh", check_fresh),
    ("checkpoint-template", check_template),
    ("active-work", check_active_work),
    ("unsurfaced-results", check_unsurfaced),
    ("archive-consistency", check_archive),
    ("recovery-priority", check_recovery_priority),
    ("plan-alignment", check_alignment),
    ("plan-valid", check_plan),
    ("meta-keys", check_meta_keys),
    ("stale-claims", check_claims),
    ("unread-notes", check_notes),
    ("project-map-paths", check_project_map),
    ("circuit-breaker", check_breaker),
    ("alert", check_alert),
    ("work-tree", check_work_tree),
    ("tick-lock", check_tick_lock),
    ("config", check_config),
    ("agent-binary", check_agent),
    ("sandbox", check_sandbox),
    ("memory-writes", check_memory_writes),
    ("notify", check_notify),
    ("chat", check_chat),
    ("forge", check_forge),
    ("fleet-remote", check_remote),
    ("fleet-workers", check_fleet_workers),
    ("worktrees", check_worktrees),
)


def check_workspace(ws: Workspace, *, now: datetime | None = None, agent: bool = False) -> list[Finding]:
    """Every check on ``ws``, in a fixed order; reads files only. ``agent``: and, last, one real
    call of the agent through the sandbox (``--agent``, checks/agent_call.py)."""
    context = Context(ws, now or datetime.now(UTC))
    findings: list[Finding] = []
    for name, check in [*CHECKS, *([("agent-call", check_agent_call)] if agent else [])]:
        try:
            result = check(context)
        except Exception as exc:  # noqa: BLE001 - one broken check must not hide the others
            result = [Finding(WARNING, name, f"the check could not run: {type(exc).__name__}: {exc}")]
        if isinstance(result, str):
            findings.append(Finding(OK, name, result))
        elif result:
            findings.extend(result)
    return findings


def run_workspaces(dirs: list[str], *, agent: bool = False) -> list[dict]:
    """Check each directory; one report per workspace: {workspace, findings, exit_code}.
    ``agent``: each also runs its agent once (``memento doctor --agent``)."""
    reports = []
    for d in dirs or [os.getcwd()]:
        try:
            if not Path(d).is_dir():
                raise MementoError(f"{d}: no such directory")
            ws = Workspace.find(d)
        except MementoError as exc:
            findings = [Finding(CRITICAL, "workspace", str(exc))]
            reports.append({"workspace": str(Path(d).resolve()), "findings": findings,
                            "exit_code": exit_code(findings)})
            continue
        findings = check_workspace(ws, agent=agent)
        reports.append({"workspace": str(ws.root), "findings": findings, "exit_code": exit_code(findings)})
    return reports


def overall_exit(reports: list[dict], fail_on: str = "warning") -> int:
    """The worst exit code; with ``fail_on="critical"`` warnings alone exit 0."""
    worst = max((r["exit_code"] for r in reports), default=EXIT_OK)
    if fail_on == "critical" and worst < EXIT_ERROR:
        return EXIT_OK
    return worst


def document(reports: list[dict], fail_on: str = "warning") -> dict:
    """The --json document (its schema is documented in docs/doctor.md)."""
    return {
        "schema": SCHEMA,
        "checked_at": utc_stamp(),
        "exit_code": overall_exit(reports, fail_on),
        "workspaces": [
            {"workspace": r["workspace"], "exit_code": r["exit_code"],
             "findings": [f.to_dict() for f in r["findings"]]}
            for r in reports
        ],
    }
