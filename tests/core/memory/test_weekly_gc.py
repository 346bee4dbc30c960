"""The engine runs memory gc by itself once a week."""

from __future__ import annotations

import json
import time

from memento_core import memory
from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace


def test_weekly_gc_runs_once_a_week(tmp_path, git_identity):
    root = tmp_path / "ws"
    init_workspace(root, project="ws")
    ws = Workspace(root)
    now = time.time()
    assert memory.weekly_gc(ws, now=now) is True  # never ran
    assert json.loads((ws.memento_dir / "memory_gc.json").read_text())["at"] == now
    assert memory.weekly_gc(ws, now=now + 6 * 86400) is False
    assert memory.weekly_gc(ws, now=now + 8 * 86400) is True
