"""Which notes a rollback of damaged HUMAN_NOTES.md brings back: a person's, never the agent's edits."""

from __future__ import annotations

from datetime import UTC, datetime
from difflib import SequenceMatcher

from memento_core.notes import parse_notes_text
from memento_core.tick.guards import Snapshot
from memento_core.tick.rollback import EDIT_SIMILARITY, notes_added_since

HEAD = "# HUMAN NOTES\n\n## Active Notes\n\n"
TAIL = "---\n\n## Archive\n"


def doc(*notes: tuple[str, str, str]) -> str:
    return HEAD + "".join(f"### [NOTE] {when} → {target}\n{text}\n\n" for when, target, text in notes) + TAIL


def snapshot(text: str, taken_at: datetime) -> Snapshot:
    keys = frozenset(n.key for n in parse_notes_text(text))
    return Snapshot(base=None, untracked=frozenset(), plan=b"", project_map=None, status=b"",
                    notes=text.encode(), note_keys=keys, cleanignore=(), taken_at=taken_at)


SECOND = "2026-01-01T10:00:00"
AT = datetime(2026, 1, 1, 10, 0, 0, tzinfo=UTC)
BEFORE = doc(("2026-01-01T09:00:00", "T-1", "use the pool, not a connection"),
             (SECOND, "global", "an older global note"))


def added(after: str) -> list[str]:
    return [n.text for n in notes_added_since(snapshot(BEFORE, AT), parse_notes_text(after))]


def test_a_persons_note_after_the_snapshot_comes_back():
    after = doc(("2026-01-01T09:00:00", "T-1", "use the pool, not a connection"),
                (SECOND, "global", "an older global note"), ("2026-01-01T10:00:05", "T-1", "a person writes"))
    assert added(after) == ["a person writes"]


def test_an_agents_edit_of_an_older_note_does_not_come_back_as_new():
    after = doc(("2026-01-01T09:00:00", "T-1", "ignore the pool; set verify to true"),
                (SECOND, "global", "an older global note"))
    assert added(after) == []


def test_within_the_snapshots_second_an_edit_is_told_from_a_persons_note_by_its_text():
    edited = doc(("2026-01-01T09:00:00", "T-1", "use the pool, not a connection"),
                 (SECOND, "global", "an older global note (tidied by the agent)"))
    assert added(edited) == []
    # The agent deleted the file; a person wrote a note in that same second to the same target.
    deleted = doc((SECOND, "global", "a person's note, written while the agent ran"))
    assert added(deleted) == ["a person's note, written while the agent ran"]


def test_a_note_dated_before_the_snapshot_was_not_written_during_the_run():
    forged = doc(*[("2026-01-01T09:00:00", "T-1", "use the pool, not a connection"),
                   (SECOND, "global", "an older global note"), ("2025-12-31T23:00:00", "global", "backdated")])
    assert added(forged) == []


def test_the_rollback_brings_back_the_notes_memento_note_added_and_drops_one_written_by_hand(tmp_path):
    """Unconfined (no receipts held): .memento/notes_added says which notes came through `memento note`."""
    from memento_core.notes import add_note, parse_notes
    from memento_core.tick.rollback import restore_notes
    from memento_core.workspace import Workspace

    root = tmp_path / "proj"
    (root / ".memento").mkdir(parents=True)
    (root / "docs").mkdir()
    ws = Workspace(root)
    ws.notes_path.write_text(BEFORE)
    snap = snapshot(BEFORE, AT)
    add_note(ws.notes_path, "a person's note through memento note", target="T-1",
             now=datetime(2026, 1, 1, 10, 0, 7))  # recorded in .memento/notes_added
    text = ws.notes_path.read_text()
    ws.notes_path.write_text(text.replace(TAIL, "### [NOTE] 2026-01-01T10:00:09 → T-1\nset verify to true\n\n" + TAIL))
    restore_notes(ws, snap)
    assert [n.text for n in parse_notes(ws.notes_path)] == [
        "use the pool, not a connection", "an older global note", "a person's note through memento note"]


def test_a_note_as_much_like_the_missing_one_as_the_threshold_is_its_edit():
    """EDIT_SIMILARITY is reached, not passed: the text doubled in length is a ratio of exactly 0.5."""
    text = "an older global note (the agent doubled it: forty more char)"
    assert SequenceMatcher(None, "an older global note", text).ratio() == EDIT_SIMILARITY  # the edge itself
    assert added(doc(("2026-01-01T09:00:00", "T-1", "use the pool, not a connection"), (SECOND, "global", text))) == []


def test_a_missing_note_is_the_edit_of_one_new_note_only():
    """Two new notes in the snapshot's second, both like the one that went: one is its edit, the other a person's."""
    after = doc(("2026-01-01T09:00:00", "T-1", "use the pool, not a connection"),
                (SECOND, "global", "an older global note (tidied)"), (SECOND, "global", "an older global note (a person's)"))
    assert added(after) == ["an older global note (a person's)"]
