"""`memento doctor --agent` with the real CLIs against the mock model (SPEC §20).

The preflight runs the CLI once, confined in Memento's sandbox with `[sandbox] network = "model"`
as a tick would (its proxy and the loopback forward of the mock's port): against the live mock it
is OK and names the endpoint; against a dead port it is CRITICAL naming that port with the CLI's
last words; under `network = "none"` the same CLI cannot reach the live mock, which proves the
call went through the sandbox's network and not around it. Exit codes are the doctor's.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from memento_core.doctor import CRITICAL, OK, check_workspace
from memento_core.workspace import Workspace

from .conftest import SANDBOX, WHY_UNCONFINED, configure, make_workspace
from .mock_model import Script

pytestmark = pytest.mark.e2e

PRESETS = ("claude", "codex")
SRC = str(Path(__file__).resolve().parents[2])


def agent_call(root: Path):
    found = [f for f in check_workspace(Workspace(root), agent=True) if f.check == "agent-call"]
    assert len(found) == 1, found
    return found[0]


def port_of(run) -> int:
    return urlsplit(run.mock.url).port


def dead_port() -> int:
    """A port on 127.0.0.1 nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def confined(root: Path, network: str) -> None:
    if SANDBOX != "bwrap":
        pytest.skip(f"the sandbox cannot run here: {WHY_UNCONFINED}")
    config = root / "memento.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("[sandbox]\n", f'[sandbox]\nnetwork = "{network}"\n'),
                      encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", f"network {network}"], cwd=root, check=True)


@pytest.mark.parametrize("preset", PRESETS)
def test_the_agent_answers_through_the_sandbox_and_its_model_network(run, monkeypatch, preset):
    agent = configure(run, preset, monkeypatch)
    root = make_workspace(run, preset, agent)
    confined(root, "model")
    run.mock.script = Script(mode="claim")
    found = agent_call(root)
    assert found.severity == OK, found
    assert found.message.startswith(f"agent-call: {preset} answered via 127.0.0.1:{port_of(run)} in "), found
    asked = run.mock.model_requests()
    assert asked and "preflight check" in str(asked[0].body)  # the one-line prompt reached the model
    proc = subprocess.run([sys.executable, "-m", "memento_core.cli", "doctor", "--agent", str(root)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC})
    assert f"[OK] agent-call: {preset} answered via 127.0.0.1:{port_of(run)}" in proc.stdout, proc.stdout
    assert proc.returncode in (0, 1), proc.stdout  # 1: another check's warning (a fresh project's)


@pytest.mark.parametrize("preset", PRESETS)
def test_a_dead_endpoint_is_critical_naming_it_and_the_clis_last_words(run, monkeypatch, preset):
    agent = configure(run, preset, monkeypatch)
    port = dead_port()
    base = f"http://127.0.0.1:{port}"
    if preset == "claude":
        monkeypatch.setenv("ANTHROPIC_BASE_URL", base)
        monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    else:
        conf = run.home / ".codex" / "config.toml"
        conf.write_text(conf.read_text().replace(run.mock.url, base) + "request_max_retries = 0\n"
                        "stream_max_retries = 0\n", encoding="utf-8")
    root = make_workspace(run, preset, agent)
    confined(root, "model")
    found = agent_call(root)
    assert found.severity == CRITICAL, found
    assert found.message.startswith(f"agent-call: {preset} did not answer via 127.0.0.1:{port} (endpoint "
                                    "unreachable: agent exited with code 1); its last words: '"), found
    assert "its last words: '" in found.message and "(log logs/doctor-agent_" in found.message, found
    assert run.mock.model_requests() == []
    proc = subprocess.run([sys.executable, "-m", "memento_core.cli", "doctor", "--agent", str(root)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": SRC})
    assert proc.returncode == 2 and f"[CRITICAL] agent-call: {preset} did not answer via 127.0.0.1:{port}" \
        in proc.stdout, proc.stdout


@pytest.mark.parametrize("preset", PRESETS)
def test_without_the_model_network_the_live_mock_is_not_reached(run, monkeypatch, preset):
    agent = configure(run, preset, monkeypatch)
    if preset == "claude":
        monkeypatch.setenv("CLAUDE_CODE_MAX_RETRIES", "0")
    else:
        conf = run.home / ".codex" / "config.toml"
        conf.write_text(conf.read_text() + "request_max_retries = 0\nstream_max_retries = 0\n", encoding="utf-8")
    root = make_workspace(run, preset, agent)
    config = root / "memento.toml"  # codex waits for a network that never comes: the call's time is the cap
    config.write_text(config.read_text(encoding="utf-8").replace('timeout = "4min"', 'timeout = "20s"'), encoding="utf-8")
    confined(root, "none")
    run.mock.script = Script(mode="claim")
    found = agent_call(root)
    assert found.severity == CRITICAL, found
    assert found.message.startswith(f"agent-call: {preset} did not answer via 127.0.0.1:{port_of(run)} (endpoint "
                                    "unreachable: "), found
    assert run.mock.model_requests() == []


def test_a_cli_that_is_not_logged_in_is_critical_with_its_own_words(run, monkeypatch):
    agent = configure(run, "claude", monkeypatch)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    root = make_workspace(run, "claude", agent)
    confined(root, "model")
    found = agent_call(root)
    assert found.severity == CRITICAL, found
    assert found.message.startswith(f"agent-call: claude did not answer via 127.0.0.1:{port_of(run)} (not logged in: "
                                    "agent exited with code 1); its last words: 'Not logged in · Please run /login'"), found
    assert run.mock.model_requests() == []
