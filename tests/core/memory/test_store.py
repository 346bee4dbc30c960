"""memory/store.py (SPEC §9): memory/ as a git repository of its own — made once on branch main
with LF forced, the path jail every read and write goes through, one commit of exactly the paths
written with its trailers, the history read back (a person's hand commit is source=human), the
raw writes the tick had to commit, and an index.lock left by a killed git removed only when old."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime, timedelta

import pytest

from memento_core.errors import MementoError
from memento_core.memory import store
from memento_core.memory.layout import GENERATED, LAYERS
from tests.core.memory.memhelp import mem_git


def test_the_store_is_made_once_as_its_own_repository_on_main(ws):
    root = ws.memory_dir
    assert store.is_store(root)
    assert mem_git(ws, "symbolic-ref", "--short", "HEAD").strip() == "main"
    assert (root / ".gitattributes").read_text() == store.GITATTRIBUTES
    assert all((root / layer).is_dir() for layer in LAYERS) and (root / GENERATED).is_file()
    assert [c.subject for c in store.history(ws)] == ["memory: create the store"]
    assert store.ensure_store(ws) == root
    assert len(store.history(ws)) == 1  # there already: nothing made again


@pytest.mark.parametrize(("rel", "words"), [
    ("", "a memory path is required"),
    ("/etc/passwd", "absolute paths are refused"),
    ("C:/x.md", "absolute paths are refused"),
    ("knowledge/../../x.md", "'..' is refused"),
    ("./.", "not a file path inside memory/"),
    (".git/config.md", "memory/.git is the store's own repository"),
    ("memory.md", "MEMORY.md is generated"),
    ("Persona.md", "PERSONA.md is written only by people"),
    (".archive/old.md", ".archive/ is written only by `memento memory gc`"),
    ("knowledge/lessons/x.txt", "memory entries are markdown files"),
])
def test_the_jail_refuses_with_a_sentence_saying_why(ws, rel, words):
    with pytest.raises(MementoError, match=words.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        store.jail(ws, rel)


def test_the_jail_normalises_and_reads_what_it_will_not_write(ws, tmp_path):
    assert store.jail(ws, " ./knowledge//lessons/a.md ") == ("knowledge/lessons/a.md",
                                                            ws.memory_dir / "knowledge/lessons/a.md")
    assert store.jail(ws, "knowledge\\people\\b.md")[0] == "knowledge/people/b.md"
    assert store.jail(ws, "MEMORY.md", writing=False)[0] == "MEMORY.md"
    (ws.memory_dir / "knowledge" / "out").symlink_to(tmp_path)
    with pytest.raises(MementoError, match="knowledge/out is a symbolic link \\(to outside memory/\\)"):
        store.jail(ws, "knowledge/out/x.md", writing=False)
    (ws.memory_dir / "knowledge" / "in").symlink_to(ws.memory_dir / "journal")
    with pytest.raises(MementoError, match="knowledge/in is a symbolic link \\(to inside memory/\\)"):
        store.jail(ws, "knowledge/in/x.md")


def test_a_commit_takes_exactly_its_paths_with_its_trailers_and_nothing_unchanged(ws):
    root = ws.memory_dir
    (root / "knowledge" / "lessons" / "a.md").write_text("a\n")
    (root / "knowledge" / "lessons" / "b.md").write_text("b\n")
    assert store.dirty(root) == ["knowledge/lessons/a.md", "knowledge/lessons/b.md"]
    sha = store.commit(root, ["knowledge/lessons/a.md"], "  a   lesson\n", source="T-4", kind="create",
                       body="why it matters")
    assert sha and store.dirty(root) == ["knowledge/lessons/b.md"]
    assert mem_git(ws, "log", "-1", "--format=%B").strip() == \
        "a lesson\n\nwhy it matters\n\nsources: T-4\nMemento-Memory: create"
    newest = store.history(ws)[0]
    assert (newest.sha, newest.subject, newest.source, newest.kind) == (sha, "a lesson", "T-4", "create")
    assert store.commit(root, ["knowledge/lessons/a.md"], "again", source="T-4", kind="update") is None
    assert [c.subject for c in store.history(ws, "knowledge/lessons/a.md")] == ["a lesson"]
    mem_git(ws, "mv", "knowledge/lessons/a.md", "knowledge/lessons/c.md")
    assert store.dirty(root) == ["knowledge/lessons/a.md", "knowledge/lessons/b.md", "knowledge/lessons/c.md"]


def test_a_persons_hand_commit_reads_as_source_human_and_is_listed_with_its_blobs(ws, git_identity):
    root = ws.memory_dir
    base = mem_git(ws, "rev-parse", "HEAD").strip()
    (root / "PERSONA.md").write_text("I prefer short answers.\n")
    mem_git(ws, "add", "PERSONA.md")
    mem_git(ws, "commit", "-qm", "my persona", "-m", "sources: T-9")  # without the trailer a source proves nothing
    mine = mem_git(ws, "rev-parse", "HEAD").strip()
    (root / "knowledge" / "lessons" / "t.md").write_text("t\n")
    store.commit(root, ["knowledge/lessons/t.md"], "the task's", source="T-1", kind="create")
    newest, person = store.history(ws)[:2]
    assert (newest.kind, newest.source) == ("create", "T-1")
    assert (person.subject, person.kind, person.source) == ("my persona", "human", "source=human")
    blob = mem_git(ws, "rev-parse", f"{mine}:PERSONA.md").strip()
    assert store.person_commits_since(ws, base) == [(mine, [("PERSONA.md", blob)])]
    assert store.person_commits_since(ws, mine) == []
    assert store.is_person_source(" Source=Human ") and not store.is_person_source("T-1")


def test_raw_writes_the_tick_committed_are_read_for_the_last_days_only(ws):
    now = datetime(2026, 3, 10, tzinfo=UTC)
    log = ws.project_memento_dir / store.UNATTRIBUTED_LOG
    log.parent.mkdir(parents=True, exist_ok=True)
    old = (now - timedelta(days=8)).strftime("%Y-%m-%dT%H:%M:%SZ")
    new = (now - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    log.write_text("\n".join([json.dumps({"at": old, "task": "T-1", "commit": "a" * 40, "paths": ["x.md"]}),
                              "not json", json.dumps({"task": "T-2"}),
                              json.dumps({"at": new, "task": "T-3", "commit": "b" * 40, "paths": ["y.md"]})]) + "\n")
    assert store.unattributed_writes(ws, now=now) == [store.UnattributedWrite(new, "T-3", "b" * 40, ("y.md",))]
    assert [w.task for w in store.unattributed_writes(ws, days=None, now=now)] == ["T-1", "T-3"]


def test_an_index_lock_minutes_old_is_removed_under_the_lock_and_a_fresh_one_kept(ws):
    lock = ws.memory_dir / ".git" / "index.lock"
    lock.write_text("")
    with store.locked(ws):
        assert lock.exists()  # a git process may be running now
    old = time.time() - store.STALE_INDEX_LOCK_SECONDS - 5
    os.utime(lock, (old, old))
    with store.locked(ws) as root:
        assert root == ws.memory_dir and not lock.exists()
