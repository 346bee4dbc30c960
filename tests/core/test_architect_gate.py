"""The architect's gate (SPEC §13 "Either way", §16): Meta paths stay inside the project, and a
verify command it changes is told to a person until acknowledged. Hostile architects from
tests/agents/ through the real `command` preset; judged on disk, in git and at a receiver."""

from __future__ import annotations

from pathlib import Path

import pytest

from memento_core.cli.main import main as cli
from memento_core.plan import parse_plan, parse_plan_text
from memento_core.tick.__main__ import run_tick
from memento_core.tick.architect.run import ROLLED_BACK, run_architect

from . import test_engine
from .test_architect import agent, git, history, make_ws

# ---------------------------------------------------------------------------- 1. Meta paths

OUTSIDE = ("relative", "absolute", "link", "git")


def archive_value(how: str, tmp_path: Path, root: Path) -> str:
    """The hostile Meta value; ``link``: `vendor/` is a person's untracked link to the victim."""
    if how == "relative":
        return "../victim/archive/"
    if how == "absolute":
        return f"{tmp_path}/victim/archive/"
    if how == "link":
        (root / "vendor").symlink_to(tmp_path / "victim")
        return "vendor/archive/"
    return ".git/archive/"


@pytest.mark.parametrize("how", OUTSIDE)
def test_the_architect_may_not_point_the_archive_outside(tmp_path, how):
    ws = make_ws(tmp_path, "true")
    value = archive_value(how, tmp_path, ws.root)
    ws.config_path.write_text(ws.config_path.read_text().replace(
        'command = """true"""', f'command = """{agent("moves_archive_out.py", value)}"""'))
    git(ws.root, "commit", "-qam", "the hostile architect")
    plan_before, commits = ws.plan_path.read_text(), history(ws.root)
    result = run_architect(ws)
    assert result.outcome == ROLLED_BACK, result.message
    assert "status_archive_dir" in result.message
    # The plan put back (Memento's counters aside): no status_archive_dir line.
    assert "status_archive_dir" not in ws.plan_path.read_text()
    assert [t.line for t in parse_plan(ws.plan_path).tasks] == [t.line for t in parse_plan_text(plan_before).tasks]
    assert parse_plan(ws.plan_path).meta.status_archive_dir == "logs/status_archive/"
    assert history(ws.root)[1:] == commits and "rolled back" in history(ws.root)[0]
    assert not (tmp_path / "victim").exists() and not (ws.root / ".git" / "archive").exists()


@pytest.mark.parametrize("how", OUTSIDE)
def test_a_tick_never_rotates_the_history_outside_whoever_wrote_the_meta(tmp_path, how, git_identity, capsys):
    tasks = "".join(f"- [ ] `T-{n}` Write {n}\n  - verify: `grep -q done T-{n}.txt`\n  - context_files: [T-{n}.txt]\n"
                    for n in range(1, 5))
    ws = test_engine.make_ws(tmp_path, test_engine.agent("does_task.py", "{task_id}.txt", "done"), tasks)
    value = archive_value(how, tmp_path, ws.root)
    text = ws.plan_path.read_text().replace("## Meta\n", f"## Meta\n- status_max_entries: 2\n"
                                                         f"- status_archive_dir: {value}\n")
    ws.plan_path.write_text(text)
    line = text.splitlines().index(f"- status_archive_dir: {value}") + 1
    git(ws.root, "commit", "-qam", "a person's Meta")
    # lint names the line; the tick runs on and rotates into the default archive.
    assert cli(["lint", str(ws.root)]) == 2
    said = capsys.readouterr()
    out = said.out + said.err
    assert f"docs/MASTER_PLAN.md:{line}: Meta `status_archive_dir`" in out
    for _ in range(4):
        outcome = run_tick(ws.root)
        assert outcome.results and outcome.results[0].passed, outcome.message
    archived = sorted((ws.root / "logs" / "status_archive").glob("TICK_STATUS_*.md"))
    assert archived, "the status log was not rotated"
    assert not (tmp_path / "victim").exists() and not (ws.root / ".git" / "archive").exists()
    if how == "link":  # only the link's case reaches the tick: the others never leave the parser
        assert f"docs/MASTER_PLAN.md:{line}: Meta `status_archive_dir`" in (ws.root / "logs" / "cron.log").read_text()
