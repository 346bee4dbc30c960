"""A person's usual mistakes, each said plainly (issue 38, item 15).

An empty plan linted `[ok] 0 tasks`; `memento cron install --dry-run` was refused;
`memento reset` acted on a plan with a duplicate id that the tick calls INVALID; a
task's prompt held only 2 of its 3 `accept:` lines (the tick's Meta edit moved the
lines under the task it had parsed). Real CLI, real ticks, the files judged.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memento_core.plan.scan import parse_plan
from tests.first_project import first_plan, memento, tick, write_plan


@pytest.fixture
def greeter(tmp_path, git_identity):
    root = tmp_path / "greeter"
    root.mkdir()
    assert memento(root, "init").returncode == 0
    return root


def test_an_empty_plan_is_a_lint_warning(greeter):
    plan = first_plan()
    write_plan(greeter, plan[:plan.index("## Phase 1")])
    lint = memento(greeter, "lint")
    assert lint.returncode == 1 and "[warn] docs/MASTER_PLAN.md: the plan has no tasks: nothing will ever run" \
        in lint.stdout
    assert lint.stdout.splitlines()[-1].startswith("[warn] docs/MASTER_PLAN.md: 0 tasks in 0 phases, 1 warning")


def test_cron_install_dry_run_prints_the_entry_and_changes_nothing(greeter, tmp_path):
    tab = tmp_path / "crontab"
    env = {**os.environ, "MEMENTO_CRONTAB_FILE": str(tab)}
    toml = (greeter / "memento.toml").read_bytes()
    done = memento(greeter, "cron", "install", "--dry-run", "--every", "10min", env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[ok] would add this crontab entry (nothing changed: --dry-run):")
    line = done.stdout.splitlines()[1]
    assert line.startswith("*/10 * * * * cd ") and "-m memento_core.tick --project" in line and str(greeter) in line
    assert not tab.exists() or tab.read_text().strip() == ""
    assert (greeter / "memento.toml").read_bytes() == toml
    assert memento(greeter, "cron", "install", env=env).returncode in (0, 1)  # for real: 1 = no cron daemon here
    assert "would update" in memento(greeter, "cron", "install", "--dry-run", env=env).stdout


def test_reset_and_skip_refuse_a_duplicated_id(greeter):
    plan = first_plan().replace("`T-102` [MODULE:greeting] Sign it", "`T-101` [MODULE:greeting] Sign it")
    write_plan(greeter, plan.replace("- [ ] `T-101` [MODULE:greeting] Write", "- [!] `T-101` [MODULE:greeting] Write"))
    before = (greeter / "docs" / "MASTER_PLAN.md").read_bytes()
    for words in (["reset", "T-101"], ["skip", "T-101", "--reason", "later"]):
        done = memento(greeter, *words)
        assert done.returncode == 2 and "T-101 is defined 2 times (lines 10, 16)" in done.stderr, done.stderr
        assert "no tick runs" in done.stderr
    assert (greeter / "docs" / "MASTER_PLAN.md").read_bytes() == before


def test_the_prompt_holds_the_whole_task_block(greeter):
    """The plan has no total_ticks line in Meta: the tick adds one above the task before the prompt."""
    text = """# MASTER_PLAN: acc

## Meta
- tick_mode: auto

## Phase 1: A
<!-- depends: none -->

- [ ] `T-1` [MODULE:a] Do it
  - do: `echo a > a.txt`
  - verify: `test -f a.txt`
  - context_files: [a.txt]
  - accept: first criterion
  - accept: second criterion
  - accept: third criterion
"""
    write_plan(greeter, text)
    assert tick(greeter).returncode == 0
    prompt = (greeter / ".memento" / "prompts" / "T-1.md").read_text()
    for n in ("first", "second", "third"):
        assert f"  - accept: {n} criterion" in prompt, prompt
    assert "total_ticks" in (greeter / "docs" / "MASTER_PLAN.md").read_text()
    assert parse_plan(Path(greeter) / "docs" / "MASTER_PLAN.md").task("T-1").status == "x"
