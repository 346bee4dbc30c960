"""Front matter that is missing or invalid degrades (first line, mtime) and never raises."""

from __future__ import annotations

import os
from datetime import UTC, datetime

from memento_core.memory import list_entries, read_entry
from memento_core.memory.entries import entry_from_text, load_entry, set_fields
from memento_core.memory.writes import write_entry
from tests.core.memory.memhelp import mem_git

MTIME = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC).timestamp()


def put(ws, rel: str, text: str) -> None:
    path = ws.memory_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (MTIME, MTIME))


def test_valid_front_matter_is_read(ws):
    put(ws, "knowledge/lessons/ok.md", "---\nsummary: Pin the db image\nupdated_at: 2026-01-02T03:04:05Z\n"
        "sources: [T-7]\ntags: [db, ci]\npriority: core\nstatus: active\nlast_verified: 2026-01-02\n---\n\nBody\n")
    e = load_entry(ws.memory_dir, "knowledge/lessons/ok.md")
    assert (e.summary, e.priority, e.status, e.updated_at, e.last_verified) == (
        "Pin the db image", "core", "active", "2026-01-02T03:04:05Z", "2026-01-02")
    assert e.sources == ("T-7",) and e.tags == ("db", "ci") and e.front_matter_ok


def test_invalid_yaml_degrades_to_first_line_and_mtime(ws):
    put(ws, "knowledge/lessons/bad.md", "---\nsummary: [unclosed\n  : : :\n---\n\n# Use UTC everywhere\n\nbody\n")
    e = load_entry(ws.memory_dir, "knowledge/lessons/bad.md")
    assert e.summary == "Use UTC everywhere"
    assert e.updated_at == "2026-03-04T05:06:07Z"
    assert not e.front_matter_ok and e.priority == "normal" and e.status == "active"


def test_missing_front_matter_degrades(ws):
    put(ws, "knowledge/decisions/plain.md", "\n\nWe chose SQLite for the prototype.\nMore text.\n")
    e = load_entry(ws.memory_dir, "knowledge/decisions/plain.md")
    assert e.summary == "We chose SQLite for the prototype."
    assert e.updated_at == "2026-03-04T05:06:07Z" and not e.front_matter_ok


def test_odd_inputs_never_raise():
    for text in ("", "---", "---\n- a list\n---\nx", "---\n---\n", "\ufeff---\nsummary: 3\n---\n",
                 "---\nsummary: !!python/object:os.system x\n---\nhi", "\x00\x01binary", "---\n\t: x\n"):
        e = entry_from_text("k.md", text, MTIME)
        assert isinstance(e.summary, str) and e.summary
    assert entry_from_text("k.md", "\ufeff---\nsummary: 3\n---\n", None).summary == "3"


def test_list_and_read_survive_broken_entries(ws):
    put(ws, "knowledge/lessons/bad.md", "---\n: [\n---\nFirst words\n")
    put(ws, "knowledge/lessons/empty.md", "")
    entries = {e.path: e for e in list_entries(ws)}
    assert entries["knowledge/lessons/bad.md"].summary == "First words"
    assert entries["knowledge/lessons/empty.md"].summary == "empty"
    assert read_entry(ws, "knowledge/lessons/bad.md").startswith("---\n: [")


def test_write_over_an_invalid_entry_keeps_what_was_written(ws):
    put(ws, "knowledge/lessons/bad.md", "---\nsummary: [oops\n---\nOld insight about caching.\n")
    mem_git(ws, "add", "-A")
    write_entry(ws, "knowledge/lessons/bad.md", "New insight about retries.\n", "Retries and caching")
    text = (ws.memory_dir / "knowledge/lessons/bad.md").read_text()
    e = load_entry(ws.memory_dir, "knowledge/lessons/bad.md")
    assert e.front_matter_ok and e.summary == "Retries and caching"
    assert "Old insight about caching." in text and "New insight about retries." in text
    assert "summary: [oops" in text  # the broken block is kept, quoted


def test_set_fields_is_a_line_edit():
    text = "---\n# a comment\nsummary: keep me\nsources:\n  - T-1\n  - T-2\nextra: 1\n---\nbody\n"
    out = set_fields(text, {"sources": ["T-1", "T-2", "T-3"], "status": "stale"})
    assert out == ("---\n# a comment\nsummary: keep me\nsources: [T-1, T-2, T-3]\nextra: 1\nstatus: stale\n"
                   "---\nbody\n")
