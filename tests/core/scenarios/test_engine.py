"""The tick engine end to end: real git, real fake agents under tests/agents/, real files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memento_core import status_log
from memento_core.demo import create_demo
from memento_core.notes import add_note, parse_notes
from memento_core.plan.scan import parse_plan
from memento_core.scaffold import init_workspace
from memento_core.state import claim_is_stale, read_claim
from memento_core.status_log import entries_with_commits
from memento_core.tick import guards
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace

AGENTS = Path(__file__).resolve().parents[2] / "agents"
PY = sys.executable


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def plan_text(tasks: str, *, max_retries: int = 3, extra_meta: str = "") -> str:
    return f"""# MASTER_PLAN: engine test

## Meta
- tick_mode: auto
- max_retries: {max_retries}
- max_tasks_per_tick: 1
- max_diff_lines: 50
- stale_lock_timeout: 15min
- circuit_breaker_threshold: 5
- total_ticks: 0
{extra_meta}
## Phase 1: Only
<!-- depends: none -->

{tasks}
"""


HELLO = """- [ ] `T-1` [MODULE:hello] Write hello
  - verify: `grep -q done hello.txt`
  - context_files: [hello.txt]
  - guard_files: [guarded.txt]
  - retries: 0
"""


def make_ws(tmp_path: Path, command: str, tasks: str = HELLO, *, sandbox: str = "none", **plan_kw) -> Workspace:
    """A committed workspace whose agent is ``command`` (the `command` preset).

    ``sandbox`` is memento.toml's `[sandbox] mode`: "none" by default, because these
    tests judge the guards that must hold without a sandbox (SPEC §13) and talk to
    their agents through files outside the project; tests/core/sandbox/test_sandbox.py runs
    hostile agents confined.
    """
    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(plan_text(tasks, **plan_kw))
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "command"\ncommand = """{command}"""\ntimeout = "20s"\n[verify]\ntimeout = "20s"\n'
        f'[sandbox]\nmode = "{sandbox}"\n'
    )
    (root / "guarded.txt").write_text("do not touch\n")
    (root / "other.txt").write_text("someone else's file\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    return Workspace(root)


def agent(name: str, *args: str) -> str:
    return " ".join([PY, str(AGENTS / name), *args])


def entries(ws: Workspace) -> list[status_log.TickEntry]:
    return status_log.parse_status(ws.status_path)


def tree_files(root: Path) -> dict[str, bytes]:
    """Every file in the work tree outside .git and Memento's runtime folders, with its bytes."""
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if p.is_file() and rel.parts[0] not in (".git", "logs", ".memento", "memory"):
            out[rel.as_posix()] = p.read_bytes()
    return out


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


# --------------------------------------------------------------------------- pass


def test_a_task_that_passes_is_committed_alone_with_plan_and_status(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    add_note(ws.notes_path, "say it politely", target="T-1")
    add_note(ws.notes_path, "a global note", target="global")
    add_note(ws.notes_path, "for someone else", target="T-9")
    (ws.root / "scratch.txt").write_text("a person's untracked file\n")
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    subjects = git(ws.root, "log", "--format=%s").splitlines()
    assert subjects[:2] == ["memento: complete T-1 Write hello", "memento: sync docs"]
    files = set(git(ws.root, "show", "--name-only", "--format=", "HEAD").split())
    assert files == {"hello.txt", "docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md",
                     "docs/CURRENT_STATE.md"}  # one commit holds everything the tick wrote
    assert git(ws.root, "status", "--porcelain", "--untracked-files=no") == ""
    (entry,) = entries_with_commits(ws.root, entries(ws))  # the entry names its commit by trailer
    assert entry.status == "SUCCESS" and entry.task_id == "T-1" and entry.tick == 1
    assert entry.field("Files Modified") == "hello.txt (+1 -0)"
    assert entry.field("Diff Size") == "1 lines"
    sha = git(ws.root, "rev-parse", "--short=7", "HEAD").strip()
    assert entry.commit_sha == sha
    read = {n.text: n.read for n in parse_notes(ws.notes_path)}
    assert read == {"say it politely": True, "a global note": True, "for someone else": False}
    assert (ws.root / "scratch.txt").exists()
    assert parse_plan(ws.plan_path).meta.total_ticks == 1
    assert parse_plan(ws.plan_path).meta.completed_tasks == 1
    assert read_claim(ws, "T-1") is None
    log = (ws.root / entry.log_path).read_text()
    assert "does_task.py" in log and "[memento] verify T-1" in log


def test_prompt_carries_task_notes_map_checkpoint_and_failed_attempts(tmp_path):
    ws = make_ws(tmp_path, agent("exits_nonzero.py"))
    add_note(ws.notes_path, "use the blue pen", target="T-1")
    run_tick(ws.root)
    run_tick(ws.root)
    prompt = (ws.memento_dir / "prompts" / "T-1.md").read_text()
    assert "Memento Tick Worker" in prompt  # the system prompt
    assert "- [~] `T-1` [MODULE:hello] Write hello" in prompt and "grep -q done hello.txt" in prompt
    assert "use the blue pen" in prompt
    assert "## docs/PROJECT_MAP.md" in prompt and "## docs/CURRENT_STATE.md" in prompt
    assert "Previous failed attempts of T-1 (1)" in prompt and "agent exited with code 3" in prompt
    assert ".memento/worker/tick_result.md" in prompt


def test_worker_report_is_folded_into_the_entry(tmp_path):
    ws = make_ws(tmp_path, agent("reports.py", "hello.py"),
                 tasks=HELLO.replace("hello.txt", "hello.py").replace("grep -q done hello.py", "python3 hello.py"))
    assert run_tick(ws.root).exit_code == 0
    (entry,) = entries(ws)
    assert entry.status == "SUCCESS"
    assert entry.field("Outputs") == "exported greet() from hello.py"


# --------------------------------------------------------------------------- failures

GRANDCHILD_PID = "grandchild.pid"

MISBEHAVIOURS = {
    "verify_fails": (agent("does_task.py", "hello.txt", "not it"), "verify failed with exit code 1"),
    "agent_exits_nonzero": (agent("exits_nonzero.py"), "agent exited with code 3"),
    "guard_file": (agent("does_task.py", "guarded.txt", "done"), "guard file changed: guarded.txt"),
    "outside_context": (agent("does_task.py", "src/elsewhere.py", "done"),
                        "changed files outside context_files: src/elsewhere.py"),
    "edits_own_verify": (agent("edits_plan_verify.py", "T-1"),
                         "the agent edited the definition of T-1 in docs/MASTER_PLAN.md"),
    "edits_project_map": (agent("edits_project_map.py"),
                          "the agent edited docs/PROJECT_MAP.md (the worker only reads it)"),
    "diff_too_large": (agent("writes_big_diff.py", "hello.txt", "120"),
                       "diff too large: 120 lines > max_diff_lines 50"),
    "commits_itself": (agent("commits_itself.py", "hello.txt"), "the agent made 2 commit(s) of its own"),
}


@pytest.mark.parametrize("name", sorted(MISBEHAVIOURS))
def test_each_misbehaviour_fails_with_its_reason_and_rolls_back(tmp_path, name):
    command, reason = MISBEHAVIOURS[name]
    ws = make_ws(tmp_path, command, max_retries=2)
    (ws.root / "notes-to-self.txt").write_text("pre-existing untracked file\n")
    head_before = git(ws.root, "rev-parse", "HEAD").strip()
    before = tree_files(ws.root)
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0
    (entry,) = entries(ws)
    assert entry.status == "FAILED"
    assert reason in entry.field("Reason"), entry.field("Reason")
    assert entry.field("Status") == "❌ FAILED (retry 1/2)"
    after = tree_files(ws.root)
    code_before = {k: v for k, v in before.items() if not k.startswith("docs/") or k == "docs/PROJECT_MAP.md"}
    code_after = {k: v for k, v in after.items() if not k.startswith("docs/") or k == "docs/PROJECT_MAP.md"}
    assert code_after == code_before  # the exact pre-tick tree, untracked file included
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries, task.verify) == (" ", 1, "grep -q done hello.txt")
    # HEAD moved only by Memento's own bookkeeping commits, none holding code.
    for sha in git(ws.root, "rev-list", f"{head_before}..HEAD").split():
        files = git(ws.root, "show", "--name-only", "--format=", sha).split()
        assert all(f.startswith("docs/") and f != "docs/PROJECT_MAP.md" for f in files), files
    assert git(ws.root, "log", "-1", "--format=%s") == "memento: T-1 failed (retry 1/2)\n"
    saved = list((ws.root / "logs" / "rollback").glob("*")) if (ws.root / "logs" / "rollback").exists() else []
    if name not in ("agent_exits_nonzero",):
        assert saved and (saved[0] / "README.txt").exists()
    # Second failure blocks the task and escalates.
    run_tick(ws.root)
    last = [e for e in entries(ws) if not e.is_event][-1]
    assert last.status == "BLOCKED" and last.field("Escalation") == "⚠️ NEEDS ARCHITECT ATTENTION"
    assert parse_plan(ws.plan_path).task("T-1").status == "!"
    assert ws.alert_path.exists() and "blocked_tasks: 1" in ws.alert_path.read_text()


def test_a_hung_agent_and_its_sigterm_proof_grandchild_are_killed(tmp_path):
    pidfile = tmp_path / GRANDCHILD_PID
    ws = make_ws(tmp_path, agent("hangs_with_grandchild.py", str(pidfile)))
    toml = ws.config_path.read_text().replace('timeout = "20s"\n[verify]', 'timeout = "2s"\n[verify]')
    ws.config_path.write_text(toml)
    git(ws.root, "commit", "-qam", "short timeout")
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0
    (entry,) = entries(ws)
    assert "agent timed out after 2.0s" in entry.field("Reason") or "agent timed out after 2s" in entry.field("Reason")
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        return state != "Z"
    except OSError:
        return False


# --------------------------------------------------------------------------- crashes and concurrency


def _start_tick(ws: Workspace, *, heartbeat_seconds: float | None = None) -> subprocess.Popen:
    env = dict(os.environ)
    if heartbeat_seconds is not None:
        env["MEMENTO_HEARTBEAT_SECONDS"] = str(heartbeat_seconds)  # read by memento_core.state
    return subprocess.Popen([PY, "-m", "memento_core.tick", "--project", str(ws.root)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


def _wait_for(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached")
        time.sleep(0.05)


def test_sigkilled_tick_leaves_a_stale_claim_the_next_tick_resets(tmp_path):
    pidfile = tmp_path / "agent.pid"
    ws = make_ws(tmp_path, agent("sleeps.py", str(pidfile)))
    tick = _start_tick(ws)
    try:
        _wait_for(pidfile.exists)
        _wait_for(lambda: (c := read_claim(ws, "T-1")) is not None and c.pgid is not None)
        # A second tick while one runs is skipped, with a cron.log line.
        second = subprocess.run([PY, "-m", "memento_core.tick", "--project", str(ws.root)],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 0 and "previous tick still running" in second.stdout
        assert "tick skipped: previous tick still running" in ws.cron_log.read_text()
        os.kill(tick.pid, signal.SIGKILL)
        tick.wait(timeout=30)
    finally:
        if tick.poll() is None:
            tick.kill()
        tick.communicate()
    agent_pid = int(pidfile.read_text())
    _wait_for(lambda: not _alive(agent_pid), 10)  # its run's guard ends it with the tick (SPEC §13)
    assert parse_plan(ws.plan_path).task("T-1").status == "~"
    # The next tick resets the task.
    # A person commits after the tick died (commits while it could still be alive are the
    # attempt's: wait out the record's beacon window first).
    record = ws.memento_dir / "records" / "T-1.json"
    last_alive = max(record.stat().st_ctime, (ws.memento_dir / "claims" / "T-1.json").stat().st_ctime)
    _wait_for(lambda: time.time() > last_alive + 2.5)
    ws.config_path.write_text(ws.config_path.read_text().replace(f"sleeps.py {pidfile}", "does_task.py hello.txt done"))
    git(ws.root, "commit", "-qam", "a working agent")
    outcome = run_tick(ws.root)
    assert not _alive(agent_pid)
    stale = [e for e in entries(ws) if e.status == "STALE"]
    assert len(stale) == 1 and "Stale [~] detected on T-1, reset to [ ]" in stale[0].field("Event")
    assert "a person's): its commits were kept" in stale[0].field("Rollback")
    assert outcome.exit_code == 0 and parse_plan(ws.plan_path).task("T-1").status == "x"
    assert parse_plan(ws.plan_path).task("T-1").retries == 1  # a killed attempt counts a retry (SPEC §13)
    assert "a working agent" in git(ws.root, "log", "--format=%s")


def test_alive_heartbeating_worker_is_never_reset(tmp_path):
    pidfile = tmp_path / "agent.pid"
    ws = make_ws(tmp_path, agent("sleeps.py", str(pidfile)))
    ws.plan_path.write_text(ws.plan_path.read_text().replace("stale_lock_timeout: 15min", "stale_lock_timeout: 2s"))
    git(ws.root, "commit", "-qam", "claims go stale after 2s without a heartbeat")
    stale_after = parse_plan(ws.plan_path).meta.stale_lock_timeout
    tick = _start_tick(ws, heartbeat_seconds=0.1)
    try:
        _wait_for(pidfile.exists)
        _wait_for(lambda: (c := read_claim(ws, "T-1")) is not None and c.pgid is not None)
        last_mark = read_claim(ws, "T-1").heartbeat  # the tick's last progress mark (the agent's pgid)
        # The agent sleeps and the tick makes no progress mark: for well past stale_lock_timeout
        # only the heartbeat thread can keep the claim fresh.
        _wait_for(lambda: time.time() > last_mark + 2.5 * stale_after)
        from memento_core.tick.context import TickContext
        from memento_core.tick.recovery import recover_stale_claims

        recover_stale_claims(TickContext(ws), parse_plan(ws.plan_path))  # SPEC §4 step 4, as another tick would run it
        assert parse_plan(ws.plan_path).task("T-1").status == "~"
        assert not [e for e in entries(ws) if e.status == "STALE"]
        claim = read_claim(ws, "T-1")
        assert claim is not None and claim.heartbeat > last_mark + stale_after
        assert claim_is_stale(claim, stale_after) is None
        assert _alive(int(pidfile.read_text()))
    finally:
        tick.terminate()
        tick.wait(timeout=30)
        tick.communicate()
    # SIGTERM: the tick kills the agent, records the interruption, releases the claim.
    assert parse_plan(ws.plan_path).task("T-1").status == " "
    assert parse_plan(ws.plan_path).task("T-1").retries == 0
    assert read_claim(ws, "T-1") is None
    assert entries(ws)[-1].field("Status").startswith("⏹ INTERRUPTED")
    assert not _alive(int(pidfile.read_text()))


# --------------------------------------------------------------------------- pipeline events


def test_breaker_trips_after_five_failing_ticks(tmp_path):
    ws = make_ws(tmp_path, agent("exits_nonzero.py"), max_retries=50)
    codes = [run_tick(ws.root).exit_code for _ in range(5)]
    assert codes == [0, 0, 0, 0, 1]
    plan = parse_plan(ws.plan_path)
    assert plan.meta.tick_mode == "paused"
    breaker = [e for e in entries(ws) if e.status == "CIRCUIT BREAKER"]
    assert len(breaker) == 1
    assert "5 consecutive ticks attempted work and passed nothing" in breaker[0].field("Event")
    assert "circuit_breaker: TRIGGERED" in ws.alert_path.read_text()
    assert run_tick(ws.root).message == "tick skipped: tick_mode is paused"
    assert "tick skipped: tick_mode is paused" in ws.cron_log.read_text()
    # A person's resume is the acknowledgement: the breaker and its streak are reset.
    r = subprocess.run([PY, "-m", "memento_core.cli", "resume", str(ws.root)], capture_output=True, text=True)
    assert "circuit breaker reset (it had tripped: 5 consecutive ticks" in r.stdout
    from memento_core.state import TickState

    state = TickState.load(ws)
    assert (state.breaker_reason, state.consecutive_failed_ticks) == ("", 0)
    assert run_tick(ws.root).exit_code == 0  # one more failure is not a trip
    assert not ws.alert_path.exists() or "circuit_breaker: OK" in ws.alert_path.read_text()


def test_blocked_over_thirty_percent_trips_the_breaker(tmp_path):
    tasks = HELLO + HELLO.replace("T-1", "T-2").replace("Write hello", "Second")
    ws = make_ws(tmp_path, agent("exits_nonzero.py"), tasks=tasks, max_retries=1)
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 1
    assert any("1 of 2 tasks were blocked" in (e.field("Event") or "") for e in entries(ws))
    assert parse_plan(ws.plan_path).meta.tick_mode == "paused"


def test_complete_and_blocked_are_written_once(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    for _ in range(4):
        run_tick(ws.root)
    assert [e.status for e in entries(ws)] == ["SUCCESS", "ALL TASKS COMPLETE"]
    ws2 = make_ws(tmp_path / "b", agent("exits_nonzero.py"), max_retries=1,
                  extra_meta="- circuit_breaker_threshold: 50\n")
    plan = ws2.plan_path.read_text().replace("- circuit_breaker_threshold: 5\n", "")
    ws2.plan_path.write_text(plan)
    git(ws2.root, "commit", "-qam", "no breaker")
    # One blocked task of one is over 30%: that trips the breaker, so resume after it.
    for _ in range(3):
        run_tick(ws2.root)
        subprocess.run([PY, "-m", "memento_core.cli", "resume", str(ws2.root)], check=True, capture_output=True)
    kinds = [e.status for e in entries(ws2)]
    assert kinds.count("PIPELINE BLOCKED") == 1, kinds


def test_plan_invalid_is_reported_once_and_exits_2(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    ws.plan_path.write_text(ws.plan_path.read_text() + HELLO)  # duplicate T-1
    codes = [run_tick(ws.root).exit_code for _ in range(3)]
    assert codes == [2, 2, 2]
    invalid = [e for e in entries(ws) if e.status == "PLAN INVALID"]
    assert len(invalid) == 1 and "T-1 duplicate task id" in invalid[0].error_tail
    assert "MASTER_PLAN.md is invalid" in ws.alert_path.read_text()
    assert "A person: fix docs/MASTER_PLAN.md" in ws.checkpoint_path.read_text()


def test_max_tasks_per_tick_runs_a_continued_task(tmp_path):
    tasks = HELLO + HELLO.replace("T-1", "T-2").replace("Write hello", "Again")
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "'done {task_id}'"), tasks=tasks)
    ws.plan_path.write_text(ws.plan_path.read_text().replace("max_tasks_per_tick: 1", "max_tasks_per_tick: 2"))
    git(ws.root, "commit", "-qam", "two per tick")
    outcome = run_tick(ws.root)
    assert [r.passed for r in outcome.results] == [True, True]
    first, second = entries(ws)
    assert first.tick == second.tick == 1 and second.continued and second.tasks_this_tick == (2, 2)


# --------------------------------------------------------------------------- the work tree


def test_a_persons_uncommitted_edit_makes_the_tick_refuse(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    (ws.root / "other.txt").write_text("half-finished human work\n")
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 1
    assert (ws.root / "other.txt").read_text() == "half-finished human work\n"
    (entry,) = entries(ws)
    assert entry.status == "DIRTY TREE" and "other.txt" in entry.field("Paths")
    assert "uncommitted changes" in ws.alert_path.read_text()
    assert parse_plan(ws.plan_path).task("T-1").status == " "
    run_tick(ws.root)
    assert len(entries(ws)) == 1  # not repeated while unchanged


def test_a_persons_plan_and_notes_edits_are_synced_before_the_task(tmp_path):
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    ws.plan_path.write_text(ws.plan_path.read_text().replace("# MASTER_PLAN: engine test", "# MASTER_PLAN: renamed"))
    add_note(ws.notes_path, "hello from a person")
    assert run_tick(ws.root).exit_code == 0
    subjects = git(ws.root, "log", "--format=%s").splitlines()
    assert subjects[:2] == ["memento: complete T-1 Write hello", "memento: sync docs"]
    synced = git(ws.root, "show", "HEAD~1", "--format=")
    assert "renamed" in synced and "hello from a person" in synced


def test_demo_project_runs_to_the_end(tmp_path):
    root = create_demo(tmp_path / "demo")
    codes = []
    for _ in range(20):
        codes.append(run_tick(root).exit_code)
        plan = parse_plan(root / "docs" / "MASTER_PLAN.md")
        if all(t.status in "x!-" for t in plan.tasks):
            break
    plan = parse_plan(root / "docs" / "MASTER_PLAN.md")
    assert {t.id: t.status for t in plan.tasks} == {
        "T-101": "x", "T-102": "x", "T-201": "x", "T-202": "x",
        "T-301": "x", "T-302": "x", "T-303": "x", "T-304": "!",
    }
    assert len(codes) <= 20 and codes[-1] == 1
    dirty = [line[3:] for line in git(root, "status", "--porcelain", "--untracked-files=no").splitlines()]
    assert set(dirty) <= {"docs/TICK_STATUS.md", "docs/CURRENT_STATE.md"}  # bookkeeping synced next tick
    assert subprocess.run([PY, "-m", "calc", "6", "*", "7"], cwd=root, capture_output=True, text=True).stdout == "42.0\n"
    doc = json.loads(subprocess.run([PY, "-m", "memento_core.cli", "status", "--json", str(root)],
                                    capture_output=True, text=True).stdout)
    assert doc["state"] == "BLOCKED" and doc["counts"]["done"] == 7


def test_temp_files_of_memento_documents_are_never_part_of_a_task():
    # A person's note being saved during the agent's run leaves such a file for a moment.
    assert guards.is_own_temp("docs/.HUMAN_NOTES.md.t6o2uw1d.tmp")
    assert guards.is_own_temp(".memento.toml.abc123.tmp")
    assert not guards.is_own_temp("src/.HUMAN_NOTES.md.x.tmp")
    assert not guards.is_own_temp("docs/.notes.tmp")
