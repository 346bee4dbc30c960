"""Shared fixtures for the core tests: real git repositories and git identities."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

_IDENTITY_VARS = (
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "EMAIL",
)


@pytest.fixture(autouse=True)
def _state_home(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Memento's state folder (the confined agents' private homes, sandbox/home.py) in a temporary
    folder, never the real ~/.local/state."""
    state = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(state))
    return state


@pytest.fixture
def git_identity(monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """A known git identity in the environment, for tests that commit with plain git."""
    name, email = "Test Person", "test@example.invalid"
    monkeypatch.setenv("GIT_AUTHOR_NAME", name)
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", email)
    monkeypatch.setenv("GIT_COMMITTER_NAME", name)
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", email)
    return name, email


@pytest.fixture
def no_git_identity(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """No git identity anywhere, as under cron on a fresh machine: empty HOME, no system config."""
    home = tmp_path_factory.mktemp("empty-home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in (*_IDENTITY_VARS, "XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"):
        monkeypatch.delenv(var, raising=False)
    return home


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """An empty git repository (branch main, unborn) in a fresh directory."""
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    return root


@pytest.fixture(scope="session")
def github_openapi():
    """GitHub's REST description (npm @octokit/openapi), loaded once per test process; the test is
    skipped, saying why, only when npm or its registry cannot be reached."""
    from tests.forge_standin import OpenAPI, openapi_path

    found = openapi_path()
    if isinstance(found, str):
        pytest.skip(found)
    return OpenAPI(found)


@pytest.fixture
def github(github_openapi):
    """A local stand-in of GitHub's REST endpoints (tests/forge_standin.py), every request and answer
    checked against the description: a test that made a request GitHub would refuse fails here."""
    from tests.forge_standin import StandIn

    standin = StandIn(github_openapi).start()
    try:
        yield standin
    finally:
        standin.stop()
    assert standin.violations == [], standin.violations


@pytest.fixture
def telegram():
    """A Telegram Bot API stand-in on 127.0.0.1 (telegram_standin.py), for the chat tests."""
    from .telegram_standin import TelegramStandIn

    standin = TelegramStandIn()
    standin.start()
    yield standin
    standin.stop()


@pytest.fixture
def receiver():
    """A JSON webhook on 127.0.0.1 for Apprise's json:// URLs, down until started (tests/core/notifyhelp.py)."""
    from tests.core.notifyhelp import Receiver

    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def tab(tmp_path: Path) -> Path:
    """A person's crontab in a file (cronhelp.OTHERS), for MEMENTO_CRONTAB_FILE."""
    from tests.core.cronhelp import OTHERS

    path = tmp_path / "crontab.txt"
    path.write_text(OTHERS, encoding="utf-8")
    return path
