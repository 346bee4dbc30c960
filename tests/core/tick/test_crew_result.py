"""A parallel worker's result brought into the main work tree (SPEC §12): deletions included, a
person's uncommitted edit never overwritten, whenever it lands.

Real git and real ticks (in this process where the test must act at one moment of the
merge), the fake agent tests/agents/parallel_task.py through the `command` preset. Judged
on disk byte for byte, in HEAD's tree and in the plan.
"""

from __future__ import annotations

import threading

import pytest

from memento_core.git import worktrees
from memento_core.plan.scan import parse_plan
from memento_core.tick import crew_result
from memento_core.tick.__main__ import run_tick
from tests.core.tick.test_workers import (
    git,
    leftovers,
    make_parallel_ws,
    started,
    subjects,
    wait_for,
)

PERSONS = b"a person's edit, not yet committed\r\n\x00binary tail"


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


def test_a_task_that_deletes_a_tracked_file_removes_it_from_the_main_tree_and_head(tmp_path):
    ws, _ = make_parallel_ws(tmp_path, ["T-1"], workers=2, mode="deletes")
    assert git(ws.root, "ls-tree", "--name-only", "HEAD", "shared.txt").strip() == "shared.txt"
    outcome = run_tick(ws.root)
    assert outcome.exit_code == 0, outcome.message
    assert parse_plan(ws.plan_path).task("T-1").status == "x"
    assert not (ws.root / "shared.txt").exists()
    assert git(ws.root, "ls-tree", "--name-only", "HEAD", "shared.txt").strip() == ""
    assert (ws.root / "T-1.txt").read_text() == "done T-1\n"
    sha = git(ws.root, "log", "-1", "--format=%H", "--grep=complete T-1 ").strip()
    changed = git(ws.root, "show", "--name-status", "--format=", sha).split()
    pairs = set(zip(changed[::2], changed[1::2], strict=True))
    assert {("A", "T-1.txt"), ("D", "shared.txt")} <= pairs  # the task's one commit holds the deletion
    assert "shared.txt" not in git(ws.root, "status", "--porcelain")  # the index agrees
    assert leftovers(ws) == ([], [], 1)


def _judge_set_aside(ws, before_head: str) -> None:
    assert (ws.root / "shared.txt").read_bytes() == PERSONS  # kept byte for byte
    assert not (ws.root / "T-1.txt").exists()  # nothing of the task reached the main tree
    assert git(ws.root, "show", "HEAD:shared.txt") == "base\nsecond line\n"
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.retries) == (" ", 0)  # set aside, not the task's failure
    assert not any(s.startswith("memento: complete T-1") for s in subjects(ws))
    assert "uncommitted changes to shared.txt" in ws.status_path.read_text()
    assert git(ws.root, "rev-list", "--count", f"{before_head}..HEAD").strip() != "0"  # the set-aside entry
    assert leftovers(ws) == ([], [], 1)


def test_a_persons_edit_made_while_the_workers_run_is_never_overwritten(tmp_path):
    ws, scratch = make_parallel_ws(tmp_path, ["T-1"], workers=2, mode="both")
    head = git(ws.root, "rev-parse", "HEAD").strip()
    (scratch / "hold").write_text("")
    box = {}
    runner = threading.Thread(target=lambda: box.setdefault("outcome", run_tick(ws.root)))
    runner.start()
    try:
        wait_for(lambda: started(scratch, ["T-1"]))
        (ws.root / "shared.txt").write_bytes(PERSONS)  # the person edits the file the task changes
    finally:
        (scratch / "go").write_text("")
        runner.join(timeout=120)
    assert box["outcome"].exit_code == 0, box["outcome"].message
    _judge_set_aside(ws, head)


class _EditAfter:
    """A module's git function ``call``, but the person's edit lands right after it returns the
    first time: a moment inside the merge, between a look at the main work tree and the write."""

    def __init__(self, real, path):
        self.real, self.path, self.done = real, path, False

    def __call__(self, *args, **kw):
        found = self.real(*args, **kw)
        if not self.done:
            self.done = True
            self.path.write_bytes(PERSONS)
        return found


@pytest.mark.parametrize("module, call", [(crew_result, "git_status"), (worktrees, "hash_blobs")],
                         ids=["after-the-status-check", "after-the-hash-check"])
def test_a_persons_edit_landing_between_the_check_and_the_checkout_is_never_overwritten(tmp_path, monkeypatch,
                                                                                        module, call):
    # T-1.txt sorts before shared.txt: the first is written, then the edit is found and it is undone.
    ws, _ = make_parallel_ws(tmp_path, ["T-1"], workers=2, mode="both")
    head = git(ws.root, "rev-parse", "HEAD").strip()
    edit = _EditAfter(getattr(module, call), ws.root / "shared.txt")
    monkeypatch.setattr(module, call, edit)
    outcome = run_tick(ws.root)
    assert edit.done and outcome.exit_code == 0, outcome.message
    _judge_set_aside(ws, head)
