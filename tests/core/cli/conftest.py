"""The command line's tests share a workspace made as a person makes one: `memento init`, a real
subprocess (a test file may define its own ``ws``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.cli.test_main import memento


@pytest.fixture
def ws(tmp_path: Path, git_identity) -> Path:
    root = tmp_path / "proj"
    r = memento("init", str(root))
    assert r.returncode == 0, r.stderr
    return root
