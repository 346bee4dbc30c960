"""Several hosts on one plan through its git remote (SPEC §12 "Across machines").

Each host is a separate clone of one bare remote with its own runtime folders and
its own fake agent (tests/agents/, the `command` preset); ticks are real
subprocesses (`python -m memento_core.tick`). Judged on the remote: one commit per
task, no claim ref left, every commit a person pushed meanwhile still in history.
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
from memento_core.config import load_config
from memento_core.fleet import remote
from memento_core.plan import parse_plan_text
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


def test_of_two_hosts_racing_for_a_task_exactly_one_wins_and_the_loser_picks_again(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 2)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    for ctx in (a, b):
        fleet.sync.sync(ctx)  # both have fetched the same sha
    t1 = a.plan().task("T-1")
    try:
        assert fleet.claims.claim(a, t1) is True
        # HEAD moves to a claim commit only once its push has won: the winner's reflog has it
        # (and its index the claim's plan), the loser's HEAD never moved at all.
        assert git(clones["a"], "reflog", "-1", "--format=%gs", "HEAD").strip() == "commit: memento: claim T-1 on a"
        assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
        reflog, index = git(clones["b"], "reflog", "--format=%H %gs", "HEAD"), git(clones["b"], "ls-files", "-s")
        assert fleet.claims.claim(b, b.plan().task("T-1")) is False  # its lease names the sha it fetched
        # The loser is left as it was: HEAD where it fetched, the plan's T-1 still [ ] here.
        assert git(clones["b"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main~1")
        assert git(clones["b"], "reflog", "--format=%H %gs", "HEAD") == reflog
        assert git(clones["b"], "ls-files", "-s") == index
        assert git(clones["b"], "status", "--porcelain") == ""
        fleet.sync.sync(b)  # fetch and pick again: T-1 is a's now
        assert b.plan().task("T-1").status == "~"
        assert fleet.claims.claim(b, b.plan().task("T-2")) is True
    finally:
        for ctx in (a, b):
            if ctx.fleet is not None:
                ctx.fleet.stop_beating()
    plan = remote_plan(bare)
    assert [t.status for t in plan.tasks] == ["~", "~"]
    assert subjects(bare)[:2] == ["memento: claim T-2 on b", "memento: claim T-1 on a"]
    assert claim_refs(bare) == ["refs/memento/claims/T-1", "refs/memento/claims/T-2"]
    owners = {ref: git(bare, "log", "-1", "--format=%s", ref).strip() for ref in claim_refs(bare)}
    assert owners == {"refs/memento/claims/T-1": "memento: claim T-1 on a",
                      "refs/memento/claims/T-2": "memento: claim T-2 on b"}


def test_a_claim_heartbeat_moves_its_ref_and_a_changed_ref_means_the_claim_is_lost(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    monkeypatch.setattr(fleet.claims, "HEARTBEAT_SECONDS", 0.2)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    first = a.fleet.ref
    try:
        deadline = time.monotonic() + 60
        while git(bare, "rev-parse", "refs/memento/claims/T-1").strip() == first:
            assert time.monotonic() < deadline, "the heartbeat ref never moved"
            time.sleep(0.05)
        # Another host rewrites the ref (a takeover): the next beat finds its lease broken.
        other = git(bare, "commit-tree", "-m", "memento: claim T-1 on z", "4b825dc642cb6eb9a060e54bf8d69288fbee4904")
        git(bare, "update-ref", "refs/memento/claims/T-1", other.strip())
        while not a.fleet.lost:
            assert time.monotonic() < deadline, "the lost claim was never noticed"
            time.sleep(0.05)
    finally:
        a.fleet.stop_beating()
    assert git(bare, "rev-parse", "refs/memento/claims/T-1").strip() == other.strip()  # never overwritten


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
        claims = sum(1 for s in lines if re.match(rf"memento: claim T-{i} on ", s))
        results = sum(1 for s in log if (m := re.match(RESULT_RE, s)) and next(g for g in m.groups() if g) == f"T-{i}")
        assert claims == results, f"T-{i}: {claims} claims, {results} results"
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


def test_a_submodule_both_sides_moved_stops_the_rebase_naming_it(tmp_path, monkeypatch):
    # A gitlink's stages are commits of another repository, not blobs this one can read.
    import hashlib

    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a_root, b_root = clones["a"], clones["b"]

    def move_submodule(root: Path, to: str, message: str) -> None:
        sha = hashlib.sha1(to.encode()).hexdigest()
        git(root, "update-index", "--add", "--cacheinfo", f"160000,{sha},vendor/lib")
        git(root, "commit", "-qm", message)

    move_submodule(b_root, "first", "vendor/lib at first")
    git(b_root, "push", "-q", "origin", "main")
    git(a_root, "pull", "-q", "--ff-only", "origin", "main")
    move_submodule(a_root, "a's", "vendor/lib at a's")
    move_submodule(b_root, "b's", "vendor/lib at b's")
    git(b_root, "push", "-q", "origin", "main")
    mine = git(a_root, "rev-parse", "HEAD")
    ctx = context(a_root, "a", monkeypatch)
    remote.fetch(ctx)
    with pytest.raises(fleet.host.FleetConflict) as raised:
        fleet.integrate.integrate(ctx, remote.remote_head(ctx))
    assert raised.value.paths == ["vendor/lib"]
    assert git(a_root, "rev-parse", "HEAD") == mine  # the rebase aborted: a's commit as it was
    assert not (a_root / ".git" / "rebase-merge").exists() and not (a_root / ".git" / "rebase-apply").exists()
    assert git(a_root, "ls-files", "-u") == ""


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


def _with(text: str, task: str, status: str, retries: int | None = None) -> str:
    lines = text.splitlines(keepends=True)
    out, current = [], None
    for line in lines:
        if f"`{task}`" in line and line.startswith("- ["):
            line = f"- [{status}]" + line[5:]
            current = task
        elif line.startswith("- ["):
            current = None
        if current == task and retries is not None and line.strip().startswith("- retries:"):
            line = f"  - retries: {retries}\n"
        out.append(line)
    return "".join(out)


def test_the_plan_merge_reapplies_this_hosts_edits_only_where_the_remote_left_them():
    base = plan_text(3).replace("- [ ] `T-1`", "- [~] `T-1`").replace("- [ ] `T-2`", "- [~] `T-2`")
    mine = _with(_with(base, "T-1", "x"), "T-2", " ", retries=1)  # T-1 passed here; T-2 reset here
    upstream = _with(base, "T-2", "x", retries=1)  # another host took T-2 over and did it
    upstream = _with(upstream, "T-3", "~").replace("max_retries: 3", "max_retries: 5")  # a person's Meta edit
    merged = parse_plan_text(fleet.docs.merge_plan(None, base.encode(), upstream.encode(), mine.encode()).decode())
    assert [(t.id, t.status, t.retries) for t in merged.tasks] == [("T-1", "x", 0), ("T-2", "x", 1), ("T-3", "~", 0)]
    assert merged.meta.max_retries == 5 and merged.meta.completed_tasks == 2



def _merged(base: str, upstream: str, mine: str):
    notes: list[str] = []
    from memento_core.fleet import plan_merge
    data = plan_merge.merge_plan(base.encode(), upstream.encode(), mine.encode(), notes)
    return (parse_plan_text(data.decode()) if data is not None else None), notes


def test_the_plan_merge_keeps_an_architects_task_edits_and_split_when_the_remote_left_them():
    base = plan_text(3)
    # Here: the architect changed T-2's verify and split T-3 into T-4, T-5 (T-3 removed).
    mine = base.replace("grep -q T-2 out/2.txt", "test -s out/2.txt")
    split = ("- [ ] `T-4` First half\n  - verify: `true`\n  - context_files: [a.txt]\n"
             "- [ ] `T-5` Second half\n  - verify: `true`\n  - context_files: [b.txt]\n")
    start = mine.index("- [ ] `T-3`")
    mine = mine[:start] + split
    # There: another host did T-1 and T-2 (statuses only), a person raised max_retries.
    upstream = _with(_with(base, "T-1", "x"), "T-2", "x", retries=1).replace("max_retries: 3", "max_retries: 5")
    merged, notes = _merged(base, upstream, mine)
    assert [(t.id, t.status, t.retries) for t in merged.tasks] == [
        ("T-1", "x", 0), ("T-2", "x", 1), ("T-4", " ", 0), ("T-5", " ", 0)]
    assert merged.task("T-2").verify == "test -s out/2.txt"
    assert merged.task("T-5").context_files == ("b.txt",)
    assert merged.meta.max_retries == 5 and merged.meta.total_tasks == 4 and merged.meta.completed_tasks == 2
    assert notes == [] and not merged.plan_errors


def test_the_plan_merge_lets_the_remote_win_where_both_changed_a_task_and_says_so():
    base = plan_text(3)
    mine = base.replace("grep -q T-2 out/2.txt", "test -s out/2.txt")  # edited here
    mine = mine[:mine.index("- [ ] `T-3`")]  # T-3 removed here ...
    upstream = base.replace("grep -q T-2 out/2.txt", "false")  # ... T-2 edited there too
    upstream = _with(upstream, "T-3", "x")  # ... and T-3 done there
    merged, notes = _merged(base, upstream, mine)
    assert merged.task("T-2").verify == "false"
    assert merged.task("T-3").status == "x"
    assert len(notes) == 2 and notes[0].startswith("T-2:") and notes[1].startswith("T-3:")


def test_the_status_merge_keeps_both_sides_entries(tmp_path):
    from memento_core import status_log

    ws_root = tmp_path / "p"
    (ws_root / "docs").mkdir(parents=True)
    path = ws_root / "docs" / "TICK_STATUS.md"

    def entry(n: int, host: str) -> str:
        return status_log.format_entry(f"2026-12-01T00:00:0{n}Z", n, [("Event", f"e{n}"), ("Host", host)])

    status_log.append_entry(path, entry(1, "a"))
    base = path.read_bytes()
    status_log.append_entry(path, entry(2, "b"))
    upstream = path.read_bytes()
    path.write_bytes(base)
    status_log.append_entry(path, entry(3, "a"))
    mine = path.read_bytes()

    class Ctx:
        ws = Workspace(ws_root)

    merged = fleet.docs.merge_status(Ctx(), base, upstream, mine)
    events = [dict(e.fields).get("Event") for e in status_log.parse_status_text(merged.decode())]
    assert events == ["e1", "e2", "e3"]


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


def test_a_slow_host_whose_claim_was_taken_over_never_pushes_its_result(tmp_path):
    # Each host's agent waits for .memento/go in its own clone: b's is there, a's comes later.
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1, command=worker("0", "-", ".memento/go"), stale="3s")
    (clones["b"] / ".memento").mkdir(exist_ok=True)
    (clones["b"] / ".memento" / "go").write_text("")
    a = start_tick(clones["a"], "a", MEMENTO_REMOTE_HEARTBEAT_SECONDS="600")  # a stops heart-beating
    try:
        wait_for(lambda: claim_refs(bare), "a's claim")

        def b_finishes():
            tick_all({"b": clones["b"]})
            return remote_plan(bare).task("T-1").status == "x"

        wait_for(b_finishes, "b to take T-1 over and do it")
        (clones["a"] / ".memento" / "go").write_text("")
        out, _ = a.communicate(timeout=300)
    finally:
        if a.poll() is None:
            os.killpg(a.pid, signal.SIGKILL)
            a.wait()
    assert b"claim lost" in out, out
    log = subjects(bare)
    assert log.count("memento: complete T-1 Write out/1.txt") == 1
    assert "memento: T-1 taken over from a (retry 1/3)" in log
    status = git(bare, "show", "main:docs/TICK_STATUS.md")
    assert "CLAIM LOST — T-1 was taken over while it ran here" in status
    assert list((clones["a"] / "logs" / "rollback").glob("*fleet-T-1*/unpushed.patch"))
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert claim_refs(bare) == []


def test_a_result_not_pushed_is_set_aside_when_its_claim_was_taken_over_meanwhile(tmp_path):
    # a's agent waits for .memento/go; the remote goes away while it runs, so a's result is
    # committed in a's clone but not pushed. b takes the stale claim over and completes T-1.
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1, command=worker("0", "-", ".memento/go"), stale="2s")
    (clones["b"] / ".memento").mkdir(exist_ok=True)
    (clones["b"] / ".memento" / "go").write_text("")
    a = start_tick(clones["a"], "a", MEMENTO_REMOTE_HEARTBEAT_SECONDS="600")
    away = tmp_path / "remote.away"
    try:
        wait_for(lambda: claim_refs(bare), "a's claim")
        bare.rename(away)
        (clones["a"] / ".memento" / "go").write_text("")
        a.communicate(timeout=300)
    finally:
        if a.poll() is None:
            os.killpg(a.pid, signal.SIGKILL)
            a.wait()
        if away.exists():
            away.rename(bare)
    assert "complete T-1" in git(clones["a"], "log", "--format=%s", "-3")  # committed, not pushed
    assert (clones["a"] / ".memento" / "fleet_pending.json").is_file()

    def b_finishes():
        tick_all({"b": clones["b"]})
        return remote_plan(bare).task("T-1").status == "x"

    wait_for(b_finishes, "b to take T-1 over and do it")
    out = tick_all({"a": clones["a"]})["a"]
    log = subjects(bare)
    assert log.count("memento: complete T-1 Write out/1.txt") == 1, (log, out)
    assert "CLAIM LOST — T-1 was taken over before its result was pushed" in git(bare, "show", "main:docs/TICK_STATUS.md")
    assert list((clones["a"] / "logs" / "rollback").glob("*fleet-T-1*/unpushed.patch"))
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert not (clones["a"] / ".memento" / "fleet_pending.json").exists()
    assert claim_refs(bare) == []


def test_a_result_not_pushed_lands_with_its_claim_ref_on_the_next_tick(tmp_path):
    bare, clones = make_fleet(tmp_path, ["a"], 1, command=worker("0", "-", ".memento/go"))
    a = start_tick(clones["a"], "a", MEMENTO_REMOTE_HEARTBEAT_SECONDS="600")
    away = tmp_path / "remote.away"
    try:
        wait_for(lambda: claim_refs(bare), "a's claim")
        bare.rename(away)
        (clones["a"] / ".memento").mkdir(exist_ok=True)
        (clones["a"] / ".memento" / "go").write_text("")
        a.communicate(timeout=300)
    finally:
        if a.poll() is None:
            os.killpg(a.pid, signal.SIGKILL)
            a.wait()
        if away.exists():
            away.rename(bare)
    assert claim_refs(bare) == ["refs/memento/claims/T-1"]
    tick_all({"a": clones["a"]})
    assert subjects(bare).count("memento: complete T-1 Write out/1.txt") == 1
    assert remote_plan(bare).task("T-1").status == "x"
    assert claim_refs(bare) == []
    assert not (clones["a"] / ".memento" / "fleet_pending.json").exists()


def test_the_plan_merge_of_a_meta_key_both_sides_changed_keeps_the_remotes_and_says_so():
    base = plan_text(2)
    # Here: max_retries 3 -> 4, circuit_breaker_threshold 50 -> 7 (the remote left it), stale as there.
    mine = (base.replace("max_retries: 3", "max_retries: 4").replace("circuit_breaker_threshold: 50",
            "circuit_breaker_threshold: 7").replace("stale_lock_timeout: 15min", "stale_lock_timeout: 1h"))
    # There: max_retries 3 -> 5 (the same key, another value), stale_lock_timeout to the same 1h.
    upstream = base.replace("max_retries: 3", "max_retries: 5").replace("stale_lock_timeout: 15min",
                                                                          "stale_lock_timeout: 1h")
    merged, notes = _merged(base, upstream, mine)
    assert merged.meta.max_retries == 5  # both changed it: the remote's word
    assert merged.meta.circuit_breaker_threshold == 7  # only here: kept
    assert merged.meta.stale_lock_timeout == 3600
    assert notes == ["Meta max_retries: set to '4' here and to '5' on the remote; the remote's stands"]
    # The same edit on both sides is no loss; a key left alone here takes the remote's.
    merged, notes = _merged(base, upstream, upstream)
    assert merged.meta.max_retries == 5 and notes == []
    merged, notes = _merged(base, upstream, base)
    assert merged.meta.max_retries == 5 and merged.meta.circuit_breaker_threshold == 50 and notes == []


def test_the_plan_merge_adds_a_phase_added_here_at_the_end():
    base = plan_text(1)
    mine = base + "\n## Phase 2: More\n<!-- depends: Phase 1 -->\n\n- [ ] `T-9` Later\n  - verify: `true`\n"
    merged, notes = _merged(base, _with(base, "T-1", "x"), mine)
    assert [(t.id, t.status, t.phase) for t in merged.tasks] == [("T-1", "x", "Phase 1"), ("T-9", " ", "Phase 2")]
    assert not merged.plan_errors and notes == []


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


def test_a_claim_seen_before_its_ref_is_judged_by_the_claim_commits_time(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    git(bare, "update-ref", "-d", "refs/memento/claims/T-1")  # b reads the branch, not (yet) the ref
    b = context(clones["b"], "b", monkeypatch)
    fleet.sync.sync(b)
    assert remote_plan(bare).task("T-1").status == "~"  # a fresh claim commit: left alone
    assert not any("taken over" in s for s in subjects(bare))
    later = time.time() + 3600  # an hour on, the claim commit is older than stale_lock_timeout
    monkeypatch.setattr(remote, "_now", lambda: later)
    fleet.sync.sync(b)
    assert remote_plan(bare).task("T-1").status == " "
    assert "memento: T-1 taken over from a lost claim (retry 1/3)" in subjects(bare)


def test_a_host_never_takes_over_its_own_claim_however_old_its_heartbeat(tmp_path, monkeypatch):
    # a's own claim is its local stale recovery's (its claim file and record say what to undo), never
    # a take-over through the remote; b, another host, takes the same old claim over.
    bare, clones = make_fleet(tmp_path, ["a", "b"], 1)
    from memento_core.state import Claim, write_claim

    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    assert fleet.claims.claim(a, a.plan().task("T-1"))
    a.fleet.stop_beating()
    # as the attempt writes it (tick/attempt.py), by a tick of a that is gone now
    write_claim(a.ws, Claim(task="T-1", pid=2 ** 22 + 1, host="a", started="2026-12-06T00:00:00Z",
                            heartbeat=time.time(), tick=1, base=git(clones["a"], "rev-parse", "HEAD").strip()))
    plan = a.ws.plan_path
    plan.write_text(plan.read_text().replace("- [ ] `T-1`", "- [~] `T-1`"))
    later = time.time() + 3600  # an hour on: the heartbeat ref is older than stale_lock_timeout
    monkeypatch.setattr(remote, "_now", lambda: later)
    fleet.sync.sync(a)
    assert remote_plan(bare).task("T-1").status == "~", subjects(bare)
    assert not any("taken over" in s for s in subjects(bare))
    assert claim_refs(bare) == ["refs/memento/claims/T-1"]
    b = context(clones["b"], "b", monkeypatch)
    fleet.sync.sync(b)
    assert "memento: T-1 taken over from a (retry 1/3)" in subjects(bare)


def test_a_claim_whose_head_moved_during_its_push_is_an_error_not_a_claim_held(tmp_path, monkeypatch):
    # A person's commit lands in the clone while the claim is being pushed: HEAD is not taken
    # from under them, and the tick stops with the reason instead of holding a claim it does not have.
    from memento_core.errors import MementoError

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    fleet.sync.sync(a)
    root, pushed = clones["a"], remote.push

    def push_then_a_person_commits(ctx, specs, leases):
        won = pushed(ctx, specs, leases)
        (root / "person.txt").write_text("a person's\n")
        git(root, "add", "person.txt")
        git(root, "commit", "-qm", "a person's commit")
        return won

    monkeypatch.setattr(remote, "push", push_then_a_person_commits)
    try:
        with pytest.raises(MementoError, match="HEAD moved while the claim of T-1 was pushed"):
            fleet.claims.claim(a, a.plan().task("T-1"))
    finally:
        if a.fleet is not None:
            a.fleet.stop_beating()
    assert git(root, "log", "-1", "--format=%s").strip() == "a person's commit"


def test_two_histories_with_nothing_in_common_have_no_merge_base_and_no_error(tmp_path, monkeypatch):
    # A remote a person re-made from scratch: git merge-base exits 1, which is an answer (none).
    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    head = git(clones["a"], "rev-parse", "HEAD").strip()
    orphan = git(clones["a"], "commit-tree", "-m", "a history of its own",
                 "4b825dc642cb6eb9a060e54bf8d69288fbee4904").strip()  # the empty tree
    assert fleet.integrate._merge_base(a, orphan, head) is None
    assert fleet.integrate._merge_base(a, head, head) == head


def test_a_replayed_notes_file_marks_read_only_what_this_host_read(tmp_path, monkeypatch):
    # Both hosts had notes A and B unread; this host gave A to its worker (read here): the remote's
    # file comes back with A read and B still unread, for the host that works on B.
    from memento_core.notes import parse_notes_text

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    a = context(clones["a"], "a", monkeypatch)
    both = ("### [NOTE] 2026-12-01T09:00:00 → T-1\nuse the pool\n\n"
            "### [NOTE] 2026-12-01T09:05:00 → T-2\nkeep the old API\n")
    mine = both.replace("[NOTE] 2026-12-01T09:00:00", "[NOTE:READ] 2026-12-01T09:00:00")
    merged = fleet.docs.merge_notes(a, both.encode(), both.encode(), mine.encode())
    assert [(n.text, n.read) for n in parse_notes_text(merged.decode())] == [
        ("use the pool", True), ("keep the old API", False)]


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


def test_a_tick_that_goes_on_claims_its_next_task_in_the_push_of_its_result(tmp_path):
    bare, clones = make_fleet(tmp_path, ["a"], 3, max_tasks=3)
    pushes = count_pushes(bare, tmp_path)
    out = tick_all(clones)["a"]
    assert all(f"T-{i} passed" in out for i in (1, 2, 3)), out
    lines = pushes.read_text().splitlines()
    # The first claim; then result+claim, result+claim; then the last result (today: 6 pushes).
    assert len(lines) == 4, lines
    assert "refs/memento/claims/T-2" in lines[1] and "refs/memento/claims/T-3" in lines[2], lines
    plan = remote_plan(bare)
    assert [t.status for t in plan.tasks] == ["x", "x", "x"]
    log = subjects(bare)
    for i in (1, 2, 3):
        assert log.count(f"memento: complete T-{i} Write out/{i}.txt") == 1
        assert log.count(f"memento: claim T-{i} on a") == 1
    assert claim_refs(bare) == []
    assert not (clones["a"] / ".memento" / "fleet_pending.json").exists()
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert git(clones["a"], "status", "--porcelain") == ""


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


def test_a_chained_claim_that_loses_its_race_still_lands_the_result_and_claims_another_task(tmp_path, monkeypatch):
    from memento_core.tick import run
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)

    def b_claims_t2():  # between a's fetch and its push: b wins T-2
        fleet.sync.sync(b)
        assert fleet.claims.claim(b, b.plan().task("T-2"))
        b.fleet.stop_beating()

    fetches = counted_fetches(monkeypatch, b_claims_t2)
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
        assert result.passed, result.reason
        assert fetches.count("a") == 2  # a's first push lost the race and went round again
        log = subjects(bare)
        assert log.count("memento: complete T-1 Write out/1.txt") == 1
        assert log.count("memento: claim T-2 on b") == 1 and not any(s.startswith("memento: claim T-2 on a") for s in log)
        assert log.count("memento: claim T-3 on a") == 1
        assert [t.status for t in remote_plan(bare).tasks] == ["x", "~", "~"]
        owners = {ref: git(bare, "log", "-1", "--format=%s", ref).strip() for ref in claim_refs(bare)}
        assert owners == {"refs/memento/claims/T-2": "memento: claim T-2 on b",
                          "refs/memento/claims/T-3": "memento: claim T-3 on a"}
        assert a.fleet.task == "T-3" and a.fleet.ref == git(bare, "rev-parse", "refs/memento/claims/T-3").strip()
        assert fleet.pending.read_pending(a) == ("T-3", a.fleet.ref)
        assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
        # The next pick is the chained claim: no fetch, no claim push.
        before = len(fetches)
        picked = fleet.pick.pick(a, run.pick_task, run.afterwards)
        assert not isinstance(picked, run.Outcome), picked
        assert picked[1].id == "T-3" and len(fetches) == before
    finally:
        for ctx in (a, b):
            if ctx.fleet is not None:
                ctx.fleet.stop_beating()


def test_a_stale_claim_of_another_host_is_not_chained_over_but_taken_over_by_the_next_pick(tmp_path, monkeypatch):
    from memento_core.tick import run
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    fleet.sync.sync(b)
    assert fleet.claims.claim(b, b.plan().task("T-2"))
    b.fleet.stop_beating()
    # b died long ago: its heartbeat ref is an hour old.
    env = {**os.environ, "GIT_COMMITTER_DATE": f"@{int(time.time()) - 3600} +0000"}
    old = subprocess.run(["git", "commit-tree", "-m", "memento: claim T-2 on b",
                          "4b825dc642cb6eb9a060e54bf8d69288fbee4904"], cwd=bare, env=env,
                         capture_output=True, text=True, check=True).stdout.strip()
    git(bare, "update-ref", "refs/memento/claims/T-2", old)
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
        assert result.passed, result.reason
        assert a.fleet.task == "" and a.fleet.chained == ""  # not chained: T-3 is not claimed
        assert not any(s.startswith("memento: claim T-3") for s in subjects(bare))
        assert claim_refs(bare) == ["refs/memento/claims/T-2"]
        picked = fleet.pick.pick(a, run.pick_task, run.afterwards)  # the normal pick takes it over
        assert not isinstance(picked, run.Outcome), picked
        assert picked[1].id == "T-2"
        log = subjects(bare)
        assert "memento: T-2 taken over from b (retry 1/3)" in log
        assert log[0] == "memento: claim T-2 on a"
        assert remote_plan(bare).task("T-2").retries == 1
        # With no stale claim left, T-2's result claims T-3 in its push ...
        root = clones["a"]
        a.fleet.stop_beating()
        (root / "out" / "2.txt").write_text("T-2\n")
        plan = root / "docs" / "MASTER_PLAN.md"
        plan.write_text(plan.read_text().replace("- [ ] `T-2`", "- [x] `T-2`"))
        git(root, "add", "out/2.txt", "docs/MASTER_PLAN.md")
        git(root, "commit", "-qm", "memento: complete T-2 Write out/2.txt")
        assert fleet.publish.publish(a, TaskResult("T-2", True), chain=True).passed
        assert a.fleet.chained == "T-3" and claim_refs(bare) == ["refs/memento/claims/T-3"]
        # ... and a tick that stops before attempting it gives it back: `[ ]`, no retry, no ref.
        fleet.sync.finish(a, run.Outcome(0, "interrupted by SIGTERM"))
        assert claim_refs(bare) == [] and a.fleet.task == "" and a.fleet.chained == ""
        t3 = remote_plan(bare).task("T-3")
        assert (t3.status, t3.retries) == (" ", 0)
        assert subjects(bare)[0].startswith("memento: release T-3")
        assert not (root / ".memento" / "fleet_pending.json").exists()
    finally:
        for ctx in (a, b):
            if ctx.fleet is not None:
                ctx.fleet.stop_beating()


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


def test_the_pause_after_lost_races_doubles_with_each_loss_in_a_row_and_a_landed_push_resets_it(tmp_path, monkeypatch):
    """Binary exponential back-off: 16 hosts woken in the same minute must spread out, not retry
    together every 0.5 s (the fleet bench lost 11 races per task that way), and spread wider
    than a push's window is long."""
    bare, clones = make_fleet(tmp_path, ["a", "b"], 4)
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)
    pauses, now = ceiling_back_off(monkeypatch)
    try:
        for ctx in (a, b):
            fleet.sync.sync(ctx)  # both have fetched the same sha
        assert fleet.claims.claim(a, a.plan().task("T-1")) is True
        for task in ("T-1", "T-2", "T-3", "T-2", "T-3", "T-2"):  # b never fetches: every lease is stale
            assert fleet.claims.claim(b, b.plan().task(task)) is False
        assert pauses == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]  # a claim's: up to sixteen slots, 8 s at most
        fleet.sync.sync(b)
        assert fleet.claims.claim(b, b.plan().task("T-2")) is True
        assert b.fleet.races == 0  # landed: the next loss pauses 0.5 s again
        assert fleet.claims.claim(b, b.plan().task("T-3")) is True  # b's own push moved the branch: a's view is old
        assert fleet.claims.claim(a, a.plan().task("T-3")) is False
        assert pauses[-1] == 0.5  # a's first loss in a row
        assert [t.status for t in remote_plan(bare).tasks] == ["~", "~", "~", " "]
        assert claim_refs(bare) == [f"refs/memento/claims/T-{n}" for n in (1, 2, 3)]
        # A slow window (a loaded machine, a far remote): 2 s from a's fetch to the end of its
        # push. The first pause spreads over twice that, the next doubles it, up to the limit.
        for ctx in (a, b):
            fleet.sync.sync(ctx)
        now[0] += 2.0
        assert fleet.claims.claim(b, b.plan().task("T-4")) is True
        assert fleet.claims.claim(a, a.plan().task("T-4")) is False
        assert a.fleet.window == pytest.approx(2.0, abs=0.1) and pauses[-1] == pytest.approx(4.0, abs=0.2)
        assert remote.back_off_ceiling(2, 2.0) == 8.0 and remote.back_off_ceiling(1, 0.1) == 0.5
        assert remote.back_off_ceiling(9, 0.1) == 2.0 and remote.back_off_ceiling(9, 2.0) == remote.BACKOFF_LIMIT
        assert remote.back_off_ceiling(9, 0.1, remote.CLAIM_DOUBLINGS) == 8.0
    finally:
        for ctx in (a, b):
            if ctx.fleet is not None:
                ctx.fleet.stop_beating()
    # (the syncs gave back the claims their hosts never attempted: T-4's is the one left)
    assert remote_plan(bare).task("T-4").status == "~" and "refs/memento/claims/T-4" in claim_refs(bare)


# --------------------------------------------------------------------------- the rebase, replayed


def _is_ancestor(root: Path, ancestor: str, rev: str) -> bool:
    return subprocess.run(["git", "merge-base", "--is-ancestor", ancestor, rev], cwd=root).returncode == 0


def _unpushed_result(root: Path, task: str) -> str:
    """A host's result of ``task`` committed here but not pushed: out/<N>.txt and the plan's [x],
    then its SUCCESS entry (naming the result's commit) as `memento: sync docs`."""
    n = task.split("-")[1]
    (root / "out").mkdir(exist_ok=True)
    (root / "out" / f"{n}.txt").write_text(f"{task}\n")
    plan = root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace(f"- [ ] `{task}`", f"- [x] `{task}`"))
    git(root, "add", "-A")
    git(root, "commit", "-qm", f"memento: complete {task} Write out/{n}.txt")
    sha = git(root, "rev-parse", "HEAD").strip()
    status = root / "docs" / "TICK_STATUS.md"
    status.write_text(status.read_text() + f"\n## [2026-12-03 14:00:00] Tick #7 — {task}\n"
                      f"- **Status**: ✅ SUCCESS\n- **Git Commit**: `{sha[:7]}` — \"memento: complete {task}\"\n")
    git(root, "commit", "-qam", "memento: sync docs")
    return sha


def test_the_replay_of_a_hosts_results_is_what_git_rebase_made_of_them(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    old = _unpushed_result(clones["a"], "T-2")
    twin = tmp_path / "a-twin"  # the same host's clone, copied: one integrates each way
    subprocess.run(["cp", "-a", str(clones["a"]), str(twin)], check=True)
    tick_all({"b": clones["b"]})  # meanwhile the remote gets T-1: the plan and the log change there
    runs = {}
    for name, root, replays in (("replayed", clones["a"], True), ("rebased", twin, False)):
        ctx = context(root, "a", monkeypatch)
        calls = []
        real = fleet.integrate.gitobjects.replay
        monkeypatch.setattr(fleet.integrate.gitobjects, "replay",
                            lambda *a, real=real, replays=replays, calls=calls: calls.append(1) or (real(*a) if replays else None))
        remote.fetch(ctx)
        fleet.integrate.integrate(ctx, remote.remote_head(ctx))
        assert calls == [1], name
        assert git(root, "status", "--porcelain") == "", name
        head = git(root, "rev-parse", "HEAD").strip()
        moved = git(root, "log", "-1", "--format=%H", "--grep", "^memento: complete T-2", head).strip()
        assert moved != old and _is_ancestor(root, git(bare, "rev-parse", "main").strip(), head), name
        status = git(root, "show", "HEAD:docs/TICK_STATUS.md")
        assert f"`{moved[:7]}`" in status and f"`{old[:7]}`" not in status, name  # the entry follows its commit
        runs[name] = {"subjects": git(root, "log", "--format=%s", head).splitlines(),
                      "plan": git(root, "show", "HEAD:docs/MASTER_PLAN.md"),
                      "status": status.replace(moved[:7], "<sha>"),
                      "files": git(root, "ls-tree", "-r", "--format=%(objectname) %(path)", "HEAD", "out")}
    assert runs["replayed"] == runs["rebased"]
    assert parse_plan_text(runs["replayed"]["plan"]).task("T-1").status == "x"
    assert parse_plan_text(runs["replayed"]["plan"]).task("T-2").status == "x"


def test_the_replay_keeps_a_persons_uncommitted_edit_and_will_not_overwrite_their_new_file(tmp_path, monkeypatch):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    a_root = clones["a"]
    (a_root / "person.txt").write_text("a person's file\n")
    git(a_root, "add", "person.txt")
    git(a_root, "commit", "-qm", "a person's commit")
    _unpushed_result(a_root, "T-2")
    tick_all({"b": clones["b"]})  # the remote gets T-1 and its out/1.txt
    ctx = context(a_root, "a", monkeypatch)
    remote.fetch(ctx)
    upstream = remote.remote_head(ctx)
    # A person's edit of a tracked file the remote did not change: kept, byte for byte, unstaged.
    edited = a_root / "person.txt"
    mine = b"a person's file\r\nwith words not committed yet\n"
    edited.write_bytes(mine)
    # ... and a file of theirs where the remote now has out/1.txt: nothing may overwrite it.
    (a_root / "out" / "1.txt").write_bytes(b"the person's own file\n")
    local = git(a_root, "rev-parse", "HEAD").strip()
    with pytest.raises(remote.MementoError):
        fleet.integrate.integrate(ctx, upstream)
    assert (a_root / "out" / "1.txt").read_bytes() == b"the person's own file\n"
    assert edited.read_bytes() == mine
    assert git(a_root, "rev-parse", "HEAD").strip() == local  # the replay's move undone, git's rebase refused
    assert not (a_root / ".git" / "rebase-merge").exists() and not (a_root / ".git" / "rebase-apply").exists()
    (a_root / "out" / "1.txt").unlink()
    head = fleet.integrate.integrate(ctx, upstream)
    assert head != local and _is_ancestor(a_root, upstream, head)
    assert edited.read_bytes() == mine and git(a_root, "status", "--porcelain").split() == ["M", "person.txt"]
    assert "a person's commit" in git(a_root, "log", "--format=%s", f"{upstream}..HEAD")
    assert (a_root / "out" / "1.txt").read_text() == git(bare, "show", "main:out/1.txt")


_INTEGRATE = """
import sys
from pathlib import Path
from memento_core.config import load_config
from memento_core import fleet
from memento_core.fleet import remote
from memento_core.tick.context import TickContext
from memento_core.workspace import Workspace
ctx = TickContext(Workspace(Path(sys.argv[1])))
ctx.config = load_config(ctx.ws.config_path)
remote.fetch(ctx)
fleet.integrate.integrate(ctx, remote.remote_head(ctx))
"""


@pytest.mark.parametrize("point", ["replay:before-ref", "replay:before-files"])
def test_a_replay_killed_half_way_is_finished_or_dropped_by_the_next_tick(tmp_path, monkeypatch, point):
    bare, clones = make_fleet(tmp_path, ["a", "b"], 3)
    a_root = clones["a"]
    _unpushed_result(a_root, "T-2")
    tick_all({"b": clones["b"]})  # the remote moves on: a's commits must be replayed onto it
    local = git(a_root, "rev-parse", "HEAD").strip()
    killed = subprocess.run([PY, "-c", _INTEGRATE, str(a_root)], env=env_for("a", MEMENTO_CRASH_AT=point),
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    journal = a_root / ".memento" / "fleet_replay.json"
    assert journal.exists()
    moved = git(a_root, "rev-parse", "HEAD").strip()
    assert (moved == local) == (point == "replay:before-ref")
    ctx = context(a_root, "a", monkeypatch)
    fleet.integrate.clean_leftovers(ctx)  # what the next tick does first
    assert not journal.exists()
    assert git(a_root, "rev-parse", "HEAD").strip() == moved
    assert git(a_root, "status", "--porcelain", "--untracked-files=no") == ""  # index and files are HEAD's
    assert subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=a_root).returncode == 0
    upstream = git(bare, "rev-parse", "main").strip()
    if point == "replay:before-files":  # HEAD had moved onto the remote's: the files follow it
        assert (a_root / "out" / "1.txt").read_text() == git(bare, "show", "main:out/1.txt")
        assert _is_ancestor(a_root, upstream, "HEAD")
    remote.fetch(ctx)
    fleet.integrate.integrate(ctx, remote.remote_head(ctx))  # and the sync goes on from there
    assert _is_ancestor(a_root, upstream, "HEAD")
    assert git(a_root, "status", "--porcelain", "--untracked-files=no") == ""


def test_a_result_replayed_onto_the_remote_is_pushed_before_head_and_the_files_move(tmp_path, monkeypatch):
    """The window from a fetch to the end of its push is where another host's push loses this
    one its race: the replayed commits are pushed as objects, and HEAD, the index and the files
    move to them after the push (with the documents' commit), not inside the window."""
    from memento_core import gitops
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    fleet.sync.sync(b)
    assert fleet.claims.claim(b, b.plan().task("T-2"))  # the remote moves on: a's result must be replayed
    b.fleet.stop_beating()
    ran, real = [], gitops.run_git

    def recorded(root, args, **kw):
        if Path(root) == clones["a"]:
            ran.append(next(arg for arg in args if not arg.startswith("-") and "=" not in arg))
        return real(root, args, **kw)

    monkeypatch.setattr(gitops, "run_git", recorded)
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
    finally:
        a.fleet.stop_beating()
    assert result.passed, result.reason
    window = ran[ran.index("fetch"):ran.index("push") + 1]
    assert "read-tree" not in window and "update-ref" not in window and "merge" not in window, window
    assert "read-tree" in ran[ran.index("push"):]  # the files moved, after the push
    log = subjects(bare)
    assert log.count("memento: complete T-1 Write out/1.txt") == 1 and "memento: claim T-3 on a" in log
    assert git(clones["a"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main")  # the chained claim held
    # The files are the pushed ones', but the chained claim's `[~]`, which the work tree's plan
    # never gets (the attempt's own claim step marks it).
    shown = git(clones["a"], "diff", "HEAD", "--", ".").splitlines()
    assert git(clones["a"], "status", "--porcelain") == " M docs/MASTER_PLAN.md\n"
    assert [line for line in shown if line[:1] in "+-" and line[:3] not in ("+++", "---")] == [
        "-- [~] `T-3` Write out/3.txt", "+- [ ] `T-3` Write out/3.txt"]
    assert (clones["a"] / "out" / "1.txt").read_text() == "T-1\n"
    assert a.fleet.task == "T-3"
    assert [t.status for t in remote_plan(bare).tasks] == ["x", "~", "~"]


def test_a_person_s_file_in_the_way_after_the_push_keeps_head_and_the_next_sync_follows(tmp_path, monkeypatch):
    """The replayed result landed, but a person's new file stands where the remote now has one:
    nothing of theirs is overwritten, HEAD stays, cron.log says why, and once the file is gone
    the next sync brings the work tree to the remote."""
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    tick_all({"b": clones["b"]})  # b completes T-2 and T-3: out/2.txt and out/3.txt on the remote
    a_root = clones["a"]
    for n in (2, 3):
        (a_root / "out" / f"{n}.txt").write_bytes(b"the person's own file\n")
    local = git(a_root, "rev-parse", "HEAD").strip()
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True))
    finally:
        a.fleet.stop_beating()
    assert result.passed, result.reason
    assert subjects(bare).count("memento: complete T-1 Write out/1.txt") == 1  # the push landed
    assert claim_refs(bare) == []
    assert git(a_root, "rev-parse", "HEAD").strip() == local
    assert (a_root / "out" / "2.txt").read_bytes() == b"the person's own file\n"
    assert not (a_root / ".git" / "rebase-merge").exists() and not (a_root / ".git" / "rebase-apply").exists()
    assert "the work tree could not follow the commits replayed onto" in (a_root / "logs" / "cron.log").read_text()
    for n in (2, 3):
        (a_root / "out" / f"{n}.txt").unlink()
    fleet.sync.sync(a, take_over=False)
    assert git(a_root, "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    assert git(a_root, "status", "--porcelain") == ""
    assert [t.status for t in remote_plan(bare).tasks] == ["x", "x", "x"]


def test_a_chained_claim_is_held_when_the_replay_leaves_plan_notes_and_the_notes_reach_the_remote(
        tmp_path, monkeypatch):
    """The replay's plan notes become a status entry committed after the push: on top of the
    chained claim, which is held first (not left to go stale), and pushed by the next push."""
    from memento_core import gitobjects
    from memento_core.tick.context import TaskResult

    bare, clones, a, b = two_hosts_a_holding_t1(tmp_path, monkeypatch)
    fleet.sync.sync(b)
    assert fleet.claims.claim(b, b.plan().task("T-2"))
    b.fleet.stop_beating()
    real = gitobjects.replay

    def with_a_note(*args, **kw):
        out = real(*args, **kw)
        remote.fleet(a).plan_notes.append("T-1: changed here and on the remote; the remote's stands")
        return out

    monkeypatch.setattr(gitobjects, "replay", with_a_note)
    try:
        result = fleet.publish.publish(a, TaskResult("T-1", True), chain=True)
        assert result.passed, result.reason
        assert a.fleet.task == "T-3" and a.fleet.ref == git(bare, "rev-parse", "refs/memento/claims/T-3").strip()
        remote_main = git(bare, "rev-parse", "main").strip()
        assert git(clones["a"], "rev-parse", "HEAD~1").strip() == remote_main  # the entry's commit on the claim
        assert "PLAN MERGE" in git(clones["a"], "show", "HEAD:docs/TICK_STATUS.md")
        log = clones["a"] / "logs" / "cron.log"
        assert not log.exists() or "goes stale" not in log.read_text()
        assert "- [~] `T-3`" in git(clones["a"], "show", "HEAD:docs/MASTER_PLAN.md")  # the claim never undone
        fleet.sync.sync(a, take_over=False)  # the next push carries it
        assert "PLAN MERGE" in git(bare, "show", "main:docs/TICK_STATUS.md")
        assert a.fleet.task == "T-3"
    finally:
        a.fleet.stop_beating()


@pytest.mark.parametrize("parallel", [True, False])
def test_a_parallel_phase_spreads_the_hosts_over_its_pickable_tasks_a_sequential_one_keeps_the_first(
        tmp_path, monkeypatch, parallel):
    """Hosts that fetched the same plan race for one task less often when each picks at random."""
    bare, clones = make_fleet(tmp_path, ["a"], 4, parallel=parallel)
    ctx = context(clones["a"], "a", monkeypatch)
    offered = []

    class Last:
        def choice(self, seq):
            offered.append([t.id for t in seq])
            return seq[-1]

    monkeypatch.setattr(remote, "_CHANCE", Last())
    try:
        plan = ctx.plan()
        _, picked = fleet.batch._spread(ctx, plan, plan.task("T-1"))
    finally:
        if ctx.fleet is not None:
            ctx.fleet.stop_beating()
    if parallel:
        assert offered == [["T-1", "T-2", "T-3", "T-4"]] and picked.id == "T-4"
    else:
        assert offered == [] and picked.id == "T-1"


def test_a_remote_paused_after_this_tick_ran_a_task_ends_the_tick_through_its_afterwards(tmp_path, monkeypatch):
    """What already ran is published and recorded (run.afterwards), never dropped with the stop."""
    from memento_core.runlog import Outcome

    bare, clones = make_fleet(tmp_path, ["a"], 2)
    person = Person(tmp_path, bare)
    plan = person.root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("tick_mode: auto", "tick_mode: paused"))
    git(person.root, "commit", "-qam", "person: paused")
    git(person.root, "push", "-q", "origin", "main")
    ctx = context(clones["a"], "a", monkeypatch)
    ended = []

    def afterwards(ctx, code, message):
        ended.append((code, message))
        return Outcome(code, "afterwards: " + message)

    def never(ctx):
        raise AssertionError("a paused remote picks nothing")

    try:
        alone = fleet.pick.pick(ctx, never, afterwards)
        assert isinstance(alone, Outcome) and alone.exit_code == 0 and ended == []
        ctx.results.append(object())  # a task this tick ran already
        after = fleet.pick.pick(ctx, never, afterwards)
    finally:
        if ctx.fleet is not None:
            ctx.fleet.stop_beating()
    assert ended == [(0, "tick skipped: tick_mode is paused (the remote's plan)")]
    assert after == Outcome(0, "afterwards: tick skipped: tick_mode is paused (the remote's plan)")


def test_the_git_commit_fields_follow_a_rebase_and_a_missing_status_log_is_left_missing(tmp_path):
    root = tmp_path / "proj"
    init_workspace(root, project="p", commit=False)
    ctx = TickContext(Workspace(root))
    old, new = "a" * 40, "b" * 40
    status = ctx.ws.status_path
    status.write_text(f"## [x] Tick #1\n- **Git Commit**: `{old[:7]}`\n- **Git Commit**: `1234567`\n")
    fleet.docs._fix_commit_shas(ctx, {old: new})
    assert status.read_text() == f"## [x] Tick #1\n- **Git Commit**: `{new[:7]}`\n- **Git Commit**: `1234567`\n"
    status.unlink()
    fleet.docs._fix_commit_shas(ctx, {old: new})  # nothing to fix, nothing made
    assert not status.exists()


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


def test_a_tick_that_loses_every_race_for_a_claim_ends_saying_so(tmp_path, monkeypatch):
    from memento_core.runlog import Outcome

    bare, clones = make_fleet(tmp_path, ["a"], 1)
    ctx = context(clones["a"], "a", monkeypatch)
    tries = []
    monkeypatch.setattr(fleet.claims, "claim", lambda ctx, task, batch=None: tries.append(task.id) or False)
    monkeypatch.setattr(remote, "_pause", lambda seconds: None)
    try:
        ended = fleet.pick.pick(ctx, lambda c: (c.plan(), c.plan().task("T-1")), lambda *a: None)
    finally:
        if ctx.fleet is not None:
            ctx.fleet.stop_beating()
    assert tries == ["T-1"] * fleet.host.MAX_RACES
    assert isinstance(ended, Outcome) and ended.exit_code == 1
    assert ended.message == f"lost the race to the remote {fleet.host.MAX_RACES} times; the next tick tries again"
    assert "lost the race for T-1 to another host" in (clones["a"] / "logs" / "cron.log").read_text()


def test_a_host_never_takes_a_task_whose_files_overlap_another_hosts_claim(tmp_path, monkeypatch):
    """SPEC §20 across a fleet: T-2 shares a file with T-1, which host a holds; b takes T-3."""
    from memento_core.tick import run

    bare, clones = make_fleet(tmp_path, ["a", "b"], 3, parallel=True)
    person = Person(tmp_path, bare)
    plan = person.root / "docs" / "MASTER_PLAN.md"
    plan.write_text(plan.read_text().replace("context_files: [out/2.txt]", "context_files: [out/]"))
    git(person.root, "commit", "-qam", "person: T-2 writes in out/")
    git(person.root, "push", "-q", "origin", "main")
    a, b = context(clones["a"], "a", monkeypatch), context(clones["b"], "b", monkeypatch)

    class First:  # the spread's choice made plain: the first task it may take
        def choice(self, seq):
            return seq[0]

    monkeypatch.setattr(remote, "_CHANCE", First())
    try:
        fleet.sync.sync(a)
        assert fleet.claims.claim(a, a.plan().task("T-1"))
        plan, task = fleet.pick.pick(b, run.pick_task, lambda *args: None)
        assert task.id == "T-3" and remote_plan(bare).task("T-2").status == " "
    finally:
        for ctx in (a, b):
            if ctx.fleet is not None:
                ctx.fleet.stop_beating()
