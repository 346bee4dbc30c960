"""The chat's tests commit in real repositories: a known git identity for each."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity
