"""`memento report [DIR] [--since D | --date DAY] [--json]` (cli/commands/report.py, SPEC §15), a real
subprocess: the report as lines or one JSON document, exit 1 exactly when something needs a person,
and the window it was asked for. What the report says of a real run is tests/core/test_report.py."""

from __future__ import annotations

import json
from pathlib import Path

from tests.core.cli.runs import PLAN, WORDS_PLAN, memento


def test_nothing_needing_a_person_is_exit_0_as_lines_and_as_json(ws: Path):
    """A new workspace (paused, nothing run): nothing needs a person."""
    text = memento("report", str(ws))
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("Report for proj: ") and "[ok] nothing needs you" in lines
    assert "0 ticks, 0 passed, 0 failed; time 0s; tokens 0 in / 0 out; cost $0.00" in lines
    doc = memento("report", "--json", str(ws))
    assert doc.returncode == 0 and json.loads(doc.stdout)["needs_you"] == []


def test_a_blocked_task_makes_it_exit_1_and_leads_the_report(ws: Path):
    """The same paused workspace with one task [!]: that is what needs a person."""
    (ws / PLAN).write_text(WORDS_PLAN.replace("- tick_mode: auto", "- tick_mode: paused")
                           .replace("- [ ] `T-2`", "- [!] `T-2`"))
    doc = memento("report", "--json", str(ws))
    assert doc.returncode == 1, doc.stderr
    [need] = json.loads(doc.stdout)["needs_you"]
    assert (need["kind"], need["task"]) == ("blocked", "T-2")
    text = memento("report", str(ws))
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert lines[2].startswith("[warn] needs you") and "T-2 blocked" in lines[3]


def test_the_window_is_the_day_or_the_duration_asked_for_and_never_both(ws: Path):
    day = json.loads(memento("report", "--date", "2001-02-03", "--json", str(ws)).stdout)
    assert (day["since"], day["until"]) == ("2001-02-03T00:00:00Z", "2001-02-04T00:00:00Z")
    hours = json.loads(memento("report", "--since", "2h", "--json", str(ws)).stdout)
    assert hours["since"] < hours["until"] and hours["until"][:4] != "2001"
    both = memento("report", "--since", "2h", "--date", "2001-02-03", str(ws))
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
