"""The doctor names raw writes into memory/ that bypassed `memento memory write`."""

from __future__ import annotations

import pytest

from memento_core import memory
from memento_core.doctor import WARNING, check_workspace
from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace

# Bubblewrap taken as runnable: the `sandbox` check is judged in tests/core/sandbox/test_sandbox.py.
pytestmark = pytest.mark.usefixtures("sandbox_runs")


def test_unattributed_memory_write_is_a_warning(tmp_path, git_identity):
    root = tmp_path / "ws"
    init_workspace(root, project="ws")
    ws = Workspace(root)
    healthy = [f for f in check_workspace(ws) if f.check == "memory-writes"]
    assert [f.severity for f in healthy] == ["OK"]
    raw = ws.memory_dir / "knowledge" / "lessons" / "raw.md"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_text("the worker wrote this by hand\n")
    memory.commit_unattributed(ws, "T-7")
    (finding,) = [f for f in check_workspace(ws) if f.check == "memory-writes"]
    assert finding.severity == WARNING
    assert "unattributed write by T-7" in finding.message and "knowledge/lessons/raw.md" in finding.message


def test_a_fresh_workspace_is_healthy(tmp_path, git_identity):
    from memento_core.doctor import exit_code

    root = tmp_path / "fresh"
    init_workspace(root, project="fresh")
    findings = check_workspace(Workspace(root))
    assert exit_code(findings) == 0, [f for f in findings if f.severity not in ("OK", "INFO")]
