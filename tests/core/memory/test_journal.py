"""The journal each tick writes, committed with the ticks around it rather than one commit a tick
(issue 42: that commit was five git processes of every tick), and nothing lost or misattributed
on the way: another's change of the waiting journal is committed after the tick's version, any
other commit in memory/ takes the waiting journal first, a kill between the record and the write
leaves a version the record knows. Real git in memory/."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from memento_core.memory import commit_unattributed, store
from memento_core.memory.journal import record_tick
from memento_core.memory.layout import GENERATED
from memento_core.memory.writes import write_entry
from tests.core.git_calls import stop_watching_git, watch_git
from tests.core.memory.memhelp import mem_git


@pytest.fixture(autouse=True)
def _identity(git_identity):
    return git_identity


@pytest.fixture
def batch3(monkeypatch):
    monkeypatch.setattr(store, "JOURNAL_BATCH", 3)


def passed(task: str):
    return SimpleNamespace(task_id=task, passed=True, blocked=False, duration=3.0, commit="abc1234def", reason="")


def tick(ws, n: int, day: str = "2026-12-06") -> None:
    record_tick(ws, n, f"{day}T10:{n:02d}:00Z", [passed(f"T-{n}")])


def subjects(ws) -> list[str]:
    return mem_git(ws, "log", "--format=%s").splitlines()


def dirty(ws) -> set[str]:
    return {line[3:] for line in mem_git(ws, "status", "--porcelain", "-uall").splitlines()}


def test_the_journal_waits_uncommitted_then_one_commit_takes_the_batch(ws, batch3, monkeypatch):
    tick(ws, 1)
    page = "journal/2026-12-06.md"
    assert subjects(ws) == ["memory: create the store"]
    assert dirty(ws) == {page, GENERATED}  # written, not committed: the tick's, and known as such
    pending = store.read_pending(ws)
    assert pending["ticks"] == [[1, "T-1 passed"]] and set(pending["files"]) == {page, GENERATED}
    started: list[str] = []
    watch_git(monkeypatch, started)
    tick(ws, 2)
    assert started == ["status"]  # the check for others' writes; no commit
    assert subjects(ws) == ["memory: create the store"]
    text = (ws.memory_dir / page).read_text()
    assert "Tick #1" in text and "Tick #2" in text
    stop_watching_git(monkeypatch)
    tick(ws, 3)
    assert subjects(ws) == ["journal: ticks #1–#3 (3 ticks)", "memory: create the store"]
    body = mem_git(ws, "log", "-1", "--format=%B")
    assert "tick #2 — T-2 passed" in body and "sources: tick-1..tick-3" in body and "Memento-Memory: journal" in body
    assert dirty(ws) == set() and not store.pending_path(ws).exists()
    assert mem_git(ws, "show", f"HEAD:{page}") == (ws.memory_dir / page).read_text()
    assert [c.kind for c in store.history(ws)][:1] == ["journal"]


def test_a_new_day_page_commits_the_ticks_of_the_day_before(ws, batch3):
    tick(ws, 1, "2026-12-06")
    tick(ws, 2, "2026-12-07")
    assert subjects(ws)[0] == "journal: ticks #1–#2 (2 ticks)"
    assert dirty(ws) == set()


def test_a_change_to_the_waiting_journal_is_committed_after_the_ticks_version(ws, batch3):
    """An agent's raw edit of the page the tick wrote (its lines rewritten): the tick's version is
    committed as the journal, then the edit as the task's unattributed write, its diff alone."""
    tick(ws, 1)
    page = ws.memory_dir / "journal/2026-12-06.md"
    mine = page.read_text()
    page.write_text(mine.replace("T-1 ✅ passed", "T-1 ❌ failed: rewritten"))
    commit_unattributed(ws, "T-9")
    assert subjects(ws) == ["unattributed write by T-9: journal/2026-12-06.md", "journal: tick #1 — T-1 passed",
                            "memory: create the store"]
    assert mem_git(ws, "show", "HEAD~1:journal/2026-12-06.md") == mine
    diff = mem_git(ws, "show", "--format=", "HEAD", "--", "journal/2026-12-06.md")
    assert "-- T-1 ✅ passed" in diff and "+- T-1 ❌ failed: rewritten" in diff
    assert dirty(ws) == set()


def test_an_agent_write_elsewhere_leaves_the_journal_waiting_and_a_memory_write_commits_it_first(ws, batch3):
    tick(ws, 1)
    (ws.memory_dir / "knowledge" / "lessons" / "raw.md").write_text("raw\n")
    commit_unattributed(ws, "T-2")
    assert subjects(ws)[0] == "unattributed write by T-2: knowledge/lessons/raw.md"
    assert "journal/2026-12-06.md" in dirty(ws)  # still the tick's, still waiting
    write_entry(ws, "knowledge/lessons/tests.md", "Run the tests twice.\n", "tests twice", source="T-3")
    assert subjects(ws)[:2] == ["tests twice", "journal: tick #1 — T-1 passed"]
    assert dirty(ws) == set() and not store.pending_path(ws).exists()


def test_a_person_committing_the_journal_by_hand_leaves_nothing_waiting(ws, batch3):
    tick(ws, 1)
    mem_git(ws, "add", "-A")
    mem_git(ws, "commit", "-qm", "my own commit")
    tick(ws, 2)
    pending = store.read_pending(ws)
    assert [t[0] for t in pending["ticks"]] == [1, 2]
    write_entry(ws, "knowledge/lessons/x.md", "x\n", "x", source="source=human")
    assert subjects(ws)[:3] == ["x", "journal: ticks #1–#2 (2 ticks)", "my own commit"]
    assert dirty(ws) == set()


def test_killed_between_the_record_and_the_write_the_page_holds_a_version_the_record_knows(ws, batch3, monkeypatch):
    tick(ws, 1)
    page = ws.memory_dir / "journal/2026-12-06.md"
    before = page.read_text()

    def killed(path, text):
        raise SystemExit("killed")

    with monkeypatch.context() as m, pytest.raises(SystemExit):
        m.setattr(store, "atomic_write_text", killed)
        tick(ws, 2)
    assert page.read_text() == before
    assert json.loads(store.pending_path(ws).read_text())["ticks"][-1] == [2, "T-2 passed"]
    commit_unattributed(ws, "T-3")  # nobody else's write: nothing attributed to T-3
    assert not any("unattributed" in s for s in subjects(ws))
    tick(ws, 3)
    assert subjects(ws)[0].startswith("journal: ticks #1–#3")
    assert dirty(ws) == set()


def test_a_page_too_big_for_the_record_is_committed_at_once(ws, batch3, monkeypatch):
    """The record of the waiting journal is a watched file (owned.py reads at most 4 MiB of it):
    a page over JOURNAL_TEXT_MAX is not kept in it but committed with its tick."""
    monkeypatch.setattr(store, "JOURNAL_TEXT_MAX", 100)
    tick(ws, 1)
    assert subjects(ws)[0] == "journal: tick #1 — T-1 passed"
    assert dirty(ws) == set() and not store.pending_path(ws).exists()
