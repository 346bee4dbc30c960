"""checks/plan.py: plan errors, unknown Meta keys, stale claims and unread notes, each case its exact
lines and exit code (SPEC §8)."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from memento_core.notes import add_note
from memento_core.state import Claim, this_host, write_claim
from tests.core.doctor.doctorhelp import edit, judge, line_of


def _task_error(ws):
    edit(ws.plan_path, "## Phase 3: Polish\n", "## Phase 3: Polish\n- [ ] `T-399` [MODULE:x] No verify here\n"
         "  - context_files: [x.py]\n")
    line = line_of(ws.plan_path, "T-399")
    return [f"[WARNING] docs/MASTER_PLAN.md:{line}: T-399 has no verify command"], 1


def _plan_error(ws):
    text = ws.plan_path.read_text()
    block = text[text.index("- [ ] `T-303`"):text.index("- [ ] `T-304`")]
    edit(ws.plan_path, "- [ ] `T-304`", block + "- [ ] `T-304`")
    first = line_of(ws.plan_path, "`T-303`")
    second = first + block.count("\n")
    return [f"[CRITICAL] docs/MASTER_PLAN.md:{second}: T-303 duplicate task id (first defined on line {first})"], 2


def _meta_key(ws):
    edit(ws.plan_path, "- max_retries: 3\n", "- max_retries: 3\n- colour: blue\n")
    line = line_of(ws.plan_path, "colour")
    return [f"[WARNING] docs/MASTER_PLAN.md:{line}: unknown Meta key `colour` (kept as written; "
            "Memento does not use it)"], 1


def _stale_claim(ws):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    edit(ws.plan_path, "- [ ] `T-102`", "- [~] `T-102`")
    write_claim(ws, Claim(task="T-102", pid=gone.pid, host=this_host(), started="2026-01-01T00:00:00Z",
                          heartbeat=datetime.now(UTC).timestamp(), tick=2, base=None))
    line = line_of(ws.plan_path, "`T-102`")
    return [f"[WARNING] docs/MASTER_PLAN.md:{line}: T-102 is [~] but its worker is gone (worker pid {gone.pid} "
            "is gone); the next tick resets it to [ ]"], 1


def _old_notes(ws):
    old = datetime.now(UTC) - timedelta(days=3)
    add_note(ws.notes_path, "Prefer small functions.", target="global", now=old)
    add_note(ws.notes_path, "Use Shor's algorithm.", target="T-304", now=old)
    add_note(ws.notes_path, "Name the package calc.", target="T-101", now=old)
    stamp = old.strftime("%Y-%m-%dT%H:%M:%S")
    lines = [line_of(ws.notes_path, t) - 1 for t in ("Prefer small", "Shor's", "Name the package")]
    return [
        f"[WARNING] docs/HUMAN_NOTES.md:{lines[0]}: note for global from {stamp} is unread after more than a day "
        "(no worker has taken it)",
        f"[INFO] docs/HUMAN_NOTES.md:{lines[1]}: note for T-304 from {stamp} is unread after more than a day "
        "(T-304 has not run yet)",
        f"[WARNING] docs/HUMAN_NOTES.md:{lines[2]}: note for T-101 from {stamp} is unread after more than a day "
        "(T-101 is done, so no worker will read it)",
    ], 1


CASES = {
    "task error": _task_error,
    "plan error": _plan_error,
    "unknown meta key": _meta_key,
    "stale claim": _stale_claim,
    "old unread notes": _old_notes,
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_check_reports_its_exact_line_and_exit_code(ws, case, capsys):
    judge(ws, *CASES[case](ws), capsys)
