"""Drafting the plan (SPEC §17): `memento plan draft BRIEF` turns what a person wants into a checked plan.

The architect agent (``[architect]`` settings, else ``[agent]``), confined like the worker, under
the tick lock, gets the brief, the current plan and map and the repository's file list; it may
write only docs/MASTER_PLAN.md and docs/PROJECT_MAP.md. Memento then checks the draft (it lints,
every new task has verify and context_files, ids unique, phases known, depends acyclic, existing
tasks unchanged, no task born [x], nothing else changed), runs each new task's verify once on the
current tree (red first), and keeps it as one commit ``memento: plan drafted from BRIEF`` with the
plan left ``tick_mode: paused``, or puts everything back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...errors import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK

KEPT, PROPOSED, REFUSED, ERROR = "kept", "proposed", "refused", "error"


@dataclass(frozen=True)
class RedCheck:
    """One new task's verify run on the current tree (red first): a pass proves nothing."""

    task_id: str
    exit_code: int | None  # None: it timed out or could not start
    passed: bool
    detail: str


@dataclass
class DraftResult:
    """How one draft ended: kept, proposed (a dry run: nothing changed), refused (with reasons) or an error."""

    outcome: str  # KEPT | PROPOSED | REFUSED | ERROR
    reasons: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    new_ids: tuple[str, ...] = ()
    red: tuple[RedCheck, ...] = ()
    diff: str = ""
    commit: str | None = None
    log: str | None = None
    brief_name: str = "BRIEF"
    # A dry run's proposal (apply_draft keeps exactly it): the documents before and after, and HEAD.
    proposed: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    base: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    head: str | None = None

    def exit_code(self) -> int:
        """0 kept or proposed, 1 refused (the checks said no), 2 it could not run."""
        return {KEPT: EXIT_OK, PROPOSED: EXIT_OK, REFUSED: EXIT_ATTENTION}.get(self.outcome, EXIT_ERROR)

    def to_json(self) -> dict:
        return {"outcome": self.outcome, "new_ids": list(self.new_ids), "warnings": list(self.warnings),
                "reasons": list(self.reasons),
                "red": [{"task_id": r.task_id, "exit_code": r.exit_code, "passed": r.passed, "detail": r.detail}
                        for r in self.red],
                "diff": self.diff, "commit": self.commit, "log": self.log, "exit_code": self.exit_code()}


def draft_plan(ws, brief: str, *, brief_name: str = "BRIEF", dry_run: bool = False, strict: bool = False,
               on_progress: Callable[[str], None] | None = None) -> DraftResult:
    """Run the drafter once under the tick lock, check its draft, keep it (or propose it: ``dry_run``)."""
    raise NotImplementedError


def apply_draft(ws, proposal: DraftResult) -> DraftResult:
    """Keep exactly a dry run's proposal: re-checked under the tick lock, the agent not run again."""
    raise NotImplementedError
