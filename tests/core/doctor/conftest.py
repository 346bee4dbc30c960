"""The doctor's fixtures: a healthy demo workspace to break one way per test, and bubblewrap taken
as runnable (the `sandbox` check is judged in tests/core/sandbox/test_sandbox.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memento_core import checkpoint
from memento_core.demo import create_demo
from memento_core.tick.__main__ import run_tick
from memento_core.workspace import Workspace


@pytest.fixture
def sandbox_runs(monkeypatch):
    """Judge the other checks as on a machine where bubblewrap runs, whatever this one has:
    without it the `sandbox` check warns (unconfined) by design; test_sandbox.py judges that check."""
    from memento_core import sandbox

    monkeypatch.setattr(sandbox, "resolve", lambda config: sandbox.Resolution("bwrap", True, None, "bwrap"))


@pytest.fixture(scope="session")
def template(tmp_path_factory) -> Path:
    """A demo project after one tick whose result was acknowledged: healthy."""
    with pytest.MonkeyPatch.context() as mp:
        for var, value in (("GIT_AUTHOR_NAME", "Test Person"), ("GIT_AUTHOR_EMAIL", "test@example.invalid"),
                           ("GIT_COMMITTER_NAME", "Test Person"), ("GIT_COMMITTER_EMAIL", "test@example.invalid")):
            mp.setenv(var, value)
        root = create_demo(tmp_path_factory.mktemp("doctor") / "calc")
        assert run_tick(root).exit_code == 0
        assert checkpoint.acknowledge(Workspace(root)) == 1
    return root


@pytest.fixture
def ws(template: Path, tmp_path: Path, git_identity, sandbox_runs) -> Workspace:
    """A copy of the healthy template, this test's to break."""
    root = tmp_path / "calc"
    shutil.copytree(template, root, symlinks=True)
    return Workspace(root)
