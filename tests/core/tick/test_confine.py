"""tick/confine.py (step 10's sandbox, SPEC §13): what the sandbox is given (the guarded paths with
their globs expanded over tracked files; every untracked or ignored path, a folder git shows whole
as one), an unconfined run said in the log, and what
the worker left in `.memento/worker/` judged after it. Real git, real files."""

from __future__ import annotations

import os

import pytest

from memento_core.tick.confine import after_agent, guard_paths, others, prepare
from tests.core.scenarios.test_engine import git, make_ws
from tests.core.tick.ticks import tick_context


@pytest.fixture
def ctx(tmp_path, git_identity):
    ws = make_ws(tmp_path, "true")
    c = tick_context(ws)
    return c


def test_guarded_paths_are_the_named_ones_and_the_tracked_files_a_glob_matches(ctx):
    (ctx.root / "conf").mkdir()
    for name in ("conf/a.toml", "conf/b.toml", "conf/c.txt"):
        (ctx.root / name).write_text("x")
    git(ctx.root, "add", "conf/a.toml", "conf/c.txt")
    git(ctx.root, "commit", "-qm", "conf")
    assert guard_paths(ctx.root, ["/guarded.txt", "docs/", "conf/*.toml", "  "]) == \
        ["guarded.txt", "docs", "conf/a.toml"]  # conf/b.toml is not tracked


def test_others_lists_untracked_and_ignored_paths_a_whole_folder_as_one(ctx):
    (ctx.root / ".gitignore").write_text(".venv/\n*.log\n")
    (ctx.root / ".venv" / "lib").mkdir(parents=True)
    (ctx.root / ".venv" / "lib" / "x.py").write_text("x")
    (ctx.root / "notes.txt").write_text("the person's")
    (ctx.root / "run.log").write_text("log")
    found = others(ctx.root, ["from-the-snapshot.txt", ".venv/lib/x.py"])
    assert {".venv", "notes.txt", "run.log", "from-the-snapshot.txt"} <= set(found)
    assert ".venv/lib/x.py" not in found and "guarded.txt" not in found


def test_unconfined_the_run_is_said_in_the_log(ctx):
    assert prepare(ctx, ctx.plan().task("T-1"), set()) == ((), "")
    assert "[memento] sandbox: none, the agent runs unconfined" in ctx.log_path.read_text()


def test_after_the_agent_a_linked_report_is_dropped_and_a_fifo_fails_the_attempt(ctx):
    task = ctx.plan().task("T-1")
    report = ctx.ws.tick_result_path
    report.parent.mkdir(parents=True, exist_ok=True)
    (ctx.root / "persons.md").write_text("a person's file\n")
    report.symlink_to(ctx.root / "persons.md")
    assert after_agent(ctx, task) == ""
    assert not report.is_symlink() and (ctx.root / "persons.md").read_text() == "a person's file\n"
    os.mkfifo(report.parent / "pipe")
    reason = after_agent(ctx, task)
    assert reason and "pipe" in reason and not (report.parent / "pipe").exists()
