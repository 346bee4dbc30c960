"""A task whose verify the architect changed does not run until a person acknowledged it (SPEC §13
"Either way", §16), in both modes: the hostile architect (tests/agents/weakens_verify.py) makes a
blocked task's verify `true`, the worker (tests/agents/does_task.py) leaves the code as wrong as
before; judged in the plan, in git, on disk and in logs/cron.log."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from memento_core.tick.architect.run import CHANGED, run_architect
from tests.core.modes import MODES
from tests.core.tick.architect.test_run import agent, entries, git, make_ws

FIVE = ("- [ ] `T-5` Write five\n  - verify: `grep -q done five.txt`\n  - context_files: [five.txt]\n"
        "  - retries: 0\n\n")


def worker(ws, path: str) -> None:
    """A person points the worker at ``path`` (committed: the tick refuses a dirty tree)."""
    text = ws.config_path.read_text()
    start = text.index('command = """') + len('command = """')
    end = text.index('"""', start)
    ws.config_path.write_text(text[:start] + agent("does_task.py", path, "done") + text[end:])
    git(ws.root, "commit", "-qam", f"the worker writes {path}")


def commits_touching(ws, path: str) -> list[str]:
    return git(ws.root, "log", "--format=%s", "--", path).splitlines()


@pytest.mark.parametrize("mode", MODES)
def test_a_task_whose_verify_the_architect_changed_waits_for_the_persons_ack(tmp_path, mode):
    ws = make_ws(tmp_path, agent("weakens_verify.py", "T-1"), sandbox=mode)
    assert run_architect(ws).outcome == CHANGED
    t1 = parse_plan(ws.plan_path).task("T-1")
    assert (t1.status, t1.verify, t1.retries) == (" ", "true", 0)
    # A person adds T-5 after it, in the same phase: the other tasks run.
    ws.plan_path.write_text(ws.plan_path.read_text().replace("- [x] `T-2`", FIVE + "- [x] `T-2`"))
    git(ws.root, "commit", "-qam", "a person's T-5")
    worker(ws, "five.txt")
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-5", True)], outcome.message
    cron = (ws.root / "logs" / "cron.log").read_text()
    assert "T-1 not picked: the architect changed its verify (T-1: `grep -q DONE hello.txt` → `true`); it runs " \
           "once a person has checked it: `memento architect --ack T-1`" in cron
    # Only T-1 is left: the tick waits for the person, says so once, and runs no agent.
    worker(ws, "hello.txt")  # would write "done": verify `true` passes it, the original would not
    outcome = run_tick(ws.root)
    assert outcome.results == [] and outcome.exit_code == 1, outcome.message
    assert "WAITING FOR A PERSON" in outcome.message and "T-1" in outcome.message
    assert not (ws.root / "hello.txt").exists()
    t1 = parse_plan(ws.plan_path).task("T-1")
    assert (t1.status, t1.retries) == (" ", 0)
    assert commits_touching(ws, "hello.txt") == []
    waiting = [e for e in entries(ws) if "WAITING FOR A PERSON" in (e.field("Event") or "")]
    assert len(waiting) == 1 and "T-1" in waiting[0].field("Tasks")
    assert run_tick(ws.root).results == []
    assert len([e for e in entries(ws) if "WAITING FOR A PERSON" in (e.field("Event") or "")]) == 1
    shown = subprocess.run([sys.executable, "-m", "memento_core.cli", "status", str(ws.root)], capture_output=True,
                           text=True)
    assert "waiting for you: the architect changed the verify of T-1" in shown.stdout, shown.stdout
    assert "T-1 does not run until you check it" in shown.stdout and shown.returncode == 1
    # The pipeline's one word says whom it waits for, everywhere it is said (not RUNNING: no tick can go on).
    doc = json.loads(subprocess.run([sys.executable, "-m", "memento_core.cli", "status", "--json", str(ws.root)],
                                    capture_output=True, text=True).stdout)
    assert (doc["state"], doc["next"]["kind"], doc["eta_seconds"]) == ("WAITING", "waiting", None)
    listed = subprocess.run([sys.executable, "-m", "memento_core.cli", "tasks", str(ws.root)], capture_output=True,
                            text=True)
    assert "WAITING" in listed.stdout and listed.returncode == 1, listed.stdout
    # The person checked it: the next tick runs T-1 (under the verify the person accepted).
    done = subprocess.run([sys.executable, "-m", "memento_core.cli", "architect", "--ack", "T-1", str(ws.root)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-1", True)], outcome.message
    assert commits_touching(ws, "hello.txt")[0].startswith("memento: complete T-1")


def test_the_parallel_crew_passes_over_a_held_task_too(tmp_path, git_identity):
    """A `parallel: true` phase: the workers take the other tasks; the held one runs after the ack."""
    from memento_core.control import acknowledge_verify
    from memento_core.verify_changes import VerifyChange, record
    from tests.core.tick.test_workers import make_parallel_ws

    ws, _ = make_parallel_ws(tmp_path, ["T-1", "T-2", "T-3"], workers=2)
    record(ws, [VerifyChange("T-2", "test -f T-2.txt && false", "test -f T-2.txt", "2026-12-06T10:00:00Z")])
    outcome = run_tick(ws.root)
    assert sorted((r.task_id, r.passed) for r in outcome.results) == [("T-1", True), ("T-3", True)], outcome.message
    assert parse_plan(ws.plan_path).task("T-2").status == " " and not (ws.root / "T-2.txt").exists()
    assert commits_touching(ws, "T-2.txt") == []
    acknowledge_verify(ws, ["T-2"])
    outcome = run_tick(ws.root)
    assert [(r.task_id, r.passed) for r in outcome.results] == [("T-2", True)], outcome.message
