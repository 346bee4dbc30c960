"""attempt_record.py: .memento/records/ID.json read back as saved; a record edited by hand (its digest no
longer matching), damaged, or saved under another task's name reads as none, and the plan's and status
log's copies count only while their digests match (real files)."""

from __future__ import annotations

import dataclasses
import hashlib
import json

from memento_core.attempt_record import (
    Record,
    read_record,
    record_paths,
    recorded_plan,
    recorded_status,
    save_record,
)
from memento_core.workspace import Workspace

PLAN = b"# MASTER_PLAN: x\n- [~] `T-1` One\n"
STATUS = "# TICK_STATUS\n\n## Tick #3 \u2014 T-1\n".encode()


def record(**kw) -> Record:
    fields = dict(task="T-1", pid=4242, pid_start=123456, identity="host-a:4242", host="host-a", tick=3,
                  base="0" * 40, written=1764590000.5, untracked=("notes.txt",), cleanignore=("*.log",),
                  max_retries=3, retries=1, plan_sha256=hashlib.sha256(PLAN).hexdigest(),
                  status_sha256=hashlib.sha256(STATUS).hexdigest(), commit_paths=("src/a.py",),
                  commit_hashes={"src/a.py": "f" * 40}, entry="## Tick #3 \u2014 T-1 \u2705")
    fields.update(kw)
    return Record(**fields)


def test_a_saved_record_reads_back_equal(tmp_path):
    ws = Workspace(tmp_path)
    rec = record()
    save_record(ws, rec)
    path = record_paths(ws, "T-1")[0]
    assert path == ws.memento_dir / "records" / "T-1.json"
    assert read_record(ws, "T-1") == rec
    assert read_record(ws, "T-2") is None  # none saved


def test_a_record_changed_after_it_was_saved_is_no_record(tmp_path):
    ws = Workspace(tmp_path)
    save_record(ws, record())
    path = record_paths(ws, "T-1")[0]
    data = json.loads(path.read_text())
    data["retries"] = 0  # an agent resetting its own retries
    path.write_text(json.dumps(data))
    assert read_record(ws, "T-1") is None
    for damaged in ("{", "[]", '"x"', json.dumps({**data, "unknown": 1})):
        path.write_text(damaged)
        assert read_record(ws, "T-1") is None, damaged


def test_a_record_saved_for_another_task_is_not_this_ones(tmp_path):
    ws = Workspace(tmp_path)
    save_record(ws, record(task="T-2"))
    record_paths(ws, "T-2")[0].rename(record_paths(ws, "T-1")[0])  # the digest matches, the name does not
    assert read_record(ws, "T-1") is None


def test_the_plan_and_status_copies_count_only_while_intact(tmp_path):
    ws = Workspace(tmp_path)
    rec = record()
    save_record(ws, rec)
    _, plan, status, _ = record_paths(ws, "T-1")
    assert recorded_plan(ws, rec) is None and recorded_status(ws, rec) is None  # no copies yet
    plan.write_bytes(PLAN)
    status.write_bytes(STATUS)
    assert recorded_plan(ws, rec) == PLAN and recorded_status(ws, rec) == STATUS
    plan.write_bytes(PLAN + b"- [ ] `T-9` planted\n")
    status.write_bytes(STATUS.replace(b"#3", b"#4"))
    assert recorded_plan(ws, rec) is None and recorded_status(ws, rec) is None
    assert recorded_status(ws, dataclasses.replace(rec, status_sha256=hashlib.sha256(
        STATUS.replace(b"#3", b"#4")).hexdigest())) is not None
