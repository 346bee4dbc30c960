"""`git status` is clean of Memento's documents after every way a tick can end (issue 36, item 5;
SPEC §4 step 5 and step 16): a pass, a failure, a block, the circuit breaker (a streak of failed
ticks, more than 30 % blocked, a git error), an idle tick, an invalid plan, a dirty work tree,
SIGTERM, a paused plan's skip, the architect after a blocked tick; with and without
``[workers] remote``.

Each row is a real project driven by real ticks (`python -m memento_core.tick`, the `script`
preset, the default sandbox where it matters) and judged by `git status --porcelain` and by what
git holds: after the breaker, the commit that adds its CIRCUIT BREAKER entry also holds
`tick_mode: paused`. The git error is the one fault made in-process: a commit that fails once,
as when a person's own git command holds the index lock for a moment.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memento_core.errors import MementoError
from memento_core.git.commit import commit_paths as git_commit_paths
from memento_core.scaffold import init_workspace
from memento_core.tick import context as tick_context
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import OWN_DOCS

PY = sys.executable
AGENTS = Path(__file__).resolve().parents[2] / "agents"
BREAKER = "CIRCUIT BREAKER TRIGGERED"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def task(n: int, verify: str, do: str = "") -> str:
    return (f"- [ ] `T-{n}` [MODULE:x] Task {n}\n"
            f"  - do: `{do or f'echo {n} > f{n}.txt'}`\n"
            f"  - verify: `{verify}`\n"
            f"  - context_files: [f{n}.txt]\n"
            f"  - retries: 0\n\n")


def plan(tasks: str, *, retries: int = 2, threshold: int = 5, mode: str = "auto") -> str:
    return f"""# MASTER_PLAN: endings

## Meta
- tick_mode: {mode}
- max_retries: {retries}
- max_tasks_per_tick: 1
- circuit_breaker_threshold: {threshold}
- total_ticks: 0

## Phase 1: Only
<!-- depends: none -->

{tasks}"""


PASSES, FAILS = "test -f f{n}.txt", "false"
TEN_FAILING = "".join(task(n, FAILS) for n in range(1, 11))


def tick(root: Path, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "memento_core.tick", "--project", str(root)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})


def ticks(n: int) -> Callable[[Path], str]:
    def drive(root: Path) -> str:
        out = ""
        for _ in range(n):
            done = tick(root)
            out = done.stdout + done.stderr
        return out
    return drive


def plan_invalid(root: Path) -> str:
    # A person's edit that breaks a Meta value, uncommitted, as a person leaves it.
    path = root / "docs" / "MASTER_PLAN.md"
    path.write_text(path.read_text().replace("- max_retries: 2", "- max_retries: lots"))
    return ticks(1)(root)


def dirty_tree(root: Path) -> str:
    first = ticks(1)(root)  # T-1 passes
    assert "T-1 passed" in first, first
    (root / "notes.txt").write_text("tracked\n")
    git(root, "add", "notes.txt")
    git(root, "commit", "-qm", "a person's commit")
    (root / "notes.txt").write_text("edited, not committed\n")
    (root / "README.md").write_text("staged by a person\n")
    git(root, "add", "README.md")  # a person's staged new file and an unstaged edit: both stay theirs
    return ticks(1)(root)


def sigterm(root: Path) -> str:
    proc = subprocess.Popen([PY, "-m", "memento_core.tick", "--project", str(root)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (root / "f1.txt").exists() and time.monotonic() < deadline:  # the agent is running
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return out


def git_error_once(monkeypatch) -> Callable[[Path], str]:
    """The failure's commit fails once (git said no), the way a person's `git status` holding
    `.git/index.lock` for a moment makes it fail; the breaker trips on the git error."""
    def drive(root: Path) -> str:
        real, failed = git_commit_paths, []

        def commit_paths(where, paths, message, *args, **kwargs):
            if "failed (retry" in message and not failed:
                failed.append(message)
                raise MementoError("git commit-tree: fatal: Unable to create '.git/index.lock': File exists")
            return real(where, paths, message, *args, **kwargs)

        monkeypatch.setattr(tick_context, "commit_paths", commit_paths)
        outcome = run_tick(root)
        assert failed, outcome.message
        return outcome.message
    return drive


def architect_fixes(root: Path) -> str:
    return ticks(2)(root)  # T-1 blocks; the next tick finds the pipeline blocked and the architect fixes it


def done(n: int) -> str:
    return task(n, PASSES.format(n=n)).replace("- [ ]", "- [x]")


@dataclass
class Ending:
    """A row of the table: a project, what to do to it, what the last tick said, what is left."""

    name: str
    tasks: str
    drive: Callable[[Path], str] | str  # a function of the root, or the name of a fixture-made one
    said: str
    retries: int = 2
    threshold: int = 5
    mode: str = "auto"
    sandbox: str = "none"
    remote: bool = False
    toml: str = ""
    breaker: bool = False
    left: list[str] = field(default_factory=list)  # `git status --porcelain` lines that are the person's


ARCHITECT = (f'[architect]\npreset = "command"\nauto = true\n'
             f'command = """{shlex.join([PY, str(AGENTS / "architect.py"), "fix", "T-1", "true"])}"""\n')
ENDINGS = [
    Ending("pass", task(1, PASSES.format(n=1)), ticks(1), "T-1 passed", sandbox="auto"),
    Ending("fail", task(1, FAILS), ticks(1), "T-1 failed", sandbox="auto"),
    Ending("blocked", TEN_FAILING, ticks(2), "T-1 blocked"),
    Ending("breaker: a streak of failed ticks", TEN_FAILING, ticks(3), "T-1 failed", retries=9,
           threshold=3, sandbox="auto", breaker=True),
    Ending("breaker: a streak, with a remote", TEN_FAILING, ticks(3), "T-1 failed", retries=9, threshold=3,
           remote=True, breaker=True),
    Ending("breaker: more than 30% blocked", task(1, PASSES.format(n=1)) + task(2, FAILS), ticks(3),
           "T-2 blocked", breaker=True),
    Ending("breaker: more than 30% blocked, with a remote", task(1, PASSES.format(n=1)) + task(2, FAILS),
           ticks(3), "T-2 blocked", remote=True, breaker=True),
    Ending("breaker: a git error", TEN_FAILING, "git_error_once", "T-1 failed", breaker=True),
    Ending("skip after the breaker", task(1, FAILS) + task(2, FAILS), ticks(4), "tick_mode is paused",
           retries=1, breaker=True),
    Ending("idle: all tasks complete", task(1, PASSES.format(n=1)), ticks(3), "ALL TASKS COMPLETE"),
    Ending("idle: pipeline blocked", task(1, FAILS) + "".join(task(n, PASSES.format(n=n)) for n in (2, 3, 4)),
           ticks(5), "PIPELINE BLOCKED", retries=1),
    Ending("plan invalid", task(1, PASSES.format(n=1)), plan_invalid, "plan invalid"),
    Ending("plan invalid, with a remote", task(1, PASSES.format(n=1)), plan_invalid, "plan invalid", remote=True),
    Ending("dirty tree refused", task(1, PASSES.format(n=1)) + task(2, PASSES.format(n=2)), dirty_tree,
           "refused", left=["A  README.md", " M notes.txt"]),
    Ending("dirty tree refused, with a remote", task(1, PASSES.format(n=1)) + task(2, PASSES.format(n=2)),
           dirty_tree, "refused", remote=True, left=["A  README.md", " M notes.txt"]),
    Ending("interrupted by SIGTERM", task(1, PASSES.format(n=1), do="echo 1 > f1.txt; sleep 60"), sigterm,
           "interrupted by SIGTERM", sandbox="auto"),
    Ending("paused by a person, skipped", task(1, PASSES.format(n=1)), ticks(1), "tick_mode is paused",
           mode="paused"),
    Ending("the architect after a blocked tick", task(1, FAILS) + done(2) + done(3) + done(4), architect_fixes,
           "architect: edited T-1", retries=1, toml=ARCHITECT),
]


def project(tmp_path: Path, e: Ending) -> Path:
    root = tmp_path / "proj"
    init_workspace(root, project="endings", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(plan(e.tasks, retries=e.retries, threshold=e.threshold,
                                                       mode=e.mode))
    (root / "memento.toml").write_text(
        f'[agent]\npreset = "script"\ntimeout = "60s"\n[verify]\ntimeout = "60s"\n'
        f'[sandbox]\nmode = "{e.sandbox}"\n' + ('[workers]\nremote = "origin"\n' if e.remote else "") + e.toml)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "setup")
    if e.remote:
        bare = tmp_path / "remote.git"
        git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
        git(root, "remote", "add", "origin", str(bare))
        git(root, "push", "-q", "-u", "origin", "HEAD:main")
    return root


def named_commits(root: Path) -> list[str]:
    """The shas the status log's entries name in their Git Commit field."""
    text = (root / "docs" / "TICK_STATUS.md").read_text()
    return re.findall(r"^- \*\*Git Commit\*\*: `([0-9a-f]{7,40})`", text, flags=re.M)


def breaker_commit(root: Path) -> str | None:
    """The commit that added the CIRCUIT BREAKER entry to the status log (None: no such commit)."""
    found = git(root, "log", "--format=%H", f"-G{BREAKER}", "--", "docs/TICK_STATUS.md").split()
    return found[-1] if found else None


@pytest.mark.parametrize("e", ENDINGS, ids=[e.name for e in ENDINGS])
def test_git_status_is_clean_of_mementos_documents_after_the_tick(e, tmp_path, git_identity, monkeypatch):
    root = project(tmp_path, e)
    drive = git_error_once(monkeypatch) if e.drive == "git_error_once" else e.drive
    said = drive(root)
    assert e.said in said, said
    status = git(root, "status", "--porcelain").splitlines()
    assert [line for line in status if line[3:] in OWN_DOCS] == [], (e.name, status)
    assert status == e.left, (e.name, status)  # a person's work stays as it was: staged stays staged
    if e.breaker:
        sha = breaker_commit(root)
        assert sha, git(root, "log", "--format=%s")
        assert "- tick_mode: paused" in git(root, "show", f"{sha}:docs/MASTER_PLAN.md")  # in one commit
        assert "- tick_mode: auto" in git(root, "show", f"{sha}~1:docs/MASTER_PLAN.md")
        assert "- tick_mode: paused" in git(root, "show", "HEAD:docs/MASTER_PLAN.md")
    for sha in named_commits(root):  # an entry that names its commit by sha names one in the history
        assert subprocess.run(["git", "merge-base", "--is-ancestor", sha, "HEAD"], cwd=root).returncode == 0, sha
    if e.remote and e.breaker:  # the fleet hears of the pause: it is on the remote's branch
        assert "- tick_mode: paused" in git(root, "show", "origin/main:docs/MASTER_PLAN.md")
