"""tick/record.py: the tick's own record of an attempt, which recovery believes instead of the
claim, and the parts of a status entry besides its fields (the worker's report, the tails, the
sha filled in after the commit). Real files in a real workspace."""

from __future__ import annotations

import os
from dataclasses import replace

from memento_core.attempt_record import read_record, record_paths
from memento_core.plan.scan import parse_plan
from memento_core.state import Claim, this_host
from memento_core.status_log import VERIFY_NOT_RUN
from memento_core.tick.record import (
    PENDING_COMMIT,
    claim_disagrees,
    failure_output,
    fill_commit,
    last_line,
    mark_committing,
    read_tick_result,
    recorded_objects,
    remove_record,
    save_objects,
    tail_lines,
    tick_alive,
    write_record,
)
from tests.core.scenarios.test_engine import make_ws


def test_a_record_is_written_before_the_claim_believed_over_it_and_removed(tmp_path, git_identity):
    ws = make_ws(tmp_path, "true")
    task = parse_plan(ws.plan_path).task("T-1")
    rec = write_record(ws, task, 7, "abc123", {"notes.txt"}, 3, "logs/t.log")
    assert read_record(ws, "T-1") == rec and rec.untracked == ("notes.txt",) and rec.pid == os.getpid()
    assert tick_alive(rec) and not tick_alive(replace(rec, pid_start=(rec.pid_start or 0) + 1))
    claim = Claim(task="T-1", pid=os.getpid(), host=this_host(), started="now", heartbeat=0.0, tick=7,
                  base="abc123")
    assert claim_disagrees(claim, rec) == ""
    assert claim_disagrees(replace(claim, base="forged", tick=8), rec) == \
        "the claim's tick, base differ from the tick's own record"
    assert claim_disagrees(None, rec) == "the claim file is gone"
    committing = replace(claim, stage="committing", commit_paths=["hello.txt"], commit_message="m")
    assert "stage (the tick never reached its commit)" in claim_disagrees(committing, rec)
    mark_committing(ws, "T-1", ["hello.txt"], "m", {"hello.txt": "0" * 40}, "the entry")
    assert read_record(ws, "T-1").stage == "committing"
    assert claim_disagrees(committing, read_record(ws, "T-1")) == \
        "the claim's verified blobs, SUCCESS entry differ from the tick's own record"
    remove_record(ws, "T-1")
    assert read_record(ws, "T-1") is None and not any(p.exists() for p in record_paths(ws, "T-1"))


def test_the_object_stores_print_is_kept_beside_the_record_and_trusted_only_intact(tmp_path, git_identity):
    """What the recovery after a killed tick judges git's objects by (tick/objects.put_back)."""
    from memento_core.tick import objects

    ws = make_ws(tmp_path, "true")
    mirror = ws.project_memento_dir / objects.MIRROR
    snap = objects.take(ws.root, mirror)
    assert snap.loose
    save_objects(ws, "T-1", snap)  # no record of this tick's: nothing kept
    assert not (ws.memento_dir / "records" / "T-1.objects").exists()
    rec = write_record(ws, parse_plan(ws.plan_path).task("T-1"), 7, "abc123", set(), 3)
    save_objects(ws, "T-1", None)  # no object store: nothing kept
    assert read_record(ws, "T-1") == rec
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(b"a person's file")
    (ws.memento_dir / "records" / "T-1.objects").symlink_to(elsewhere)  # an earlier agent's link
    save_objects(ws, "T-1", snap)
    assert elsewhere.read_bytes() == b"a person's file"  # never written through
    assert not (ws.memento_dir / "records" / "T-1.objects").is_symlink()
    rec = read_record(ws, "T-1")
    kept = recorded_objects(ws, rec, ws.root, mirror)
    assert (kept.loose, kept.packs, kept.derived, kept.objects_dir, kept.mirror) == \
        (snap.loose, snap.packs, snap.derived, snap.objects_dir, snap.mirror)
    copy = ws.memento_dir / "records" / "T-1.objects"
    copy.write_bytes(copy.read_bytes().replace(b"[", b"[1", 1))  # not what the record's digest says
    assert recorded_objects(ws, rec, ws.root, mirror) is None
    remove_record(ws, "T-1")
    assert not copy.exists()


def test_the_commits_sha_goes_into_its_own_field_never_into_the_same_words_elsewhere(tmp_path):
    status = tmp_path / "TICK_STATUS.md"
    before = (f"## Tick 1\n- **Outputs**: - **Git Commit**: {PENDING_COMMIT}\n"
              f"- **Git Commit**: {PENDING_COMMIT}\n- **Log**: x\n")
    status.write_text(before)
    fill_commit(status, "1234567")
    assert status.read_text() == before.replace(f"{PENDING_COMMIT}\n- **Log**", "`1234567`\n- **Log**")


def test_the_workers_report_is_read_from_a_regular_file_only(tmp_path):
    report = tmp_path / "tick_result.md"
    report.write_text("# Outputs\n- made hello.txt\n- * tested it\n\n## Error Analysis\nnone\n# Other\nx\n")  # to the end
    assert read_tick_result(report) == {"outputs": "made hello.txt; tested it", "error_analysis": "none; # Other; x"}
    link = tmp_path / "link.md"
    link.symlink_to(report)
    assert read_tick_result(link) == {} and read_tick_result(tmp_path / "gone.md") == {}


def test_tails_leave_out_mementos_own_lines_and_a_failure_says_what_ran():
    out = "one\n\n`two`\n[memento] stopped a process\n"
    assert tail_lines(out, 1) == "`two`" and tail_lines(out) == "one\n`two`"
    assert last_line(out) == "'two'"
    assert failure_output(out, "verify failed", 1) == "`'two'` (exit code 1)"
    assert failure_output("", "agent exited with code 2", None) == VERIFY_NOT_RUN
    assert failure_output("", "verify timed out", None) == "`verify timed out`"
    assert failure_output("", "verify exited with code 3", 3) == "`verify exited with code 3`"
    assert failure_output("", "verify failed", 3) == "`verify failed` (exit code 3)"
