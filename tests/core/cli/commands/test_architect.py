"""`memento architect [--dry-run] [--json] | --ack [TASK]` (cli/commands/architect.py, SPEC §16): the lines
that say how a run ended (what changed and where it is recorded, a dry run put back, a rollback's reasons,
nothing changed), its JSON document, and the person's acknowledgement of verify commands it changed. The
architect's run itself is tests/core/tick/architect/; the gate a changed verify passes through is
tests/core/scenarios/test_architect_gate.py."""

from __future__ import annotations

import json
from pathlib import Path

from memento_core.cli.commands.architect import as_json, report
from memento_core.cli.main import main as cli
from memento_core.tick.architect.changes import NotesChanges, PlanChanges
from memento_core.tick.architect.run import (
    CHANGED,
    REFUSED,
    ROLLED_BACK,
    UNCHANGED,
    ArchitectResult,
    run_architect,
)
from tests.core.cli.runs import status_json
from tests.core.tick.architect.test_run import agent, make_ws


def test_ack_of_a_task_not_listed_is_an_error(tmp_path, capsys):
    ws = make_ws(tmp_path, agent("weakens_verify.py", "T-1"))
    assert run_architect(ws).outcome == CHANGED
    assert cli(["architect", "--ack", "T-9", str(ws.root)]) == 2
    assert "no verify change of T-9 to acknowledge (listed: T-1)" in capsys.readouterr().err
    assert [c["task"] for c in status_json(ws)["verify_changes"]] == ["T-1"]
    assert cli(["architect", "--ack", str(ws.root)]) == 0  # a DIR after --ack: all of that workspace's
    assert status_json(ws)["verify_changes"] == []


def test_the_last_lines_say_what_changed_and_where_it_is_recorded(capsys):
    changes = PlanChanges(edited=("T-1",), verify=(("T-1", "grep -q DONE out.txt", "true"), ("T-9", "", "make t")))
    report(ArchitectResult(CHANGED, "edited T-1", changes=changes, commit="0123456789abc", log="logs/a.log"))
    assert capsys.readouterr().out.splitlines() == [
        "[ok] architect: edited T-1 (🏗 ARCHITECT entry in docs/TICK_STATUS.md, commit 0123456) (log: logs/a.log)",
        "[warn] T-1's verify changed: `grep -q DONE out.txt` → `true` — check it, then `memento architect --ack T-1`",
        "[warn] T-9's verify changed: (a new task) `make t` — check it, then `memento architect --ack T-9`",
    ]
    report(ArchitectResult(CHANGED, "edited T-1", changes=changes, dry_run=True))
    assert capsys.readouterr().out == "[ok] dry run: the architect would have: edited T-1; everything was put back\n"
    report(ArchitectResult(ROLLED_BACK, "x", reasons=("it changed code.py", "it wrote .git/"), log="logs/b.log"))
    assert capsys.readouterr().out == ("[warn] the architect's changes were rolled back:\n  - it changed code.py\n"
                                       "  - it wrote .git/\n  log: logs/b.log\n")
    report(ArchitectResult(UNCHANGED, "nothing to do"))
    assert capsys.readouterr().out == "[warn] the architect changed nothing; blocked tasks wait for a person\n"


def test_the_json_document_holds_every_change_and_a_refusal_exits_2():
    changes = PlanChanges(edited=("T-1",), added=("T-4",), skipped=("T-2",), reset=("T-3",),
                          verify=(("T-1", "old", "new"),))
    doc = as_json(ArchitectResult(CHANGED, "m", changes=changes, notes=NotesChanges(acted=("k1", "k2")),
                                  map_changed=True, diff="--- a\n", commit="abc", log="l"))
    assert doc == {"outcome": CHANGED, "dry_run": False, "message": "m", "edited": ["T-1"], "added": ["T-4"],
                   "skipped": ["T-2"], "reset": ["T-3"], "notes_archived": 2, "map_changed": True, "reasons": [],
                   "verify_changed": [{"task": "T-1", "old": "old", "new": "new"}], "commit": "abc", "log": "l",
                   "diff": "--- a\n", "exit_code": 0}
    json.dumps(doc)  # one JSON document as it stands
    assert as_json(ArchitectResult(REFUSED, "no architect command"))["exit_code"] == 2
    assert as_json(ArchitectResult(ROLLED_BACK, "x"))["exit_code"] == 1


def test_an_ack_runs_no_agent_refuses_a_dry_run_and_with_nothing_listed_says_so(ws: Path, capsys):
    assert cli(["architect", "--ack", "--dry-run", str(ws)]) == 2
    assert "--ack and --dry-run do not go together" in capsys.readouterr().err
    assert cli(["architect", "--ack", str(ws)]) == 0
    assert capsys.readouterr().out == "[ok] nothing to acknowledge: the architect changed no verify command\n"
    assert cli(["architect", "--ack", "--json", str(ws)]) == 0
    assert json.loads(capsys.readouterr().out) == {"acknowledged": []}
    assert cli(["architect", "--ack", "T-1", str(ws)]) == 2
    assert "no verify change of T-1 to acknowledge (listed: none)" in capsys.readouterr().err
