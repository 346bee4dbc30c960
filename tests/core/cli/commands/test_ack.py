"""`memento ack` (cli/commands/ack.py), a real subprocess after a real tick: the unsurfaced results named
and acknowledged, the checkpoint and state.json cleared of them; nothing left, it says so."""

from __future__ import annotations

from pathlib import Path

from memento_core.state import TickState
from memento_core.workspace import Workspace
from tests.core.cli.runs import memento


def test_ack_names_what_it_acknowledged_then_finds_nothing(words_ws: Path):
    assert memento("tick", str(words_ws)).returncode == 0  # T-1 passes: one result nobody has seen
    assert [u.get("task") for u in TickState.load(Workspace(words_ws)).unsurfaced] == ["T-1"]
    r = memento("ack", str(words_ws))
    assert (r.returncode, r.stdout) == (
        0, "[ok] acknowledged 1 result(s): T-1; docs/CURRENT_STATE.md lists them no more\n")
    assert TickState.load(Workspace(words_ws)).unsurfaced == []
    assert "T-1" not in (words_ws / "docs" / "CURRENT_STATE.md").read_text().split("## Unsurfaced Results")[1]
    r = memento("ack", "--project", str(words_ws))
    assert (r.returncode, r.stdout) == (0, "[ok] nothing to acknowledge: no unsurfaced results\n")
