"""Two real processes editing the shared files at once lose nothing (SPEC §3, §11)."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

from memento_core.notes import add_note, parse_notes
from memento_core.plan.edits import edit_plan
from memento_core.plan.scan import parse_plan

ROUNDS = 200
PLAN = """\
# MASTER_PLAN: race

## Meta
- tick_mode: auto
- max_retries: 999

## Phase 1: a
- [ ] T-1 toggled by worker A
  - verify: true
  - context_files: []
  - retries: 0
- [ ] T-2 counted by worker B
  - verify: true
  - context_files: []
  - retries: 0
"""


def _worker(name: str, root: str, start) -> None:
    root_path = Path(root)
    start.wait()
    for i in range(ROUNDS):
        add_note(root_path / "docs" / "HUMAN_NOTES.md", f"{name} note {i}", target="global")
        if name == "A":
            status = "x" if i % 2 else "~"
            edit_plan(root_path / "docs" / "MASTER_PLAN.md", lambda e, s=status: e.set_status("T-1", s))
        else:
            edit_plan(root_path / "docs" / "MASTER_PLAN.md", lambda e, n=i: e.set_field("T-2", "retries", str(n + 1)))


def test_two_processes_racing_lose_nothing(tmp_path: Path):
    (tmp_path / ".memento").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "MASTER_PLAN.md").write_text(PLAN)
    ctx = mp.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_worker, args=(n, str(tmp_path), start)) for n in ("A", "B")]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(timeout=300)
        assert p.exitcode == 0
    texts = [n.text for n in parse_notes(tmp_path / "docs" / "HUMAN_NOTES.md")]
    assert sorted(texts) == sorted(f"{w} note {i}" for w in "AB" for i in range(ROUNDS))
    plan = parse_plan(tmp_path / "docs" / "MASTER_PLAN.md")
    assert plan.task("T-1").status == "x"  # the last of A's toggles (i = 199 is odd)
    assert plan.task("T-2").retries == ROUNDS
    assert plan.errors == ()
    # The lock lives under .memento/, never beside the documents.
    assert sorted(p.name for p in (tmp_path / "docs").iterdir()) == ["HUMAN_NOTES.md", "MASTER_PLAN.md"]


# --------------------------------------------------------------------------- atomic note writes

NOTE_WRITES = 150
NOTE_HEADING = b"### [NOTE]"


def _reader(path: str, ready, stop, report: str) -> None:
    """Read the notes file as fast as possible; record every read that is not a whole file."""
    notes_path = Path(path)
    seen = reads = 0
    problems: list[str] = []
    ready.set()
    while not stop.is_set():
        data = notes_path.read_bytes()
        reads += 1
        count = data.count(NOTE_HEADING)
        if not data.rstrip().endswith(b"## Archive"):
            problems.append(f"read {reads}: not a whole file ({len(data)} bytes)")
        if count < seen:
            problems.append(f"read {reads}: {count} notes after {seen} had been seen")
        seen = max(seen, count)
    Path(report).write_text(json.dumps({"reads": reads, "seen": seen, "problems": problems[:20]}))


def test_a_reader_racing_note_writes_only_ever_sees_whole_files(tmp_path: Path):
    # A person's editor, the dashboard and the tick read HUMAN_NOTES.md without the lock:
    # each write must replace the file whole (temp file + rename), never rewrite it in place.
    (tmp_path / ".memento").mkdir()
    notes_path = tmp_path / "docs" / "HUMAN_NOTES.md"
    add_note(notes_path, "the first note", target="global")
    ctx = mp.get_context("spawn")
    ready, stop = ctx.Event(), ctx.Event()
    reader = ctx.Process(target=_reader, args=(str(notes_path), ready, stop, str(tmp_path / "reader.json")))
    reader.start()
    try:
        assert ready.wait(timeout=60)
        for i in range(NOTE_WRITES):
            add_note(notes_path, f"note {i} " + "with a body long enough to take a while to write " * 5,
                     target="global")
    finally:
        stop.set()
        reader.join(timeout=60)
    assert reader.exitcode == 0
    report = json.loads((tmp_path / "reader.json").read_text())
    assert report["problems"] == [], report
    assert report["reads"] > 0
    assert len(parse_notes(notes_path)) == NOTE_WRITES + 1


def test_a_reader_that_opened_the_notes_before_a_write_still_reads_the_old_file_whole(tmp_path: Path):
    (tmp_path / ".memento").mkdir()
    notes_path = tmp_path / "docs" / "HUMAN_NOTES.md"
    add_note(notes_path, "the first note", target="global")
    before = notes_path.read_bytes()
    with open(notes_path, "rb") as opened_before:
        add_note(notes_path, "a second note", target="T-1")
        assert opened_before.read() == before  # the write replaced the file; it did not rewrite it
    assert [n.text for n in parse_notes(notes_path)] == ["the first note", "a second note"]
    assert sorted(p.name for p in notes_path.parent.iterdir()) == ["HUMAN_NOTES.md"]  # no temp file left
