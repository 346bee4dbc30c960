"""checks/config.py: memento.toml that does not load or parse, and an agent binary that is not
there, each case its exact lines and exit code (SPEC §8)."""

from __future__ import annotations

import pytest

from memento_core import doctor
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
def test_each_case_reports_its_exact_line_and_exit_code(ws, case, capsys):
    judge(ws, *CASES[case](ws), capsys)
