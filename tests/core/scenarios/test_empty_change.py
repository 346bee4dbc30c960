"""An empty change is not done work (SPEC §4 step 11), on a real project whose verify is its whole suite.

The project's own suite passes before any work (as a real library's does), so a worker that
exits 0 and writes nothing used to get its task `[x]` with an empty commit. Judged on the
plan, the commits and the exit codes of real ticks and of `memento lint`.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES

from .test_engine import PY, agent, git, make_ws

SUITE = f"{PY} -m pytest -q"
CALC = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"


def task(extra: str = "") -> str:
    return (f"- [ ] `T-1` [MODULE:calc] Add mul\n  - verify: `{SUITE}`\n  - context_files: [src/, tests/]\n"
            f"  - retries: 0\n{extra}")


def project(tmp_path, command: str, mode: str = "none", extra: str = ""):
    ws = make_ws(tmp_path, command, tasks=task(extra), sandbox=mode, max_retries=2)
    root = ws.root
    (root / "src").mkdir()
    (root / "src" / "calc.py").write_text(CALC)
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(TEST)
    (root / "pytest.ini").write_text("[pytest]\npythonpath = src\n")
    with (root / ".gitignore").open("a") as fh:
        fh.write("__pycache__/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "a library whose suite passes")
    assert subprocess.run(SUITE.split(), cwd=root, capture_output=True).returncode == 0  # before any work
    return ws


def task_commits(root) -> list[str]:
    return [s for s in git(root, "log", "--format=%s").splitlines() if s.startswith("memento: complete")]


@pytest.mark.parametrize("mode", MODES)
def test_a_worker_that_claims_success_and_writes_nothing_fails(tmp_path, mode):
    ws = project(tmp_path, agent("claims_done.py"), mode)
    root = ws.root
    head = git(root, "rev-parse", "HEAD").strip()
    outcome = run_tick(root)
    (result,) = outcome.results
    assert not result.passed
    assert result.reason.startswith("nothing changed: the attempt left every file as it was"), result.reason
    assert "memento skip T-1" in result.reason and "`- changes: none`" in result.reason
    assert task_commits(root) == []
    (t,) = parse_plan(ws.plan_path).tasks
    assert (t.status, t.retries) == (" ", 1)  # a retry counted, like any failure
    log = next((root / "logs").glob("tick_*.log")).read_text()
    assert "[memento] verify T-1" not in log  # refused before verify: the suite would have passed
    changed = git(root, "diff", "--name-only", head, "HEAD").split()
    assert all(p.startswith("docs/") for p in changed), changed
    # The second attempt the same: blocked at max_retries, never [x].
    run_tick(root)
    assert parse_plan(ws.plan_path).tasks[0].status == "!"
    assert task_commits(root) == []


@pytest.mark.parametrize("mode", MODES)
def test_a_check_only_task_passes_on_its_verify_alone(tmp_path, mode):
    ws = project(tmp_path, agent("claims_done.py"), mode, extra="  - changes: none\n")
    root = ws.root
    (result,) = run_tick(root).results
    assert result.passed, result.reason
    assert task_commits(root) == ["memento: complete T-1 Add mul"]
    assert all(p.startswith("docs/") for p in git(root, "show", "--name-only", "--format=", "HEAD").split())


def test_a_real_change_still_passes(tmp_path):
    mul = CALC + "\n\ndef mul(a, b):\n    return a * b\n"
    ws = project(tmp_path, agent("does_task.py", "src/calc.py", repr(mul.rstrip("\n")).replace("\\n", "\n")))
    (result,) = run_tick(ws.root).results
    assert result.passed, result.reason
    assert "src/calc.py" in git(ws.root, "show", "--name-only", "--format=", "HEAD").split()


def test_lint_says_what_changes_means_and_where_it_is_wrong(tmp_path):
    ws = project(tmp_path, "true", extra="  - changes: maybe\n")
    proc = subprocess.run([sys.executable, "-m", "memento_core.cli", "lint", str(ws.root)], capture_output=True,
                          text=True)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    line = ws.plan_path.read_text().splitlines().index("  - changes: maybe") + 1
    assert f"docs/MASTER_PLAN.md:{line}: T-1 changes: `maybe` is not understood: `- changes: none` says" in (
        proc.stdout + proc.stderr)
    ws.plan_path.write_text(ws.plan_path.read_text().replace("changes: maybe", "changes: none"))
    clean = subprocess.run([sys.executable, "-m", "memento_core.cli", "lint", str(ws.root)], capture_output=True,
                           text=True)
    assert "changes" not in clean.stdout + clean.stderr  # a known field, understood
