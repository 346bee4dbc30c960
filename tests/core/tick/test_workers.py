"""Several workers on one machine (SPEC §12): a `parallel: true` phase in git worktrees.

Real git, real subprocess ticks where a kill is involved, the fake agent
tests/agents/parallel_task.py through the `command` preset. Judged on disk and
in git: the main work tree while workers run, the commits on main, what is left
under .memento/worktrees/ and among the branches.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from memento_core import sandbox, status_log
from memento_core.config.load import load_config
from memento_core.plan.scan import parse_plan
from memento_core.scaffold import init_workspace
from memento_core.state import read_claim
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace
from tests.core.sandbox.test_sandbox import needs_bwrap
from tests.core.scenarios.test_engine import AGENTS, PY, _alive, _wait_for, git, plan_text

WORKTREES = Path(".memento") / "worktrees"
SRC = str(Path(__file__).resolve().parents[3])


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def tasks_text(ids, mode: str = "own") -> str:
    """Tasks whose context_files are their own file, and shared.txt where the mode changes it (such
    tasks overlap: they never run at the same time)."""
    out = []
    for tid in ids:
        check = f"test -f {tid}.txt" if mode != "shared" else f"grep -qx {tid} shared.txt"
        files = f"{tid}.txt, shared.txt" if mode in ("shared", "both", "deletes") else f"{tid}.txt"
        out.append(f"- [ ] `{tid}` [MODULE:m] Task {tid}\n  - verify: `{check}`\n"
                   f"  - context_files: [{files}]\n  - retries: 0\n")
    return "\n".join(out)


def make_parallel_ws(tmp_path: Path, ids, *, workers: int, mode: str = "own", seconds: float = 0,
                     per_tick: int | None = None) -> tuple[Workspace, Path]:
    """A committed workspace whose only phase is `parallel: true`, and the agent's scratch folder."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    text = plan_text(tasks_text(ids, mode)).replace("<!-- depends: none -->", "<!-- depends: none -->\n<!-- parallel: true -->")
    text = text.replace("max_tasks_per_tick: 1", f"max_tasks_per_tick: {per_tick or len(ids)}")
    (root / "docs" / "MASTER_PLAN.md").write_text(text)
    command = f"{PY} {AGENTS / 'parallel_task.py'} {scratch} {mode} {seconds}"
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "command"\ncommand = """{command}"""\ntimeout = "30s"\n[verify]\ntimeout = "20s"\n'
        f'[sandbox]\nmode = "none"\n[workers]\nmax = {workers}\n')
    (root / "shared.txt").write_text("base\nsecond line\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    assert parse_plan(root / "docs" / "MASTER_PLAN.md").phases[0].parallel
    return Workspace(root), scratch


def wait_for(predicate, timeout: float = 60.0) -> None:
    _wait_for(predicate, timeout)


def leftovers(ws: Workspace) -> tuple[list[str], list[str], int]:
    """(worktree folders, memento/* branches, git's worktree count) — all empty / 1 when clean."""
    folder = ws.root / WORKTREES
    dirs = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    branches = [b for b in git(ws.root, "branch", "--format=%(refname:short)").split() if b.startswith("memento/")]
    count = git(ws.root, "worktree", "list", "--porcelain").count("worktree ")
    return dirs, branches, count


def subjects(ws: Workspace) -> list[str]:
    return git(ws.root, "log", "--format=%s").splitlines()


def start_tick(ws: Workspace) -> subprocess.Popen:
    return subprocess.Popen([PY, "-m", "memento_core.tick", "--project", str(ws.root)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def started(scratch: Path, ids) -> bool:
    return all((scratch / f"{t}.started").exists() for t in ids)


def kill_tick_once_workers_run(ws: Workspace, scratch: Path, ids) -> None:
    """Start a tick, wait until every task's agent runs with its claim, then kill -9 the tick."""
    tick = start_tick(ws)
    try:
        wait_for(lambda: started(scratch, ids))
        wait_for(lambda: all((c := read_claim(ws, t)) is not None and c.pgid for t in ids))
        os.kill(tick.pid, signal.SIGKILL)
        tick.wait(timeout=30)
    finally:
        if tick.poll() is None:
            tick.kill()
        tick.communicate()


def agent_pid(scratch: Path, tid: str) -> int:
    return int((scratch / f"{tid}.started").read_text().split()[0])


# --------------------------------------------------------------------------- isolation, one commit each


def test_workers_run_in_worktrees_and_main_never_shows_half_done_work(tmp_path):
    ids = ["T-1", "T-2", "T-3"]
    ws, scratch = make_parallel_ws(tmp_path, ids, workers=3)
    (scratch / "hold").write_text("")
    box = {}
    runner = threading.Thread(target=lambda: box.setdefault("outcome", run_tick(ws.root)))
    runner.start()
    try:
        wait_for(lambda: started(scratch, ids))
        # All three agents run at once, each in its own worktree on its own branch …
        cwds = {t: Path((scratch / f"{t}.started").read_text().split("\n")[1]) for t in ids}
        assert cwds == {t: (ws.root / WORKTREES / t).resolve() for t in ids}
        branches = leftovers(ws)[1]
        assert branches == [f"memento/{t}" for t in ids]
        for t in ids:
            claim = read_claim(ws, t)
            assert claim is not None and claim.worktree == f".memento/worktrees/{t}"
        # … and the main work tree shows none of their work: only the claims in the plan.
        wait_for(lambda: all((cwds[t] / f"{t}.txt").exists() or True for t in ids))
        assert not any((ws.root / f"{t}.txt").exists() for t in ids)
        dirty = [line[3:] for line in git(ws.root, "status", "--porcelain").splitlines()]
        assert set(dirty) <= {"docs/MASTER_PLAN.md", "docs/TICK_STATUS.md"}
        assert [t.status for t in parse_plan(ws.plan_path).tasks] == ["~", "~", "~"]
        # `memento status --json` lists the three workers from their claims.
        shown = subprocess.run([PY, "-m", "memento_core.cli", "status", "--json", str(ws.root)],
                               capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHONPATH": SRC})
        workers = json.loads(shown.stdout)["workers"]
        assert sorted(w["task"] for w in workers) == ids
        for w in workers:
            assert w["stage"] == "running" and w["worktree"] == f".memento/worktrees/{w['task']}"
            assert w["log"].startswith("logs/tick_") and w["log"].endswith(f"-{w['task']}.log")
            assert (ws.root / w["log"]).is_file() and w["host"] and w["elapsed_s"] >= 0
    finally:
        (scratch / "go").write_text("")
        runner.join(timeout=120)
    outcome = box["outcome"]
    assert outcome.exit_code == 0, outcome.message
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == ["x", "x", "x"]
    done = [s for s in subjects(ws) if s.startswith("memento: complete")]
    assert sorted(done) == [f"memento: complete {t} Task {t}" for t in ids]
    for t in ids:
        sha = git(ws.root, "log", "--format=%H", f"--grep=complete {t} ").split()[0]
        files = set(git(ws.root, "show", "--name-only", "--format=", sha).split())
        assert f"{t}.txt" in files and not {f"{o}.txt" for o in ids if o != t} & files
        assert (ws.root / f"{t}.txt").read_text() == f"done {t}\n"
    # Linear history: every task's one commit on top of the one before (rebased, fast-forwarded).
    assert git(ws.root, "rev-list", "--merges", "HEAD") == ""
    assert leftovers(ws) == ([], [], 1)
    dirty = {line[3:] for line in git(ws.root, "status", "--porcelain").splitlines()}
    assert dirty <= {"docs/CURRENT_STATE.md", "docs/TICK_STATUS.md"}  # the tick's housekeeping, synced next tick
    passed = [e for e in status_log.parse_status(ws.status_path) if e.status == "SUCCESS"]
    assert len(passed) == 3 and all(e.field("Git Commit")[:7] != "pending" for e in passed)


def test_max_one_keeps_a_parallel_phase_serial(tmp_path):
    ws, scratch = make_parallel_ws(tmp_path, ["T-1", "T-2"], workers=1)
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == ["x", "x"]
    assert not (ws.root / WORKTREES).exists()  # no worktree: the serial tick of SPEC §4
    cwds = {Path((scratch / f"{t}.started").read_text().split("\n")[1]) for t in ("T-1", "T-2")}
    assert cwds == {ws.root.resolve()}


def test_a_worker_failing_its_last_retry_blocks_its_task_and_the_other_lands(tmp_path):
    ws, _ = make_parallel_ws(tmp_path, ["T-1", "T-2"], workers=2)
    text = ws.plan_path.read_text().replace("test -f T-1.txt", "test -f never.txt")
    ws.plan_path.write_text(text.replace("max_retries: 3", "max_retries: 2"))
    git(ws.root, "commit", "-qam", "T-1 cannot pass, two tries")
    run_tick(ws.root)
    t1 = parse_plan(ws.plan_path).task("T-1")
    assert (t1.status, t1.retries) == (" ", 1)  # one failure of two: tried again later
    run_tick(ws.root)
    plan = parse_plan(ws.plan_path)
    assert [(t.status, t.retries) for t in plan.tasks] == [("!", 2), ("x", 0)]
    last = [e for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1"][-1]
    assert last.status == "BLOCKED" and last.field("Escalation") == "⚠️ NEEDS ARCHITECT ATTENTION"
    assert "memento: T-1 blocked (retry 2/2)" in subjects(ws)
    assert leftovers(ws) == ([], [], 1)


# --------------------------------------------------------------------------- conflicts


def intervals(scratch: Path) -> dict[str, tuple[int, int]]:
    """Each task's (start, end) as its agent recorded them."""
    seen: dict[str, dict[str, int]] = {}
    for line in (scratch / "intervals.txt").read_text().splitlines():
        task, what, ns = line.split()
        seen.setdefault(task, {})[what] = int(ns)
    return {t: (v["start"], v["end"]) for t, v in seen.items()}


@needs_bwrap
def test_tasks_whose_context_files_overlap_never_run_at_once_and_a_disjoint_one_runs_beside(tmp_path):
    """T-1 and T-2 both change shared.txt (an equal path; T-2 names it through a pattern):
    T-2 waits until T-1 has ended and runs in the same tick; T-3 (disjoint) runs beside T-1. Judged
    by the intervals the agents recorded, confined, into a folder the sandbox lets them write."""
    ids = ["T-1", "T-2", "T-3"]
    ws, scratch = make_parallel_ws(tmp_path, ids, workers=3)
    text = ws.plan_path.read_text()
    text = text.replace("context_files: [T-1.txt]", "context_files: [T-1.txt, shared.txt]")
    text = text.replace("context_files: [T-2.txt]", "context_files: [T-2.txt, ./s*.txt]")
    text = text.replace("test -f T-1.txt", "grep -qx T-1 shared.txt").replace("test -f T-2.txt", "grep -qx T-2 shared.txt")
    ws.plan_path.write_text(text)
    command = f"{PY} {AGENTS / 'records_interval.py'} {scratch} T-1,T-2 T-1=T-3,T-3=T-1"
    config = ws.config_path.read_text()
    config = config.replace(config.split('"""')[1], command).replace('mode = "none"', f'mode = "bwrap"\nwritable = ["{scratch}"]')
    ws.config_path.write_text(config)
    git(ws.root, "commit", "-qam", "two tasks on shared.txt, one beside them")
    assert sandbox.resolve(load_config(ws.config_path)).confined
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    plan = parse_plan(ws.plan_path)
    assert [(t.status, t.retries) for t in plan.tasks] == [("x", 0)] * 3, [
        (e.task_id, e.field("Reason")) for e in status_log.parse_status(ws.status_path)]
    when = intervals(scratch)
    (s1, e1), (s2, _), (s3, e3) = when["T-1"], when["T-2"], when["T-3"]
    assert e1 <= s2, when  # the held-back task started only once the other had ended
    assert s3 < e1 and s1 < e3, when  # the disjoint one ran beside T-1
    assert not [e for e in status_log.parse_status(ws.status_path) if e.status != "SUCCESS" and e.task_id]
    assert not [s for s in subjects(ws) if "failed" in s]
    assert (ws.root / "shared.txt").read_text() == "T-2\nsecond line\n"  # T-2 ran on T-1's result
    assert leftovers(ws) == ([], [], 1)


def test_a_conflict_is_named_and_the_retry_starts_from_the_new_head(tmp_path):
    """Workers never share a file now; a person's commit to the task's file while it runs still
    conflicts at its merge: the attempt fails naming the path, the retry starts from the new HEAD."""
    ws, scratch = make_parallel_ws(tmp_path, ["T-1"], workers=2, mode="shared")
    (scratch / "hold").write_text("")
    box = {}
    runner = threading.Thread(target=lambda: box.setdefault("outcome", run_tick(ws.root)))
    runner.start()
    try:
        wait_for(lambda: started(scratch, ["T-1"]))
        (ws.root / "shared.txt").write_text("person\nsecond line\n")
        git(ws.root, "commit", "-qm", "a person's edit of shared.txt", "--", "shared.txt")
    finally:
        (scratch / "go").write_text("")
        runner.join(timeout=120)
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries) == (" ", 1)
    failed = [e for e in status_log.parse_status(ws.status_path) if e.status == "FAILED"]
    assert len(failed) == 1
    reason = failed[0].field("Reason")
    assert reason.startswith("merge conflict: shared.txt changed on the main branch"), reason
    assert (ws.root / "shared.txt").read_text() == "person\nsecond line\n"
    assert leftovers(ws) == ([], [], 1)
    # The retry starts from the new HEAD (the person's line is there) and passes.
    for f in scratch.glob("*.started"):
        f.unlink()
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    assert (ws.root / "shared.txt").read_text() == "T-1\nsecond line\n"
    assert leftovers(ws) == ([], [], 1)
    assert git(ws.root, "rev-list", "--merges", "HEAD") == ""


# --------------------------------------------------------------------------- kill -9, SIGTERM


def test_stale_worktrees_after_kill_9_are_pruned_by_the_next_tick(tmp_path):
    from memento_core.doctor.runner import check_workspace

    ids = ["T-1", "T-2"]
    ws, scratch = make_parallel_ws(tmp_path, ids, workers=2)
    (scratch / "hold").write_text("")
    kill_tick_once_workers_run(ws, scratch, ids)
    pids = [agent_pid(scratch, t) for t in ids]
    # Started from the workers' threads, each agent ends with its tick all the same (its guard).
    wait_for(lambda: not any(_alive(p) for p in pids), 10)
    assert leftovers(ws)[:2] == (ids, [f"memento/{t}" for t in ids])
    found = [f for f in check_workspace(ws) if f.check == "worktrees"]
    assert found and all(f.severity == "WARNING" for f in found)
    assert "T-1" in found[0].message and "T-2" in found[0].message
    # The next tick removes the worktrees and branches, resets and reruns.
    for f in scratch.glob("*.started"):
        f.unlink()
    (scratch / "hold").unlink()
    outcome = run_tick(ws.root)
    assert not any(_alive(p) for p in pids)
    stale = [e for e in status_log.parse_status(ws.status_path) if e.status == "STALE"]
    assert len(stale) == 2
    assert outcome.exit_code == 0, outcome.message
    plan = parse_plan(ws.plan_path)
    assert [t.status for t in plan.tasks] == ["x", "x"] and [t.retries for t in plan.tasks] == [1, 1]
    assert leftovers(ws) == ([], [], 1)
    assert not [f for f in check_workspace(ws) if f.check == "worktrees" and f.severity != "OK"]


def test_sigterm_stops_every_worker_and_leaves_nothing(tmp_path):
    ids = ["T-1", "T-2", "T-3"]
    ws, scratch = make_parallel_ws(tmp_path, ids, workers=3)
    (scratch / "hold").write_text("")
    tick = start_tick(ws)
    try:
        wait_for(lambda: started(scratch, ids))
        wait_for(lambda: all((c := read_claim(ws, t)) is not None and c.pgid for t in ids))
        tick.send_signal(signal.SIGTERM)
        tick.wait(timeout=60)
    finally:
        if tick.poll() is None:
            tick.kill()
        tick.communicate()
    assert not any(_alive(agent_pid(scratch, t)) for t in ids)
    plan = parse_plan(ws.plan_path)
    assert [t.status for t in plan.tasks] == [" ", " ", " "] and [t.retries for t in plan.tasks] == [0, 0, 0]
    interrupted = [e for e in status_log.parse_status(ws.status_path) if e.status == "INTERRUPTED"]
    assert sorted(e.task_id for e in interrupted) == ids
    assert leftovers(ws) == ([], [], 1)
    assert not list(ws.claims_dir.glob("*.json"))
    assert not any((ws.root / f"{t}.txt").exists() for t in ids)


def test_eight_quick_tasks_with_four_workers_one_commit_each(tmp_path):
    """Workers commit and merge while others' guards look at the refs (a race the benchmark found)."""
    ids = [f"T-{i}" for i in range(1, 9)]
    ws, _ = make_parallel_ws(tmp_path, ids, workers=4)
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == ["x"] * 8
    done = [s for s in subjects(ws) if s.startswith("memento: complete")]
    assert sorted(done) == sorted(f"memento: complete {t} Task {t}" for t in ids)
    assert leftovers(ws) == ([], [], 1)


def test_a_parallel_phase_packs_the_loose_objects_its_workers_found(tmp_path, monkeypatch):
    """Each worker's snapshot counts the loose objects (in its own copy of the tick's context):
    the housekeeping after the crew packs them as after a serial attempt."""
    from memento_core.git import objects as git_objects

    ws, _ = make_parallel_ws(tmp_path, ["T-1", "T-2"], workers=2)
    monkeypatch.setattr(git_objects, "LOOSE_LIMIT", 1)
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == ["x", "x"]
    assert list((ws.root / ".git" / "objects" / "pack").glob("*.pack"))
    assert not list((ws.root / ".git" / "objects").glob("[0-9a-f][0-9a-f]/*"))


# --------------------------------------------------------------------------- hostile agents


def main_moving_ws(tmp_path: Path, ids, *args: str, hostile: str = "T-1") -> tuple[Workspace, Path]:
    """Two workers whose agent tests/agents/worker_moves_main.py moves the main branch in ``hostile``."""
    ws, scratch = make_parallel_ws(tmp_path, ids, workers=2)
    command = " ".join([PY, str(AGENTS / "worker_moves_main.py"), str(scratch), hostile, *args])
    ws.config_path.write_text(ws.config_path.read_text().replace(
        ws.config_path.read_text().split('"""')[1], command))
    git(ws.root, "commit", "-qam", "the hostile agent")
    return ws, scratch


def assert_main_moved_by_t1(ws: Workspace, ids) -> None:
    """T-1's agent answers for the move whoever found it; T-2, honest, is on main; main was put back."""
    plan = parse_plan(ws.plan_path)
    said = {e.task_id: e.field("Reason") for e in status_log.parse_status(ws.status_path) if e.task_id in ids}
    assert (plan.task("T-1").status, plan.task("T-1").retries) == (" ", 1), said
    assert "moved the main branch (refs/heads/main)" in said["T-1"] and "(put back)" in said["T-1"], said
    assert (plan.task("T-2").status, plan.task("T-2").retries) == ("x", 0), said
    log = subjects(ws)
    assert "agent: on main" not in log  # never on main: the ref was put back
    assert "memento: complete T-2 Task T-2" in log
    assert not (ws.root / "T-1.txt").exists()
    assert leftovers(ws) == ([], [], 1)


def test_an_agent_that_moves_the_main_branch_fails_and_main_is_put_back(tmp_path):
    """Whichever look comes first (T-1's guards, T-2's guards or T-2's result) puts main back and
    blames T-1: the honest worker is never failed nor set aside for another's move."""
    ids = ["T-1", "T-2"]
    ws, _ = main_moving_ws(tmp_path, ids)
    outcome = run_tick(ws.root)
    assert_main_moved_by_t1(ws, ids)
    assert outcome.exit_code in (0, 1)


def test_an_agent_that_moves_the_main_branch_before_another_workers_guards_is_blamed(tmp_path, monkeypatch):
    """The move lands just before T-2's guards look (under the crew's lock, so T-1's cannot look
    first): T-2's guards put main back and find nothing of T-2's to blame; T-1 answers for it."""
    from memento_core.tick.crew import Crew

    ids = ["T-1", "T-2"]
    ws, scratch = main_moving_ws(tmp_path, ids, "on-go")
    real = Crew.refresh

    def refresh(self, w):
        if w.task.id == "T-2" and not (scratch / "go").exists():
            (scratch / "go").write_text("")
            wait_for(lambda: (scratch / "moved").exists())
        return real(self, w)

    monkeypatch.setattr(Crew, "refresh", refresh)
    run_tick(ws.root)
    assert (scratch / "moved").exists()
    assert_main_moved_by_t1(ws, ids)


def test_an_agent_that_moves_the_main_branch_while_a_result_comes_in_is_blamed_and_main_put_back(tmp_path,
                                                                                                 monkeypatch):
    """The move lands after the honest worker's merge found main where the crew left it and before its
    commit (once a flake of the test above): its commit is never made on the agent's commit."""
    from memento_core.git import worktrees

    ids = ["T-1", "T-2"]
    ws, scratch = main_moving_ws(tmp_path, ids, "on-go")
    real = worktrees.bring_into

    def bring_into(*args, **kwargs):  # T-2's result is being brought in: T-1's agent moves main now
        (scratch / "go").write_text("")
        wait_for(lambda: (scratch / "moved").exists())
        return real(*args, **kwargs)

    monkeypatch.setattr(worktrees, "bring_into", bring_into)
    run_tick(ws.root)
    assert (scratch / "moved").exists()
    assert_main_moved_by_t1(ws, ids)


def test_a_worker_whose_guards_find_main_moved_elsewhere_fails_and_main_is_put_back(tmp_path):
    """Main pointed at a commit on no branch: the guards that find it put it back and fail their
    worker (alone here, so the one whose agent did it)."""
    ws, scratch = main_moving_ws(tmp_path, ["T-1"], "elsewhere")
    head = git(ws.root, "rev-parse", "HEAD").strip()
    run_tick(ws.root)
    moved = (scratch / "moved").read_text()
    said = {e.task_id: e.field("Reason") for e in status_log.parse_status(ws.status_path) if e.task_id}
    assert said["T-1"].startswith(f"the agent moved the main branch (refs/heads/main) to {moved[:7]} (put back)"), said
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-1").status, plan.task("T-1").retries) == (" ", 1)
    assert git(ws.root, "rev-parse", "HEAD~2").strip() == head  # the failure's commit and the tick's, on it
    assert subjects(ws)[:2] == ["memento: tick #1 (status log and checkpoint)", "memento: T-1 failed (retry 1/3)"]
    assert "agent: on main" not in subjects(ws) and not (ws.root / "T-1.txt").exists()
    assert leftovers(ws) == ([], [], 1)


def test_a_lone_worker_that_points_main_at_its_commit_is_blamed_before_its_guards_fold_it(tmp_path):
    """Its own guards are the first to look: main is put back while its branch still holds the
    commit (never taken for a person's commit on main once folded away)."""
    ws, _ = main_moving_ws(tmp_path, ["T-1"])
    head = git(ws.root, "rev-parse", "HEAD").strip()
    run_tick(ws.root)
    said = {e.task_id: e.field("Reason") for e in status_log.parse_status(ws.status_path) if e.task_id}
    assert "moved the main branch (refs/heads/main)" in said["T-1"] and "a commit of its branch" in said["T-1"], said
    assert "agent: on main" not in subjects(ws) and git(ws.root, "rev-parse", "HEAD~2").strip() == head


def test_a_main_branch_moved_elsewhere_while_the_guards_look_is_put_back_and_nobody_blamed(tmp_path, monkeypatch):
    """A move in the instant between the refresh and the guards' end, when no agent ran (a person, a
    process outside the tick): loose in their snapshot, put back just after them, their worker not
    failed for it; the cron log says it."""
    from memento_core.tick import workers

    ws, scratch = main_moving_ws(tmp_path, ["T-1"], hostile="nobody")
    real, moved = workers.check_guards, []

    def check_guards(ctx, *args, **kwargs):
        if not moved:
            root = ws.root
            moved.append(git(root, "commit-tree", "HEAD^{tree}", "-m", "agent: on main").strip())
            git(root, "update-ref", "refs/heads/main", moved[0])
        return real(ctx, *args, **kwargs)

    monkeypatch.setattr(workers, "check_guards", check_guards)
    head = git(ws.root, "rev-parse", "HEAD").strip()
    run_tick(ws.root)
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    assert "agent: on main" not in subjects(ws) and git(ws.root, "rev-parse", "HEAD~2").strip() == head
    assert f"someone moved the main branch (refs/heads/main) to {moved[0][:7]} (put back)" in ws.cron_log.read_text()


def test_main_moved_elsewhere_is_blamed_on_the_worker_whose_agent_ran_then_not_on_who_found_it(tmp_path):
    """T-1's agent points main at a commit on no branch and runs on until someone puts it back: T-2's
    guards find it, but the ref's ctime is in T-1's agent's run alone: T-1 answers, T-2 passes."""
    ws, scratch = main_moving_ws(tmp_path, ["T-1", "T-2"], "elsewhere-wait")
    run_tick(ws.root)
    moved = (scratch / "moved").read_text()
    said = {e.task_id: e.field("Reason") for e in status_log.parse_status(ws.status_path) if e.task_id}
    plan = parse_plan(ws.plan_path)
    assert (plan.task("T-2").status, plan.task("T-2").retries) == ("x", 0), said
    assert (plan.task("T-1").status, plan.task("T-1").retries) == (" ", 1), said
    assert f"moved the main branch (refs/heads/main) to {moved[:7]} (put back)" in said["T-1"], said
    assert "agent: on main" not in subjects(ws) and "memento: complete T-2 Task T-2" in subjects(ws)
    assert leftovers(ws) == ([], [], 1)


def test_a_worker_that_fails_without_its_guards_answers_for_main_moved_elsewhere(tmp_path):
    ws, scratch = main_moving_ws(tmp_path, ["T-1"], "elsewhere-fail")
    run_tick(ws.root)
    moved = (scratch / "moved").read_text()
    said = {e.task_id: e.field("Reason") for e in status_log.parse_status(ws.status_path) if e.task_id}
    assert said["T-1"].endswith(f"; the agent moved the main branch (refs/heads/main) to {moved[:7]} (put back)"), said
    assert "agent: on main" not in subjects(ws)
    assert parse_plan(ws.plan_path).task("T-1").retries == 1


def test_a_main_branch_moved_elsewhere_as_a_result_comes_in_is_put_back_and_logged(tmp_path, monkeypatch):
    """Nobody's guards found it: main put back, the cron log says so, the result goes in."""
    from memento_core.tick import crew_result

    ws, scratch = main_moving_ws(tmp_path, ["T-1"], hostile="nobody")
    real, moved = crew_result.merge, []

    def merge(crew, w, *args, **kwargs):
        moved.append(git(ws.root, "commit-tree", "HEAD^{tree}", "-m", "agent: on main").strip())
        git(ws.root, "update-ref", "refs/heads/main", moved[0])
        return real(crew, w, *args, **kwargs)

    monkeypatch.setattr(crew_result, "merge", merge)
    run_tick(ws.root)
    said = {e.task_id: e.field("Reason") for e in status_log.parse_status(ws.status_path) if e.task_id}
    assert parse_plan(ws.plan_path).task("T-1").status == "x", said
    assert "agent: on main" not in subjects(ws) and "memento: complete T-1 Task T-1" in subjects(ws)
    assert f"someone moved the main branch (refs/heads/main) to {moved[0][:7]} (put back)" in ws.cron_log.read_text()


def test_an_agent_that_detaches_the_main_work_trees_head_fails_and_head_is_put_back(tmp_path):
    """HEAD detached one commit back, the main branch untouched: put back on the branch by the
    guards that find it, the crew's commits made on the branch, never on the detached HEAD."""
    ws, scratch = main_moving_ws(tmp_path, ["T-1"], "detach")
    head = git(ws.root, "rev-parse", "HEAD").strip()
    run_tick(ws.root)
    assert (scratch / "moved").exists()
    said = {e.task_id: e.field("Reason") for e in status_log.parse_status(ws.status_path) if e.task_id}
    assert said["T-1"].startswith("the agent pointed the main work tree's HEAD away from refs/heads/main (put back)"), said
    assert "moved the main branch" not in said["T-1"]  # the branch itself never moved: read as the branch
    assert git(ws.root, "symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert git(ws.root, "rev-parse", "HEAD~2").strip() == head
    cron = ws.cron_log.read_text() if ws.cron_log.exists() else ""
    assert parse_plan(ws.plan_path).task("T-1").retries == 1 and "git error" not in cron


def test_a_main_branch_moved_between_the_crews_look_and_its_commit_is_put_back_and_the_commit_made(
        tmp_path, monkeypatch):
    """The instant after the crew's last look: the commit is refused (HEAD moved), main put back,
    the commit made once more on the crew's HEAD; no git error, nothing for the breaker."""
    from memento_core.tick import context

    ws, _ = main_moving_ws(tmp_path, ["T-1"], hostile="nobody")
    real, moved = context.commit_paths, []

    def commit_paths(root, paths, message, *args, onto=None, **kwargs):
        if onto is not None and not moved and "complete T-1" in message:
            moved.append(git(ws.root, "commit-tree", "HEAD^{tree}", "-m", "agent: on main").strip())
            git(ws.root, "update-ref", "refs/heads/main", moved[0])
        return real(root, paths, message, *args, onto=onto, **kwargs)

    monkeypatch.setattr(context, "commit_paths", commit_paths)
    head = git(ws.root, "rev-parse", "HEAD").strip()
    outcome = run_tick(ws.root)
    assert moved and parse_plan(ws.plan_path).task("T-1").status == "x"
    assert "memento: complete T-1 Task T-1" in subjects(ws) and "agent: on main" not in subjects(ws)
    assert git(ws.root, "merge-base", "--is-ancestor", head, "HEAD") == ""
    cron = ws.cron_log.read_text()
    assert f"someone moved the main branch (refs/heads/main) to {moved[0][:7]} (put back)" in cron
    assert "git error" not in cron and outcome.exit_code == 0, cron


def test_a_main_branch_moved_after_the_last_look_is_put_back_before_the_tick_commits(tmp_path, monkeypatch):
    """A move once every worker has ended (a stray of an agent): put back when the phase ends, and
    the tick's own commit is made on the crew's HEAD."""
    from memento_core.tick import workers

    ws, _ = main_moving_ws(tmp_path, ["T-1"], hostile="nobody")
    real, moved = workers.stop_all, []

    def stop_all(crew):
        real(crew)
        moved.append(git(ws.root, "commit-tree", "HEAD^{tree}", "-m", "agent: on main").strip())
        git(ws.root, "update-ref", "refs/heads/main", moved[0])

    monkeypatch.setattr(workers, "stop_all", stop_all)
    head = git(ws.root, "rev-parse", "HEAD").strip()
    run_tick(ws.root)
    assert "agent: on main" not in subjects(ws) and git(ws.root, "merge-base", "--is-ancestor", head, "HEAD") == ""
    assert subjects(ws)[:2] == ["memento: tick #1 (status log and checkpoint)", "memento: complete T-1 Task T-1"]
    assert f"someone moved the main branch (refs/heads/main) to {moved[0][:7]} (put back)" in ws.cron_log.read_text()


@pytest.mark.parametrize("how", ["moved", "deleted"])
def test_a_workers_branch_moved_after_its_guards_is_set_aside_and_nothing_of_it_lands(tmp_path, monkeypatch, how):
    """Another agent moves (to a commit with a file of its own) or deletes T-1's branch after T-1's
    guards: T-1 is set aside, no retry counted, and the file never reaches main."""
    from memento_core.tick import crew_result

    ws, _ = main_moving_ws(tmp_path, ["T-1"], hostile="nobody")
    real = crew_result.passed

    def passed(crew, w, ctx, at, *args, **kwargs):
        root = ws.root
        if how == "deleted":
            git(root, "update-ref", "-d", w.branch)
        else:
            blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=root, input=b"evil\n",
                                  capture_output=True, check=True).stdout.decode().strip()
            listing = git(root, "ls-tree", f"{at.snap.base}^{{tree}}") + f"100644 blob {blob}\tevil.txt\n"
            tree = subprocess.run(["git", "mktree"], cwd=root, input=listing.encode(), capture_output=True,
                                  check=True).stdout.decode().strip()
            git(root, "update-ref", w.branch, git(root, "commit-tree", tree, "-p", at.snap.base, "-m", "forged").strip())
        return real(crew, w, ctx, at, *args, **kwargs)

    monkeypatch.setattr(crew_result, "passed", passed)
    run_tick(ws.root)
    said = {e.task_id: e.field("Reason") for e in status_log.parse_status(ws.status_path) if e.task_id}
    assert said["T-1"].startswith("its branch was moved after its guards"), said
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries) == (" ", 0)
    assert "evil.txt" not in git(ws.root, "ls-tree", "-r", "--name-only", "HEAD") and not (ws.root / "evil.txt").exists()
    assert leftovers(ws) == ([], [], 1)


def test_an_agent_that_commits_while_another_workers_guards_look_is_not_blamed_on_it(tmp_path, monkeypatch):
    """T-1's agent commits on its branch between T-2's refresh of the refs and its guards' own read:
    the other workers' branches are theirs to fold, never a move T-2's guards judge or put back."""
    from memento_core.tick.crew import Crew

    ids = ["T-1", "T-2"]
    ws, scratch = main_moving_ws(tmp_path, ids, "on-go")
    real = Crew.refresh

    def refresh(self, w):
        real(self, w)
        if w.task.id == "T-2" and not (scratch / "go").exists():
            t1 = next(o for o in self.running if o.task.id == "T-1")  # its agent waits for go: running
            git(t1.ctx.root, "commit", "-q", "--allow-empty", "-m", "agent: another of its own")
            (scratch / "go").write_text("")  # and T-1's agent moves main before T-2's guards read
            wait_for(lambda: (scratch / "moved").exists())

    monkeypatch.setattr(Crew, "refresh", refresh)
    run_tick(ws.root)
    assert (scratch / "go").exists() and (scratch / "moved").exists()
    assert_main_moved_by_t1(ws, ids)
    assert "agent: another of its own" not in subjects(ws)


def test_an_agent_that_moves_the_main_branch_before_another_workers_result_comes_in_is_blamed(
        tmp_path, monkeypatch):
    """The move lands after T-2 passed and before its result is brought in (under the crew's lock):
    T-2's merge puts main back and goes on; it is never set aside for T-1's move (once a CI flake)."""
    from memento_core.tick import crew_result

    ids = ["T-1", "T-2"]
    ws, scratch = main_moving_ws(tmp_path, ids, "on-go")
    real = crew_result.merge

    def merge(crew, w, *args, **kwargs):
        if w.task.id == "T-2":
            (scratch / "go").write_text("")
            wait_for(lambda: (scratch / "moved").exists())
        return real(crew, w, *args, **kwargs)

    monkeypatch.setattr(crew_result, "merge", merge)
    run_tick(ws.root)
    assert (scratch / "moved").exists()
    assert_main_moved_by_t1(ws, ids)


def test_a_confined_worker_can_write_only_its_worktree(tmp_path):
    """The sandbox's project is the worker's worktree: the main work tree and git directory stay as they were."""
    from memento_core import sandbox
    from memento_core.config.load import load_config

    ids = ["T-1", "T-2"]
    ws, _ = make_parallel_ws(tmp_path, ids, workers=2)
    (ws.root / "other.txt").write_text("someone else's file\n")
    text = ws.config_path.read_text()
    text = text.replace(text.split('"""')[1], f"{PY} {AGENTS / 'worker_escapes.py'}").replace('"none"', '"bwrap"')
    ws.config_path.write_text(text)
    git(ws.root, "add", "-A")
    git(ws.root, "commit", "-qm", "a confined, hostile agent")
    if not sandbox.resolve(load_config(ws.config_path)).confined:
        pytest.skip("bubblewrap cannot run here")
    head_before = git(ws.root, "rev-parse", "HEAD").strip()
    config = ws.config_path.read_bytes()
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == ["x", "x"]
    assert (ws.root / "other.txt").read_text() == "someone else's file\n"
    assert not (ws.root / ".git" / "escaped").exists() and not (ws.root / "new.txt").exists()
    assert ws.config_path.read_bytes() == config
    for doc in (ws.plan_path, ws.notes_path, ws.status_path):
        assert "written by T-" not in doc.read_text()
    assert git(ws.root, "merge-base", "--is-ancestor", head_before, "HEAD") == ""  # main only moved forward
    logs = "".join(p.read_text() for p in ws.logs_dir.glob("tick_*-T-*.log"))
    # The main work tree, its documents and the other worktree are bound read-only over the
    # private /tmp (SPEC §13): every write is refused there, not made into a scratch copy.
    assert "ESCAPED" not in logs and logs.count("refused: git update-ref") == 2
    assert logs.count(f"refused: {ws.root / 'other.txt'}: Read-only file system") == 2
    assert logs.count(f"refused: {ws.root / 'docs' / 'MASTER_PLAN.md'}: Read-only file system") == 2
    assert logs.count("escaped.txt: Read-only file system") == logs.count("escaped.txt:")
    assert leftovers(ws) == ([], [], 1)


def test_a_tick_runs_at_least_one_round_of_workers(tmp_path):
    """max_tasks_per_tick: 1 (the default) with [workers] max = 2: each tick does two tasks."""
    ids = ["T-1", "T-2", "T-3", "T-4"]
    ws, _ = make_parallel_ws(tmp_path, ids, workers=2, per_tick=1)
    assert run_tick(ws.root).exit_code == 0
    assert sorted(t.status for t in parse_plan(ws.plan_path).tasks) == [" ", " ", "x", "x"]
    assert run_tick(ws.root).exit_code == 0
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == ["x"] * 4
    assert leftovers(ws) == ([], [], 1)


def test_confined_workers_memory_writes_reach_the_projects_memory(tmp_path):
    """`memento memory write` in a worker's sandbox is queued in its worktree and applied to the
    project's one memory store, attributed to the task."""
    from memento_core import sandbox
    from memento_core.config.load import load_config
    from memento_core.memory import init_store
    from memento_core.memory.store import history

    ids = ["T-1", "T-2"]
    ws, scratch = make_parallel_ws(tmp_path, ids, workers=2, mode="learns")
    text = ws.config_path.read_text().replace('mode = "none"', f'mode = "bwrap"\nwritable = ["{scratch}"]')
    ws.config_path.write_text(text)
    git(ws.root, "commit", "-qam", "confined")
    if not sandbox.resolve(load_config(ws.config_path)).confined:
        pytest.skip("bubblewrap cannot run here")
    init_store(ws)
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    assert [t.status for t in parse_plan(ws.plan_path).tasks] == ["x", "x"]
    for tid in ids:
        lesson = ws.memory_dir / "knowledge" / "lessons" / f"{tid.lower()}.md"
        assert f"what {tid} learned" in lesson.read_text()
        (c,) = [c for c in history(ws) if c.subject == f"lesson of {tid}"]
        assert c.source == tid
    assert not (ws.root / WORKTREES).exists() or leftovers(ws) == ([], [], 1)
