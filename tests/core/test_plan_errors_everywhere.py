"""A task's plan error is an error everywhere a person looks (issue 38, item 1).

README's first project with a person's usual mistakes (`verfy:` for `verify:`, no
`context_files`, `depends:` on an id that does not exist): `memento lint` says
error and exits 2; so must the tick that can run nothing (one PLAN INVALID entry,
the alert, exit 2 — never `[ok]` all night under cron), `memento tasks`, `memento
status` (human and --json) and "Needs you". A tick that still ran a valid task
says the error it leaves. Real CLI, real git, the files judged.
"""

from __future__ import annotations

import json

import pytest

from memento_core import overview
from memento_core.plan.scan import parse_plan
from memento_core.state import TickState
from memento_core.status_log import parse_status
from memento_core.workspace import Workspace
from tests.first_project import first_plan, memento, tick, write_plan

MISTAKES = {
    "verfy": (lambda plan: plan.replace("  - verify: `grep -qx hello", "  - verfy: `grep -qx hello"),
              "T-101 has no verify command"),
    "no context_files": (lambda plan: plan.replace("  - context_files: [greeting.txt]\n", "", 1),
                         "T-101 has no context_files"),
    "depends on nothing": (lambda plan: plan.replace("- [ ] `T-101` [MODULE:greeting] Write the greeting\n",
                                                     "- [ ] `T-101` [MODULE:greeting] Write the greeting\n"
                                                     "  - depends: T-999\n"),
                           "T-101 depends on unknown task `T-999`"),
}


@pytest.fixture
def first(tmp_path, git_identity):
    root = tmp_path / "greeter"
    root.mkdir()
    assert memento(root, "init").returncode == 0
    return root


def entries_named(root, word: str) -> list:
    return [e for e in parse_status(root / "docs" / "TICK_STATUS.md") if word in (e.field("Event") or "")]


@pytest.mark.parametrize("mistake", MISTAKES)
def test_a_task_error_that_leaves_nothing_to_run_is_an_error_everywhere(first, mistake):
    edit, said = MISTAKES[mistake]
    write_plan(first, edit(first_plan()))
    lint = memento(first, "lint")
    assert lint.returncode == 2 and said in lint.stderr
    assert memento(first, "resume").returncode == 0

    ticked = tick(first)
    assert ticked.returncode == 2, ticked.stdout + ticked.stderr
    assert "[ok]" not in ticked.stdout + ticked.stderr
    assert ticked.stderr.startswith("[error] plan invalid: docs/MASTER_PLAN.md:") and said in ticked.stderr
    # One entry per change of the errors, not one per tick; the alert names the error.
    assert tick(first).returncode == 2
    assert len(entries_named(first, "PLAN INVALID")) == 1
    assert said in (first / ".memento_alert").read_text()

    tasks = memento(first, "tasks")
    assert tasks.returncode == 1 and "[error] docs/MASTER_PLAN.md:" in tasks.stdout and said in tasks.stdout
    assert json.loads(memento(first, "tasks", "--json").stdout)["plan_errors"]

    status = memento(first, "status")
    assert status.returncode == 1 and status.stdout.startswith("[error] ")
    assert "INVALID" in status.stdout.splitlines()[0] and "[error] docs/MASTER_PLAN.md:" in status.stdout
    doc = json.loads(memento(first, "status", "--json").stdout)
    assert doc["state"] == "INVALID" and any(said in e for e in doc["plan_errors"])
    assert doc["next"]["kind"] == "invalid"

    # "Needs you" (the dashboard's strip and `memento report`) says it first.
    ws = Workspace(first)
    summary = overview.summarize(ws, parse_plan(ws.plan_path, display="docs/MASTER_PLAN.md"),
                                 parse_status(ws.status_path))
    needs = overview.needs_you(summary, TickState.load(ws), None)
    assert needs and needs[0].kind == "invalid" and said in needs[0].text
    report = memento(first, "report")
    assert report.returncode == 1 and said in report.stdout


def test_a_tick_that_ran_a_task_still_says_the_error_it_leaves(first):
    # T-101 is fine; T-102 has no verify: the tick runs T-101, then tells the person about T-102.
    write_plan(first, first_plan().replace("  - verify: `grep -q memento", "  - verfy: `grep -q memento"))
    memento(first, "resume")
    ticked = tick(first)
    assert ticked.returncode == 0, ticked.stderr  # the tick ran: CI pushes its commit
    assert ticked.stdout.startswith("[warn] tick #1: T-101 passed")
    assert "[error] the plan has 1 error," in ticked.stdout and "T-102 has no verify command" in ticked.stdout
    status = memento(first, "status")
    assert status.returncode == 1 and "[error] docs/MASTER_PLAN.md:" in status.stdout
    # Then nothing valid is left: the next tick is a plan error, not `[ok] nothing valid to pick`.
    ticked = tick(first)
    assert ticked.returncode == 2 and "T-102 has no verify command" in ticked.stderr
    assert json.loads(memento(first, "status", "--json").stdout)["state"] == "INVALID"
    # Fixed: the next tick runs T-102 and the alert goes.
    plan = first / "docs" / "MASTER_PLAN.md"
    write_plan(first, plan.read_text().replace("  - verfy: ", "  - verify: "))
    ticked = tick(first)
    assert ticked.returncode == 0 and ticked.stdout.startswith("[ok] tick #") and "T-102 passed" in ticked.stdout
    assert not (first / ".memento_alert").exists()
