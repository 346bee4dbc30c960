"""Fixtures for the memory tests: a fresh workspace with its memory store, and the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "proj"
    init_workspace(root, project="proj")
    return Workspace(root)
