"""The command line's tests share a workspace made as a person makes one: `memento init`, a real
subprocess (a test file may define its own ``ws``); ``words_ws`` holds WORDS_PLAN's two `script` tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.core.cli.runs import PLAN, WORDS_PLAN, memento


@pytest.fixture
def ws(tmp_path: Path, git_identity) -> Path:
    root = tmp_path / "proj"
    r = memento("init", str(root))
    assert r.returncode == 0, r.stderr
    return root


@pytest.fixture
def words_ws(ws: Path) -> Path:
    (ws / PLAN).write_text(WORDS_PLAN)
    (ws / "memento.toml").write_text('[agent]\npreset = "script"\n')
    return ws
