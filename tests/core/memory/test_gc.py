"""Weekly gc (archive, stale marks) with controlled dates, and distill on a fixture journal."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

from memento_core.memory.distill import distill
from memento_core.memory.entries import load_entry
from memento_core.memory.gc import gc
from tests.core.memory.memhelp import mem_git, memento

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "memory_journal_2026-05-01.md"
TODAY = date(2026, 6, 15)


def put(ws, rel: str, text: str) -> None:
    path = ws.memory_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


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


def test_gc_cli_with_a_controlled_date(ws):
    put(ws, "journal/2026-01-01.md", "# old\n")
    proc = memento(ws, "memory", "gc", "--today", "2026-06-15")
    assert proc.returncode == 0
    assert "[ok] archived memory/journal/2026-01-01.md" in proc.stdout


def test_distill_digest_and_proposals_on_a_fixture_journal(ws):
    shutil.copy(FIXTURE, ws.memory_dir / "journal" / "2026-05-01.md")
    digest = distill(ws, "2026-05-01")
    assert digest.text.splitlines()[:4] == [
        "# Distill of journal/2026-05-01.md", "",
        "- ticks: 3 (#12–#14); attempts: 3 — 1 passed, 1 failed, 1 blocked",
        "- notes: 1",
    ]
    assert "- T-201 (failed, tick #12, 09:00:00Z): verify failed (exit code 1)" in digest.text
    assert "  - Error Analysis: the db module exports `get_pool`, not `pool`" in digest.text
    assert "- T-202 (blocked, tick #14, 10:00:00Z): the agent moved HEAD" in digest.text
    assert "- 09:30:12Z — flaky CI runner (source=human): The CI runner was restarted; ignore the 09:20 failure." \
        in digest.text
    assert "- T-201: used get_pool(); decided to keep one pool per process." in digest.text
    assert [(p.path, p.summary) for p in digest.proposals] == [
        ("knowledge/lessons/t-201.md", "T-201: verify failed (exit code 1)"),
        ("knowledge/lessons/t-202.md", "T-202: the agent moved HEAD"),
        ("knowledge/decisions/t-201.md", "T-201: decided to keep one pool per process."),
    ]
    assert "T-201 passed later the same day (tick #13)" in digest.proposals[0].content
    assert distill(ws, "2026-05-01").text == digest.text  # deterministic


def test_distill_apply_is_idempotent(ws):
    shutil.copy(FIXTURE, ws.memory_dir / "journal" / "2026-05-01.md")
    first = memento(ws, "memory", "distill", "--date", "2026-05-01", "--apply")
    assert first.returncode == 0 and "[ok] create: memory/knowledge/lessons/t-201.md" in first.stdout
    again = memento(ws, "memory", "distill", "--date", "2026-05-01", "--apply")
    assert again.stdout.count("[ok] noop:") == 3
    missing = memento(ws, "memory", "distill", "--date", "2026-05-02")
    assert missing.returncode == 2 and "no journal for 2026-05-02" in missing.stderr
