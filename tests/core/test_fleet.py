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

from memento_core.config import load_config
from memento_core.plan import parse_plan, parse_plan_text
from memento_core.scaffold import init_workspace
from memento_core.tick import remote
from memento_core.tick.context import TickContext
from memento_core.workspace import Workspace

AGENTS = Path(__file__).resolve().parents[1] / "agents"
PROJECT = Path(__file__).resolve().parents[2]
PY = sys.executable


def git(root: Path, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=check).stdout


def plan_text(n: int, *, stale: str = "15min", max_tasks: int = 1) -> str:
    tasks = "".join(
        f"- [ ] `T-{i}` Write out/{i}.txt\n"
        f"  - verify: `grep -q T-{i} out/{i}.txt`\n"
        f"  - context_files: [out/{i}.txt]\n"
        f"  - retries: 0\n"
        for i in range(1, n + 1))
    return f"""# MASTER_PLAN: fleet

## Meta
- tick_mode: auto
- max_retries: 3
- max_tasks_per_tick: {max_tasks}
- stale_lock_timeout: {stale}
- circuit_breaker_threshold: 50
- total_ticks: 0

## Phase 1: Only
<!-- depends: none -->

{tasks}"""


# The agent writes out/<N>.txt for task T-N (its number from {task_id}).
AGENT = (f"{PY} -c \"import sys,pathlib; t=sys.argv[1]; p=pathlib.Path('out', t.split('-')[1]+'.txt'); "
         f"p.parent.mkdir(exist_ok=True); p.write_text(t+chr(10))\" {{task_id}}")


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
        remote.sync(ctx)  # both have fetched the same sha
    t1 = a.plan().task("T-1")
    try:
        assert remote.claim(a, t1) is True
        assert remote.claim(b, b.plan().task("T-1")) is False  # its lease names the sha it fetched
        # The loser is left as it was: HEAD back where it fetched, the plan's T-1 still [ ] here.
        assert git(clones["b"], "rev-parse", "HEAD") == git(bare, "rev-parse", "main~1")
        assert git(clones["b"], "status", "--porcelain") == ""
        remote.sync(b)  # fetch and pick again: T-1 is a's now
        assert b.plan().task("T-1").status == "~"
        assert remote.claim(b, b.plan().task("T-2")) is True
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
    monkeypatch.setattr(remote, "HEARTBEAT_SECONDS", 0.2)
    a = context(clones["a"], "a", monkeypatch)
    remote.sync(a)
    assert remote.claim(a, a.plan().task("T-1"))
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
