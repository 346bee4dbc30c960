"""checks/config.py: memento.toml that does not load or parse, and an agent binary that is not
there, each case its exact lines and exit code (SPEC §8)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memento_core import doctor
from memento_core.doctor.checks.config import check_agent, check_config
from memento_core.doctor.context import Context
from memento_core.doctor.findings import CRITICAL, WARNING
from memento_core.scaffold import init_workspace
from memento_core.workspace import Workspace
from tests.core.doctor.doctorhelp import commit, judge


def _bad_config(ws):
    (ws.root / "memento.toml").write_text("[agent]\npreset = 3\n")
    commit(ws, "memento.toml")
    return ["[CRITICAL] memento.toml:2: [agent] preset: expected a string, got 3"], 2


def _bad_toml(ws):
    (ws.root / "memento.toml").write_text("[agent\npreset = 'script'\n")
    commit(ws, "memento.toml")
    findings = [f for f in doctor.check_workspace(ws) if f.check == "config"]
    assert findings[0].line == 1
    return [str(findings[0])], 2


def _missing_agent(ws):
    (ws.root / "memento.toml").write_text('[agent]\npreset = "command"\n'
                                          'command = "no-such-agent-binary-4711 {prompt_file}"\n')
    commit(ws, "memento.toml")
    return ["[CRITICAL] memento.toml: agent binary 'no-such-agent-binary-4711' not found on PATH "
            "(preset command): every task would fail"], 2


CASES = {
    "invalid config": _bad_config,
    "invalid toml": _bad_toml,
    "agent binary missing": _missing_agent,
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_check_reports_its_exact_line_and_exit_code(ws, case, capsys):
    judge(ws, *CASES[case](ws), capsys)


def config_ws(tmp_path, toml: str | None) -> Context:
    init_workspace(tmp_path / "proj", project="proj", commit=False)
    ws = Workspace(tmp_path / "proj")
    if toml is None:
        ws.config_path.unlink()
    else:
        ws.config_path.write_text(toml)
    return Context(ws, datetime.now(UTC))


def test_no_memento_toml_means_the_defaults_and_an_unknown_key_is_named_with_its_line(tmp_path):
    assert check_config(config_ws(tmp_path / "a", None)) == "memento.toml does not exist; the defaults apply"
    (finding,) = check_config(config_ws(tmp_path / "b", '[agent]\npreset = "script"\ncolour = "blue"\n'))
    assert (finding.severity, finding.path, finding.line) == (WARNING, "memento.toml", 3)
    assert "colour" in finding.message
    assert check_config(config_ws(tmp_path / "c", '[agent]\npreset = "script"\n')) == \
        "memento.toml is valid (agent preset script)"


@pytest.mark.parametrize(("command", "said"), [
    ("'unclosed {prompt_file}", "[agent] command cannot be split: No closing quotation"),
    ("bin/agent {prompt_file}", "agent binary 'bin/agent' not found on PATH (preset command)"),
])
def test_an_agent_command_that_cannot_run_is_critical(tmp_path, command, said):
    c = config_ws(tmp_path, f'[agent]\npreset = "command"\ncommand = """{command}"""\n')
    (finding,) = check_agent(c)
    assert finding.severity == CRITICAL and finding.check == "agent-binary" and said in finding.message


def test_an_agent_found_on_path_relative_to_the_project_or_needing_none_is_ok(tmp_path):
    c = config_ws(tmp_path, '[agent]\npreset = "command"\ncommand = "bin/agent {prompt_file}"\n')
    (c.ws.root / "bin").mkdir()
    (c.ws.root / "bin" / "agent").write_text("#!/bin/sh\n")
    assert check_agent(Context(c.ws, c.now))[0].severity == CRITICAL  # there, but not executable
    (c.ws.root / "bin" / "agent").chmod(0o755)
    assert check_agent(Context(c.ws, c.now)) == "agent preset command: 'bin/agent' found"
    c.ws.config_path.write_text('[agent]\npreset = "command"\ncommand = "sh -c true"\n')
    assert check_agent(Context(c.ws, c.now)) == "agent preset command: 'sh' found"
    c.ws.config_path.write_text('[agent]\npreset = "script"\n')
    assert check_agent(Context(c.ws, c.now)) == "agent preset script: no binary needed"
    c.ws.config_path.write_text('[agent]\npreset = "command"\ncommand = "{workdir}/agent"\n')
    assert check_agent(Context(c.ws, c.now)) == \
        "agent preset command: the binary comes from a placeholder ({workdir}/agent)"
