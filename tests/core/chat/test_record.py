"""chat/record.py: .memento/chat.json read back as it was written; a missing, damaged or odd record reads
as an empty one of the same shape, and the sends still to make are capped (real files)."""

from __future__ import annotations

import json

from memento_core.chat import record
from memento_core.workspace import Workspace

EMPTY = {"telegram": {}, "matrix": {}, "questions": {}, "old_questions": {}, "states": {}, "pending": [],
         "errors": {}, "sent": {}}


def test_a_saved_record_reads_back_the_same(tmp_path):
    ws = Workspace(tmp_path)
    rec = record.load(ws)
    assert rec == EMPTY  # no file yet
    rec["telegram"]["offset"] = 124
    rec["questions"]["T-4"] = {"telegram:123": "57"}
    rec["pending"].append({"id": "p1", "key": "blocked:T-2", "text": "T-2 ✗ blocked", "targets": ["telegram:123"]})
    record.save(ws, rec)
    assert record.record_path(ws) == ws.memento_dir / "chat.json"
    assert record.load(ws) == rec
    assert "✗" in record.record_path(ws).read_text(encoding="utf-8")  # written as UTF-8, not escaped


def test_a_damaged_or_odd_record_is_an_empty_one(tmp_path):
    ws = Workspace(tmp_path)
    path = record.record_path(ws)
    path.parent.mkdir(parents=True)
    for text in ("{not json", "[1, 2]", '"a string"', "\xff"):
        path.write_text(text, encoding="utf-8", errors="surrogateescape")
        assert record.load(ws) == EMPTY, text
    path.write_text(json.dumps({"telegram": [1], "questions": {"T-1": "57"}, "pending": [
        "a string", {"text": "no targets"}, {"text": 5, "targets": ["matrix"]},
        {"text": "kept", "targets": ["matrix"]}]}))
    rec = record.load(ws)
    assert rec["telegram"] == {} and rec["questions"] == {"T-1": {}}
    assert rec["pending"] == [{"text": "kept", "targets": ["matrix"]}]


def test_the_sends_still_to_make_keep_only_the_newest(tmp_path):
    ws = Workspace(tmp_path)
    rec = record.load(ws)
    rec["pending"] = [{"id": str(n), "text": f"send {n}", "targets": ["matrix"]}
                      for n in range(record.MAX_PENDING + 50)]
    record.save(ws, rec)
    saved = json.loads(record.record_path(ws).read_text())["pending"]
    assert len(saved) == record.MAX_PENDING and saved[0]["id"] == "50" and saved[-1]["id"] == str(
        record.MAX_PENDING + 49)
    path = record.record_path(ws)  # written by another hand, longer still: read capped too
    path.write_text(json.dumps({"pending": [{"text": str(n), "targets": []} for n in range(300)]}))
    assert [p["text"] for p in record.load(ws)["pending"]] == [str(n) for n in range(100, 300)]
