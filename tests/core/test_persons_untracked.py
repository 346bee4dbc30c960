"""A person's untracked files are theirs: an agent that changes a draft or deletes a todo file fails,
and both come back byte for byte (SPEC §13: hashed at the snapshot, restored from a copy).

The hostile agent is tests/agents/touches_persons_untracked.py (the real `command` preset).
Confined, the files are read-only to it. Unconfined, this branch's guards do not look at
untracked files yet (gitops.changes_since leaves the snapshot's untracked files out): the
snapshot copy is helper h-ignored's item of issue 22, so that case is a strict xfail, which
turns into a failure (XPASS) the day the guard lands: then remove the mark.
"""

from __future__ import annotations

import pytest

from memento_core.tick.__main__ import run_tick

from .modes import MODES
from .test_engine import agent, entries, git, make_ws

UNCONFINED_NOT_YET = pytest.mark.xfail(strict=True, reason="untracked files are not hashed nor copied at the "
                                       "snapshot without a sandbox yet (issue 22, h-ignored)")


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


@pytest.mark.parametrize("mode", [pytest.param(m.values[0], id=m.id,
                                               marks=[*m.marks, *([UNCONFINED_NOT_YET] if m.id == "unconfined" else [])])
                                  for m in MODES])
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
