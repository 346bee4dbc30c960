"""cli/commands/doctor.py's own part of `memento doctor`: the findings as text (under each workspace's
name when there are several), and the options it refuses before checking anything. Its runs over
real workspaces (--json, --fail-on, --watch) are in tests/core/doctor/test_runner.py."""

from __future__ import annotations

import pytest

from memento_core.cli.commands.doctor import render_text
from memento_core.cli.main import main
from memento_core.doctor.findings import Finding


def test_one_workspace_is_its_findings_several_are_each_under_its_name():
    ok = Finding("OK", "continuity", "all sections present")
    bad = Finding("CRITICAL", "plan", "T-1 has no verify \x1b[2Jcommand", "docs/MASTER_PLAN.md", 5)
    shown = "[CRITICAL] docs/MASTER_PLAN.md:5: T-1 has no verify ?[2Jcommand"  # the escape made harmless
    one = render_text([{"workspace": "/p/a", "findings": [ok, bad]}])
    assert one.splitlines() == ["[OK] all sections present", shown]
    several = render_text([{"workspace": "/p/a", "findings": [ok]}, {"workspace": "/p/b", "findings": [bad]}])
    assert several.splitlines() == ["/p/a:", "[OK] all sections present", "/p/b:", shown]


@pytest.mark.parametrize("argv, says", [
    (["doctor", "--watch", "0"], "--watch needs a number of seconds greater than zero"),
    (["doctor", "--watch", "5", "--agent"], "--agent runs the agent once: it does not go with --watch"),
])
def test_watch_options_it_refuses(argv, says, tmp_path, capsys):
    assert main([*argv, str(tmp_path)]) == 2
    assert says in capsys.readouterr().err
