"""Memento never blocks on what an agent made (SPEC §13 "Either way"), judged on disk, in both modes.

A FIFO with no writer holds the reader's open() for ever; a socket cannot be read; a device
(/dev/zero) never ends. The hostile agent tests/agents/makes_fifos.py puts one where Memento
reads a file afterwards: the worker's report, the memory queue, a document, the cron log, the
reviewer's review.md, a file under docs/ for the architect. The tick (and `memento architect`,
under the tick lock) must finish in bounded time, fail the attempt with a reason naming the
file, and leave no FIFO or socket behind; the next tick runs too.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core import status_log
from memento_core.plan.scan import parse_plan
from tests.core.modes import MODES

from .test_engine import agent, make_ws

PY = sys.executable
LIMIT = 120  # seconds: generous for a loaded machine; a hang would be for ever


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def specials(root: Path) -> list[str]:
    """Every FIFO, socket or device under ``root`` (links not followed)."""
    found = []
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            mode = os.lstat(os.path.join(folder, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                found.append(os.path.relpath(os.path.join(folder, name), root))
    return found


def bounded(argv: list[str], **kw) -> subprocess.CompletedProcess:
    """Run ``argv``; a hang fails the test (TimeoutExpired is never swallowed)."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=LIMIT, **kw)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{argv[2:4]} hung on what the agent made (killed after {LIMIT} s): {exc.stdout!r}")


def tick(root: Path) -> subprocess.CompletedProcess:
    return bounded([PY, "-m", "memento_core.tick", "--project", str(root)])


# Where the worker can make one in both modes (.memento/worker/ is its scratch folder), and where
# only an unconfined one can (the sandbox binds these read-only).
WORKER = [".memento/worker/tick_result.md", ".memento/worker/memory/request.json"]
UNCONFINED = ["docs/MASTER_PLAN.md", "docs/TICK_STATUS.md", "docs/HUMAN_NOTES.md", "docs/CURRENT_STATE.md",
              "logs/cron.log", ".memento/state.json", "memory/README.md"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", ["fifo", "socket"])
@pytest.mark.parametrize("where", [*WORKER, *UNCONFINED])
def test_a_fifo_where_memento_reads_never_hangs_the_tick(tmp_path, mode, kind, where):
    if mode == "bwrap" and where in UNCONFINED:
        pytest.skip("read-only in the sandbox: test_sandbox_names.py shows the agent cannot make it")
    ws = make_ws(tmp_path, agent("makes_fifos.py", *(["--socket"] if kind == "socket" else []), where),
                 sandbox=mode)
    proc = tick(ws.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert specials(ws.root) == []
    (entry,) = [e for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1"]
    assert entry.status == "FAILED", entry.field("Reason")
    assert where in entry.field("Reason") or where.startswith("docs/"), entry.field("Reason")
    assert parse_plan(ws.plan_path).task("T-1").status == " "
    assert not (ws.root / "hello.txt").exists()  # rolled back
    again = tick(ws.root)  # the next tick reads what the last one left: nothing of the agent's
    assert again.returncode == 0, again.stdout + again.stderr
    assert specials(ws.root) == []


@pytest.mark.parametrize("mode", MODES)
def test_a_reviewer_that_makes_review_md_a_fifo_fails_the_review_and_never_hangs(tmp_path, mode):
    from tests.core.tick.test_review import make_ws as review_ws

    ws, _out = review_ws(tmp_path, "pass", sandbox=mode)
    toml = ws.config_path.read_text()
    start = toml.index("[review]")
    line = next(ln for ln in toml[start:].splitlines() if ln.startswith("command ="))
    hostile = agent("makes_fifos.py", "--only", ".memento/worker/review.md", ".memento/worker/memory/left.json")
    toml = toml.replace(line, f'command = "{hostile}"')
    ws.config_path.write_text(toml)
    subprocess.run(["git", "commit", "-qam", "a hostile reviewer"], cwd=ws.root, check=True)
    proc = tick(ws.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert specials(ws.root) == []
    (entry,) = [e for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1"]
    reason = entry.field("Reason")
    assert entry.status == "FAILED" and reason.startswith("review:"), reason
    assert ".memento/worker/review.md" in reason and ".memento/worker/memory/left.json" in reason, reason
    assert parse_plan(ws.plan_path).task("T-1").status == " "


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("where", ["docs/design.md", "docs/PROJECT_MAP.md", "docs/MASTER_PLAN.md",
                                   "docs/HUMAN_NOTES.md", ".memento/worker/tick_result.md"])
def test_the_architect_with_a_fifo_in_docs_finishes_and_is_rolled_back(tmp_path, mode, where):
    from tests.core.tick.architect.test_run import make_ws as architect_ws

    if mode == "bwrap" and where in ("docs/design.md", "docs/PROJECT_MAP.md"):
        pass  # writable for the confined architect: docs/ is, the map is its to change
    elif mode == "bwrap" and where != ".memento/worker/tick_result.md":
        pytest.skip("read-only for the confined architect")
    ws = architect_ws(tmp_path, agent("makes_fifos.py", "--only", where), sandbox=mode)
    tasks_before = [(t.id, t.status, t.verify) for t in parse_plan(ws.plan_path).tasks]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws.root, capture_output=True, text=True).stdout
    proc = bounded([PY, "-m", "memento_core.cli", "architect", str(ws.root)])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert specials(ws.root) == []
    assert "rolled back" in proc.stdout and where in proc.stdout, proc.stdout
    assert [(t.id, t.status, t.verify) for t in parse_plan(ws.plan_path).tasks] == tasks_before
    subjects = subprocess.run(["git", "log", "--format=%s", f"{head.strip()}..HEAD"], cwd=ws.root,
                              capture_output=True, text=True).stdout
    assert "memento: architect —" not in subjects




# Where git itself opens a file to read a ref, its log or HEAD: a FIFO there would hold for-each-ref,
# update-ref or any command reading HEAD for ever. Only an unconfined agent can write .git/.
IN_GIT = [".git/refs/heads/evil", ".git/refs/tags/v9", ".git/packed-refs", ".git/logs/HEAD",
          ".git/logs/refs/heads/main", ".git/ORIG_HEAD", ".git/HEAD"]


@pytest.mark.parametrize("kind", ["fifo", "socket"])
@pytest.mark.parametrize("where", IN_GIT)
def test_a_fifo_where_git_reads_its_refs_never_hangs_the_tick(tmp_path, kind, where):
    ws = make_ws(tmp_path, agent("makes_fifos.py", *(["--socket"] if kind == "socket" else []), where),
                 sandbox="none")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws.root, capture_output=True, text=True).stdout
    head_file = (ws.root / ".git" / "HEAD").read_text()
    branch_log = ".git/logs/" + head_file.removeprefix("ref: ").strip()
    where = where.replace(".git/logs/refs/heads/main", branch_log)
    if where == branch_log and branch_log != ".git/logs/refs/heads/main":  # the branch's own log
        ws.config_path.write_text(ws.config_path.read_text().replace(".git/logs/refs/heads/main", branch_log))
        subprocess.run(["git", "commit", "-qam", "the branch's own log"], cwd=ws.root, check=True)
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ws.root, capture_output=True, text=True).stdout
    proc = tick(ws.root)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert specials(ws.root) == []
    (entry,) = [e for e in status_log.parse_status(ws.status_path) if e.task_id == "T-1"]
    assert entry.status == "FAILED" and where in entry.field("Reason"), entry.field("Reason")
    assert parse_plan(ws.plan_path).task("T-1").status == " "
    assert not (ws.root / "hello.txt").exists()  # rolled back
    assert (ws.root / ".git" / "HEAD").read_text() == head_file
    log = subprocess.run(["git", "log", "--format=%H", "-1", "HEAD~0"], cwd=ws.root, capture_output=True,
                         text=True, timeout=LIMIT)
    assert log.returncode == 0 and subprocess.run(
        ["git", "merge-base", "--is-ancestor", head.strip(), "HEAD"], cwd=ws.root, timeout=LIMIT).returncode == 0
    again = tick(ws.root)  # the next tick runs: nothing of the agent's is left in .git/
    assert again.returncode == 0, again.stdout + again.stderr
    assert specials(ws.root) == []
