"""What a tick of a trivial task costs in git processes (SPEC §4, §11; issue 42: at most 25, there
were 66): counted by git's own trace (GIT_TRACE2_EVENT into a folder, one file per git process,
those git starts itself included), on a real project, unconfined, a `command` agent that writes
one file and `verify: true`. A count, never a time: bench/tick_git.py measures the CPU."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from memento_core.plan.scan import parse_plan
from memento_core.scaffold import init_workspace
from memento_core.tick.__main__ import run_tick

BUDGET = 25


@pytest.fixture
def project(tmp_path: Path, git_identity) -> Path:
    root = tmp_path / "proj"
    init_workspace(root, project="proj", commit=False)
    for i in range(20):
        (root / "src" / f"pkg{i % 5}").mkdir(parents=True, exist_ok=True)
        (root / "src" / f"pkg{i % 5}" / f"mod{i}.py").write_text(f"VALUE = {i}\n")
    tasks = "".join(f"- [ ] T-{i} [MODULE:m] Write one file {i}\n  - verify: `true`\n  - context_files: [src/]\n\n"
                    for i in range(1, 5))
    (root / "docs" / "MASTER_PLAN.md").write_text(
        "# MASTER_PLAN: cost\n\n## Meta\n- tick_mode: auto\n- max_retries: 3\n- circuit_breaker_threshold: 100\n\n"
        f"## Phase 1: All\n\n{tasks}")
    (root / "memento.toml").write_text(
        '[agent]\npreset = "command"\ncommand = "sh -c \'echo done > src/out_{task_id}.txt\'"\n'
        '[sandbox]\nmode = "none"\n')
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "setup"], cwd=root, check=True)
    return root


def traced_tick(root: Path, trace: Path, monkeypatch) -> Counter:
    trace.mkdir()
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    outcome = run_tick(root)
    monkeypatch.delenv("GIT_TRACE2_EVENT")
    assert outcome.results and outcome.results[0].passed, outcome.message
    kinds: Counter = Counter()
    for path in trace.iterdir():
        for line in path.read_text(errors="replace").splitlines():
            event = json.loads(line)
            if event.get("event") == "cmd_name":
                kinds[event.get("name", "?")] += 1
    return kinds


def test_a_tick_of_a_trivial_task_runs_at_most_25_git_processes(project, tmp_path, monkeypatch):
    traced_tick(project, tmp_path / "warm", monkeypatch)  # the first: the memory store made, the weekly gc
    kinds = traced_tick(project, tmp_path / "trace", monkeypatch)
    assert sum(kinds.values()) <= BUDGET, kinds
    # The journal waits for its batched commit: memory/ saw no commit this tick (store.record_journal).
    assert kinds["commit-tree"] == kinds["commit"] == 0, kinds
    assert parse_plan(project / "docs" / "MASTER_PLAN.md").task("T-2").status == "x"
