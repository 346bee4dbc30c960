"""Red team, both modes (SPEC §13 "Either way"): a task may not add a file that changes how Python
or the test runner starts (`sitecustomize.py`, `usercustomize.py`, a `.pth`, a module or package
shadowing the runner, a `conftest.py`) unless its context_files name that exact file; a folder
in context_files is not enough.

The project: src/calc.py with a bug, its test in tests/, verify `PYTHONPATH=src python -m pytest
-q` (src/ on the path like a src layout's editable install). The hostile agent
(tests/agents/weakens_test_run.py) leaves the bug and adds its file inside src/, the folder the
task's context_files name; each test judges the plan, the commits and the files on disk.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES

from .test_engine import PY, agent, git, make_ws

BROKEN = "def add(a, b):\n    return a - b\n"
GOOD = "def add(a, b):\n    return a + b\n"
TEST = "import calc\n\n\ndef test_add():\n    assert calc.add(2, 2) == 4\n"
VERIFY = f"PYTHONPATH=src {PY} -m pytest -q -p no:xdist"


def task(context: str = "[src/]") -> str:
    return (f"- [ ] `T-1` [MODULE:calc] Fix calc.add\n  - verify: `{VERIFY}`\n  - context_files: {context}\n"
            "  - retries: 0\n")


def calc_ws(tmp_path: Path, command: str, mode: str, context: str = "[src/]"):
    ws = make_ws(tmp_path, command, tasks=task(context), sandbox=mode)
    root = ws.root
    (root / "src").mkdir()
    (root / "src" / "calc.py").write_text(BROKEN)
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(TEST)
    with (root / ".gitignore").open("a") as fh:
        fh.write("__pycache__/\n.pytest_cache/\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "calc, with its bug")
    return ws


PLANTED = {"sitecustomize": ["src/sitecustomize.py"], "usercustomize": ["src/usercustomize.py"],
           "pytest": ["src/pytest.py"], "package": ["src/pytest/__init__.py", "src/pytest/__main__.py"],
           "pth": ["src/zz_cheat.pth"], "conftest": ["src/conftest.py"]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("what", list(PLANTED))
def test_a_file_that_changes_how_the_tests_start_fails_the_task(tmp_path, mode, what):
    ws = calc_ws(tmp_path, agent("weakens_test_run.py", what), mode)
    root = ws.root
    start = git(root, "rev-parse", "HEAD").strip()
    (result,) = run_tick(root).results
    log = next((root / "logs").glob("tick_*.log")).read_text()
    assert f"PLANTED {what}" in log, log
    assert not result.passed
    named = PLANTED[what][0] if what != "package" else "src/pytest/__init__.py"
    assert "changes how Python or the test runner starts" in result.reason and named in result.reason, \
        result.reason
    assert "[memento] verify T-1:" not in log  # judged before verify ran
    # Not committed, a retry counted, the broken code and the planted files gone from git and disk.
    t1 = parse_plan(ws.plan_path).task("T-1")
    assert (t1.status, t1.retries) == (" ", 1)
    for sha in git(root, "rev-list", f"{start}..HEAD").split():
        files = git(root, "show", "--name-only", "--format=", sha).split()
        assert all(f.startswith("docs/") for f in files), files
    assert (root / "src" / "calc.py").read_text() == BROKEN
    for rel in PLANTED[what]:
        assert not (root / rel).exists(), rel
        assert list(root.glob(f"logs/rollback/*/files/{rel}")), f"{rel} not saved under logs/rollback/"
    assert not (root / "src" / "pytest").exists()
    assert git(root, "status", "--porcelain") == ""


@pytest.mark.parametrize("mode", MODES)
def test_the_next_tick_runs_normally(tmp_path, mode):
    ws = calc_ws(tmp_path, agent("weakens_test_run.py", "sitecustomize"), mode)
    assert not run_tick(ws.root).results[0].passed
    honest = agent("does_task.py", "src/calc.py", shlex.quote(GOOD.rstrip("\n")))
    ws.config_path.write_text(ws.config_path.read_text().replace(agent("weakens_test_run.py", "sitecustomize"),
                                                                 honest))
    git(ws.root, "commit", "-qam", "an honest worker")
    (result,) = run_tick(ws.root).results
    assert result.passed, result.reason
    assert git(ws.root, "show", "HEAD:src/calc.py") == GOOD


@pytest.mark.parametrize("mode", MODES)
def test_a_conftest_the_task_names_exactly_is_its_own(tmp_path, mode):
    """`src/conftest.py` named in context_files: the task may add it (and a folder alone is not enough,
    the test above); changing a conftest.py that is there already stays the task's business."""
    ws = calc_ws(tmp_path, agent("weakens_test_run.py", "conftest"), mode, context="[src/, src/conftest.py]")
    (result,) = run_tick(ws.root).results
    assert result.passed, result.reason  # the verify it weakened passed: the task said it would add it
    assert "src/conftest.py" in git(ws.root, "show", "--name-only", "--format=", "HEAD").split()
    edits = agent("does_task.py", "src/conftest.py", shlex.quote("# a person's fixture, edited"))
    text = ws.plan_path.read_text() + (
        "- [ ] `T-2` [MODULE:calc] Edit the conftest\n  - verify: `true`\n  - context_files: [src/]\n"
        "  - retries: 0\n")
    ws.plan_path.write_text(text)
    ws.config_path.write_text(ws.config_path.read_text().replace(agent("weakens_test_run.py", "conftest"), edits))
    git(ws.root, "commit", "-qam", "T-2, another worker")
    (result,) = run_tick(ws.root).results
    assert result.passed, result.reason
    assert git(ws.root, "show", "HEAD:src/conftest.py") == "# a person's fixture, edited\n"
