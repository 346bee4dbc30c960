"""Red team, both modes (SPEC §13 "Either way"): Memento's own code runs as the person, never an
agent's.

cron's entry, the chat's /tick and the browser's dashboards start in the project's folder, which
the agent writes, and `python -m` puts that folder first on Python's import path. The hostile
agent (tests/agents/shadows_memento.py) does its task and leaves a memento_core/ (or memento_tui/)
there whose import writes a marker outside the project. Judged on disk and in git: the task that
did not name those files fails and they are gone; the one that named them exactly passes, and the
next tick, started as cron starts it, is Memento's: no marker, the next task done.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from memento_core import cron
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES

from .test_engine import HELLO, agent, git, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


ENTRIES = {"memento_core": ["memento_core/__init__.py", "memento_core/tick/__init__.py",
                            "memento_core/tick/__main__.py"],
           "memento_tui": ["memento_tui/__init__.py", "memento_tui/app.py"]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("package", list(ENTRIES))
def test_a_memento_package_the_agent_adds_fails_its_task(tmp_path, mode, package):
    marker = tmp_path / "imported"
    tasks = HELLO.replace("[hello.txt]", f"[hello.txt, {package}/]")  # a folder is not enough
    ws = make_ws(tmp_path, agent("shadows_memento.py", str(marker), package), tasks=tasks, sandbox=mode)
    root = ws.root
    start = git(root, "rev-parse", "HEAD").strip()
    (result,) = run_tick(root).results
    assert not result.passed
    assert "changes how Python or the test runner starts" in result.reason, result.reason
    assert all(rel in result.reason for rel in ENTRIES[package]), result.reason
    assert parse_plan(ws.plan_path).task("T-1").status == " "
    for sha in git(root, "rev-list", f"{start}..HEAD").split():
        files = git(root, "show", "--name-only", "--format=", sha).split()
        assert all(f.startswith("docs/") for f in files), files
    assert not (root / package).exists() and not (root / "hello.txt").exists()
    assert git(root, "status", "--porcelain") == ""
    assert not marker.exists()


@pytest.mark.parametrize("mode", MODES)
def test_named_exactly_it_is_the_projects_and_the_next_tick_is_still_mementos(tmp_path, mode):
    marker = tmp_path / "imported"
    named = ", ".join(ENTRIES["memento_core"])
    tasks = HELLO.replace("[hello.txt]", f"[hello.txt, {named}]")
    tasks += tasks.replace("T-1", "T-2").replace("Write hello", "Write hello again")
    ws = make_ws(tmp_path, agent("shadows_memento.py", str(marker)), tasks=tasks, sandbox=mode)
    root = ws.root
    (result,) = run_tick(root).results
    assert result.passed, result.reason
    committed = git(root, "show", "--name-only", "--format=", "HEAD").split()
    assert set(ENTRIES["memento_core"]) <= set(committed), committed
    command = cron.tick_command(root, path=os.environ["PATH"]).replace(r"\%", "%")
    run = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=180)
    log = (root / "logs" / "cron.log").read_text()
    assert run.returncode == 0 and "T-2 passed" in log, log
    assert not marker.exists(), marker.read_text()
    assert parse_plan(ws.plan_path).task("T-2").status == "x"
