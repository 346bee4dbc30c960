"""Two real processes editing the shared files at once lose nothing (SPEC §3, §11)."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

from memento_core.notes import add_note, parse_notes
from memento_core.plan import edit_plan, parse_plan

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
