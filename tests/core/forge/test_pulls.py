"""forge/pulls.py: each phase's pull request record, read back as written, anything else left out."""

from __future__ import annotations

import json
import os

from memento_core.forge import pulls
from memento_core.forge.pulls import Check, PullRecord
from memento_core.workspace import Workspace


def test_a_record_reads_back_as_written(tmp_path):
    ws = Workspace(tmp_path)
    rec = PullRecord("Phase 2", "memento/integration", "main", number=7, url="https://github.com/o/r/pull/7",
                     head="a" * 40, state="open", checks="failing", failing=(Check("ci / test", "https://x/1"),),
                     pending=("lint",), review="changes_requested", reviews_seen=(11, 12))
    pulls.save(ws, {"Phase 2": rec})
    assert pulls.load(ws) == {"Phase 2": rec}
    assert pulls.update(ws, "Phase 2", state="merged", checks="passing").landed
    assert pulls.load(ws)["Phase 2"].number == 7


def test_landed_only_when_merged_and_checks_pass():
    rec = PullRecord("Phase 1", "memento/foundation", "main")
    assert not rec.landed
    assert not PullRecord("P", "b", "main", state="open", checks="passing").landed
    assert not PullRecord("P", "b", "main", state="merged", checks="failing").landed
    assert not PullRecord("P", "b", "main", state="merged", checks="pending").landed
    assert not PullRecord("P", "b", "main", state="closed", checks="passing").landed
    assert PullRecord("P", "b", "main", state="merged", checks="none").landed
    assert PullRecord("P", "b", "main", state="merged", checks="passing").landed


def test_what_memento_did_not_write_is_left_out(tmp_path):
    ws = Workspace(tmp_path)
    (tmp_path / ".memento").mkdir()
    good = {"branch": "memento/a", "base": "main", "state": "open", "number": 3}
    doc = {"phases": {"Phase 1": good,
                      "Phase 2": {**good, "state": "landed"},        # not a state
                      "Phase 3": {**good, "checks": "green"},        # not a checks word
                      "Phase 4": {**good, "number": "3"},            # not a number
                      "Phase 5": {**good, "failing": [{"url": "x"}]},  # a check without a name
                      "Phase 6": "merged",
                      "Phase 7": {**good, "url": 5}}}
    pulls.path_of(ws).write_text(json.dumps(doc))
    assert list(pulls.load(ws)) == ["Phase 1"]
    for junk in ("{", "[]", '{"phases": []}', "\xff"):
        pulls.path_of(ws).write_text(junk, errors="surrogateescape")
        assert pulls.load(ws) == {}
    pulls.path_of(ws).unlink()
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(doc))
    os.symlink(outside, pulls.path_of(ws))
    assert pulls.load(ws) == {}  # a link is not Memento's file
