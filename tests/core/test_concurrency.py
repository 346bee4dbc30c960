"""A person-like editor and the dashboard's own edits racing real ticks: zero lost updates, counted.

The "person" saves the plan by hand the way editors do (write a temp file,
rename it over the plan, no lock) and also appends notes, skips and resets
tasks through memento_core; a "dashboard" process adds notes and resets
retries. Meanwhile 100 real ticks run. Afterwards every counted update must
still be there.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memento_core.notes import add_note, parse_notes
from memento_core.plan import parse_plan, reset_task, skip_task
from memento_core.scaffold import init_workspace

PY = sys.executable
N_TICKS = 100
COUNTER = "Hand-edit counter: "


def _plan(n: int) -> str:
    tasks = "".join(
        f"- [ ] `T-{i}` [MODULE:m] Write file {i}\n  - verify: `test -f out/{i}.txt`\n"
        f"  - context_files: [out/{i}.txt]\n  - do: `mkdir -p out && echo {i} > out/{i}.txt`\n"
        for i in range(1, n + 1))
    spare = ("- [ ] `S-1` [MODULE:person] Skipped and reset by the person\n  - verify: `false`\n"
             "  - context_files: []\n")
    return (f"# MASTER_PLAN: race\n\n## Meta\n- tick_mode: auto\n- max_retries: 3\n"
            f"- circuit_breaker_threshold: 1000\n- status_max_entries: 20\n\n"
            f"{COUNTER}0\n\n## Phase 1: Work\n\n{tasks}\n## Phase 2: Person (depends on Phase 1)\n\n{spare}")


def _person(root: str, stop, report: str) -> None:
    """Hand edits by rename, plus notes, skips and resets through memento_core."""
    root_path = Path(root)
    plan = root_path / "docs" / "MASTER_PLAN.md"
    counter = lost = notes_added = 0
    skips = resets = 0
    while not stop.is_set():
        text = plan.read_text()
        line = next(ln for ln in text.splitlines() if ln.startswith(COUNTER))
        if int(line[len(COUNTER):]) != counter:
            lost += 1  # our hand edit was overwritten by someone who had not seen it
        counter += 1
        new = text.replace(line, f"{COUNTER}{counter}", 1)
        tmp = plan.with_name(".MASTER_PLAN.md.swp")
        tmp.write_text(new)
        # A careful editor re-checks the file right before saving, as vim and VS Code do.
        if plan.read_text() == text:
            os.replace(tmp, plan)
        else:
            tmp.unlink()
            counter -= 1
        add_note(root_path / "docs" / "HUMAN_NOTES.md", f"person note {notes_added}", target="global")
        notes_added += 1
        if counter % 5 == 0:
            skip_task(plan, "S-1", "not now")
            skips += 1
        elif counter % 5 == 2:
            reset_task(plan, "S-1")
            resets += 1
        time.sleep(0.01)
    Path(report).write_text(json.dumps({"counter": counter, "lost": lost, "notes": notes_added,
                                        "skips": skips, "resets": resets}))


def _dashboard(root: str, stop, report: str) -> None:
    root_path = Path(root)
    n = 0
    while not stop.is_set():
        add_note(root_path / "docs" / "HUMAN_NOTES.md", f"dashboard note {n}", target="T-1")
        n += 1
        time.sleep(0.02)
    Path(report).write_text(json.dumps({"notes": n}))


@pytest.mark.slow
def test_person_and_dashboard_race_one_hundred_ticks(tmp_path: Path, git_identity):
    _race(tmp_path, N_TICKS)


def test_person_and_dashboard_race_a_few_ticks(tmp_path: Path, git_identity):
    _race(tmp_path, 12)


def _race(tmp_path: Path, n_ticks: int) -> None:
    root = tmp_path / "ws"
    init_workspace(root, project="race", commit=False)
    (root / "docs" / "MASTER_PLAN.md").write_text(_plan(n_ticks))
    (root / ".gitignore").write_text((root / ".gitignore").read_text() + "docs/.*.swp\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "race"], cwd=root, check=True)
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    person = ctx.Process(target=_person, args=(str(root), stop, str(tmp_path / "person.json")))
    dash = ctx.Process(target=_dashboard, args=(str(root), stop, str(tmp_path / "dash.json")))
    person.start()
    dash.start()
    codes = []
    try:
        for _ in range(n_ticks):
            r = subprocess.run([PY, "-m", "memento_core.tick", "--project", str(root)], capture_output=True,
                               text=True, timeout=120)
            assert "Traceback" not in r.stderr, r.stderr
            codes.append(r.returncode)
    finally:
        stop.set()
        person.join(timeout=60)
        dash.join(timeout=60)
    p = json.loads((tmp_path / "person.json").read_text())
    d = json.loads((tmp_path / "dash.json").read_text())
    plan = parse_plan(root / "docs" / "MASTER_PLAN.md")
    # The person's hand edits: none was ever overwritten, and the last one is on disk.
    assert p["lost"] == 0, p
    text = (root / "docs" / "MASTER_PLAN.md").read_text()
    assert f"{COUNTER}{p['counter']}\n" in text
    # Every note from both writers is there, once.
    texts = [n.text for n in parse_notes(root / "docs" / "HUMAN_NOTES.md")]
    expected = [f"person note {i}" for i in range(p["notes"])] + [f"dashboard note {i}" for i in range(d["notes"])]
    assert sorted(texts) == sorted(expected)
    # Memento's own updates survived the person's saves: every task the ticks passed is [x].
    passed = sum(1 for t in plan.tasks if t.id.startswith("T-") and t.status == "x")
    assert passed >= n_ticks - 5, (passed, codes)
    assert all((root / "out" / f"{t.id[2:]}.txt").exists() for t in plan.tasks if t.id.startswith("T-") and t.status == "x")
    assert plan.plan_errors == ()
    assert p["skips"] > 0
