"""doctor/findings.py: how a finding reads (``path:line:`` when a line is known) and the exit code
a list of findings makes (0 healthy, 1 warnings, 2 critical)."""

from __future__ import annotations

from memento_core.doctor.findings import CRITICAL, INFO, OK, WARNING, Finding, exit_code


def test_a_finding_names_its_path_and_line_before_the_message_when_both_are_known():
    located = Finding(WARNING, "plan-valid", "T-3 has no verify command", "docs/MASTER_PLAN.md", 12)
    assert located.text == "docs/MASTER_PLAN.md:12: T-3 has no verify command"
    assert str(located) == "[WARNING] docs/MASTER_PLAN.md:12: T-3 has no verify command"
    assert located.to_dict() == {"severity": "WARNING", "check": "plan-valid", "message": "T-3 has no verify command",
                                 "path": "docs/MASTER_PLAN.md", "line": 12}


def test_without_a_line_the_path_is_named_once_and_without_a_path_the_message_stands_alone():
    assert Finding(CRITICAL, "config", "agent binary 'x' not found", "memento.toml").text == \
        "memento.toml: agent binary 'x' not found"
    said = Finding(WARNING, "alert", ".memento_alert is present", ".memento_alert")
    assert said.text == ".memento_alert is present"  # the message names it already
    assert str(Finding(INFO, "tick-lock", "a tick is running now")) == "[INFO] a tick is running now"
    assert Finding(OK, "x", "fine", "a.md", 0).text == "a.md: fine"  # line 0 is no line


def test_the_exit_code_is_the_worst_severity_found():
    assert exit_code([]) == 0
    assert exit_code([Finding(OK, "a", "ok"), Finding(INFO, "b", "note")]) == 0
    assert exit_code([Finding(INFO, "b", "note"), Finding(WARNING, "c", "look")]) == 1
    assert exit_code([Finding(CRITICAL, "d", "broken"), Finding(WARNING, "c", "look"), Finding(OK, "a", "ok")]) == 2
    assert exit_code(iter([Finding(WARNING, "c", "look")])) == 1  # any iterable
