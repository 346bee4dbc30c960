"""agent.py: the architect's agent (SPEC §16, step 3): confined with only the plan, the map and the
notes writable, refused without an agent, its confinement said in the log."""

from __future__ import annotations

from dataclasses import replace

import pytest

from memento_core.config.load import load_config
from memento_core.plan.scan import parse_plan
from memento_core.tick.architect.agent import confine, run_architect_agent
from memento_core.tick.architect.run import CHANGED, ROLLED_BACK, run_architect
from memento_core.tick.context import TickContext

from .test_run import add_note, agent, git, make_ws, tree


def _bwrap_problem() -> str | None:
    from memento_core import sandbox

    binary = sandbox.bwrap_binary()
    return sandbox.probe(binary) if binary else "bubblewrap is not installed"


needs_bwrap = pytest.mark.skipif(_bwrap_problem() is not None, reason=f"the sandbox cannot run here: {_bwrap_problem()}")


@needs_bwrap
def test_confined_the_architect_may_write_the_plan_and_notes(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "fix", "T-1", "grep -q done hello.txt"), sandbox="bwrap")
    add_note(ws.notes_path, "lower case", target="T-1")
    result = run_architect(ws)
    assert result.outcome == CHANGED, result.message
    assert parse_plan(ws.plan_path).task("T-1").verify == "grep -q done hello.txt"
    assert "sandbox: bwrap" in (ws.root / result.log).read_text()


@needs_bwrap
def test_confined_the_architect_cannot_write_code_at_all(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "edit_code", "code.py"), sandbox="bwrap")
    before = tree(ws.root)
    result = run_architect(ws)
    assert result.outcome == ROLLED_BACK
    assert result.reasons == ("the architect exited with code 1",)  # its write failed: read-only
    assert "Read-only file system" in (ws.root / result.log).read_text()
    after = tree(ws.root)
    assert after["code.py"] == before["code.py"] and after["docs/HUMAN_NOTES.md"] == before["docs/HUMAN_NOTES.md"]
    assert parse_plan(ws.plan_path).task("T-1").status == "!"


@needs_bwrap
def test_confined_the_architect_may_edit_the_plan_by_rename(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "sed_fix", "T-1"), sandbox="bwrap")
    result = run_architect(ws)
    assert result.outcome == CHANGED, result.message
    task = parse_plan(ws.plan_path).task("T-1")
    assert (task.status, task.verify) == (" ", "true")
    assert "docs/MASTER_PLAN.md" in git(ws.root, "show", "--stat", "HEAD")


def test_the_script_preset_is_refused_before_any_prompt_is_written(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "fix", "T-1", "true"))
    ctx = TickContext(ws)
    ctx.config = load_config(ws.config_path)
    ctx.log_path = tmp_path / "arch.log"
    said = run_architect_agent(ctx, replace(ctx.config, agent_preset="script"))
    assert said.startswith("the architect needs an agent: set [architect] preset")
    assert not (ws.memento_dir / "prompts" / "ARCHITECT.md").exists()


def test_unconfined_the_log_says_so_and_nothing_wraps_the_agent(tmp_path):
    ws = make_ws(tmp_path, agent("architect.py", "fix", "T-1", "true"))
    ctx = TickContext(ws)
    ctx.config = load_config(ws.config_path)
    ctx.log_path = tmp_path / "arch.log"
    assert confine(ctx, ctx.config) == ((), "")
    assert "the architect runs unconfined" in ctx.log_path.read_text()
