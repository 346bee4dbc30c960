"""tick/run.py: one function per step of the tick, in order. A bad memento.toml ends the tick and
says why; a plan not in auto is skipped with one line; a person's uncommitted change refuses the
tick once (Memento's own documents are committed as `memento: sync docs`); the pick, or the
COMPLETE outcome when nothing is left. Real files and real git; the steps called as tick() calls them."""

from __future__ import annotations

import pytest

from memento_core import status_log
from memento_core.errors import EXIT_ATTENTION, EXIT_ERROR, EXIT_OK
from memento_core.tick.run import (
    load_config_and_plan,
    pick_task,
    refuse_dirty_tree,
    skip_unless_auto,
)
from tests.core.scenarios.test_engine import git, make_ws
from tests.core.tick.ticks import tick_context


@pytest.fixture
def ctx(tmp_path, git_identity):
    ws = make_ws(tmp_path, "true")
    c = tick_context(ws)
    return c


def test_a_bad_config_ends_the_tick_and_says_why(ctx):
    ctx.ws.config_path.write_text("[agent]\npreset = 3\n")
    outcome = load_config_and_plan(ctx)
    assert outcome.exit_code == EXIT_ERROR and "preset" in outcome.message
    assert "tick could not run:" in ctx.ws.cron_log.read_text() and ctx.ws.alert_path.exists()


def test_a_plan_not_in_auto_is_skipped_with_one_line_and_no_entry(ctx):
    plan = load_config_and_plan(ctx)
    assert skip_unless_auto(ctx, plan) is None
    ctx.ws.plan_path.write_text(ctx.ws.plan_path.read_text().replace("tick_mode: auto", "tick_mode: paused"))
    outcome = skip_unless_auto(ctx, ctx.plan())
    assert (outcome.exit_code, outcome.message) == (EXIT_OK, "tick skipped: tick_mode is paused")
    assert ctx.ws.cron_log.read_text().count("tick skipped: tick_mode is paused") == 1
    assert status_log.parse_status(ctx.ws.status_path) == []


def test_a_persons_uncommitted_change_refuses_the_tick_once_and_mementos_documents_are_synced(ctx):
    (ctx.root / "notes.txt").write_text("untracked: fine where it is\n")
    ctx.ws.notes_path.write_text(ctx.ws.notes_path.read_text() + "\n")
    assert refuse_dirty_tree(ctx) is None
    assert git(ctx.root, "log", "-1", "--format=%s").strip() == "memento: sync docs"
    (ctx.root / "guarded.txt").write_text("the person's work in progress\n")
    for _ in range(2):
        outcome = refuse_dirty_tree(ctx)
        assert outcome.exit_code == EXIT_ATTENTION and outcome.message.endswith("guarded.txt")
    events = [e.field("Event") for e in status_log.parse_status(ctx.ws.status_path)]
    assert events == ["⚠️ DIRTY TREE — uncommitted changes to tracked files; tick refused"]  # once


def test_the_pick_is_the_next_task_and_nothing_left_is_complete(ctx):
    plan, task = pick_task(ctx)
    assert task.id == "T-1"
    ctx.ws.plan_path.write_text(ctx.ws.plan_path.read_text().replace("- [ ] `T-1`", "- [x] `T-1`"))
    outcome = pick_task(ctx)
    assert outcome.exit_code == EXIT_OK and "COMPLETE" in outcome.message
