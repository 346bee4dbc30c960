"""The fleet's tests commit in real repositories: every one of them with a test identity."""

import pytest


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity
