"""A killed parallel tick (SPEC §12, §13): what the next tick makes of its workers.

Real subprocess ticks killed with SIGKILL at named crash points
(memento_core/crashpoints.py) or by the test, the fake agents
tests/agents/parallel_task.py and parallel_wip.py through the `command`
preset. Judged in git (the commits on main), in the plan, the status log,
logs/rollback/ and the tick's state.
"""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from memento_core import status_log
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.tick.__main__ import run_tick
from memento_core.tick.context import TickContext
from memento_core.tick.recovery import recover_stale_claims
from memento_core.tick.stale_workers import stop_stale_workers
from tests.core.scenarios.test_engine import AGENTS, PY, _alive, git
from tests.core.tick.test_workers import (
    agent_pid,
    kill_tick_once_workers_run,
    leftovers,
    make_parallel_ws,
    started,
    subjects,
    wait_for,
)


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def crashed_tick(ws, point: str) -> int:
    """One tick in a subprocess that SIGKILLs itself at ``point``: its return code."""
    env = {**os.environ, "MEMENTO_CRASH_AT": point}
    proc = subprocess.run([PY, "-m", "memento_core.tick", "--project", str(ws.root)], env=env,
                          capture_output=True, timeout=120)
    return proc.returncode


def completes(ws, tid: str) -> int:
    return sum(1 for s in subjects(ws) if s.startswith(f"memento: complete {tid} "))


@pytest.mark.parametrize("point", ["tick:before-commit", "tick:after-commit"])
def test_a_parallel_worker_killed_while_committing_is_committed_once_by_the_next_tick(tmp_path, point):
    ids = ["T-1", "T-2"]
    ws, _ = make_parallel_ws(tmp_path, ids, workers=2)
    assert crashed_tick(ws, point) == -signal.SIGKILL
    plan = parse_plan(ws.plan_path)
    done = [t.id for t in plan.tasks if t.status == "x"]
    assert len(done) == 1  # the worker that reached its commit: verified, marked [x]
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    plan = parse_plan(ws.plan_path)
    assert [t.status for t in plan.tasks] == ["x", "x"]
    assert [completes(ws, t) for t in ids] == [1, 1]  # never run twice, never thrown away
    assert plan.task(done[0]).retries == 0  # its verified work was finished, not reset
    assert git(ws.root, "ls-tree", "--name-only", "HEAD", f"{done[0]}.txt").strip() == f"{done[0]}.txt"
    entries = status_log.parse_status(ws.status_path)
    assert [e.status for e in entries].count("SUCCESS") == 2
    assert not [e for e in entries if e.status == "STALE" and e.task_id == done[0]]
    assert "(pending" not in ws.status_path.read_text()
    dirty = {line[3:] for line in git(ws.root, "status", "--porcelain", "--untracked-files=no").splitlines()}
    assert dirty <= {"docs/CURRENT_STATE.md", "docs/TICK_STATUS.md"}  # the tick's housekeeping
    assert leftovers(ws) == ([], [], 1)
    assert not list((ws.root / ".memento" / "records").glob("*.json"))


def test_a_killed_parallel_tick_saves_its_workers_work_and_counts_one_failed_tick(tmp_path):
    ids = ["T-1", "T-2", "T-3"]
    ws, scratch = make_parallel_ws(tmp_path, ids, workers=3)
    toml = (ws.root / "memento.toml").read_text()
    old = toml.split('command = """')[1].split('"""')[0]
    (ws.root / "memento.toml").write_text(toml.replace(old, f"{PY} {AGENTS / 'parallel_wip.py'} {scratch}"))
    git(ws.root, "commit", "-qam", "the wip agent")
    kill_tick_once_workers_run(ws, scratch, ids)
    pids = [agent_pid(scratch, t) for t in ids]
    before = TickState.load(ws).consecutive_failed_ticks
    ctx = TickContext(ws)
    plan = parse_plan(ws.plan_path)
    stop_stale_workers(ctx, plan)
    recover_stale_claims(ctx, plan)
    assert not any(_alive(p) for p in pids)
    assert TickState.load(ws).consecutive_failed_ticks == before + 1  # one dead tick, not three
    assert [(t.status, t.retries) for t in parse_plan(ws.plan_path).tasks] == [(" ", 1)] * 3
    assert leftovers(ws) == ([], [], 1)
    for tid in ids:  # each worker's commit and its unfinished file are saved, not thrown away
        [folder] = (ws.root / "logs" / "rollback").glob(f"*-stale-{tid}-worktree")
        assert f"committed by {tid}" in (folder / "commits.patch").read_text()
        diff = (folder / "worktree.diff").read_text()
        assert f"unfinished {tid}" in diff and f"committed by {tid}" in diff
    assert not (ws.root / f"{ids[0]}.wip").exists()  # nothing of it reached the main work tree


def test_a_persons_memento_branch_survives_ticks(tmp_path):
    ws, _ = make_parallel_ws(tmp_path, ["T-1", "T-2"], workers=2)
    git(ws.root, "branch", "memento/fix-readme")
    git(ws.root, "branch", "memento/T-9")  # even one named like a task id, with no claim of it
    # A person's own branches named like the tasks the tick runs: one with a commit of theirs,
    # one at HEAD (the very commit the workers start from), and the worker's second choice.
    git(ws.root, "switch", "-q", "-c", "memento/T-1")
    (ws.root / "mine.txt").write_text("a person's work\n")
    git(ws.root, "add", "mine.txt")
    git(ws.root, "commit", "-qm", "a person's commit on memento/T-1")
    git(ws.root, "switch", "-q", "-")
    git(ws.root, "branch", "memento/T-2")
    git(ws.root, "branch", "memento/T-2+2")
    names = ["memento/fix-readme", "memento/T-1", "memento/T-2", "memento/T-2+2", "memento/T-9"]
    tips = {b: git(ws.root, "rev-parse", b).strip() for b in names}
    for _ in range(2):
        outcome = run_tick(ws.root)
        assert outcome.exit_code == 0, outcome.message
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == ["x", "x"]
    assert {b: git(ws.root, "rev-parse", b).strip() for b in names} == tips
    assert sorted(leftovers(ws)[1]) == sorted(names)  # no worker's branch left, no person's gone
    assert leftovers(ws)[0] == [] and leftovers(ws)[2] == 1
    assert completes(ws, "T-1") == completes(ws, "T-2") == 1
    assert not (ws.root / "mine.txt").exists()  # the person's commit stayed on their branch


def test_a_workers_spending_and_unattributed_memory_writes_land_in_the_main_project(tmp_path):
    from memento_core import spending
    from memento_core.git import worktrees
    from memento_core.memory.store import _log_unattributed, unattributed_writes
    from memento_core.tick.workers import WorktreeSpace
    from memento_core.workspace import Workspace

    ws, _ = make_parallel_ws(tmp_path, ["T-1"], workers=2)
    base = git(ws.root, "rev-parse", "HEAD").strip()
    path = worktrees.add(ws, "T-1", base, worktrees.free_branch(ws, "T-1"))  # a real worktree, as a worker has it
    try:
        space = WorktreeSpace(path, main=ws.root)
        spending.add_usage(space, spending.Usage(1200, 300, 0.25))
        _log_unattributed(space, "T-1", base, ["memory/x.md"])
        assert spending.usage_summary(Workspace(ws.root))["today"]["tokens_in"] == 1200  # the budget sees it
        assert [w.task for w in unattributed_writes(Workspace(ws.root))] == ["T-1"]  # the doctor sees it
        assert not (path / ".memento" / "usage.json").exists()
    finally:
        worktrees.remove(ws, "T-1")


def test_a_persons_commit_tag_and_branch_in_main_during_a_parallel_tick_stay(tmp_path):
    import threading

    ids = ["T-1", "T-2"]
    ws, scratch = make_parallel_ws(tmp_path, ids, workers=2)
    root = ws.root
    (scratch / "hold").write_text("")
    box = {}
    tick = threading.Thread(target=lambda: box.setdefault("outcome", run_tick(root)))
    tick.start()
    try:
        wait_for(lambda: started(scratch, ids))
        (root / "person.txt").write_text("mine\n")
        git(root, "add", "person.txt")
        git(root, "commit", "-qm", "a person's commit during the tick")
        git(root, "tag", "v-person")
        git(root, "branch", "person-topic")
        mine = git(root, "rev-parse", "HEAD").strip()
    finally:
        (scratch / "go").write_text("")
        tick.join(timeout=120)
    assert box["outcome"].exit_code == 0, box["outcome"].message
    plan = parse_plan(ws.plan_path)
    assert [(t.status, t.retries) for t in plan.tasks] == [("x", 0), ("x", 0)]  # no worker failed for it
    assert subprocess.run(["git", "-C", str(root), "merge-base", "--is-ancestor", mine, "HEAD"]).returncode == 0
    assert git(root, "rev-parse", "v-person").strip() == mine
    assert git(root, "rev-parse", "person-topic").strip() == mine
    assert [completes(ws, t) for t in ids] == [1, 1]
    assert git(root, "rev-list", "--merges", "HEAD") == ""
    assert leftovers(ws) == ([], [], 1)


def test_a_rebase_that_merges_a_change_into_verified_files_fails_as_a_conflict(tmp_path):
    import threading

    ws, scratch = make_parallel_ws(tmp_path, ["T-1"], workers=2, mode="shared")
    root = ws.root
    (root / "shared.txt").write_text("base\n2\n3\n4\n5\n")
    git(root, "commit", "-qam", "a longer shared.txt")
    (scratch / "hold").write_text("")
    box = {}
    tick = threading.Thread(target=lambda: box.setdefault("outcome", run_tick(root)))
    tick.start()
    try:
        wait_for(lambda: started(scratch, ["T-1"]))
        (root / "shared.txt").write_text("base\n2\n3\n4\na person's line\n")  # another hunk than the task's
        git(root, "commit", "-qam", "a person's edit of shared.txt")
    finally:
        (scratch / "go").write_text("")
        tick.join(timeout=120)
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries) == (" ", 1)
    assert "memento: complete T-1 Task T-1" not in subjects(ws)  # never the unverified merge
    assert git(root, "show", "HEAD:shared.txt") == "base\n2\n3\n4\na person's line\n"
    said = [e.field("Reason") for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1"]
    assert said and said[-1].startswith("merge conflict: shared.txt"), said
    for f in scratch.glob("*.started"):
        f.unlink()
    (scratch / "hold").unlink()
    assert run_tick(root).exit_code == 0  # the retry starts from the new HEAD and is verified there
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    assert git(root, "show", "HEAD:shared.txt") == "T-1\n2\n3\n4\na person's line\n"


def test_a_success_entry_is_found_by_its_task_not_by_the_ticks_heading_it_shares(tmp_path):
    # The tick resets a dead claim first (a STALE entry under the tick's heading), then passes
    # T-1 and is killed before T-1's SUCCESS entry is appended (marking its note read, the
    # last write before it). The next tick commits T-1 with its own entry and its hash.
    import time

    from memento_core.notes import add_note
    from memento_core.state import Claim, this_host, write_claim

    ws, _ = make_parallel_ws(tmp_path, ["T-1", "T-2"], workers=1)
    text = ws.plan_path.read_text()
    ws.plan_path.write_text(text.replace("- [ ] `T-2`", "- [~] `T-2`"))
    add_note(ws.notes_path, "mind the newline at the end", target="T-1")
    git(ws.root, "commit", "-qam", "T-2 claimed by a tick that died; a note for T-1")
    gone = subprocess.Popen(["true"])
    gone.wait()
    write_claim(ws, Claim(task="T-2", pid=gone.pid, host=this_host(), started="2026-01-01T00:00:00Z",
                          heartbeat=time.time(), tick=1, base=git(ws.root, "rev-parse", "HEAD").strip()))
    assert crashed_tick(ws, "write:HUMAN_NOTES.md") == -signal.SIGKILL
    assert parse_plan(ws.plan_path).task("T-1").status == "x"  # verified, marked, not committed
    entries = status_log.parse_status(ws.status_path)
    assert [e.status for e in entries] == ["STALE"]  # the killed tick's heading is in the log
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    assert completes(ws, "T-1") == 1
    sha = git(ws.root, "log", "-1", "--format=%h", "--grep=memento: complete T-1 ").strip()
    from memento_core.status_log import entries_with_commits

    passed = [e for e in entries_with_commits(ws.root, status_log.parse_status(ws.status_path))
              if e.status == "SUCCESS" and e.task_id == "T-1"]
    assert len(passed) == 1, ws.status_path.read_text()
    assert passed[0].commit_sha and passed[0].commit_sha.startswith(sha[:7]), passed[0].field("Git Commit")
    assert "recorded after the commit" not in ws.status_path.read_text()
