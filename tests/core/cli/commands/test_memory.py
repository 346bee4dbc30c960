"""`memento memory …` (cli/commands/memory.py, SPEC §7, §9), a real subprocess in a workspace `memento init`
made: what each verb prints and its exit code (a write and its NOOP, search's matches and its stop, index,
log, gc and distill with their dates, the counts it refuses). What a write may touch (the jail) is
tests/core/memory/test_writes.py; the store, gc and distill themselves are tests/core/memory/."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memento_core.workspace import Workspace
from tests.core.memory.memhelp import FIXTURE, mem_git, memento, put

PATH = "knowledge/lessons/tests.md"


@pytest.fixture
def ws(ws: Path) -> Workspace:
    """The command line's workspace (tests/core/cli/conftest.py) as the memory helpers take it."""
    return Workspace(ws)


def test_cli_write_reports_and_noop(ws):
    proc = memento(ws, "memory", "write", PATH, "--summary", "s", "--source", "T-1", stdin="Fact A.\n")
    assert proc.returncode == 0 and proc.stdout.startswith("[ok] create: memory/" + PATH)
    proc = memento(ws, "memory", "write", PATH, "--summary", "s", stdin="Fact A.\n")
    assert proc.returncode == 0 and "NOOP" in proc.stdout
    assert "Fact A." in memento(ws, "memory", "show", PATH).stdout
    assert f"{PATH}:" in memento(ws, "memory", "search", "fact a").stdout


def test_distill_apply_is_idempotent(ws):
    shutil.copy(FIXTURE, ws.memory_dir / "journal" / "2026-05-01.md")
    first = memento(ws, "memory", "distill", "--date", "2026-05-01", "--apply")
    assert first.returncode == 0 and "[ok] create: memory/knowledge/lessons/t-201.md" in first.stdout
    again = memento(ws, "memory", "distill", "--date", "2026-05-01", "--apply")
    assert again.stdout.count("[ok] noop:") == 3
    missing = memento(ws, "memory", "distill", "--date", "2026-05-02")
    assert missing.returncode == 2 and "no journal for 2026-05-02" in missing.stderr


def test_gc_cli_with_a_controlled_date(ws):
    put(ws, "journal/2026-01-01.md", "# old\n")
    proc = memento(ws, "memory", "gc", "--today", "2026-06-15")
    assert proc.returncode == 0
    assert "[ok] archived memory/journal/2026-01-01.md" in proc.stdout


def test_search_finds_any_case_in_every_entry_and_persona_and_stops_at_max(ws):
    (ws.memory_dir / "PERSONA.md").write_text("Answer tersely.\nNever guess a PORT.\n")
    put(ws, "knowledge/lessons/ports.md", "---\nsummary: s\n---\n\nthe port is 8080\n")
    proc = memento(ws, "memory", "search", "Port")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["PERSONA.md:2: Never guess a PORT.",
                                        "knowledge/lessons/ports.md:5: the port is 8080"]
    proc = memento(ws, "memory", "search", "port", "--max", "1")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["PERSONA.md:2: Never guess a PORT.", "[warn] stopped after 1 matches"]
    proc = memento(ws, "memory", "search", "no such words")
    assert proc.returncode == 1 and proc.stdout == "[warn] no match for 'no such words' in memory/\n"


@pytest.mark.parametrize(("args", "why"), [
    (["tree", "--max", "0"], "argument --max: must be at least 1, got 0"),
    (["search", "x", "--max", "-3"], "argument --max: must be at least 1, got -3"),
    (["gc", "--retention-days", "many"], "argument --retention-days: expected a whole number, got 'many'"),
    (["gc", "--today", "2026-02-30"], "a date must be YYYY-MM-DD, not '2026-02-30'"),
    (["distill", "--date", "yesterday"], "a date must be YYYY-MM-DD, not 'yesterday'"),
    (["write", PATH, "--summary", "s", "--update", "--conflict"], "not allowed with argument"),
])
def test_a_count_or_date_that_means_nothing_is_refused_with_exit_2_and_nothing_committed(ws, args, why):
    before = mem_git(ws, "rev-parse", "HEAD")
    proc = memento(ws, "memory", *args, stdin="text\n")
    assert proc.returncode == 2 and why in proc.stderr, proc.stderr
    assert mem_git(ws, "rev-parse", "HEAD") == before


def test_index_regenerates_memory_md_once_and_then_says_it_is_up_to_date(ws):
    assert memento(ws, "memory", "index").stdout == "[ok] MEMORY.md is up to date\n"
    (ws.memory_dir / "MEMORY.md").write_text("a hand edit\n")
    proc = memento(ws, "memory", "index")
    sha = mem_git(ws, "rev-parse", "HEAD").strip()
    assert proc.returncode == 0 and proc.stdout == f"[ok] MEMORY.md regenerated — commit {sha[:7]}\n"
    assert mem_git(ws, "log", "-1", "--format=%s", sha).strip() == "memory: regenerate MEMORY.md"
    assert (ws.memory_dir / "MEMORY.md").read_text().startswith("# MEMORY")
    assert memento(ws, "memory", "index").stdout == "[ok] MEMORY.md is up to date\n"


def test_log_lists_commits_newest_first_of_one_entry_or_all_and_as_json(ws):
    for path, words in ((PATH, "Fact A."), ("knowledge/lessons/other.md", "Fact B.")):
        assert memento(ws, "memory", "write", path, "--summary", words, "--source", "T-7", stdin=words).returncode == 0
    lines = memento(ws, "memory", "log", PATH).stdout.splitlines()
    assert len(lines) == 1 and lines[0].endswith(" [T-7] Fact A.") and len(lines[0].split()[0]) == 7
    everything = memento(ws, "memory", "log", "-n", "2").stdout.splitlines()
    assert [ln.split(" ", 2)[2] for ln in everything] == ["[T-7] Fact B.", "[T-7] Fact A."]
    doc = json.loads(memento(ws, "memory", "log", "--json", "-n", "1").stdout)
    assert [(c["subject"], c["source"]) for c in doc] == [("Fact B.", "T-7")]
    assert doc[0]["sha"] == mem_git(ws, "rev-parse", "HEAD").strip()
    proc = memento(ws, "memory", "log", "../escape.md")
    assert proc.returncode == 2 and "'..' is refused" in proc.stderr


def test_distill_prints_the_digest_or_one_json_document(ws):
    shutil.copy(FIXTURE, ws.memory_dir / "journal" / "2026-05-01.md")
    text = memento(ws, "memory", "distill", "--date", "2026-05-01")
    assert text.returncode == 0 and text.stdout.startswith("# Distill of journal/2026-05-01.md\n")
    doc = json.loads(memento(ws, "memory", "distill", "--date", "2026-05-01", "--json").stdout)
    assert doc["day"] == "2026-05-01" and doc["digest"] == text.stdout
    assert [p["path"] for p in doc["proposals"]][:1] == ["knowledge/lessons/t-201.md"]
    assert not (ws.memory_dir / "knowledge/lessons/t-201.md").exists()  # without --apply nothing is written
