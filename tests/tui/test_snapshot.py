"""snapshot.py: what the dashboard shows, read from the workspace's files part by part (no Textual).

Real workspaces (the scripted demo) in tmp_path; each test reads the files through
``load`` as the App's refresh worker does and checks what the snapshot holds.
"""

from __future__ import annotations

import os

from memento_core.notes import add_note
from memento_core.plan.edits import edit_plan
from memento_core.workspace import Workspace
from memento_tui.snapshot import ALL_PARTS, NOTES, PLAN, load, newest_log, timeline_entries
from tests.tui.conftest import FIXED_NOW


def test_the_first_read_takes_every_part_but_the_doctor(scripted):
    snap = load(Workspace(scripted), set())
    assert snap.parts_read == ALL_PARTS and snap.plan_error == ""
    assert [t.id for t in snap.plan.tasks][:3] == ["T-101", "T-102", "T-201"]
    # Newest first; T-201 failed, then blocked: its last result is the block.
    assert [e.task_id for e in snap.entries] == ["T-201", "T-201", "T-102", "T-101"]
    assert snap.last_by_task["T-201"].status == "BLOCKED"
    assert snap.summary["counts"]["total"] == len(snap.plan.tasks)
    assert [n.target for n in snap.notes if not n.read] == ["T-201", "global"]
    assert snap.findings is None and snap.checkpoint_text is None  # the doctor waits for the first paint


def test_a_later_read_takes_only_its_parts_and_keeps_the_rest(scripted):
    ws = Workspace(scripted)
    first = load(ws, ALL_PARTS)
    edit_plan(ws.plan_path, lambda e: e.set_status("T-202", "x"))
    add_note(ws.notes_path, "a third note", target="T-301", now=FIXED_NOW)

    notes_only = load(ws, {NOTES}, first)
    assert notes_only.parts_read == frozenset({NOTES})
    assert "a third note" in [n.text for n in notes_only.notes]
    assert notes_only.plan.task("T-202").status == " "  # the plan was not read again

    plan_too = load(ws, {PLAN}, notes_only)
    assert plan_too.plan.task("T-202").status == "x"
    assert plan_too.entries is notes_only.entries  # the status file was not read again
    assert plan_too.findings is not None  # a plan read again runs the doctor on it


def test_a_plan_that_cannot_be_read_is_said_and_needs_a_person(scripted):
    ws = Workspace(scripted)
    ws.plan_path.unlink()
    snap = load(ws, ALL_PARTS)
    assert snap.plan is None and snap.plan_error and snap.summary == {}
    [need] = snap.needs()
    assert need.text.startswith("plan unreadable: ") and "memento lint" in need.action


def test_the_timeline_reads_the_archives_after_the_status_file_up_to_its_limit(scripted):
    ws = Workspace(scripted)
    current = ws.status_path.read_text()
    archive = scripted / "logs" / "status_archive"
    archive.mkdir(parents=True)
    older = current.replace("2026-11-29T14:0", "2026-11-28T14:0").replace("Tick #", "Tick #10")
    oldest = current.replace("2026-11-29T14:0", "2026-11-27T14:0").replace("Tick #", "Tick #20")
    (archive / "TICK_STATUS_2026-11-28_a.md").write_text(older)
    (archive / "TICK_STATUS_2026-11-27_a.md").write_text(oldest)

    # A link named like an archive (to the status file itself) is none: its entries are not shown twice.
    (archive / "TICK_STATUS_2026-11-29_z.md").symlink_to(ws.status_path)
    stamps = [e.timestamp[:10] for e in timeline_entries(ws, archive)]
    assert stamps == ["2026-11-29"] * 4 + ["2026-11-28"] * 4 + ["2026-11-27"] * 4
    limited = timeline_entries(ws, archive, limit=6)
    assert [(e.timestamp[:10], e.task_id) for e in limited][3:] == [
        ("2026-11-29", "T-101"), ("2026-11-28", "T-201"), ("2026-11-28", "T-201")]


def test_the_newest_log_is_the_last_modified_tick_log(scripted):
    ws = Workspace(scripted)
    logs = scripted / "logs"
    for age, name in enumerate(("tick_2026-11-29T140400Z.log", "tick_2026-11-29T140100Z.log",
                                "tick_2026-11-29T140300Z.log", "tick_2026-11-29T140200Z.log")):
        os.utime(logs / name, (1_000_000 - age, 1_000_000 - age))
    (logs / "cron.log").write_text("newer, but not a tick's log\n")
    assert newest_log(ws) == "logs/tick_2026-11-29T140400Z.log"
    os.utime(logs / "tick_2026-11-29T140200Z.log", (2_000_000, 2_000_000))  # a tick writing it now
    assert newest_log(ws) == "logs/tick_2026-11-29T140200Z.log"
    for path in logs.glob("tick_*.log"):
        path.unlink()
    assert newest_log(ws) is None
