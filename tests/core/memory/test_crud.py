"""CRUD validation of knowledge writes, one commit per write, and who wrote what."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime

from memento_core.memory import entry_history
from memento_core.memory.crud import decide
from memento_core.memory.entries import load_entry
from memento_core.memory.store import history
from memento_core.memory.writes import write_entry
from tests.core.memory.memhelp import commit_count, mem_git, memento

DAY1 = datetime(2026, 5, 1, 9, 0, 0, tzinfo=UTC)
DAY2 = datetime(2026, 5, 9, 9, 0, 0, tzinfo=UTC)
PATH = "knowledge/lessons/tests.md"


def body(ws) -> str:
    return (ws.memory_dir / PATH).read_text()


def test_create_then_noop_on_exact_and_near_duplicates(ws):
    first = write_entry(ws, PATH, "Run the **slow** tests with `-m slow`.\n", "Slow tests", source="T-1", now=DAY1)
    assert first.action == "create" and first.commit
    n = commit_count(ws)
    for again in ("Run the **slow** tests with `-m slow`.\n",  # exact
                  "Run the slow tests\nwith -m slow\n",  # rewrapped, markup gone
                  "run THE slow test with `-m slow`!\n"):  # case, plural, punctuation
        result = write_entry(ws, PATH, again, "Slow tests again", source="T-2", now=DAY2)
        assert result.action == "noop" and result.commit is None
    assert commit_count(ws) == n
    assert load_entry(ws.memory_dir, PATH).last_verified == "2026-05-01"


def test_a_changed_number_or_negation_is_not_a_duplicate():
    old = "Retry the upload 3 times before failing.\n"
    assert decide(old, "Retry the upload 5 times before failing.").action == "append"
    assert decide("Always cache the index.\n", "Never cache the index.").action == "append"


def test_append_goes_under_its_section_and_updates_front_matter(ws):
    write_entry(ws, PATH, "## Setup\n\nUse a venv.\n\n## Running\n\nUse pytest -q.\n", "How to test",
                source="T-1", now=DAY1)
    result = write_entry(ws, PATH, "## Setup\n\nInstall with pip install -e .[dev].\n", "Setup detail",
                         source="T-2", now=DAY2)
    assert result.action == "append"
    text = body(ws)
    assert text.index("Install with pip") < text.index("## Running")
    e = load_entry(ws.memory_dir, PATH)
    assert e.summary == "How to test"  # an append keeps the entry's summary
    assert e.sources == ("T-1", "T-2") and e.last_verified == "2026-05-09"
    assert e.updated_at == "2026-05-09T09:00:00Z"


def test_update_marks_the_old_paragraph_superseded(ws):
    write_entry(ws, PATH, "The API listens on port 8080 in development.\n\nLogs go to stdout.\n",
                "API port", source="T-1", now=DAY1)
    result = write_entry(ws, PATH, "The API listens on port 9090 in development.\n", "API port is now 9090",
                         source="T-3", mode="update", now=DAY2)
    assert result.action == "update"
    text = body(ws)
    assert "~~Superseded~~ (2026-05-09, T-3)" in text
    old_at, new_at = text.index("port 8080"), text.index("port 9090")
    assert text.rindex("~~Superseded~~", 0, old_at) < old_at < new_at < text.index("Logs go to stdout.")
    assert text.count("~~Superseded~~") == 1  # the unrelated paragraph stays current
    assert load_entry(ws.memory_dir, PATH).summary == "API port is now 9090"


def test_conflict_keeps_both_marked(ws):
    write_entry(ws, PATH, "Deploy on Fridays is fine.\n", "Deploy days", source="T-1", now=DAY1)
    result = write_entry(ws, PATH, "Deploy on Fridays is forbidden by ops.\n", "No Friday deploys",
                         source="T-4", mode="conflict", now=DAY2)
    assert result.action == "conflict"
    text = body(ws)
    assert "Deploy on Fridays is fine." in text and "Deploy on Fridays is forbidden by ops." in text
    assert text.count("⚠️ CONFLICT") == 2


def test_every_write_is_one_commit_with_summary_and_sources(ws):
    n = commit_count(ws)
    write_entry(ws, PATH, "One.\n", "first lesson", source="T-9")
    write_entry(ws, "knowledge/decisions/db.md", "Postgres.\n", "use postgres", source="T-10")
    assert commit_count(ws) == n + 2
    message = mem_git(ws, "log", "-1", "--format=%B")
    assert message.startswith("use postgres\n") and "sources: T-10" in message
    assert mem_git(ws, "show", "--name-only", "--format=", "HEAD").split() == [
        "MEMORY.md", "knowledge/decisions/db.md"]
    assert "knowledge/decisions/db.md" in (ws.memory_dir / "MEMORY.md").read_text()
    assert [h[2] for h in entry_history(ws, PATH)] == ["first lesson"]


def test_a_person_s_hand_edits_and_commits_are_source_human(ws, git_identity):
    write_entry(ws, PATH, "One.\n", "first", source="T-1")
    # A person edits by hand and leaves it uncommitted: the next write commits it first, as theirs.
    (ws.memory_dir / "PERSONA.md").write_text("Be terse.\n")
    write_entry(ws, "knowledge/lessons/other.md", "Two.\n", "second", source="T-2")
    kinds = [(c.subject, c.source, c.kind) for c in history(ws)[:2]]
    assert kinds == [("second", "T-2", "write"), ("human edit: PERSONA.md", "source=human", "human")]
    # A person commits by hand with plain git: shown as source=human.
    (ws.memory_dir / "PERSONA.md").write_text("Be terse. Prefer tables.\n")
    subprocess.run(["git", "-C", str(ws.memory_dir), "commit", "-qam", "tune persona"], check=True)
    top = history(ws)[0]
    assert (top.subject, top.source, top.kind) == ("tune persona", "source=human", "human")
    assert "[source=human] tune persona" in memento(ws, "memory", "log").stdout


def test_an_explicit_update_of_one_word_is_never_a_noop():
    from memento_core.memory.crud import decide

    old = "Always run the migrations before the API tests start, using the staging database and the admin account.\n"
    new = old.replace("staging", "production")
    d = decide(old, new, "update")
    assert d.action == "update"
    assert "production" in d.body and "Superseded" in d.body and "staging" in d.body
    assert decide(old, old, "update").action == "noop"  # the very same text is still covered
