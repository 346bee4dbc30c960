"""Several hosts on one plan through its git remote (SPEC §12 "Across machines").

Each host is a separate clone of one bare remote with its own runtime folders and
its own fake agent (tests/agents/, the `command` preset); ticks are real
subprocesses (`python -m memento_core.tick`). Judged on the remote: one commit per
task, no claim ref left, every commit a person pushed meanwhile still in history.
These are the scenarios; the tests of one module of memento_core/fleet/ are in
tests/core/fleet/test_<module>.py, with the helpers here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memento_core import fleet
from memento_core.config.load import load_config
from memento_core.fleet import claims, remote, sync  # noqa: F401 - loaded, so that fleet.<module> resolves
from memento_core.plan.scan import parse_plan_text
from memento_core.scaffold import init_workspace
from memento_core.tick.context import TickContext
from memento_core.workspace import Workspace

AGENTS = Path(__file__).resolve().parents[1] / "agents"
PROJECT = Path(__file__).resolve().parents[2]
PY = sys.executable


def git(root: Path, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=check).stdout


def plan_text(n: int, *, stale: str = "15min", max_tasks: int = 1, max_retries: int = 3,
              parallel: bool = False) -> str:
    tasks = "".join(
        f"- [ ] `T-{i}` Write out/{i}.txt\n"
        f"  - verify: `grep -q T-{i} out/{i}.txt`\n"
        f"  - context_files: [out/{i}.txt]\n"
        f"  - retries: 0\n"
        for i in range(1, n + 1))
    return f"""# MASTER_PLAN: fleet

## Meta
- tick_mode: auto
- max_retries: {max_retries}
- max_tasks_per_tick: {max_tasks}
- stale_lock_timeout: {stale}
- circuit_breaker_threshold: 50
- total_ticks: 0

## Phase 1: Only
<!-- depends: none -->
{"<!-- parallel: true -->" if parallel else ""}

{tasks}"""


def worker(*args: str) -> str:
    """The host's agent: tests/agents/fleet_worker.py writes out/<N>.txt for task T-N."""
    return " ".join([PY, str(AGENTS / "fleet_worker.py"), "{task_id}", *args])


AGENT = worker()


def make_fleet(tmp_path: Path, hosts: list[str], n_tasks: int, *, command: str = AGENT, **plan_kw) -> tuple[Path, dict[str, Path]]:
    """A bare remote seeded with a workspace, and one clone per host."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = tmp_path / "seed"
    init_workspace(seed, project="fleet", commit=False)
    (seed / "docs" / "MASTER_PLAN.md").write_text(plan_text(n_tasks, **plan_kw))
    (seed / "memento.toml").write_text(
        f'[agent]\npreset = "command"\ncommand = """{command}"""\ntimeout = "60s"\n'
        '[verify]\ntimeout = "60s"\n[sandbox]\nmode = "none"\n[workers]\nremote = "origin"\n')
    git(seed, "add", "-A")
    git(seed, "commit", "-qm", "setup")
    git(seed, "remote", "add", "origin", str(bare))
    git(seed, "push", "-q", "origin", "main")
    clones = {}
    for host in hosts:
        clones[host] = tmp_path / host
        git(tmp_path, "clone", "-q", str(bare), str(clones[host]))
    return bare, clones


def env_for(host: str, **extra: str) -> dict[str, str]:
    env = {**os.environ, "MEMENTO_HOST": host, "PYTHONPATH": str(PROJECT)}
    env.update(extra)
    return env


def start_tick(root: Path, host: str, **extra: str) -> subprocess.Popen:
    return subprocess.Popen([PY, "-m", "memento_core.tick", "--project", str(root)], env=env_for(host, **extra),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)


def tick_all(clones: dict[str, Path], **extra: str) -> dict[str, str]:
    procs = {h: start_tick(root, h, **extra) for h, root in clones.items()}
    out = {}
    for h, p in procs.items():
        stdout, _ = p.communicate(timeout=300)
        out[h] = stdout.decode()
        assert p.returncode in (0, 1), (h, out[h])
    return out


def remote_plan(bare: Path):
    return parse_plan_text(git(bare, "show", "main:docs/MASTER_PLAN.md"))


def subjects(bare: Path) -> list[str]:
    return git(bare, "log", "--format=%s", "main").splitlines()


def claim_refs(bare: Path) -> list[str]:
    return git(bare, "for-each-ref", "--format=%(refname)", "refs/memento/claims/").split()


def context(root: Path, host: str, monkeypatch) -> TickContext:
    monkeypatch.setenv("MEMENTO_HOST", host)
    ctx = TickContext(Workspace(root))
    ctx.config = load_config(ctx.ws.config_path)
    remote.fleet(ctx)  # its host name is read now
    return ctx


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


# --------------------------------------------------------------------------- one host


def test_one_host_claims_pushes_and_completes_through_the_remote(tmp_path):
    bare, clones = make_fleet(tmp_path, ["a"], 2)
    for _ in range(2):
        out = tick_all(clones)
        assert "[ok]" in out["a"], out
    plan = remote_plan(bare)
    assert [t.status for t in plan.tasks] == ["x", "x"]
    log = subjects(bare)
    assert log.count("memento: complete T-1 Write out/1.txt") == 1
    assert "memento: claim T-1 on a" in log and "memento: claim T-2 on a" in log
    assert claim_refs(bare) == []
    status = git(bare, "show", "main:docs/TICK_STATUS.md")
    assert "- **Host**: a" in status
    # The Git Commit field names the commit as it is on the remote.
    shas = {s[:7] for s in git(bare, "log", "--format=%H", "main").split()}
    import re
    for sha in re.findall(r"\*\*Git Commit\*\*: `([0-9a-f]{7})`", status):
        assert sha in shas
    assert git(clones["a"], "status", "--porcelain") == ""


# --------------------------------------------------------------------------- the compare-and-swap


# --------------------------------------------------------------------------- hosts ticking at once


class Person:
    """Someone who commits to the remote's main while the fleet works: a file of their own
    each round and, every other round, a note in HUMAN_NOTES.md (a document the hosts edit)."""

    def __init__(self, tmp_path: Path, bare: Path):
        self.root = tmp_path / "person"
        git(tmp_path, "clone", "-q", str(bare), str(self.root))
        self.commits: list[str] = []
        self.notes: list[str] = []

    def push_once(self, n: int) -> None:
        from memento_core.notes import add_note

        (self.root / "person").mkdir(exist_ok=True)
        (self.root / "person" / f"{n}.txt").write_text(f"a person's work {n}\n")
        paths = [f"person/{n}.txt"]
        if n % 2 == 0:
            self.pull()
            text = f"a person's note {n}"
            add_note(self.root / "docs" / "HUMAN_NOTES.md", text, target="global")
            self.notes.append(text)
            paths.append("docs/HUMAN_NOTES.md")
        git(self.root, "add", *paths)
        git(self.root, "commit", "-qm", f"person {n}")
        self.commits.append(f"person {n}")
        for _ in range(50):
            if subprocess.run(["git", "push", "-q", "origin", "main"], cwd=self.root,
                              capture_output=True).returncode == 0:
                return
            self.pull()
        raise AssertionError("the person could not push in 50 tries")

    def pull(self) -> None:
        git(self.root, "pull", "-q", "--rebase", "origin", "main")


def run_rounds(bare: Path, clones: dict[str, Path], person: Person | None, rounds: int, **env: str) -> list[str]:
    """Every host ticks once per round, all at the same time, while the person pushes."""
    import threading

    outputs = []
    for n in range(rounds):
        pusher = threading.Thread(target=person.push_once, args=(n,)) if person else None
        if pusher:
            pusher.start()
        outputs.extend(tick_all(clones, **env).values())
        if pusher:
            pusher.join(timeout=300)
    return outputs


RESULT_RE = (r"^memento: (?:complete (T-\d+) |(T-\d+) (?:failed|blocked|taken over|interrupted|set aside)"
             r"|release (T-\d+) )")


def judge_the_remote(bare: Path, n_tasks: int, person: Person | None) -> None:
    """Every task done exactly once, every claim answered, nothing the person pushed lost."""
    import re

    plan = remote_plan(bare)
    assert [t.status for t in plan.tasks] == ["x"] * n_tasks, [(t.id, t.status) for t in plan.tasks]
    log = subjects(bare)
    # A claim of two names its second task on a line of the body: every line counts.
    lines = [line for body in git(bare, "log", "--format=%B%x00", "main").split("\0") for line in body.splitlines()]
    for i in range(1, n_tasks + 1):
        assert log.count(f"memento: complete T-{i} Write out/{i}.txt") == 1, f"T-{i}"
        assert git(bare, "show", f"main:out/{i}.txt") == f"T-{i}\n"
        claimed = sum(1 for s in lines if re.match(rf"memento: claim T-{i} on ", s))
        results = sum(1 for s in log if (m := re.match(RESULT_RE, s)) and next(g for g in m.groups() if g) == f"T-{i}")
        assert claimed == results, f"T-{i}: {claimed} claims, {results} results"
    assert claim_refs(bare) == []
    if person is not None:
        history = set(log)
        assert all(c in history for c in person.commits), "a person's commit was lost"
        files = git(bare, "ls-tree", "-r", "--name-only", "main", "person/").split()
        assert len(files) == len(person.commits)
        notes_text = git(bare, "show", "main:docs/HUMAN_NOTES.md")
        assert all(n in notes_text for n in person.notes), "a person's note was lost"


def test_two_hosts_ticking_at_once_while_a_person_pushes(tmp_path):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 4, command=worker("0.25"), max_retries=9)
    person = Person(tmp_path, bare)
    run_rounds(bare, clones, person, 4)
    for _ in range(12):  # the failures the agent chose cost rounds: finish the plan
        if all(t.status == "x" for t in remote_plan(bare).tasks):
            break
        run_rounds(bare, clones, None, 1)
    judge_the_remote(bare, 4, person)


@pytest.mark.slow
def test_three_hosts_for_thirty_rounds_complete_every_task_exactly_once(tmp_path):
    bare, clones = make_fleet(tmp_path, ["a", "b", "c"], 24, command=worker("0.3"), max_retries=30)
    person = Person(tmp_path, bare)
    run_rounds(bare, clones, person, 30)
    for _ in range(20):
        if all(t.status == "x" for t in remote_plan(bare).tasks):
            break
        run_rounds(bare, clones, None, 1)
    judge_the_remote(bare, 24, person)


# --------------------------------------------------------------------------- a host that dies


def wait_for(condition, what: str, timeout: float = 120.0):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_a_killed_hosts_stale_claim_is_taken_over_by_another(tmp_path):
    sleep_file = tmp_path / "a-sleeps"
    sleep_file.write_text("")
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1, command=worker("0", str(sleep_file)), stale="2s")
    a = start_tick(clones["a"], "a")
    try:
        wait_for(lambda: claim_refs(bare) == ["refs/memento/claims/T-1"] and sleep_file.read_text(), "a's claim")
    finally:
        os.killpg(a.pid, signal.SIGKILL)  # the host dies: its tick and its agent, no goodbye
        a.wait()
        pid = sleep_file.read_text()
        if pid:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
    sleep_file.unlink()  # b's agent does the task
    assert remote_plan(bare).task("T-1").status == "~"

    def b_finishes():
        tick_all({"b": clones["b"]})
        return remote_plan(bare).task("T-1").status == "x"

    wait_for(b_finishes, "b to take T-1 over and do it")
    log = subjects(bare)
    assert "memento: T-1 taken over from a (retry 1/3)" in log
    assert log.count("memento: complete T-1 Write out/1.txt") == 1
    assert claim_refs(bare) == []
    status = git(bare, "show", "main:docs/TICK_STATUS.md")
    stale = status[status.index("STALE"):]
    assert "- **Claimed By**: a" in stale and "- **Host**: b" in status[:status.index("STALE")].rsplit("## [", 1)[1] + stale
    assert remote_plan(bare).task("T-1").retries == 1
    cron = (clones["b"] / "logs" / "cron.log").read_text()
    assert "took over the stale claim of T-1 (" in cron  # where a person reading b's log sees why
    # a comes back: its own leftovers are recovered here and nothing it pushes undoes b's work.
    tick_all({"a": clones["a"]})
    assert remote_plan(bare).task("T-1").status == "x"
    assert subjects(bare).count("memento: complete T-1 Write out/1.txt") == 1
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")


# --------------------------------------------------------------------------- conflicts


def test_a_result_that_conflicts_with_the_remote_fails_naming_the_path_and_the_retry_lands(tmp_path):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    person = Person(tmp_path, bare)
    slow = tmp_path / "a-waits"
    # a's agent writes out/1.txt; meanwhile a person pushes their own out/1.txt.
    cmd = worker("0", "-", str(slow))
    (clones["a"] / "memento.toml").write_text((clones["a"] / "memento.toml").read_text().replace(AGENT, cmd))
    git(clones["a"], "commit", "-qam", "a's agent waits for the person")
    git(clones["a"], "push", "-q", "origin", "main")
    a = start_tick(clones["a"], "a")
    try:
        wait_for(lambda: claim_refs(bare), "a's claim")
        person.pull()
        (person.root / "out").mkdir()
        (person.root / "out" / "1.txt").write_text("the person's own version\n")
        git(person.root, "add", "out/1.txt")
        git(person.root, "commit", "-qm", "person: out/1.txt")
        git(person.root, "push", "-q", "origin", "main")
        slow.write_text("go")
        out, _ = a.communicate(timeout=300)
    finally:
        if a.poll() is None:
            os.killpg(a.pid, signal.SIGKILL)
            a.wait()
    assert b"conflict" in out, out
    plan = remote_plan(bare)
    assert plan.task("T-1").status == " " and plan.task("T-1").retries == 1
    status = git(bare, "show", "main:docs/TICK_STATUS.md")
    assert "conflict with origin/main in out/1.txt" in status
    assert git(bare, "show", "main:out/1.txt") == "the person's own version\n"  # theirs stands
    saved = list((clones["a"] / "logs" / "rollback").glob("*fleet-T-1*/unpushed.patch"))
    assert saved and b"out/1.txt" in saved[0].read_bytes()  # the work set aside, not lost
    assert claim_refs(bare) == []
    assert "person: out/1.txt" in subjects(bare)
    # The retry starts from the new HEAD (the person's file in it) and lands.
    tick_all({"a": clones["a"]})
    assert remote_plan(bare).task("T-1").status == "x"
    assert subjects(bare).count("memento: complete T-1 Write out/1.txt") == 1


def test_documents_an_agent_forged_and_hid_from_the_index_never_reach_the_remote(tmp_path):
    # Memento's documents are committed and pushed by comparing the files with HEAD, not by
    # asking an index the agent could have told to look away (assume-unchanged, skip-worktree).
    hostile = " ".join([PY, str(AGENTS / "hides_forged_documents.py"), "{task_id}"])
    bare, clones = make_fleet(tmp_path, ["a"], 2, command=hostile)
    root = clones["a"]
    out = tick_all(clones)["a"]
    docs = ("docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md")
    assert "FORGED" not in git(bare, "log", "-p", "main"), out  # in no commit the remote has
    assert "FORGED" not in git(root, "log", "-p", "HEAD")
    assert [d for d in docs if "FORGED" in (root / d).read_text()] == []  # nor on disk
    flags = git(root, "ls-files", "-v", *docs).split()
    assert flags[0::2] == ["H", "H"], flags  # the index's flags put back as well
    assert remote_plan(bare).task("T-1").status != "x"  # the task is refused, not done
    assert git(root, "status", "--porcelain", "--", *docs) == ""


# --------------------------------------------------------------------------- resolving the documents


def test_workers_remote_and_host_are_read_and_checked(tmp_path, monkeypatch):
    from memento_core.errors import MementoError

    monkeypatch.delenv("MEMENTO_HOST", raising=False)
    path = tmp_path / "memento.toml"
    path.write_text('[workers]\nremote = "origin"\nhost = "runner-1"\n')
    cfg = load_config(path)
    assert (cfg.workers_remote, cfg.host) == ("origin", "runner-1")
    monkeypatch.setenv("MEMENTO_HOST", "ci-7")  # memento.toml is shared by the fleet: the environment names a host
    assert cfg.host == "ci-7"
    monkeypatch.delenv("MEMENTO_HOST")
    path.write_text("[workers]\nmax = 2\n")
    import socket

    assert (load_config(path).workers_remote, load_config(path).host) == ("", socket.gethostname())
    for bad in ('remote = "a b"', 'remote = "../x"', 'host = "two words"', "host = 3"):
        path.write_text(f"[workers]\n{bad}\n")
        with pytest.raises(MementoError, match=r"\[workers\]"):
            load_config(path)


def test_the_doctor_reports_a_remote_it_cannot_fetch_and_leaves_other_hosts_claims_alone(tmp_path, monkeypatch):
    from memento_core.doctor import check_workspace

    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    b = context(clones["b"], "b", monkeypatch)
    fleet.sync.sync(b)  # b sees a's [~] and its claim ref
    found = {f.check: f for f in check_workspace(Workspace(clones["b"]))}
    assert found["fleet-remote"].severity == "OK" and "answers" in found["fleet-remote"].message
    assert found["stale-claims"].severity == "OK", found["stale-claims"].message
    git(clones["b"], "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    found = {f.check: f for f in check_workspace(Workspace(clones["b"]))}
    assert found["fleet-remote"].severity == "CRITICAL" and "cannot be fetched" in found["fleet-remote"].message


# --------------------------------------------------------------------------- a CI service as the fleet


def test_cron_install_github_prints_a_workflow_that_runs_one_tick_and_pushes_back(tmp_path):
    import yaml

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    root = clones["a"]
    (root / "memento.toml").write_text((root / "memento.toml").read_text() + '[schedule]\nevery = "15min"\n')
    before = git(root, "status", "--porcelain")
    proc = subprocess.run([PY, "-m", "memento_core.cli.main", "cron", "install", "--github", "--project", str(root)],
                          capture_output=True, text=True, env=env_for("a"))
    assert proc.returncode == 0, proc.stderr
    flow = yaml.safe_load(proc.stdout)
    assert flow["on"]["schedule"] == [{"cron": "*/15 * * * *"}]
    assert "workflow_dispatch" in flow["on"]
    assert flow["concurrency"] == {"group": "memento-fleet", "cancel-in-progress": False}
    steps = flow["jobs"]["tick"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@") and steps[0]["with"]["fetch-depth"] == 0
    assert any(s.get("uses", "").startswith("actions/setup-python@") for s in steps)
    runs = [s.get("run", "") for s in steps]
    assert any("pip install" in r and "memento" in r for r in runs)
    assert any("git config user.name" in r for r in runs)
    assert sum(1 for r in runs if r.strip() == "memento tick") == 1
    assert not any("git push" in r for r in runs)  # with [workers] remote the tick pushes itself, leased
    assert git(root, "status", "--porcelain") == before  # printing installs nothing
    # Without a remote a push-back step follows, only after a tick that succeeded.
    toml = (root / "memento.toml").read_text()
    (root / "memento.toml").write_text(toml.replace('[workers]\nremote = "origin"\n', ""))
    proc = subprocess.run([PY, "-m", "memento_core.cli.main", "cron", "install", "--github", "--project", str(root)],
                          capture_output=True, text=True, env=env_for("a"))
    last = yaml.safe_load(proc.stdout)["jobs"]["tick"]["steps"][-1]
    assert "git push origin" in last["run"] and last["if"] == "success()"
    (root / "memento.toml").write_text(toml)
    # A faster interval than GitHub allows is said, on stderr, and clamped.
    proc = subprocess.run([PY, "-m", "memento_core.cli.main", "cron", "install", "--github", "--every", "1min",
                           "--project", str(root)], capture_output=True, text=True, env=env_for("a"))
    assert yaml.safe_load(proc.stdout)["on"]["schedule"] == [{"cron": "*/5 * * * *"}]
    assert "every 5 minutes" in proc.stderr


def test_a_pause_and_a_resume_pushed_by_a_person_reach_every_host(tmp_path):
    bare, clones = make_fleet(tmp_path, ["a"], 2)
    person = Person(tmp_path, bare)

    def person_sets(mode: str) -> None:
        person.pull()
        plan = person.root / "docs" / "MASTER_PLAN.md"
        text = plan.read_text()
        plan.write_text(text.replace("tick_mode: auto", f"tick_mode: {mode}").replace(
            "tick_mode: paused", f"tick_mode: {mode}"))
        git(person.root, "commit", "-qam", f"person: {mode}")
        git(person.root, "push", "-q", "origin", "main")

    person_sets("paused")
    out = tick_all(clones)["a"]
    assert "tick_mode is paused" in out and claim_refs(bare) == []
    assert all(t.status == " " for t in remote_plan(bare).tasks)
    out = tick_all(clones)["a"]  # paused here now too: the remote is still asked
    assert "tick_mode is paused" in out
    person_sets("auto")
    out = tick_all(clones)["a"]
    assert "T-1 passed" in out, out
    assert remote_plan(bare).task("T-1").status == "x"


def test_an_edit_to_the_plan_made_on_one_host_survives_its_rebase_onto_the_remote(tmp_path):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 2)
    tick_all({"b": clones["b"]})  # b does T-1: its status line changes on the remote
    plan = clones["a"] / "docs" / "MASTER_PLAN.md"  # meanwhile on a: T-1's verify, a new task
    plan.write_text(plan.read_text().replace("grep -q T-1 out/1.txt", "test -s out/1.txt")
                    + "- [ ] `T-3` Write out/3.txt\n  - verify: `grep -q T-3 out/3.txt`\n"
                      "  - context_files: [out/3.txt]\n")
    git(clones["a"], "commit", "-qam", "memento: architect edits the plan")
    out = tick_all({"a": clones["a"]})["a"]
    merged = remote_plan(bare)
    assert merged.task("T-1").status == "x" and merged.task("T-1").verify == "test -s out/1.txt", out
    assert merged.task("T-3") is not None
    assert "memento: architect edits the plan" in subjects(bare)


def test_fresh_clones_ticking_a_complete_plan_write_the_complete_entry_once(tmp_path):
    # A CI runner starts from a fresh clone (no .memento/state.json) every scheduled run.
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    tick_all(clones)  # T-1 done
    tick_all(clones)  # ... and the plan found complete: one entry
    assert git(bare, "show", "main:docs/TICK_STATUS.md").count("ALL TASKS COMPLETE") == 1
    head = git(bare, "rev-parse", "main")
    for run in range(3):
        runner = tmp_path / f"runner{run}"
        git(tmp_path, "clone", "-q", str(bare), str(runner))
        tick_all({f"gha-{run}": runner})
    assert git(bare, "show", "main:docs/TICK_STATUS.md").count("ALL TASKS COMPLETE") == 1
    assert git(bare, "rev-parse", "main") == head  # no sync-docs commit either


def test_the_doctor_warns_that_workers_max_is_ignored_with_a_remote(tmp_path):
    from memento_core.doctor import check_workspace

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    toml = clones["a"] / "memento.toml"
    assert {f.check: f for f in check_workspace(Workspace(clones["a"]))}["fleet-workers"].severity == "OK"
    toml.write_text(toml.read_text().replace('remote = "origin"', 'remote = "origin"\nmax = 3'))
    found = {f.check: f for f in check_workspace(Workspace(clones["a"]))}
    assert found["fleet-workers"].severity == "WARNING" and "max = 3 is ignored" in found["fleet-workers"].message
    toml.write_text(toml.read_text().replace('remote = "origin"\n', ""))  # alone, max = 3 is used: no warning
    assert {f.check: f for f in check_workspace(Workspace(clones["a"]))}["fleet-workers"].severity == "OK"


def test_memento_architect_syncs_with_the_remote_first_and_pushes_its_fix(tmp_path, monkeypatch):
    from memento_core.tick.architect.run import CHANGED, run_architect

    bare, clones = make_fleet(tmp_path, ["a", "b"], 2)
    a = clones["a"]
    import shlex

    fix = shlex.join([PY, str(AGENTS / "architect.py"), "fix", "T-2", "test -s out/2.txt"])
    (a / "memento.toml").write_text((a / "memento.toml").read_text() + f'[architect]\ncommand = """{fix}"""\n')
    git(a, "commit", "-qam", "the architect's agent")
    tick_all({"b": clones["b"]})  # b does T-1 meanwhile
    monkeypatch.setenv("MEMENTO_HOST", "a")
    result = run_architect(Workspace(a))
    assert result.outcome == CHANGED, result.message
    plan = remote_plan(bare)
    assert plan.task("T-1").status == "x" and plan.task("T-2").verify == "test -s out/2.txt"
    assert git(a, "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert any(s.startswith("memento: architect") for s in subjects(bare))


# --------------------------------------------------------------------------- the result's push claims the next task


def count_pushes(bare: Path, tmp_path: Path) -> Path:
    """A post-receive hook in the bare remote: one line per push that reached it (its refs)."""
    pushes = tmp_path / "pushes.txt"
    hook = bare / "hooks" / "post-receive"
    hook.write_text(f"#!/bin/sh\nrefs=$(cut -d' ' -f3 | tr '\\n' ' ')\necho \"$refs\" >> {pushes}\n")
    hook.chmod(0o755)
    return pushes


def two_hosts_a_holding_t1(tmp_path: Path, monkeypatch, n_tasks: int = 3):
    """Hosts a and b on a fleet of ``n_tasks``; a holds T-1's claim (no heartbeat thread) and
    has committed its result: bare, clones, a's and b's contexts."""
    bare, clones = make_fleet(tmp_path, ["a", "b"], n_tasks, max_tasks=3)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    commit_the_result(clones["a"])
    return bare, clones, a, b


def commit_the_result(root: Path) -> None:
    """T-1's result as its attempt commits it: out/1.txt and the plan's `[x]`."""
    (root / "out").mkdir()
    (root / "out" / "1.txt").write_text("T-1\n")
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("- [ ] `T-1`", "- [x] `T-1`"))
    git(root, "add", "out/1.txt", "docs/MASTER_PLAN.md")
    git(root, "commit", "-qm", "memento: complete T-1 Write out/1.txt")


def a_holds_two_with_the_first_done(tmp_path, monkeypatch, **plan_kw) -> tuple[Path, Path, TickContext]:
    """A one-host fleet of three tasks in a parallel phase: host a holds T-1 and T-2 in one claim, its
    heartbeat stopped, T-1's result committed here and not pushed. Returns the bare remote, a's root
    and its context."""
    bare, clones = make_fleet(tmp_path, ["a"], 3, parallel=True, **plan_kw)
    root = clones["a"]
    a = context(root, "a", monkeypatch)
    fleet.sync.sync(a)
    plan = a.plan()
    assert fleet.claims.claim(a, plan.task("T-1"), [plan.task("T-1"), plan.task("T-2")])
    a.fleet.stop_beating()
    commit_the_result(root)
    return bare, root, a


def a_person_pushes_their_own_out_1(tmp_path, bare) -> None:
    """A person clones the remote and pushes their own out/1.txt (T-1's file): a result of T-1 conflicts."""
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", str(bare), str(person))
    (person / "out").mkdir()
    (person / "out" / "1.txt").write_text("a person's own\n")
    git(person, "add", "out/1.txt")
    git(person, "commit", "-qm", "a person's out/1.txt")
    git(person, "push", "-q", "origin", "main")


def counted_fetches(monkeypatch, action=None) -> list:
    """remote.fetch counted; ``action()`` right after its first call (between a fetch and its push)."""
    real_fetch, calls = remote.fetch, []

    def fetch_then_act(ctx):
        real_fetch(ctx)
        calls.append(ctx.fleet.host)
        if len(calls) == 1 and action is not None:
            action()

    monkeypatch.setattr(remote, "fetch", fetch_then_act)
    return calls


def a_person_pushes_after_the_first_fetch(tmp_path, bare, monkeypatch) -> list:
    """:func:`counted_fetches` with a person's commit pushed to ``bare`` (from a clone of their own)
    right after the first fetch: the host's next push loses its race once."""
    person = tmp_path / "person"
    git(tmp_path, "clone", "-q", str(bare), str(person))

    def person_pushes():
        (person / "persons.txt").write_text("a person's\n")
        git(person, "add", "persons.txt")
        git(person, "commit", "-qm", "a person's commit")
        git(person, "push", "-q", "origin", "main")

    return counted_fetches(monkeypatch, person_pushes)


def ceiling_back_off(monkeypatch) -> tuple[list[float], list[float]]:
    """The back-off's seams fixed for a test: each pause the longest it allows (its ceiling),
    put in the list returned instead of slept, and a clock 10 ms later at each reading (every
    push's window, fetch to end, a fast one). Returns (pauses, now); ``now[0]`` moves the clock."""
    pauses: list[float] = []
    now = [0.0]

    class Highest:
        def uniform(self, low, high):
            return high

    def clock() -> float:
        now[0] += 0.01
        return now[0]

    monkeypatch.setattr(remote, "_CHANCE", Highest())
    monkeypatch.setattr(remote, "_pause", pauses.append)
    monkeypatch.setattr(remote, "_clock", clock)
    return pauses, now


# --------------------------------------------------------------------------- the rebase, replayed


ASKS = ("sh -c 'mkdir -p .memento/worker && printf \"Which database?\\n- [ ] sqlite\\n- [ ] postgres\\n\" "
        "> .memento/worker/question.md'")


def test_a_question_asked_on_a_host_reaches_the_remote_and_no_host_picks_the_task_again(tmp_path):
    """SPEC §18 across a fleet: the [?] and its question are pushed, the claim is given back, no
    retry is counted, and another host's tick leaves the task to the person."""
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1, command=ASKS)
    tick_all({"a": clones["a"]})
    task = remote_plan(bare).task("T-1")
    assert (task.status, task.retries, task.fields.get("question")) == ("?", 0, "Which database?")
    assert claim_refs(bare) == []
    assert any(s.startswith("memento: T-1 needs input") for s in subjects(bare)), subjects(bare)
    before = subjects(bare)
    tick_all({"b": clones["b"]})
    new = subjects(bare)[: len(subjects(bare)) - len(before)]
    assert remote_plan(bare).task("T-1").status == "?"
    assert not any("T-1" in s for s in new), new  # b neither claimed nor attempted it
    assert claim_refs(bare) == []


