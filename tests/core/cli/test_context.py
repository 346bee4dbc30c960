"""cli/context.py: the workspace a command line names (--project, DIR, or the current folder searched
upwards), its plan with errors located by the plan's own path, and a person's command refused when it
runs inside the running tick's own process tree (a real tick's listener, a real child process)."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memento_core.agents.reaper import subreaper
from memento_core.cli.context import load_plan, person_workspace, with_dir, workspace_of
from memento_core.errors import MementoError
from memento_core.tick.receipts import listening
from memento_core.workspace import Workspace
from tests.core.cli.runs import PLAN


def args(**kw) -> argparse.Namespace:
    return argparse.Namespace(**kw)


def test_with_dir_gives_an_optional_dir():
    parser = with_dir(argparse.ArgumentParser())
    assert parser.parse_args([]).dir is None
    assert parser.parse_args(["some/where"]).dir == "some/where"


def test_project_then_dir_then_the_current_folder_searched_upwards(ws: Path, tmp_path: Path, monkeypatch):
    other = tmp_path / "other"
    other.mkdir()
    assert workspace_of(args(project=str(ws), dir=str(other))).root == ws.resolve()
    assert workspace_of(args(dir=str(ws / "docs"))).root == ws.resolve()
    monkeypatch.chdir(ws / "docs")
    assert workspace_of(args()).root == ws.resolve()
    with pytest.raises(MementoError, match=r"nowhere: no such directory"):
        workspace_of(args(dir=str(tmp_path / "nowhere")))
    monkeypatch.chdir(other)
    with pytest.raises(MementoError, match="no Memento workspace at or above"):
        workspace_of(args())


def test_load_plan_names_the_plan_by_its_path_in_the_workspace(ws: Path):
    (ws / PLAN).write_text("# MASTER_PLAN: x\n## Meta\n- max_retries: 3\n## Phase 1: a\n- [ ] T-1 t\n"
                           "  - context_files: []\n")
    plan = load_plan(Workspace(ws))
    assert [str(e) for e in plan.errors] == ["docs/MASTER_PLAN.md:5: T-1 has no verify command"]


def test_a_persons_command_inside_the_running_ticks_tree_is_refused(ws: Path):
    """The tick listens in this process; its child runs `memento skip` as the agent would."""
    before = (ws / PLAN).read_bytes()
    with subreaper(), listening(Workspace(ws)):
        r = subprocess.run([sys.executable, "-m", "memento_core.cli", "skip", "T-101", "--reason", "mine",
                            str(ws)], capture_output=True, text=True, timeout=60, env=dict(os.environ))
        assert person_workspace(args(dir=str(ws)), "skip").root == ws.resolve()  # this process: a person
    assert r.returncode == 2 and r.stderr.startswith("[error] `memento skip` "), r.stderr
    assert (ws / PLAN).read_bytes() == before
