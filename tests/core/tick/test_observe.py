"""tick/observe.py (step 11): the guards after the agent, judged on the work tree and git. The
task's change is what differs from the snapshot; a guarded file changed, a commit the agent made
(folded back into the change) and a change over max_diff_bytes are reasons; a clean task has none.
Real files, real git, an attempt taken through claim_task and take_snapshot."""

from __future__ import annotations

import time

import pytest

from memento_core.tick.claim import claim_task, take_snapshot
from memento_core.tick.context import Attempt
from memento_core.tick.observe import check_guards, diff_bytes_reason
from tests.core.scenarios.test_engine import git, make_ws
from tests.core.tick.ticks import tick_context


@pytest.fixture
def started(tmp_path, git_identity):
    """A claimed task right after its snapshot: (ctx, attempt)."""
    ws = make_ws(tmp_path, "true", extra_meta="- max_diff_bytes: 5000\n")
    ctx = tick_context(ws)
    task = ctx.plan().task("T-1")
    base = git(ws.root, "rev-parse", "HEAD").strip()
    claim_task(ctx, task, base, set())
    return ctx, Attempt(task, take_snapshot(ctx, base, set()), None, time.monotonic())


def test_the_tasks_own_file_is_its_change_and_no_reason(started):
    ctx, at = started
    (ctx.root / "hello.txt").write_text("done\n")
    verdict = check_guards(ctx, ctx.plan(), at)
    assert verdict.reasons == () and [c.path for c in verdict.touched] == ["hello.txt"]


def test_a_guarded_file_changed_is_a_reason(started):
    ctx, at = started
    (ctx.root / "hello.txt").write_text("done\n")
    (ctx.root / "guarded.txt").write_text("touched\n")
    verdict = check_guards(ctx, ctx.plan(), at)
    assert any("guarded.txt" in r for r in verdict.reasons), verdict.reasons


def test_a_commit_of_the_agents_own_is_folded_back_into_the_change_and_said(started):
    ctx, at = started
    (ctx.root / "hello.txt").write_text("done\n")
    git(ctx.root, "add", "hello.txt")
    git(ctx.root, "commit", "-qm", "the agent's own commit")
    verdict = check_guards(ctx, ctx.plan(), at)
    assert git(ctx.root, "rev-parse", "HEAD").strip() == at.snap.base
    assert (ctx.root / "hello.txt").read_text() == "done\n"
    assert [c.path for c in verdict.touched] == ["hello.txt"]
    assert any("made 1 commit(s) of its own" in r for r in verdict.reasons), verdict.reasons


def test_a_change_over_max_diff_bytes_is_a_reason_binary_files_included(started):
    ctx, at = started
    (ctx.root / "hello.txt").write_bytes(b"\0" * 6000)
    assert "diff too large: 6000 bytes added > max_diff_bytes 5000 bytes (binary files count)" in \
        check_guards(ctx, ctx.plan(), at).reasons
    (ctx.root / "hello.txt").write_bytes(b"\0" * 4096)
    verdict = check_guards(ctx, ctx.plan(), at)
    assert verdict.reasons == ()
    assert diff_bytes_reason(ctx.root, at.snap.base, verdict.touched, 4096) == ""
    assert diff_bytes_reason(ctx.root, at.snap.base, verdict.touched, 4095) == \
        "diff too large: 4096 bytes added > max_diff_bytes 4095 bytes (binary files count)"
    assert diff_bytes_reason(ctx.root, at.snap.base, verdict.touched, 1000, after_verify=True).startswith(
        "verify's change too large")
