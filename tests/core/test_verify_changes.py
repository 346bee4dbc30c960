"""verify_changes.py (SPEC §13, §16): the verify commands an architect changed, listed in
.memento/verify_changes.json until a person acknowledges them — a task changed twice keeps its
first old command and leaves the list when changed back, an ack names the digest of the verify
it saw, a fleet's acks kept until a commit carries them, and the list brought in line with a
branch's history. The held task in a real tick is judged in test_architect_held.py and
test_fleet_held.py."""

from __future__ import annotations

import os

from memento_core import verify_changes as vc
from memento_core.verify_changes import VerifyChange
from memento_core.workspace import Workspace

AT = "2026-01-01T00:00:00Z"


def workspace(tmp_path) -> Workspace:
    (tmp_path / "proj" / ".memento").mkdir(parents=True)
    return Workspace(tmp_path / "proj")


def listed(ws: Workspace) -> list[tuple[str, str, str]]:
    return [(c.task, c.old, c.new) for c in vc.pending(ws)]


def test_a_change_keeps_its_first_old_command_and_changed_back_it_leaves_the_list(tmp_path):
    ws = workspace(tmp_path)
    vc.record(ws, vc.changes_of([("T-1", "pytest -q", "pytest -q -x"), ("T-9", "", "true")], AT))
    assert listed(ws) == [("T-1", "pytest -q", "pytest -q -x"), ("T-9", "", "true")]
    vc.record(ws, vc.changes_of([("T-1", "pytest -q -x", "true")], AT))
    assert listed(ws) == [("T-9", "", "true"), ("T-1", "pytest -q", "true")]
    vc.record(ws, vc.changes_of([("T-1", "true", "pytest -q")], AT))  # back to what it was
    assert listed(ws) == [("T-9", "", "true")]
    vc.record(ws, [])
    assert listed(ws) == [("T-9", "", "true")]


def test_a_change_describes_itself_and_its_trailers_name_each_digest():
    change, new = VerifyChange("T-2", "pytest -q", "true", AT), VerifyChange("T-9", "", "make", AT)
    assert change.describe() == "T-2: `pytest -q` → `true`" and new.describe() == "T-9 (new): `make`"
    assert vc.digest("true") == vc.digest("true") != vc.digest("true ") and len(vc.digest("x")) == 16
    assert vc.trailers(vc.CHANGED_TRAILER, [change]) == f"Memento-Verify-Changed: T-2 {vc.digest('true')}\n"
    message = vc.ack_message([change, new])
    assert message.startswith("memento: a person acknowledged the verify of T-2, T-9\n\n")
    assert [m.groups() for m in vc.TRAILER_RE.finditer(message)] == [
        ("Memento-Verify-Ack", "T-2", vc.digest("true")), ("Memento-Verify-Ack", "T-9", vc.digest("make"))]


def test_an_ack_takes_the_tasks_named_or_all_and_a_fleets_is_kept_until_published(tmp_path):
    ws = workspace(tmp_path)
    vc.record(ws, vc.changes_of([("T-1", "a", "b"), ("T-2", "c", "d"), ("T-3", "e", "f")], AT))
    assert [c.task for c in vc.acknowledge(ws, ["t-2"])] == ["T-2"]  # any case
    assert listed(ws) == [("T-1", "a", "b"), ("T-3", "e", "f")] and vc.unpublished(ws) == []
    acked = vc.acknowledge(ws, publish=True)
    assert [c.task for c in acked] == ["T-1", "T-3"] and listed(ws) == []
    assert vc.unpublished(ws) == acked
    vc.record(ws, vc.changes_of([("T-4", "g", "h")], AT))  # a later change keeps the acks waiting
    assert vc.unpublished(ws) == acked
    vc.published(ws, acked[:1])
    assert vc.unpublished(ws) == acked[1:] and listed(ws) == [("T-4", "g", "h")]
    assert vc.acknowledge(ws, ["T-7"]) == []


def test_the_list_follows_the_branchs_history(tmp_path):
    ws = workspace(tmp_path)
    vc.record(ws, vc.changes_of([("T-1", "a", "b")], AT))
    vc.acknowledge(ws, ["T-1"], publish=True)  # acked here, not committed yet
    held = vc.changes_of([("T-1", "a", "b"), ("T-2", "c", "d")], AT)
    vc.reconcile(ws, held, set())
    assert listed(ws) == [("T-2", "c", "d")]  # T-1 is acknowledged here already
    vc.reconcile(ws, [], {("T-2", vc.digest("d"))})
    assert listed(ws) == []
    vc.reconcile(ws, vc.changes_of([("T-2", "d", "e")], AT), {("T-2", vc.digest("d"))})
    assert listed(ws) == [("T-2", "d", "e")]  # an ack never covers a later change


def test_a_damaged_file_or_a_fifo_lists_nothing_and_the_next_record_replaces_it(tmp_path):
    ws = workspace(tmp_path)
    vc.path_of(ws).write_text('{"changes": [{"task": "T-1"}]}')
    assert vc.pending(ws) == [] and vc.unpublished(ws) == []
    vc.path_of(ws).unlink()
    os.mkfifo(vc.path_of(ws))
    assert vc.pending(ws) == []  # returns at once
    vc.record(ws, vc.changes_of([("T-1", "a", "b")], AT))
    assert vc.path_of(ws).is_file() and listed(ws) == [("T-1", "a", "b")]
    target = tmp_path / "persons.json"
    target.write_text("theirs")
    vc.path_of(ws).unlink()
    vc.path_of(ws).symlink_to(target)
    vc.record(ws, vc.changes_of([("T-2", "c", "d")], AT))
    assert target.read_text() == "theirs" and not vc.path_of(ws).is_symlink()
    assert vc.acknowledge(ws) == [VerifyChange("T-2", "c", "d", AT)]
