"""Red team, processes, recovery and limits (SPEC §13): hostile agents judged on disk and in git.

Each test runs a hostile fake agent from tests/agents/ through the real `command`
preset and a real tick (in-process like the dashboard, or `python -m memento_core.tick`
like cron), then looks at the processes, the files and the commits.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.git import rollback as git_rollback
from memento_core.plan.scan import parse_plan
from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES

from .test_engine import HELLO, agent, entries, git, make_ws
from .test_engine import _alive as alive

PY = sys.executable


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def cron_tick(root: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "MEMENTO_CRASH_AT"}
    return subprocess.run([PY, "-m", "memento_core.tick", "--project", str(root)], env=env,
                          capture_output=True, text=True, timeout=120)


def _kill_if_alive(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- 1. no process survives


@pytest.mark.parametrize("leader", ["", "leader-exits"])
@pytest.mark.parametrize("how", ["in-process", "cron"])
def test_a_setsid_daemon_is_killed_before_verify_and_changes_nothing(tmp_path, how, leader):
    """``leader-exits``: the daemon's first thread ends and /proc says "Z" (a zombie) of it while its
    other thread lives on and waits for its moment."""
    pidfile = tmp_path / "daemon.pid"
    ws = make_ws(tmp_path, agent("leaves_daemon.py", "hello.txt", "done", str(pidfile), "verifying,committing",
                                 leader))
    try:
        if how == "cron":
            ran = cron_tick(ws.root)
            assert ran.returncode == 0, ran.stderr
        else:
            assert run_tick(ws.root).exit_code == 0
        daemon = int(pidfile.read_text())
        assert not alive(daemon) and not _any_thread_alive(daemon)
        # What was committed is what verify checked, and it is still on disk.
        assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"
        assert (ws.root / "hello.txt").read_text() == "done\n"
        assert parse_plan(ws.plan_path).task("T-1").status == "x"
        assert "had left group" in (ws.root / entries(ws)[-1].log_path).read_text()
        # The daemon would mark every task done now: it is gone, so nothing happens,
        # and the lock it was waiting for is free for the next tick.
        plan = ws.plan_path.read_bytes()
        Path(str(pidfile) + ".go").write_text("go")
        nxt = run_tick(ws.root)
        assert "previous tick still running" not in nxt.message and nxt.exit_code == 0
        assert ws.plan_path.read_bytes().count(b"- [x]") == plan.count(b"- [x]") == 1
        assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"
    finally:
        if pidfile.exists():
            _kill_if_alive(int(pidfile.read_text()))


def _any_thread_alive(pid: int) -> bool:
    """Whether a thread of ``pid`` still runs: /proc says "Z" of a process whose first thread ended
    while others run on, so its state alone does not tell."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for tid in tasks:
        try:
            state = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            return True
    return False


def test_the_subreaper_flag_is_only_set_while_a_tick_runs(tmp_path):
    from memento_core.agents import reaper

    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"))
    before = reaper.is_subreaper()
    assert run_tick(ws.root).exit_code == 0
    assert reaper.is_subreaper() == before


def test_a_process_group_the_tick_did_not_start_is_left_alone(tmp_path):
    """A process group of the caller's (the dashboard's, a test's) is not the agent's."""
    dummy = subprocess.Popen([PY, "-c", "import time; time.sleep(600)"], start_new_session=True)
    pidfile = tmp_path / "daemon.pid"
    try:
        ws = make_ws(tmp_path, agent("leaves_daemon.py", "hello.txt", "done", str(pidfile)))
        assert run_tick(ws.root).exit_code == 0
        assert alive(dummy.pid)
        assert not alive(int(pidfile.read_text()))
    finally:
        dummy.kill()
        dummy.wait()
        if pidfile.exists():
            _kill_if_alive(int(pidfile.read_text()))


# ---------------------------------------------------------------- 2, 3. recovery trusts nothing the agent wrote


def _killed_then_recovered(tmp_path, mode: str, arg: str = "", *, sandbox: str = "none", **plan_kw):
    """Unconfined, the agent kills its tick and the next tick recovers. In the sandbox (its own PID
    namespace, `.memento/` and docs/ read-only) it can neither find its tick nor forge anything:
    it dies trying, and both ticks record an honest failure."""
    once = tmp_path / "once"
    ws = make_ws(tmp_path, agent("kills_its_tick.py", mode, str(once), arg), sandbox=sandbox, **plan_kw)
    killed = cron_tick(ws.root)
    if sandbox == "none":
        assert killed.returncode == -signal.SIGKILL, (killed.stdout, killed.stderr)
    else:
        assert killed.returncode == 0 and "Traceback" not in killed.stderr, (killed.stdout, killed.stderr)
    recovered = cron_tick(ws.root)
    assert recovered.returncode in (0, 1) and "Traceback" not in recovered.stderr, recovered.stderr
    return ws


def _stale(ws, sandbox: str) -> None:
    """One STALE entry for the killed tick unconfined; none in the sandbox (the tick was never killed)."""
    assert len([e for e in entries(ws) if e.status == "STALE"]) == (1 if sandbox == "none" else 0)


def every_version(root: Path, path: str) -> set[str]:
    """The contents ``path`` has in any commit reachable from any ref."""
    out = set()
    for sha in git(root, "rev-list", "--all").split():
        shown = subprocess.run(["git", "show", f"{sha}:{path}"], cwd=root, capture_output=True, text=True)
        if shown.returncode == 0:
            out.add(shown.stdout)
    return out


@pytest.mark.parametrize("sandbox", MODES)
def test_a_forged_committing_claim_and_success_entry_are_not_honoured(tmp_path, sandbox):
    ws = _killed_then_recovered(tmp_path, "forge-commit", sandbox=sandbox)
    assert "broken\n" not in every_version(ws.root, "hello.txt")
    assert not (ws.root / "hello.txt").exists()
    _stale(ws, sandbox)
    stale = [e for e in entries(ws) if e.status == "STALE"]
    assert all("did not write" in e.field("Reason") for e in stale)
    assert not [e for e in entries(ws) if e.status == "SUCCESS"]
    assert all("2026-12-01T00:00:00Z" not in v for v in every_version(ws.root, "docs/TICK_STATUS.md"))
    assert "2026-12-01T00:00:00Z" not in ws.status_path.read_text()
    task = parse_plan(ws.plan_path).task("T-1")
    assert task.status == " " and task.retries == 2  # the killed attempt, then the honest failure


@pytest.mark.parametrize("sandbox", MODES)
def test_a_claim_naming_an_unrelated_process_group_kills_nothing_of_it(tmp_path, sandbox):
    dummy = subprocess.Popen([PY, "-c", "import time; time.sleep(600)"], start_new_session=True)
    try:
        ws = _killed_then_recovered(tmp_path, "pgid", str(dummy.pid), sandbox=sandbox)
        assert alive(dummy.pid)
        _stale(ws, sandbox)
    finally:
        dummy.kill()
        dummy.wait()


@pytest.mark.parametrize("sandbox", MODES)
def test_a_cleanignore_of_star_written_by_the_agent_does_not_keep_its_changes(tmp_path, sandbox):
    ws = _killed_then_recovered(tmp_path, "cleanignore", sandbox=sandbox)
    assert not (ws.root / "evil.txt").exists() and not (ws.root / "hello.txt").exists()
    assert (ws.root / "other.txt").read_text() == "someone else's file\n"
    assert "*" not in ws.cleanignore_path.read_text().split()
    if sandbox == "none":  # in the sandbox the agent died at its first write (.memento_cleanignore)
        saved = list((ws.root / "logs" / "rollback").rglob("evil.txt"))
        assert saved and saved[0].read_text() == "the agent's file\n"
    dirty = {ln[3:] for ln in git(ws.root, "status", "--porcelain", "--untracked-files=no").splitlines()}
    assert dirty <= {"docs/TICK_STATUS.md", "docs/CURRENT_STATE.md", "docs/MASTER_PLAN.md"}, dirty


@pytest.mark.parametrize("sandbox", MODES)
def test_the_agents_own_commits_and_plan_edits_are_undone_after_it_kills_its_tick(tmp_path, sandbox):
    ws = _killed_then_recovered(tmp_path, "plan", sandbox=sandbox)
    assert "T-1 done (trust me)" not in git(ws.root, "log", "--format=%s")
    assert not any(v == "broken\n" for v in
                   (git(ws.root, "show", f"{sha}:hello.txt") for sha in git(ws.root, "rev-list", "HEAD").split()
                    if "hello.txt" in git(ws.root, "ls-tree", "--name-only", sha)))
    head_versions = {git(ws.root, "show", f"{sha}:docs/MASTER_PLAN.md") for sha in
                     git(ws.root, "rev-list", "HEAD").split()}
    assert all("max_retries: 99" not in v for v in head_versions)
    plan = parse_plan(ws.plan_path)
    assert plan.meta.max_retries == 3
    assert plan.task("T-1").verify == "grep -q done hello.txt"
    assert "max_retries: 99" not in ws.plan_path.read_text()
    assert not (ws.root / "hello.txt").exists()
    assert plan.task("T-1").retries == 2


def test_a_task_the_agent_committed_done_and_left_running_before_killing_its_tick_is_not_set_back_to_done(tmp_path):
    # The recovery sets back to [x] a [~] task with no claim that the last commit has [x] (an editor's
    # stale save over a pass). An agent can stage that: commit an earlier pending task as [x], leave it
    # [~], kill its tick. Its own killed attempt is undone first, so the last commit is honest again.
    zero = "- [ ] `T-0` [MODULE:zero] Write zero\n  - verify: `test -f zero.txt`\n  - context_files: [zero.txt]\n" \
           "  - retries: 3\n"  # no retries left: not picked, T-1 runs
    ws = _killed_then_recovered(tmp_path, "other-done", "T-0", tasks=zero + HELLO)
    assert "T-0 done (trust me)" not in git(ws.root, "log", "--format=%s")
    assert parse_plan(ws.plan_path).task("T-0").status != "x"
    assert not [e for e in entries(ws) if (e.field("Event") or "").endswith("set back to [x]")]
    assert not (ws.root / "zero.txt").exists()


@pytest.mark.parametrize("sandbox", MODES)
def test_a_task_that_kills_its_tick_every_time_ends_blocked_and_the_breaker_counts_it(tmp_path, sandbox):
    from memento_core.state import TickState

    ws = make_ws(tmp_path, agent("kills_its_tick.py", "always", str(tmp_path / "unused")), max_retries=3,
                 sandbox=sandbox)
    # In the sandbox the agent stops its guard and dies: each attempt ends at the agent's timeout.
    toml = ws.root / "memento.toml"
    toml.write_text(toml.read_text().replace('timeout = "20s"\n[verify]', 'timeout = "5s"\n[verify]', 1))
    git(ws.root, "commit", "-qam", "a short agent timeout")
    for _ in range(3):  # in the sandbox its tick is out of its reach: three honest failures
        code = cron_tick(ws.root).returncode
        assert code == -signal.SIGKILL if sandbox == "none" else code in (0, 1)
    last = cron_tick(ws.root)
    assert last.returncode in (0, 1), last.stderr
    task = parse_plan(ws.plan_path).task("T-1")
    assert task.status == "!" and task.retries == 3
    assert TickState.load(ws).consecutive_failed_ticks >= 3
    assert "broken\n" not in every_version(ws.root, "hello.txt")
    logs = "".join(log.read_text() for log in ws.logs_dir.glob("tick_*.log"))
    assert "Traceback" not in logs  # the run stopped at its timeout, the sandbox's proxy with it


# ---------------------------------------------------------------- 3. odd names: a recorded result, never a crash loop


ODD = ["newline", "bytes", "dash", "ctrl", "symlink"]


@pytest.mark.parametrize("inside", [False, True], ids=["outside-context", "inside-context"])
@pytest.mark.parametrize("mode", ODD)
def test_odd_file_names_end_as_a_recorded_result(tmp_path, mode, inside):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "person.txt").write_text("a person's file outside the project\n")
    tasks = HELLO_SRC if inside else HELLO
    ws = make_ws(tmp_path, agent("odd_names.py", mode, str(outside)), tasks=tasks)
    (ws.root / "src").mkdir()
    (ws.root / "src" / "keep.txt").write_text("tracked\n")
    git(ws.root, "add", "src/keep.txt")
    git(ws.root, "commit", "-qm", "src")
    ran = cron_tick(ws.root)
    assert ran.returncode in (0, 1), ran.stderr
    assert "Traceback" not in ran.stderr
    plan = parse_plan(ws.plan_path)
    task = plan.task("T-1")
    assert task.status in ("x", " ", "!"), task.status
    (last,) = [e for e in entries(ws) if e.task_id == "T-1"]
    assert last.status in ("SUCCESS", "FAILED"), last.status
    if last.status == "FAILED":
        assert task.retries == 1
    assert (outside / "person.txt").read_text() == "a person's file outside the project\n"
    assert sorted(p.name for p in outside.iterdir()) == ["person.txt"]
    assert not list((ws.root / ".memento" / "claims").glob("*.json"))
    # The next tick runs normally (no crash loop).
    again = cron_tick(ws.root)
    assert again.returncode in (0, 1) and "Traceback" not in again.stderr, again.stderr
    assert "[~]" not in ws.plan_path.read_text()
    if mode == "ctrl":
        for out in (ran.stdout + ran.stderr, again.stdout + again.stderr):
            assert "\x1b" not in out and "\x07" not in out


HELLO_SRC = """- [ ] `T-1` [MODULE:hello] Write hello
  - verify: `grep -q done hello.txt`
  - context_files: [hello.txt, src/]
  - retries: 0
"""


def test_an_exception_during_the_attempt_is_a_recorded_failure_not_a_crash_loop(tmp_path):
    ws = make_ws(tmp_path, agent("replaces_logs_folder.py"))
    for n in (1, 2):
        ran = cron_tick(ws.root)
        assert ran.returncode in (0, 1), ran.stderr
        task = parse_plan(ws.plan_path).task("T-1")
        assert task.status == " " and task.retries == n
        assert ws.logs_dir.is_dir()
    failed = [e for e in entries(ws) if e.status == "FAILED"]
    assert len(failed) == 2 and "Memento failed during the attempt" in failed[0].field("Reason")
    assert "hello.txt" not in git(ws.root, "ls-files")
    from memento_core.state import TickState

    assert TickState.load(ws).consecutive_failed_ticks == 2


# ---------------------------------------------------------------- 4. limits


HELLO_BLOB = HELLO.replace("context_files: [hello.txt]", "context_files: [hello.txt, blob.bin]")


def test_a_large_binary_is_refused_by_max_diff_bytes_not_counted_as_zero_lines(tmp_path):
    ws = make_ws(tmp_path, agent("writes_binary.py", "blob.bin", str(6 * 1024 * 1024)), tasks=HELLO_BLOB)
    assert run_tick(ws.root).exit_code == 0
    (last,) = entries(ws)
    assert last.status == "FAILED" and "max_diff_bytes" in last.field("Reason")
    assert "blob.bin" not in git(ws.root, "log", "--all", "--name-only", "--format=")
    assert not (ws.root / "blob.bin").exists()
    assert parse_plan(ws.plan_path).meta.max_diff_bytes == 5 * 1024 * 1024


@pytest.mark.parametrize("size,passes", [(2000, False), (500, True)])
def test_max_diff_bytes_from_meta_bounds_binary_files(tmp_path, size, passes):
    ws = make_ws(tmp_path, agent("writes_binary.py", "blob.bin", str(size)), tasks=HELLO_BLOB,
                 extra_meta="- max_diff_bytes: 1000\n")
    assert run_tick(ws.root).exit_code == 0
    (last,) = entries(ws)
    assert (last.status == "SUCCESS") is passes, last.field("Reason")
    assert ("blob.bin" in git(ws.root, "ls-files")) is passes


def test_a_rollback_copies_at_most_its_limit_and_lists_the_rest(tmp_path, monkeypatch):

    monkeypatch.setattr(git_rollback, "ROLLBACK_COPY_LIMIT", 3000)
    ws = make_ws(tmp_path, agent("writes_binary.py", "blob.bin", "5000"), tasks=HELLO_BLOB,
                 extra_meta="- max_diff_bytes: 1000\n")
    assert run_tick(ws.root).exit_code == 0
    (last,) = entries(ws)
    assert last.status == "FAILED" and "NOT_COPIED.txt" in last.field("Files Modified")
    (folder,) = [p for p in (ws.root / "logs" / "rollback").iterdir()]
    assert "blob.bin\t5000 bytes" in (folder / "NOT_COPIED.txt").read_text()
    assert (folder / "files" / "hello.txt").read_text() == "done\n"  # small files are still copied
    assert not (folder / "files" / "blob.bin").exists() and (folder / "changes.patch").exists()


def test_a_flooded_tick_log_keeps_its_first_and_last_bytes(tmp_path, monkeypatch):
    from memento_core.agents import logcap

    monkeypatch.setattr(logcap, "KEEP", 100_000)
    ws = make_ws(tmp_path, agent("floods_log.py", str(3_000_000)))
    assert run_tick(ws.root).exit_code == 0
    (last,) = entries(ws)
    log = (ws.root / last.log_path).read_bytes()
    assert len(log) < 2 * 100_000 + 20_000
    assert b"bytes cut from the middle of this log" in log
    assert log.startswith(b"[memento]") and b"FIRST LINE OF THE AGENT" in log[:100_000]
    assert b"LAST LINE OF THE AGENT" in log[-100_000:] and b"[memento] verify T-1" in log
    assert last.status == "SUCCESS"


# ---------------------------------------------------------------- 5. no control character reaches a terminal


def test_no_command_prints_the_control_characters_of_a_file_name(tmp_path):
    ws = make_ws(tmp_path, agent("odd_names.py", "ctrl"))
    outputs = []
    for args in (["tick"], ["status"], ["status", "--json"], ["doctor"], ["doctor", "--json"], ["lint"]):
        ran = subprocess.run([PY, "-m", "memento_core.cli", *args, str(ws.root)], capture_output=True, text=True,
                             timeout=120)
        assert "Traceback" not in ran.stderr, (args, ran.stderr)
        outputs.append((args, ran.stdout + ran.stderr))
    tick_out = outputs[0][1]
    assert "src/?]52;c;ZXZpbA==??[2J.txt" in tick_out  # shown, made harmless
    for args, out in outputs:
        assert "\x1b" not in out and "\x07" not in out, args


# ---------------------------------------------------------------- 6. lint: verify's own files


LINT_PLAN = """- [ ] `T-1` [MODULE:a] Judged by a test the worker may rewrite
  - verify: `python -m pytest -q tests/test_a.py::test_one`
  - context_files: [src/a.py, tests/]
  - retries: 0

- [ ] `T-2` [MODULE:b] Its test is guarded
  - verify: `python -m pytest -q tests/test_b.py`
  - context_files: [src/b.py, tests/test_b.py]
  - guard_files: [tests/test_b.py]
  - retries: 0

- [ ] `T-3` [MODULE:c] Its test is outside its context
  - verify: `sh scripts/check_c.sh && python3 -c 'import c'`
  - context_files: [src/c.py]
  - retries: 0
"""


def test_lint_warns_when_verify_runs_a_file_the_worker_may_edit(tmp_path):
    ws = make_ws(tmp_path, "true", tasks=LINT_PLAN)
    ran = subprocess.run([PY, "-m", "memento_core.cli", "lint", str(ws.root)], capture_output=True, text=True,
                         timeout=60)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    warnings = [ln for ln in ran.stdout.splitlines() if "the worker could rewrite the test" in ln]
    line = next(n for n, text in enumerate(ws.plan_path.read_text().splitlines(), 1)
                if "tests/test_a.py::test_one" in text)
    assert warnings == [f"[warn] docs/MASTER_PLAN.md:{line}: T-1 verify runs `tests/test_a.py`, which is in "
                        "context_files and not in guard_files: the worker could rewrite the test that judges it "
                        "(add it to guard_files)"]


def test_a_daemon_left_by_verify_is_killed_before_the_commit(tmp_path):
    pidfile = tmp_path / "daemon.pid"
    daemon = " ".join([PY, str(Path(__file__).resolve().parents[2] / "agents" / "leaves_daemon.py"),
                       "hello.txt", "done", str(pidfile), "committing"])
    tasks = HELLO.replace("verify: `grep -q done hello.txt`", f"verify: `{daemon} && grep -q done hello.txt`")
    ws = make_ws(tmp_path, agent("does_task.py", "hello.txt", "done"), tasks=tasks)
    try:
        assert run_tick(ws.root).exit_code == 0
        assert not alive(int(pidfile.read_text()))
        assert entries(ws)[-1].status == "SUCCESS"
        assert git(ws.root, "show", "HEAD:hello.txt") == "done\n"
        assert (ws.root / "hello.txt").read_text() == "done\n"
    finally:
        if pidfile.exists():
            _kill_if_alive(int(pidfile.read_text()))
