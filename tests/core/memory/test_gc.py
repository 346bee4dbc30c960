"""memory/gc.py: the weekly gc (archive, stale marks) with controlled dates."""

from __future__ import annotations

from datetime import date

from memento_core.memory.entries import load_entry
from memento_core.memory.gc import gc
from tests.core.memory.memhelp import mem_git, put

TODAY = date(2026, 6, 15)


def knowledge(verified: str, priority: str = "normal", status: str = "active") -> str:
    return (f"---\nsummary: s\nupdated_at: {verified}T00:00:00Z\npriority: {priority}\nstatus: {status}\n"
            f"last_verified: {verified}\n---\n\nbody\n")


def test_gc_archives_old_journal_days_but_never_core(ws):
    put(ws, "journal/2026-05-01.md", "# old\n")  # 45 days old
    put(ws, "journal/2026-05-16.md", "# exactly 30 days old: kept\n")
    put(ws, "journal/2026-06-14.md", "# yesterday\n")
    put(ws, "journal/2026-04-01.md", "---\nsummary: launch day\npriority: core\n---\n# core\n")
    report = gc(ws, today=TODAY)
    assert report.archived == ["journal/2026-05-01.md"]
    assert report.kept_core == ["journal/2026-04-01.md"]
    assert (ws.memory_dir / ".archive/journal/2026-05-01.md").read_text() == "# old\n"
    assert not (ws.memory_dir / "journal/2026-05-01.md").exists()
    assert (ws.memory_dir / "journal/2026-05-16.md").exists()
    assert mem_git(ws, "status", "--porcelain") == ""
    assert mem_git(ws, "log", "-1", "--format=%s").startswith("memory gc: 1 journal day(s) archived")
    assert gc(ws, today=TODAY).commit is None  # idempotent


def test_gc_marks_unverified_entries_stale(ws):
    put(ws, "knowledge/lessons/old.md", knowledge("2026-05-15"))  # 31 days
    put(ws, "knowledge/lessons/fresh.md", knowledge("2026-05-16"))  # 30 days
    put(ws, "knowledge/decisions/core.md", knowledge("2026-01-01", priority="core"))
    put(ws, "knowledge/people/broken.md", "---\n: [\n---\nno front matter to edit\n")
    report = gc(ws, today=TODAY)
    assert report.stale == ["knowledge/decisions/core.md", "knowledge/lessons/old.md"]
    assert report.unreadable == ["knowledge/people/broken.md"]
    assert load_entry(ws.memory_dir, "knowledge/lessons/old.md").status == "stale"
    assert load_entry(ws.memory_dir, "knowledge/lessons/fresh.md").status == "active"
    text = (ws.memory_dir / "knowledge/lessons/old.md").read_text()
    assert text == knowledge("2026-05-15", status="stale")  # one line changed, nothing else
    assert "stale" in (ws.memory_dir / "MEMORY.md").read_text()
