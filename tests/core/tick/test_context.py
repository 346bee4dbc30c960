"""tick/context.py: what a tick carries from step to step (SPEC §4)."""

from __future__ import annotations

import os

import pytest

from memento_core.errors import MementoError
from memento_core.plan.edits import edit_plan
from memento_core.scaffold import init_workspace
from memento_core.tick.context import TickContext
from memento_core.workspace import Workspace

PLAN = ("# MASTER_PLAN: p\n\n## Meta\n- tick_mode: auto\n\n## Phase 1: All\n\n"
        "- [ ] T-1 [MODULE:m] One\n  - verify: `true`\n- [ ] T-2 [MODULE:m] Two\n  - verify: `true`\n")


def test_plan_reads_the_file_at_every_call_and_parses_it_again_only_when_its_bytes_changed(tmp_path):
    root = tmp_path / "p"
    init_workspace(root, project="p", commit=False)
    ws = Workspace(root)
    ws.plan_path.write_text(PLAN, encoding="utf-8")
    ctx = TickContext(ws)
    first = ctx.plan()
    assert [t.status for t in first.tasks] == [" ", " "] and ctx.plan() is first  # unchanged: the same value
    edit_plan(ws.plan_path, lambda e: e.set_status("T-1", "x"))  # a step's own edit, through the editor
    edited = ctx.plan()
    assert [t.status for t in edited.tasks] == ["x", " "] and ctx.plan() is edited
    ws.plan_path.write_text(PLAN, encoding="utf-8")  # a person's edit back: the same bytes as first
    assert [t.status for t in ctx.plan().tasks] == [" ", " "]
    os.unlink(ws.plan_path)
    os.mkfifo(ws.plan_path)  # never a copy: what is on disk now, a FIFO refused unread
    with pytest.raises(MementoError, match="MASTER_PLAN"):
        ctx.plan()
    os.unlink(ws.plan_path)
    with pytest.raises(MementoError):
        ctx.plan()
