"""run.py: the git binary found, and the environment every git command runs with."""

from __future__ import annotations

import os
import shutil

import pytest

from memento_core.errors import MementoError
from memento_core.git.run import git_binary, git_env


def test_missing_git_is_a_clear_error(monkeypatch):
    git_binary.cache_clear()
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    monkeypatch.setattr(os, "access", lambda *a, **k: False)
    try:
        with pytest.raises(MementoError, match="git is not installed"):
            git_binary()
    finally:
        monkeypatch.undo()
        git_binary.cache_clear()
    assert os.path.isabs(git_binary())


def test_git_env_never_prompts():
    env = git_env()
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["LC_ALL"] == "C"
