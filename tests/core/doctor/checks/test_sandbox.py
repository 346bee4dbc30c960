"""checks/sandbox.py (SPEC §13), called on a real workspace: the agent confined (and what it may reach), a
network whose endpoint cannot be known a critical line at memento.toml's line, an unconfined agent a
warning with its reason, and no config no line of its own. The fixes for a machine where bubblewrap cannot
run, through `memento doctor` on faked machines, are tests/core/sandbox/test_reach.py."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime

import pytest

from memento_core.doctor.checks.sandbox import check_sandbox
from memento_core.doctor.context import Context
from memento_core.doctor.findings import CRITICAL, WARNING
from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace
from tests.core.doctor.doctorhelp import line_of

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed here")


def sandbox_with(tmp_path, toml: str):
    init_workspace(tmp_path / "proj", project="proj", commit=False)
    ws = Workspace(tmp_path / "proj")
    ws.config_path.write_text(toml)
    return ws, check_sandbox(Context(ws, datetime.now(UTC)))


def test_mode_none_is_a_warning_with_its_reason_and_nothing_to_fix(tmp_path):
    _, found = sandbox_with(tmp_path, '[agent]\npreset = "script"\n[sandbox]\nmode = "none"\n')
    assert [(f.severity, f.message, f.path) for f in found] == [
        (WARNING, 'sandbox: the agent runs unconfined ([sandbox] mode = "none" in memento.toml)', None)]


def test_no_config_is_left_to_the_config_check(tmp_path):
    assert sandbox_with(tmp_path, "[agent\n")[1] is None


@needs_bwrap
def test_a_confined_agent_is_said_with_what_it_may_reach(tmp_path):
    _, said = sandbox_with(tmp_path, '[agent]\npreset = "script"\n[sandbox]\nmode = "bwrap"\nallow = ["pypi.org"]\n')
    assert said.startswith(f"the agent and verify run in the bubblewrap sandbox ({shutil.which('bwrap')}); "
                           "the agent may reach: "), said
    assert "pypi.org" in said


@needs_bwrap
def test_an_endpoint_that_cannot_be_known_is_critical_at_the_network_line(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENCLAW_CONFIG_PATH", raising=False)
    monkeypatch.delenv("OPENCLAW_STATE_DIR", raising=False)
    ws, found = sandbox_with(tmp_path, '[agent]\npreset = "openclaw"\n\n[sandbox]\nmode = "bwrap"\nnetwork = "model"\n')
    [finding] = found
    assert finding.severity == CRITICAL and finding.path == "memento.toml"
    assert finding.line == line_of(ws.config_path, "network =") == 6
    assert finding.message.startswith('sandbox: [sandbox] network = "model": the openclaw preset\'s model endpoint '
                                      "cannot be known")
