"""A person's untracked files are theirs: an agent that changes a draft or deletes a todo file fails,
and both come back byte for byte (SPEC §13: hashed at the snapshot, restored from a copy).

The hostile agent is tests/agents/touches_persons_untracked.py (the real `command` preset).
Confined, the files are read-only to it. Unconfined, the snapshot's prints and copies of a
person's untracked and ignored files (tick/kept.py) find the change and put the files back.
"""

from __future__ import annotations

import pytest

from memento_core.tick.__main__ import run_tick
from tests.core.modes import MODES

from .test_engine import agent, entries, git, make_ws


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


@pytest.mark.parametrize("mode", MODES)
def test_a_persons_changed_draft_and_lost_todo_fail_the_task_and_come_back(tmp_path, mode):
    ws = make_ws(tmp_path, agent("touches_persons_untracked.py"), sandbox=mode)
    (ws.root / "notes").mkdir()
    (ws.root / "notes" / "draft.md").write_bytes(b"my draft\r\n")
    (ws.root / "notes" / "todo.txt").write_bytes(b"buy milk\n")
    run_tick(ws.root)
    (entry,) = entries(ws)
    assert (ws.root / "notes" / "draft.md").read_bytes() == b"my draft\r\n"
    assert (ws.root / "notes" / "todo.txt").read_bytes() == b"buy milk\n"
    assert entry.status == "FAILED"
    assert "hello.txt" not in git(ws.root, "ls-files")
