"""`memento tasks` (SPEC §16): every task with state, retries, last result and line; real ticks, real files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.core.cli.runs import PLAN, memento

TASKS_PLAN = """# MASTER_PLAN: tasks

## Meta
- tick_mode: auto
- max_retries: 3
- status_max_entries: 2

## Phase 1: One
<!-- depends: none -->

- [ ] `T-1` [MODULE:a] Passes
  - verify: `test -f a.txt`
  - context_files: [a.txt]
  - do: `echo a > a.txt`

- [ ] `T-2` [MODULE:b] Fails \x1b[31mred\x1b[0m
  - verify: `echo 'E   assert 1 == 2'; exit 1`
  - context_files: [b.txt]
  - do: `echo b > b.txt`

- [-] `T-3` Not needed
  - verify: `true`
  - context_files: []
  - reason: done by hand

- [ ] `T-4` Someone is on it
  - verify: `true`
  - context_files: []

- [ ] `T-5` No verify
  - context_files: []
"""


@pytest.fixture
def ws(tmp_path: Path, git_identity) -> Path:
    root = tmp_path / "proj"
    assert memento("init", str(root)).returncode == 0
    (root / PLAN).write_text(TASKS_PLAN)
    (root / "memento.toml").write_text('[agent]\npreset = "script"\n')
    for _ in range(3):  # T-1 passes, T-2 fails twice; the log keeps 2 entries, the rest is archived
        memento("tick", str(root))
    plan = root / PLAN  # a running task (a tick would reset a [~] without a live worker)
    plan.write_text(plan.read_text().replace("- [ ] `T-4`", "- [~] `T-4`"))
    return root


def test_tasks_json_lists_every_task_with_its_last_result(ws: Path):
    r = memento("tasks", "--json", str(ws))
    assert r.returncode == 1, r.stderr  # T-5 has no verify: an error, as in `memento lint`
    assert json.loads(r.stdout)["plan_errors"] == ["docs/MASTER_PLAN.md:34: T-5 has no verify command"]
    rows = {t["id"]: t for t in json.loads(r.stdout)["tasks"]}
    assert list(rows) == ["T-1", "T-2", "T-3", "T-4", "T-5"]
    assert {i: t["state"] for i, t in rows.items()} == {
        "T-1": "done", "T-2": "pending", "T-3": "skipped", "T-4": "running", "T-5": "pending"}
    assert rows["T-2"]["retries"] == 2 and rows["T-2"]["max_retries"] == 3
    plan_lines = (ws / PLAN).read_text().splitlines()
    for t in rows.values():
        assert f"`{t['id']}`" in plan_lines[t["line"] - 1]
    assert "Tick #1\n" not in (ws / "docs/TICK_STATUS.md").read_text()
    t1 = rows["T-1"]["last_result"]  # rotated into logs/status_archive/: still found
    assert t1["status"] == "SUCCESS" and t1["tick"] == 1 and len(t1["commit"]) == 7
    t2 = rows["T-2"]["last_result"]
    assert (t2["status"], t2["tick"], t2["error"]) == ("FAILED", 3, "`E   assert 1 == 2` (exit code 1)")
    assert rows["T-3"]["last_result"] is None and rows["T-5"]["problems"] == ["has no verify command"]


def test_tasks_filters_by_state_and_prints_safe_aligned_lines(ws: Path):
    r = memento("tasks", "--state", "pending", str(ws))
    assert r.returncode == 1, r.stderr  # T-5's missing verify
    lines = r.stdout.splitlines()
    # The pipeline's word first (as `memento status` says it), then the count.
    assert lines[0] == ("[warn] tasks: IDLE — nothing will tick (no cron entry, auto-tick off); "
                        "2 pending tasks in docs/MASTER_PLAN.md (of 5)")
    assert lines[1].split() == ["ID", "STATE", "RETRIES", "LAST", "LINE", "TITLE"]
    assert lines[2].split()[:5] == ["T-2", "pending", "2/3", "#3", "FAILED"]
    assert "\x1b" not in r.stdout  # the title's escape sequence is shown, never obeyed
    assert lines[3].strip() == "last error: `E   assert 1 == 2` (exit code 1)"
    assert lines[4].split()[:3] == ["T-5", "pending", "0/3"] and "never picked: has no verify command" in lines[5]
    assert lines[6] == "[error] docs/MASTER_PLAN.md:34: T-5 has no verify command"
    r = memento("tasks", "--state", "running", "--json", "--project", str(ws))
    assert [t["id"] for t in json.loads(r.stdout)["tasks"]] == ["T-4"]
    r = memento("tasks", "--state", "nonsense", str(ws))
    assert r.returncode == 2 and "invalid choice" in r.stderr


def test_tasks_on_an_invalid_plan_still_lists_them_and_exits_1(ws: Path):
    (ws / PLAN).write_text((ws / PLAN).read_text().replace("max_retries: 3", "max_retries: lots"))
    r = memento("tasks", str(ws))
    assert r.returncode == 1 and "T-1" in r.stdout
    assert r.stdout.splitlines()[-1].startswith("[warn] the plan has 1 error")
