"""Parallel workers judged on the whole repository, not only their worktree (SPEC §13).

Unconfined, a worker's agent can write the main work tree and the other worktrees: its guards
find it (tick/crew_watch.py) and it is undone. In the sandbox the main work tree, Memento's
documents there and the other worktrees are read-only to it. Real ticks, real git, hostile
agents from tests/agents/ through the `command` preset; judged on disk, in git and in the logs.
"""

from __future__ import annotations

import pytest

from memento_core import status_log
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.scenarios.test_engine import AGENTS, PY
from tests.core.tick.test_workers import git, leftovers, make_parallel_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def use_agent(ws, command: str) -> None:
    text = ws.config_path.read_text()
    ws.config_path.write_text(text.replace(text.split('"""')[1], command))
    git(ws.root, "commit", "-qam", "the hostile agent")


def every_path(root) -> set[str]:
    """Every path in any commit reachable from any ref."""
    out = git(root, "log", "--all", "--format=", "--name-only")
    return {line for line in out.splitlines() if line}


def test_an_unconfined_worker_that_spoils_the_main_tree_and_a_fresh_worktree_fails_and_all_is_undone(tmp_path):
    ids = ["T-1", "T-2", "T-3"]
    ws, _ = make_parallel_ws(tmp_path, ids, workers=2)
    use_agent(ws, f"{PY} {AGENTS / 'worker_spoils_repo.py'} T-1 T-3 T-3")
    notes_before = ws.notes_path.read_bytes()
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    plan = parse_plan(ws.plan_path)
    t1 = plan.task("T-1")
    assert (t1.status, t1.retries) == (" ", 1)
    assert [plan.task(t).status for t in ("T-2", "T-3")] == ["x", "x"]
    (failed,) = [e for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1"]
    reason = failed.field("Reason")
    for said in ("wrote into the worktree of T-3: conftest.py (removed)",
                 "marked T-3 [x] in docs/MASTER_PLAN.md in the main work tree (put back)",
                 "wrote into docs/TICK_STATUS.md",
                 "wrote 1 note(s) by hand in docs/HUMAN_NOTES.md",
                 "added files to the main work tree: conftest.py (moved to logs/rollback/)"):
        assert said in reason, reason
    # Undone on disk and never committed: no planted file, no forged entry or note, no T-1 work.
    assert not (ws.root / "conftest.py").exists()
    assert "conftest.py" not in every_path(ws.root) and "T-1.txt" not in every_path(ws.root)
    assert ws.notes_path.read_bytes() == notes_before
    assert "Tick #9" not in ws.status_path.read_text()
    # T-3 ran in a worktree without the planted file, and its commit is its own.
    sha = git(ws.root, "log", "--format=%H", "--grep=complete T-3 ").split()[0]
    assert set(git(ws.root, "show", "--name-only", "--format=", sha).split()) == {
        "T-3.txt", "docs/MASTER_PLAN.md", "docs/TICK_STATUS.md"} | (
        {"docs/HUMAN_NOTES.md"} & set(git(ws.root, "show", "--name-only", "--format=", sha).split()))
    # What was undone is saved (a wrong judgment loses nothing).
    saved = {p.relative_to(ws.rollback_dir).parts[0].split("-", 3)[-1]: p for p in ws.rollback_dir.rglob("conftest.py")}
    assert any("worktree-T-3" in str(p) for p in saved.values()) and any("main-T-1" in str(p) for p in saved.values())
    assert leftovers(ws) == ([], [], 1)


def test_what_a_person_does_through_memento_while_workers_run_fails_no_worker(tmp_path):
    """A note (`memento note`) and a skip (`memento skip`) during the run change the main work tree's
    documents inside the workers' windows: they are a person's actions, kept, and judged as such."""
    import os
    import subprocess

    from tests.core.tick.test_workers import SRC, start_tick, started, wait_for

    ids = ["T-1", "T-2", "T-3"]
    ws, scratch = make_parallel_ws(tmp_path, ids, workers=2)
    (scratch / "hold").write_text("")
    tick = start_tick(ws)
    env = {**os.environ, "PYTHONPATH": SRC}
    try:
        wait_for(lambda: started(scratch, ["T-1", "T-2"]))
        for argv in (["note", "--project", str(ws.root), "--task", "T-1", "use the helper module"],
                     ["skip", "--project", str(ws.root), "--reason", "not needed", "T-3"]):
            done = subprocess.run([PY, "-m", "memento_core.cli", *argv], capture_output=True, text=True, env=env,
                                  timeout=60)
            assert done.returncode == 0, done
    finally:
        (scratch / "go").write_text("")
        out, err = tick.communicate(timeout=120)
    assert tick.returncode == 0, (out, err)
    plan = parse_plan(ws.plan_path)
    assert [(plan.task(t).status, plan.task(t).retries) for t in ids] == [("x", 0), ("x", 0), ("-", 0)]
    assert "use the helper module" in ws.notes_path.read_text()
    assert not [e for e in status_log.parse_status(ws.status_path) if e.status == "FAILED"]
    assert leftovers(ws) == ([], [], 1)


def test_a_change_is_judged_by_whose_window_holds_its_ctime(tmp_path):
    """crew_watch.MainWatch on a real workspace: a forged [x] in the plan is the judging worker's
    when its window holds the change (put back), left to the other worker's guards when only
    theirs does, nobody's but still put back when a sweep finds two windows holding it, and a
    person's (kept) when no window does."""
    import time

    from memento_core.tick.crew_watch import MainWatch, Window

    ws, _ = make_parallel_ws(tmp_path, ["T-1", "T-2", "T-3"], workers=2)
    watch = MainWatch(ws, "logs/status_archive/")
    clean = ws.plan_path.read_bytes()

    def forge() -> float:
        ws.plan_path.write_bytes(clean.replace(b"- [ ] `T-3`", b"- [x] `T-3`"))
        return ws.plan_path.stat().st_ctime

    past = Window(0.0, 1.0)  # a window long over
    at = forge()
    mine, theirs = Window(at - 1), Window(at - 1)
    assert watch.judge({"T-2": theirs}, "T-1") == {}  # T-1's window holds nothing: left to T-2
    assert ws.plan_path.read_bytes() != clean
    found = watch.judge({"T-1": mine, "T-2": theirs}, "T-1")
    assert found == {"T-1": ["marked T-3 [x] in docs/MASTER_PLAN.md in the main work tree (put back)"]}
    assert ws.plan_path.read_bytes() == clean
    forge()
    swept = watch.judge({"T-1": mine, "T-2": theirs})  # before a write of Memento's: two windows hold it
    assert list(swept) == [""] and ws.plan_path.read_bytes() == clean
    forge()
    assert watch.judge({"T-1": past, "T-2": past}, "T-1") == {}  # no agent ran: a person's edit
    assert ws.plan_path.read_bytes() != clean and watch.docs["docs/MASTER_PLAN.md"] == ws.plan_path.read_bytes()
    (ws.root / "draft.txt").write_text("a person's new file\n")
    assert watch.judge({"T-1": Window(time.time() + 60)}, "T-1") == {} and (ws.root / "draft.txt").exists()


# ---------------------------------------------------------------- another worker's worktree, while it verifies


@pytest.mark.parametrize("name", ["shared.txt", "T-3.txt"])
def test_a_write_into_another_workers_worktree_while_it_verifies_is_nobodys_work(tmp_path, name):
    """Unconfined, T-1's agent waits until T-3's own agent has ended and its verify runs, then writes
    a file T-3's context_files name into T-3's worktree. T-3 does not commit what it did not write:
    set aside, no retry counted; T-1 fails for it; no commit holds the write; the next tick passes both."""
    ids = ["T-1", "T-3"]
    ws, scratch = make_parallel_ws(tmp_path, ids, workers=2)
    done = scratch / "written"  # T-3's verify waits for the write (20 s at most), so it falls inside it
    wait = f"for i in $(seq 400); do test -f {done} && break; sleep 0.05; done; test -f T-3.txt"
    ws.plan_path.write_text(ws.plan_path.read_text().replace("verify: `test -f T-3.txt`", f"verify: `{wait}`"))
    use_agent(ws, f"{PY} {AGENTS / 'writes_other_worktree.py'} T-1 T-3 {name} {done}")
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    plan = parse_plan(ws.plan_path)
    assert [(plan.task(t).status, plan.task(t).retries) for t in ids] == [(" ", 1), (" ", 0)]
    said = {e.task_id: e for e in status_log.parse_status(ws.status_path)}
    assert f"wrote into the worktree of T-3: {name}" in said["T-1"].field("Reason"), said["T-1"].field("Reason")
    assert name in said["T-3"].field("Reason") and "SET ASIDE" in said["T-3"].field("Status"), \
        said["T-3"].field("Reason")
    assert "written by T-1" not in git(ws.root, "log", "--all", "-p")
    assert (ws.root / "shared.txt").read_text() == "base\nsecond line\n"
    assert leftovers(ws) == ([], [], 1)
    use_agent(ws, f"{PY} {AGENTS / 'parallel_task.py'} {tmp_path / 'scratch'} own 0")
    assert run_tick(ws.root).exit_code == 0
    assert [parse_plan(ws.plan_path).task(t).status for t in ids] == ["x", "x"]
