"""tick/context.py: what a tick carries from step to step. Its number (never one a PLAN INVALID
tick used), its commits (on the HEAD it was told to, or none), its small file operations (never a
FIFO opened, never a link followed, a tail of what was appended). Real files and real git."""

from __future__ import annotations

import os

import pytest

from memento_core.errors import MementoError
from memento_core.locks import SymlinkRefused
from memento_core.plan.edits import edit_plan
from memento_core.plan.scan import parse_plan
from memento_core.scaffold import init_workspace
from memento_core.state import TickState
from memento_core.tick.context import TickContext, append_log, next_number, read_or_none, tail
from memento_core.workspace import Workspace
from tests.core.scenarios.test_engine import git, make_ws
from tests.core.tick.ticks import tick_context


@pytest.fixture
def ctx(tmp_path, git_identity):
    ws = make_ws(tmp_path, "true")
    c = tick_context(ws, None)
    return c


def test_the_next_number_follows_the_plan_and_a_plan_invalid_ticks_number():
    state = TickState()
    assert next_number(4, state) == 5
    state.last_tick = 9  # a PLAN INVALID tick numbered 9 without editing the plan
    assert next_number(4, state) == 10


def test_the_ticks_number_is_written_to_the_plan_once(ctx):
    ctx.state.last_tick = 6
    assert ctx.tick_number() == 7
    assert parse_plan(ctx.ws.plan_path).meta.total_ticks == 7
    ctx.ws.plan_path.write_text(ctx.ws.plan_path.read_text().replace("total_ticks: 7", "total_ticks: 3"))
    assert ctx.tick_number() == 7 and parse_plan(ctx.ws.plan_path).meta.total_ticks == 3  # not again


def test_a_commit_is_made_on_the_head_it_is_told_or_not_at_all(ctx):
    root = ctx.root
    base = git(root, "rev-parse", "HEAD").strip()
    (root / "guarded.txt").write_text("changed\n")
    moved = git(root, "commit-tree", f"{base}^{{tree}}", "-p", base, "-m", "an agent's").strip()
    git(root, "update-ref", "refs/heads/main", moved)
    ctx.commit_onto = base
    assert ctx.commit(["guarded.txt"], "memento: one") is None
    assert "HEAD moved" in ctx.git_failed and git(root, "rev-parse", "HEAD").strip() == moved
    ctx.git_failed, ctx.commit_onto = "", None
    sha = ctx.commit(["guarded.txt"], "memento: one")
    assert sha == git(root, "rev-parse", "HEAD").strip() == ctx.tick_commit and not ctx.git_failed
    assert ctx.commit(["guarded.txt"], "memento: nothing") is None and not ctx.git_failed


def test_read_or_none_never_opens_a_fifo_nor_follows_a_link_and_a_folder_is_none(tmp_path):
    (tmp_path / "file").write_bytes(b"bytes\n")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "file")
    assert read_or_none(tmp_path / "file") == b"bytes\n"
    assert read_or_none(tmp_path / "fifo") is None  # would block forever if it were opened to read
    assert read_or_none(tmp_path / "link") is None
    assert read_or_none(tmp_path) is None and read_or_none(tmp_path / "gone") is None


def test_the_tail_is_what_was_appended_after_a_point_never_through_a_link(tmp_path):
    log = tmp_path / "tick.log"
    append_log(log, "before\n")
    start = log.stat().st_size
    append_log(log, "[memento] after\n")
    assert tail(log, start) == "[memento] after\n"
    assert tail(log, 0, limit=6) == "after\n" and tail(tmp_path / "gone", 0) == ""
    victim = tmp_path / "victim"
    victim.write_text("the person's\n")
    log.unlink()
    log.symlink_to(victim)
    with pytest.raises(SymlinkRefused):
        append_log(log, "[memento] more\n")
    assert victim.read_text() == "the person's\n"


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
